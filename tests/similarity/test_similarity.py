"""``rnngrade similarity``: copies are found through renaming, the stub is not counted,
hostile code is shown as text, and the report is linked from the batch summary."""

from __future__ import annotations

import json
import re

import pytest

from rnngrade.authoring.generate import stub_for
from rnngrade.cli import main
from rnngrade.gradebook.export import write_exports
from rnngrade.gradebook.store import GRADED, Gradebook, Recorded
from rnngrade.grading.rubric import load_rubric
from rnngrade.grading.scoring import not_graded
from rnngrade.labs import get_lab
from rnngrade.results.model import Status
from rnngrade.similarity.detect import Source, compare
from rnngrade.similarity.report import highlighted

from ..browser import CHROMIUM, dump_dom, needs_chromium, screenshot

pytest.importorskip("copydetect")

HOSTILE = '</pre><script>document.title="pwned"</script><img src=x onerror=alert(1)>'


def renamed(source: str) -> str:
    """The same code with every local name changed (what a copier does first)."""
    for old, new in (("a_next", "hidden_new"), ("a_prev", "hidden_old"), ("yt_pred", "yhat"),
                     ("parameters", "params"), ("cache", "memo")):
        source = re.sub(rf"\b{old}\b", new, source)
    return source


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("similarity")
    lab = get_lab("lab1")
    reference = lab.solution_path().read_text()
    stub = stub_for(lab).content.decode()
    subs = tmp / "subs"
    subs.mkdir()
    (subs / "alice.py").write_text(reference)
    (subs / "bob.py").write_text(renamed(reference) + f"\n# {HOSTILE}\n")
    (subs / "carol.py").write_text(stub)
    (subs / "dave.py").write_text(stub)
    (subs / "erin.zip").write_bytes(b"not a zip")
    out = tmp / "out"
    book = Gradebook(out / "gradebook.sqlite")  # a batch's output folder, to be linked from
    rubric = load_rubric(lab.suite_dir() / "rubric.yaml")
    run = book.start_run("lab1", "test", "cpu", "inprocess", "local", 1, "subs")
    for student in ("alice", "bob"):
        book.record(run, Recorded(student, f"{student}.py", "py", student, 1, GRADED,
                                  not_graded(lab, rubric, student, "cpu", "",
                                             status=Status.GRADED)), "test", "inprocess")
    write_exports(book, "lab1", out)
    book.close()
    assert "similarity/index.html" not in (out / "lab1" / "summary.html").read_text()
    code = main(["similarity", str(subs), "--lab", "lab1", "--out",
                 str(out / "lab1" / "similarity")])
    assert code == 0
    return out / "lab1"


def test_a_renamed_copy_ranks_first_and_the_stub_counts_for_nothing(report):
    data = json.loads((report / "similarity" / "similarity.json").read_text())
    pairs = {(p["a"], p["b"]): p for p in data["pairs"]}
    assert list(pairs)[0] == ("alice", "bob")
    assert pairs["alice", "bob"]["similarity_a"] > 0.9
    assert ("carol", "dave") not in pairs  # two untouched stubs share only the given code
    assert data["reference"]["alice"] > 0.9 and data["reference"]["carol"] == 0
    assert "erin" in data["not_compared"]


def test_the_side_by_side_page_shows_hostile_code_as_text(report):
    page = (report / "similarity" / "pair-001.html").read_text()
    assert "<mark>" in page and "<script>" not in page and "<img" not in page
    assert "&lt;/pre&gt;&lt;script&gt;" in page


def test_highlighting_escapes_every_part_and_replaces_direction_controls():
    text = "a = 1\u202e # <b>\nb = '<i>'\n"
    start = text.index("b =")
    shown = str(highlighted(text, [(0, 5), (start, start + 9)]))
    assert shown.startswith("<mark>a = 1</mark>\ufffd # &lt;b&gt;")
    assert "<mark>b = &#x27;&lt;i&gt;&#x27;" in shown and "\u202e" not in shown


def test_the_summary_links_the_report(report):
    assert '<a href="similarity/index.html">' in (report / "summary.html").read_text()
    index = (report / "similarity" / "index.html").read_text()
    assert 'href="pair-001.html"' in index and "erin" in index


def test_sources_of_other_students_do_not_match_without_shared_code():
    lab = get_lab("lab1")
    one = Source("x", "def f(a):\n    return [i * a for i in range(10) if i % 3]\n", "x.py")
    two = Source("y", "import math\nprint(math.sqrt(2) + sum(map(int, '123')))\n", "y.py")
    assert compare(lab, [one, two], "", "").pairs == []


@needs_chromium
def test_the_pair_page_runs_no_student_script(report):
    dom = dump_dom(report / "similarity" / "pair-001.html")
    assert "pwned" not in re.search(r"<title>(.*?)</title>", dom).group(1)
    assert "<mark>" in dom


@pytest.mark.slow
@needs_chromium
def test_similarity_pages_screenshots(report, tmp_path):
    for page in ("index.html", "pair-001.html"):
        png = screenshot(report / "similarity" / page, tmp_path / page.replace(".html", ".png"))
        assert png.stat().st_size > 20_000 and CHROMIUM


def test_shared_comments_and_docstrings_are_not_shared_code():
    lab = get_lab("lab1")
    prose = ('    """' + "A long explanation every student pasted from the forum. " * 8
             + '"""\n    # ' + "the same comment, word for word, " * 6 + "\n")
    one = Source("x", "def f(a):\n" + prose + "    return [i * a for i in range(10) if i % 3]\n",
                 "x.py")
    two = Source("y", "def g(b):\n" + prose + "    return {k: b ** k for k in (1, 2, 3)}\n",
                 "y.py")
    assert compare(lab, [one, two], "", "").pairs == []
    same = Source("z", one.text.replace("f(a)", "h(c)").replace("* a", "* c"), "z.py")
    pair = compare(lab, [one, same], "", "").pairs[0]
    marked = "".join(one.text[s:e] for s, e in pair.slices_a)
    assert "return" in marked and "forum" not in marked and "word for word" not in marked
