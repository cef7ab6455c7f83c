"""``rnngrade similarity`` is bounded: each submission is compared on at most its first
``MAX_CODE_CHARS`` characters, the whole comparison stops at its time budget, and what either
left out is listed on the terminal, in ``index.html`` and in ``similarity.json``."""

from __future__ import annotations

import json

import pytest

from rnngrade.authoring.generate import stub_for
from rnngrade.cli import main
from rnngrade.labs import get_lab
from rnngrade.similarity.detect import MAX_CODE_CHARS, Source, compare

pytest.importorskip("copydetect")

ONE_LINE = "v = [" + "1, " * 650_000 + "]\n"  # about 2 MB of code on one line


def test_two_megabyte_one_line_files_are_each_compared_on_their_first_part(tmp_path, capsys):
    subs = tmp_path / "subs"
    subs.mkdir()
    students = [f"s{i}" for i in range(4)]  # every one cut, every pair accounted for
    for student in students:
        (subs / f"{student}.py").write_text(ONE_LINE)
    out = tmp_path / "out"
    assert main(["similarity", str(subs), "--lab", "lab1", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    cut = (f"only the first {MAX_CODE_CHARS:,} of {len(ONE_LINE):,} characters compared "
           f"(at most {MAX_CODE_CHARS:,} a submission)")
    for student in students:
        assert f"left out: {student}: {cut}" in said
    data = json.loads((out / "similarity.json").read_text())
    assert data["notes"][:4] == [f"{student}: {cut}" for student in students]
    index = (out / "index.html").read_text()
    assert '<ul id="notes">' in index and index.count(cut) == 4
    compared = {(p["a"], p["b"]) for p in data["pairs"]}
    left = {tuple(p) for p in data["pairs_not_compared"]}
    assert len(compared | left) == 6 and not compared & left  # every pair, one way or the other
    for page in out.glob("pair-*.html"):  # each side shows at most the part compared
        assert page.stat().st_size < 12 * MAX_CODE_CHARS


def test_a_source_is_cut_at_a_line_end_and_a_short_one_is_left_whole():
    lines = "".join(f"x{i} = y{i} + {i}\n" for i in range(12_000))  # ~190,000 characters
    long, short = Source("long", lines, "long.py"), Source("short", lines[:5000], "short.py")
    assert long.cut() and not short.cut()
    assert len(long.text) <= MAX_CODE_CHARS and long.text.endswith("\n")
    assert lines.startswith(long.text) and long.length == len(lines)
    assert short.text == lines[:5000] and short.length == 5000


def test_what_the_time_budget_leaves_out_is_listed(tmp_path, capsys):
    lab = get_lab("lab1")
    reference = lab.solution_path().read_text()
    sources = [Source(name, reference, f"{name}.py") for name in ("ann", "ben", "cat")]
    done = compare(lab, sources, stub_for(lab).content.decode(), reference, seconds=0.0)
    out_of_time = "not compared: the similarity check's time (0 s) ran out"
    assert done.skipped == dict.fromkeys(("ann", "ben", "cat"), out_of_time)
    assert done.pairs == [] and done.notes == [f"3 of 3 pairs {out_of_time}; --budget gives "
                                               "it more"]
    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ("ann", "ben"):
        (subs / f"{name}.py").write_text(reference)
    out = tmp_path / "out"
    assert main(["similarity", str(subs), "--lab", "lab1", "--out", str(out),
                 "--budget", "1e-9"]) == 0
    said = capsys.readouterr().out
    assert "lab1: 0 submissions compared" in said
    assert "left out: 1 of 1 pairs not compared: the similarity check's time (1e-09 s)" in said
    index = (out / "index.html").read_text()
    assert "1 of 1 pairs not compared" in index and index.count("ran out") >= 3
    with pytest.raises(SystemExit):
        main(["similarity", str(subs), "--lab", "lab1", "--out", str(out), "--budget", "0"])
