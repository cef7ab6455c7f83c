"""Hostile submissions aimed at reading a submission in: links, special files, deep and wide
trees, lying or malformed zips, malformed notebooks, colliding batch entries, CI checkouts.

The committed attacks are in fixtures/submissions/hostile/ (folders, zips, notebooks):

- link_to_solution/rnn.py          a symbolic link to the course's solutions/lab1/rnn.py
- link_to_solutions_folder/lab1    a symbolic link to the folder solutions/lab1
- link_to_suite/rnn.py             a symbolic link to the hidden suite of lab1
- zip_link_to_solution.zip         a zip member that is a symbolic link
- zip_file_and_folder.zip          work/rnn.py is a file and a folder
- zip_long_name.zip                a member name of 300 bytes beside the honest stub
- zip_deep_member.zip              a member 2,000 folders deep
- zip_duplicate_member.zip         rnn.py twice, the second would end grading
- zip_escapes.zip                  members at ../../ and /tmp/
- notebook_malformed_cells.ipynb   cells that are numbers, null, strings; sources that are numbers,
                                   null, lists of numbers; metadata of the wrong type

What git cannot hold is built in tmp_path: a named pipe, a hard link to a copy of the solution, a
folder 1,500 deep, 2,001 files, a zip lying about its size (256 MiB of zeros declared as 3 KB), a
notebook nested 100,000 deep, and batch entries whose ids collide.

Every attack is graded through ``grade`` and ``batch`` (and ``ci`` for the checkouts): the exit
code is 0 or 3, every report is written and parses, the attack scores no more than the honest
work it contains, the honest classmates of the same batch score in full, and nothing is written
outside the report folders. Memory: loading the lying zip stays within 64 MiB of loading an
honest one (measured with ru_maxrss in a fresh process; unbounded, it inflates 256 MiB).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import unicodedata
import zipfile
from pathlib import Path

import pytest

from rnngrade.cli import main
from rnngrade.diagnosis.mutants import strip_markers
from rnngrade.labs import get_lab
from rnngrade.submission.load import SubmissionError, load_submission

from .conftest import (
    COMMON,
    HOSTILE,
    LAB1,
    ROOT,
    STUB,
    course_digest,
    deep_folder,
    grade,
    lying_zip,
    remove_deep,
    reports_of,
    snapshot,
)

SOLUTION = ROOT / "solutions" / "lab1" / "rnn.py"
HONEST_SOFTMAX = ("def softmax(x):\n    import numpy as np\n    e = np.exp(x - x.max(axis=0))\n"
                  "    return e / e.sum(axis=0)\n")
SOFTMAX_POINTS = None  # filled by the first test that grades the honest softmax

# name → (exit code, words of the error or of a note): what each committed attack gets.
COMMITTED = {
    "link_to_solution": (3, "rnn.py was not read: it is a symbolic link"),
    "link_to_solutions_folder": (3, "lab1 was not read: it is a symbolic link"),
    "link_to_suite": (3, "rnn.py was not read: it is a symbolic link"),
    "zip_link_to_solution.zip": (3, "is a symbolic link"),
    "zip_file_and_folder.zip": (3, "work/rnn.py is both a file and a folder"),
    "zip_long_name.zip": (0, "its name is longer than a file system allows"),
    "zip_deep_member.zip": (3, "folders are nested more than 32 deep"),
    "zip_duplicate_member.zip": (3, "rnn.py appears twice"),
    "zip_escapes.zip": (3, "contains '..'"),
    "notebook_malformed_cells.ipynb": (0, "6 cell(s) were skipped"),
}


def said(result: dict) -> str:
    return " ".join([result.get("error") or "", *result.get("notes", [])])


@pytest.fixture(scope="module")
def honest(tmp_path_factory) -> dict[str, float]:
    """Scores of honest work: the stub, and a notebook holding only the honest softmax."""
    tmp = tmp_path_factory.mktemp("honest")
    stub = tmp / "stub.py"
    stub.write_text(STUB)
    softmax = tmp / "softmax.ipynb"
    softmax.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                                   "cells": [{"cell_type": "code", "source": HONEST_SOFTMAX,
                                              "metadata": {}, "outputs": [],
                                              "execution_count": None}]}))
    scores = {}
    for name, path in (("stub", stub), ("softmax", softmax)):
        code, result = grade(path, tmp / f"out-{name}")
        assert code == 0
        scores[name] = result["score"]
    assert scores["softmax"] > scores["stub"]  # the honest cell earns something
    return scores


def expected_score(name: str, honest: dict[str, float]) -> float:
    return honest["softmax"] if name.endswith(".ipynb") else 0.0 if COMMITTED[name][0] == 3 \
        else honest["stub"]


def test_every_committed_ingest_attack_is_listed():
    # output/ holds the attacks on reports (tests/output); loose .py files are the sandbox's
    shipped = {p.name for p in HOSTILE.iterdir() if p.suffix != ".py" and p.name != "output"}
    assert shipped == set(COMMITTED)


@pytest.mark.parametrize("name", sorted(COMMITTED))
def test_a_committed_attack_through_grade(name, honest, tmp_path):
    code_expected, words = COMMITTED[name]
    before, course = snapshot(tmp_path, HOSTILE), course_digest()
    code, result = grade(HOSTILE / name, tmp_path / "out")
    assert code == code_expected, said(result)
    assert words in said(result)
    assert result["score"] == expected_score(name, honest)
    after = snapshot(tmp_path, HOSTILE)
    assert {p for p in after if not p.startswith(str(tmp_path / "out"))} == set(before)
    assert course_digest() == course
    for report in ("feedback.md", "feedback.html", "results.json"):  # no course text shipped
        text = (tmp_path / "out" / report).read_text(encoding="utf-8")
        assert "def test_" not in text


def test_the_links_are_not_followed_but_would_score_full_marks(tmp_path):
    """The attack is real: the same folder with the link's target copied in scores 24/24."""
    copy = tmp_path / "copied"
    copy.mkdir()
    shutil.copyfile(SOLUTION, copy / "rnn.py")
    code, result = grade(copy, tmp_path / "out")
    assert code == 0 and result["score"] == result["max_score"] == 24
    loaded = load_submission(copy, get_lab("lab1"))
    assert loaded.source == SOLUTION.read_text()
    with pytest.raises(SubmissionError, match="symbolic link"):
        load_submission(HOSTILE / "link_to_solution", get_lab("lab1"))
    with pytest.raises(SubmissionError, match="symbolic link"):
        load_submission(HOSTILE / "link_to_solution" / "rnn.py", get_lab("lab1"))


# ---------------------------------------------------------------- built where git cannot hold

def build_special(kind: str, where: Path, private: Path) -> Path:
    """One attack git cannot hold, built under ``where`` (``private``: a folder of the course's
    own, outside the submissions); returns the submission's path."""
    if kind == "fifo":
        folder = where / "fifo"
        folder.mkdir()
        os.mkfifo(folder / "rnn.py")  # opened for reading, it would block forever
        return folder
    if kind == "socket":
        folder = where / "socket"
        folder.mkdir()
        os.mknod(folder / "rnn.py", 0o644 | stat.S_IFSOCK)
        return folder
    if kind == "hard_link":
        private.mkdir(exist_ok=True)
        shutil.copyfile(SOLUTION, private / "rnn.py")
        folder = where / "hard_link"
        folder.mkdir()
        os.link(private / "rnn.py", folder / "rnn.py")
        return folder
    if kind == "deep_folder":
        return deep_folder(where / "deep_folder", 1500)
    if kind == "many_files":
        folder = where / "many_files"
        folder.mkdir()
        (folder / "rnn.py").write_text(STUB)
        for number in range(2001):
            (folder / f"f{number}.txt").write_bytes(b"")
        return folder
    if kind == "lying_zip":
        return lying_zip(where / "lying.zip", "rnn.py", 256 << 20, 3000)
    if kind == "deep_notebook":
        path = where / "deep.ipynb"
        path.write_text("[" * 100_000 + "]" * 100_000)
        return path
    raise AssertionError(kind)


SPECIAL = {
    "fifo": "rnn.py was not read: it is a named pipe",
    "socket": "rnn.py was not read: it is a socket",
    "hard_link": "rnn.py was not read: it is a hard link to a file elsewhere",
    "deep_folder": "folders are nested more than 32 deep",
    "many_files": "holds more than 2000 files",
    "lying_zip": "cannot read 'rnn.py' (Bad CRC-32",
    "deep_notebook": "its JSON is nested too deeply",
}


@pytest.mark.parametrize("kind", sorted(SPECIAL))
def test_a_built_attack_through_grade(kind, honest, tmp_path):
    where = tmp_path / "in"
    where.mkdir()
    path = build_special(kind, where, tmp_path / "course-only")
    before = snapshot(where)
    try:
        code, result = grade(path, tmp_path / "out")
        assert code == 3 and result["status"] == "load_error"
        assert SPECIAL[kind] in said(result)
        assert result["score"] == 0
        assert snapshot(where) == before
    finally:
        if kind == "deep_folder":
            remove_deep(path)


def test_a_folder_over_the_byte_limit_is_a_load_error(tmp_path):
    folder = tmp_path / "big"
    folder.mkdir()
    (folder / "rnn.py").write_text(STUB)
    for number in range(26):  # 26 × 2 MiB of sources: over the 50 MiB read in total
        (folder / f"data{number}.py").write_bytes(b"#" * (2 << 20))
    with pytest.raises(SubmissionError, match="holds more than 50 MiB to read"):
        load_submission(folder, get_lab("lab1"))


def test_a_link_inside_the_submission_is_skipped_too(tmp_path):
    """Even a link to a file of the submission itself is not followed: one rule, with a note."""
    folder = tmp_path / "inner"
    folder.mkdir()
    (folder / "work.py").write_text(STUB)
    (folder / "rnn.py").symlink_to("work.py")
    loaded = load_submission(folder, get_lab("lab1"))
    assert loaded.source == STUB
    assert any("rnn.py was not read: it is a symbolic link" in n for n in loaded.notes)


def test_a_folder_swapped_for_a_link_after_listing_is_refused(tmp_path, monkeypatch):
    """The race between listing and opening: a folder replaced by a link to the solutions right
    after it was listed is refused when opened (O_NOFOLLOW), not followed."""
    from rnngrade.submission import tree as tree_module

    folder = tmp_path / "race"
    (folder / "work").mkdir(parents=True)
    (folder / "work" / "rnn.py").write_text(STUB)
    real_stat, swapped = os.stat, []

    def swapping_stat(name, *args, **kwargs):
        info = real_stat(name, *args, **kwargs)
        if name == "work" and kwargs.get("dir_fd") is not None and not swapped:
            swapped.append(name)
            shutil.rmtree(folder / "work")
            (folder / "work").symlink_to(SOLUTION.parent)
        return info

    monkeypatch.setattr(tree_module.os, "stat", swapping_stat)
    with pytest.raises(SubmissionError, match="work is a symbolic link"):
        load_submission(folder, get_lab("lab1"))


def test_loading_a_lying_zip_keeps_memory_bounded(tmp_path):
    """ru_maxrss of a fresh process loading the zip that inflates 256 MiB, against one loading an
    honest zip: within 64 MiB (the archive is read whole, at most 20 MiB; each member stops at
    2 MiB plus one 64 KiB chunk)."""
    bomb = lying_zip(tmp_path / "bomb.zip", "rnn.py", 256 << 20, 3000)
    honest_zip = tmp_path / "honest.zip"
    with zipfile.ZipFile(honest_zip, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("rnn.py", STUB)
    script = ("import resource, sys\nfrom pathlib import Path\n"
              "from rnngrade.labs import get_lab\n"
              "from rnngrade.submission.load import SubmissionError, load_submission\n"
              "try:\n    load_submission(Path(sys.argv[1]), get_lab('lab1'))\n"
              "except SubmissionError as exc:\n    print(exc, file=sys.stderr)\n"
              "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n")

    def peak(path: Path) -> tuple[int, str]:
        done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                              text=True, timeout=120, check=True)
        return int(done.stdout.split()[-1]) * 1024, done.stderr

    base, _ = peak(honest_zip)
    used, error = peak(bomb)
    assert "Bad CRC-32" in error
    assert used - base < 64 << 20, (used - base) >> 20


# --------------------------------------------------------------------------------- notebooks

@pytest.mark.parametrize("cells, words", [
    ([{"cell_type": "code", "source": 3}], "1 cell(s) were skipped"),
    ([{"cell_type": "code", "source": None}, None], "2 cell(s) were skipped"),
    ([["not", "a", "cell"], {"cell_type": "code", "source": ["x = ", 1]}], "2 cell(s)"),
])
def test_malformed_cells_are_skipped_with_a_note(tmp_path, cells, words):
    path = tmp_path / "lab1.ipynb"
    path.write_text(json.dumps({"nbformat": 4, "metadata": 5, "cells": [
        *cells, {"cell_type": "code", "source": HONEST_SOFTMAX}]}))
    loaded = load_submission(path, get_lab("lab1"))
    assert "def softmax" in loaded.source and any(words in n for n in loaded.notes)


@pytest.mark.parametrize("text, words", [
    ('{"nbformat": 4, "cells": 7}', "'cells' is not a list"),
    ("[1, 2]", "not an object"),
    ('{"nbformat": 3, "worksheets": 5}', "not a readable Jupyter notebook"),
    ("[" * 50_000, "nested too deeply"),
    ('{"a": ' * 50_000, "nested too deeply"),
])
def test_notebooks_that_cannot_be_read_are_load_errors(tmp_path, text, words):
    path = tmp_path / "lab1.ipynb"
    path.write_text(text)
    with pytest.raises(SubmissionError, match=words):
        load_submission(path, get_lab("lab1"))


# ------------------------------------------------------------------------------------- batch

def collisions(folder: Path, control: bool = True) -> set[str]:
    """Entries whose ids collide, each the honest stub in some form; their names. (``control``:
    with a name holding a control character, which only the reports' escaping makes safe to
    render: the batch test leaves it to the rendering tests.)"""
    folder.mkdir(exist_ok=True)
    names = {"alice.py", "alice.zip", "Bob.py", "bob.py", unicodedata.normalize("NFC", "café.py"),
             unicodedata.normalize("NFD", "café.py"), "dave_.py"} | ({"dave\x07.py"} if control
                                                                    else set())
    for name in names:
        if name.endswith(".zip"):
            with zipfile.ZipFile(folder / name, "w") as zf:
                zf.writestr("rnn.py", STUB)
        else:
            (folder / name).write_text(STUB)
    return names


def test_colliding_ids_are_disambiguated(tmp_path):
    from rnngrade.gradebook.entries import discover

    names = collisions(tmp_path / "class")
    entries = discover([tmp_path / "class"])
    assert len(entries) == len(names) == 8
    keys = [unicodedata.normalize("NFC", e.student).casefold() for e in entries]
    assert len(set(keys)) == 8
    assert all(ch.isprintable() for e in entries for ch in e.student)
    assert {e.student for e in entries} >= {"alice.py", "alice.zip"}
    assert discover([tmp_path / "class"]) == entries  # the same ids every run


def test_hostile_entries_in_one_batch_beside_honest_classmates(honest, tmp_path):
    """Every attack as a batch entry, beside two honest classmates; then a rerun."""
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copytree(LAB1 / "reference", folder / "honest_reference")
    shutil.copy2(LAB1 / "reference.zip", folder / "honest_zip.zip")
    for name in COMMITTED:
        source = HOSTILE / name
        if source.is_dir():
            shutil.copytree(source, folder / name, symlinks=True)
        else:
            shutil.copy2(source, folder / name)
    specials = {kind: build_special(kind, folder, tmp_path / "course-only") for kind in SPECIAL}
    colliding = collisions(folder, control=False)
    (folder / "entry_link.py").symlink_to(SOLUTION)
    os.mkfifo(folder / "entry_fifo.py")
    (folder / "entry_loop").symlink_to("entry_loop")  # resolving it raises
    (folder / "entry_dangling.zip").symlink_to(tmp_path / "nowhere.zip")
    before, course = snapshot(tmp_path), course_digest()
    out = tmp_path / "out"
    try:
        assert main(["batch", str(folder), *COMMON, "--out", str(out), "-j", "2",
                     "--quiet"]) == 0
        results = {p.name: reports_of(p) for p in (out / "lab1" / "students").iterdir()}
        n_entries = len(COMMITTED) + len(SPECIAL) + len(colliding) + 6
        assert len(results) == n_entries
        for student in ("honest_reference", "honest_zip"):
            assert results[student]["score"] == results[student]["max_score"] == 24
        for name, (_, words) in COMMITTED.items():
            student = name.removesuffix(".zip").removesuffix(".ipynb")
            assert words in said(results[student]), (student, said(results[student]))
            assert results[student]["score"] == expected_score(name, honest)
        for kind, path in specials.items():
            student = path.name.removesuffix(".zip").removesuffix(".ipynb")
            words = SPECIAL[kind] if kind not in ("fifo", "socket", "hard_link") else \
                SPECIAL[kind].split(": ", 1)[1]
            assert words in said(results[student]), (student, said(results[student]))
            assert results[student]["score"] == 0
        assert "symbolic link" in said(results["entry_link"])
        assert "named pipe" in said(results["entry_fifo"])
        assert "symbolic link" in said(results["entry_loop"])
        assert "symbolic link" in said(results["entry_dangling"])
        stubs = [r for r in results.values() if r["submission"] in colliding]
        assert len(stubs) == 7 and all(r["score"] == honest["stub"] for r in stubs)
        written = {p for p in snapshot(tmp_path) if not p.startswith(str(out))}
        assert written == set(before)
        assert course_digest() == course
        # a rerun goes through the same entries without dying on any of them
        assert main(["batch", str(folder), *COMMON, "--out", str(out), "-j", "1",
                     "--quiet"]) == 0
        assert len(list((out / "lab1" / "students").iterdir())) == n_entries
    finally:
        remove_deep(specials["deep_folder"])


# ---------------------------------------------------------------------------------------- ci

def checkout_with(tmp_path: Path, attack: str) -> Path:
    """A student checkout (the lab1 assignment folder) with one attack in it."""
    checkout = tmp_path / "checkout"
    lab = checkout / "assignments" / "lab1"
    shutil.copytree(ROOT / "assignments" / "lab1", lab)
    if attack == "module_link":
        (lab / "rnn.py").unlink()
        (lab / "rnn.py").symlink_to(SOLUTION)
    elif attack == "folder_link":
        shutil.rmtree(lab)
        lab.symlink_to(SOLUTION.parent)
    elif attack == "assignments_link":
        shutil.rmtree(checkout / "assignments")
        (checkout / "assignments").symlink_to(SOLUTION.parent.parent)  # solutions/
    elif attack == "module_fifo":
        (lab / "rnn.py").unlink()
        os.mkfifo(lab / "rnn.py")
    elif attack == "deep":
        deep_folder(lab / "junk", 1500)
    else:
        raise AssertionError(attack)
    return checkout


CI_ATTACKS = {
    "module_link": "rnn.py was not read: it is a symbolic link",
    "folder_link": "lab1 is a symbolic link",
    "assignments_link": "assignments is a symbolic link",
    "module_fifo": "rnn.py was not read: it is a named pipe",
    "deep": "folders are nested more than 32 deep",
}


@pytest.mark.parametrize("attack", sorted(CI_ATTACKS))
def test_a_checkout_attack_through_ci(attack, honest, tmp_path, monkeypatch):
    for key in [k for k in os.environ if k.startswith("GITHUB_")]:
        monkeypatch.delenv(key)
    checkout = checkout_with(tmp_path, attack)
    before, course = snapshot(tmp_path), course_digest()
    out = tmp_path / "out"
    try:
        code = main(["ci", "--submission", str(checkout), "--out", str(out), "--lab", "lab1",
                     "--inprocess", "--device", "cpu", "--no-comment"])
        assert code in (0, 3)
        result = reports_of(out / "lab1")
        assert CI_ATTACKS[attack] in said(result), said(result)
        assert result["score"] == honest["stub"] == 0
        assert (out / "pr_comment.md").read_text(encoding="utf-8")
        assert {p for p in snapshot(tmp_path) if not p.startswith(str(out))} == set(before)
        assert course_digest() == course
    finally:
        if attack == "deep":
            remove_deep(checkout / "assignments" / "lab1" / "junk")


def test_ci_still_grades_an_honest_checkout_in_full(tmp_path, monkeypatch):
    for key in [k for k in os.environ if k.startswith("GITHUB_")]:
        monkeypatch.delenv(key)
    checkout = checkout_with(tmp_path, "module_fifo")
    (checkout / "assignments" / "lab1" / "rnn.py").unlink()
    (checkout / "assignments" / "lab1" / "rnn.py").write_text(
        strip_markers(SOLUTION.read_text()))
    out = tmp_path / "out"
    assert main(["ci", "--submission", str(checkout), "--out", str(out), "--lab", "lab1",
                 "--inprocess", "--device", "cpu", "--no-comment"]) == 0
    assert reports_of(out / "lab1")["score"] == 24


# ------------------------------------------------------------------------------ zip limits

def test_a_zip_with_too_many_members_is_a_load_error(tmp_path):
    path = tmp_path / "many.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("rnn.py", STUB)
        for number in range(500):
            zf.writestr(f"f{number}.txt", b"")
    with pytest.raises(SubmissionError, match="holds 501 entries"):
        load_submission(path, get_lab("lab1"))


def test_a_zip_member_over_the_per_file_cap_is_refused_by_the_bytes_read(tmp_path):
    """3 MiB of source that declares 1 KB: reading stops at the declared size, and the checksum
    of what was read refuses it; declared honestly, it is over the 2 MiB cap."""
    lying = lying_zip(tmp_path / "lying.zip", "rnn.py", 3 << 20, 1000)
    with pytest.raises(SubmissionError, match="Bad CRC-32"):
        load_submission(lying, get_lab("lab1"))
    honest_size = lying_zip(tmp_path / "big.zip", "rnn.py", 3 << 20, 3 << 20)
    with pytest.raises(SubmissionError, match="rnn.py is larger than 2 MiB"):
        load_submission(honest_size, get_lab("lab1"))


def test_entry_ids_replace_undecodable_bytes_and_the_notes_travel_to_the_worker(tmp_path):
    from rnngrade.gradebook.entries import Entry, Payload, read_entry, student_id

    assert student_id("al\udcffice\u202e") == "al\ufffdice_"
    folder = tmp_path / "student"
    folder.mkdir()
    (folder / "rnn.py").write_text(STUB)
    (folder / "answers.py").symlink_to(SOLUTION)
    payload = read_entry(Entry("student", folder))
    assert set(payload.files) == {"rnn.py"}
    wired = Payload.from_wire(payload.to_wire())
    assert wired.notes == payload.notes and "answers.py was not read" in wired.notes[0]
