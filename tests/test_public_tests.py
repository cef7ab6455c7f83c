"""`pytest assignments/labN` on the course itself, as a student sees a wrong value. (Each lab's
public suite on the stub and on the reference runs once, on the released repository: see
tests/release/test_release_run.py.)"""

from rnngrade.diagnosis.mutants import strip_markers
from rnngrade.labs import get_lab

from .conftest import run_public_inprocess


def test_a_wrong_value_is_reported_with_place_and_size(course_copy, capsys, monkeypatch):
    lab = get_lab("lab1")
    source = strip_markers(lab.solution_path(course_copy).read_text())
    lab.stub_path(course_copy).write_text(source.replace("yt_pred = softmax(logits)",
                                                         "yt_pred = softmax(2 * logits)"))
    code, output = run_public_inprocess(capsys, monkeypatch, course_copy, lab.name)
    assert code == 1, output[-3000:]
    assert "yt_pred: values differ beyond tolerance" in output
    assert "largest error" in output and "expected" in output
    assert "lab1: 12/20 public points" in output  # cell and sequence values fail: 8 points
