"""Loading submissions: folders, .py, notebooks, zips — and clear refusals of bad input."""

import io
import json
import stat
import zipfile

import nbformat
import pytest

from rnngrade.labs import get_lab
from rnngrade.submission.load import SubmissionError, load_submission

LAB1 = get_lab("lab1")


def _zip(path, entries):
    with zipfile.ZipFile(path, "w") as zf:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            zf.writestr(info, data)
    return path


def test_folder_with_the_module_nested_anywhere(tmp_path):
    (tmp_path / "sub" / "assignments" / "lab1").mkdir(parents=True)
    (tmp_path / "sub" / "assignments" / "lab1" / "rnn.py").write_text("x = 1\n")
    loaded = load_submission(tmp_path / "sub", LAB1)
    assert loaded.source == "x = 1\n" and loaded.filename == "rnn.py"


def test_folder_with_a_single_notebook_is_graded_with_a_note(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# hi"),
                nbformat.v4.new_code_cell("%matplotlib inline\nimport numpy as np\n!pip list"),
                nbformat.v4.new_code_cell("%%timeit\nslow()"),
                nbformat.v4.new_code_cell("def softmax(x):\n    return x")]
    (tmp_path / "work.ipynb").write_text(nbformat.writes(nb))
    loaded = load_submission(tmp_path, LAB1)
    assert "def softmax" in loaded.source and "import numpy" in loaded.source
    assert "%matplotlib" not in loaded.source and "slow()" not in loaded.source
    assert any("magic or shell" in n for n in loaded.notes)
    assert any("cell magic" in n for n in loaded.notes)
    assert any("graded work.ipynb" in n for n in loaded.notes)


def test_notebook_that_is_not_json(tmp_path):
    path = tmp_path / "lab1.ipynb"
    path.write_text("{not json")
    with pytest.raises(SubmissionError, match="not valid JSON"):
        load_submission(path, LAB1)


def test_json_that_is_not_a_notebook(tmp_path):
    path = tmp_path / "lab1.ipynb"
    path.write_text(json.dumps({"hello": 1}))
    with pytest.raises(SubmissionError, match="not a readable Jupyter notebook"):
        load_submission(path, LAB1)


def test_zip_of_a_folder(tmp_path):
    path = _zip(tmp_path / "s.zip", [("me/rnn.py", "y = 2\n", stat.S_IFREG | 0o644)])
    loaded = load_submission(path, LAB1)
    assert loaded.source == "y = 2\n" and "inside s.zip" in loaded.origin


@pytest.mark.parametrize("entry, message", [
    (("../../evil.py", "x", stat.S_IFREG | 0o644), "contains '..'"),
    (("/etc/evil.py", "x", stat.S_IFREG | 0o644), "absolute path"),
    (("link.py", "/etc/passwd", stat.S_IFLNK | 0o777), "symbolic link"),
    (("fifo", "", stat.S_IFIFO | 0o644), "not a regular file"),
])
def test_dangerous_zip_entries_are_refused_and_nothing_is_written(tmp_path, entry, message):
    path = _zip(tmp_path / "bad.zip", [("rnn.py", "x = 1\n", stat.S_IFREG | 0o644), entry])
    with pytest.raises(SubmissionError, match=message):
        load_submission(path, LAB1)
    assert not (tmp_path.parent / "evil.py").exists()


def test_zip_bomb_is_refused_before_extraction(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("rnn.py", b"#" * (60 * 1024 * 1024))
    path = tmp_path / "bomb.zip"
    path.write_bytes(buffer.getvalue())
    with pytest.raises(SubmissionError, match="would extract to"):
        load_submission(path, LAB1)


def test_corrupt_zip(tmp_path):
    path = tmp_path / "broken.zip"
    path.write_bytes(b"PK\x03\x04 this is not really a zip")
    with pytest.raises(SubmissionError, match="not a readable zip"):
        load_submission(path, LAB1)


@pytest.mark.parametrize("name", ["report.pdf", "rnn.txt", "noext"])
def test_other_file_types_are_refused(tmp_path, name):
    path = tmp_path / name
    path.write_text("x")
    with pytest.raises(SubmissionError, match="expected a folder, a .py file"):
        load_submission(path, LAB1)


def test_empty_folder_and_ambiguous_folder(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SubmissionError, match="is empty"):
        load_submission(tmp_path / "empty", LAB1)
    (tmp_path / "two").mkdir()
    (tmp_path / "two" / "a.py").write_text("")
    (tmp_path / "two" / "b.py").write_text("")
    with pytest.raises(SubmissionError, match="no rnn.py found"):
        load_submission(tmp_path / "two", LAB1)
