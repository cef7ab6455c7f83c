"""summary.html renders in a real browser: title, text, a drawn chart, a non-blank screenshot."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from rnngrade.gradebook.export import write_exports
from rnngrade.gradebook.store import GRADED, LOAD_ERROR, Gradebook, Recorded
from rnngrade.grading.engine import grade
from rnngrade.grading.rubric import load_rubric
from rnngrade.labs import get_lab

from ..synthetic import make_class, sources

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which(
    "google-chrome")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--disable-dev-shm-usage", "--virtual-time-budget=2000"]
PROBE = """<script>
window.addEventListener("load", () => {
  const chart = document.querySelector("#score-chart").getBoundingClientRect();
  const bars = [...document.querySelectorAll("#score-chart rect")]
    .filter(r => r.getBoundingClientRect().height > 0).length;
  const rows = document.querySelectorAll("#tests tbody tr").length;
  document.body.setAttribute("data-probe", `chart:${Math.round(chart.width)}x${
    Math.round(chart.height)} bars:${bars} rows:${rows}`);
});
</script>"""


def chromium(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, *FLAGS, *args], check=True, capture_output=True,
                          timeout=90)


def png_stats(path: Path) -> tuple[int, int, float]:
    """Width, height and the share of non-zero bytes in the (filtered) image data: a blank
    page filters to almost nothing but zeros."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    idat, offset = b"", 8
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        if kind == b"IDAT":
            idat += data[offset + 8:offset + 8 + length]
        offset += 12 + length
    raw = zlib.decompress(idat)
    return width, height, sum(1 for b in raw[::7] if b) / len(raw[::7])


@pytest.fixture(scope="module")
def summary(tmp_path_factory) -> Path:
    """A gradebook of a small class (correct, mutants, stub, bad entries) and its exports."""
    tmp = tmp_path_factory.mktemp("summary")
    # one whole rotation (correct, every known mistake, the stub) and then the three bad entries
    rotation = len(sources(get_lab("lab1")))
    samples = make_class(tmp / "class", "lab1", rotation + 3, bad=True)
    assert {s.kind for s in samples} >= {"bad:empty", "bad:corrupt_zip", "bad:text"}
    book = Gradebook(tmp / "out" / "gradebook.sqlite")
    run = book.start_run("lab1", "test", "cpu", "inprocess", "local", 1, "class")
    for sample in samples:
        result = grade(sample.path, "lab1", device="cpu", inprocess=True)
        status = GRADED if result.status == "graded" else LOAD_ERROR
        book.record(run, Recorded(sample.student, sample.path.name, sample.form, sample.student,
                                  1, status, result), "test", "inprocess")
    book.finish_run(run, "finished", len(samples), 0, 0, 1.0)
    files = write_exports(book, "lab1", tmp / "out")
    book.close()
    return files["summary.html"]


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")
def test_summary_renders_with_title_text_and_chart(summary, tmp_path):
    probe = tmp_path / "probe.html"
    probe.write_text(summary.read_text().replace("</body>", PROBE + "</body>"))
    dom = chromium("--dump-dom", probe.as_uri()).stdout.decode()
    assert re.search(r"<title>lab1 batch summary — \d+ students</title>", dom)
    for text in ("Score distribution", "Most frequent mistakes", "Pass rate per test",
                 "Errors and timeouts", "Slowest submissions", "could not be loaded"):
        assert text in dom
    found = re.search(r'data-probe="chart:(\d+)x(\d+) bars:(\d+) rows:(\d+)"', dom)
    assert found, "the page's script did not run"
    width, height, bars, rows = map(int, found.groups())
    tests = len(load_rubric(get_lab("lab1").suite_dir() / "rubric.yaml").entries)
    assert width > 300 and height > 100 and bars >= 3 and rows == tests


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")
def test_summary_screenshot_is_not_blank(summary, tmp_path):
    png = tmp_path / "summary.png"
    chromium("--window-size=1280,1800", f"--screenshot={png}", summary.as_uri())
    width, height, ink = png_stats(png)
    assert (width, height) == (1280, 1800)
    assert png.stat().st_size > 40_000 and ink > 0.02
