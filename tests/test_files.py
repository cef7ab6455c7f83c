"""Whole-or-nothing writes (``rnngrade.files``): the one way the grader writes a file."""

import threading
from pathlib import Path

import pytest

from rnngrade.files import atomic_path, write_atomic


def test_a_write_that_raises_leaves_the_old_file_and_no_temporary(tmp_path: Path):
    target = write_atomic(tmp_path / "results.json", "old")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_writers_of_one_path_never_share_a_temporary_file(tmp_path: Path):
    # A batch's workers may keep the same reference figure at once: each writes its own
    # temporary file, so the file read afterwards is one writer's whole text.
    target = tmp_path / "figure.json"
    names: list[str] = []
    barrier = threading.Barrier(2)

    def write(text: str) -> None:
        with atomic_path(target) as tmp:
            names.append(tmp.name)
            barrier.wait()
            tmp.write_text(text * 1000)

    threads = [threading.Thread(target=write, args=(t,)) for t in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(names)) == 2
    assert target.read_text() in ("a" * 1000, "b" * 1000)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figure.json"]
