"""The grader's disk cache does not grow without bound: what can no longer be hit (another
grader, another version of the lab) is removed when a grading run starts, the rest is kept
under a size cap, least recently used first, and removal never breaks another process's read
or write (a vanished file is a cache miss)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from rnngrade.grading import cache_eviction, reference_cache
from rnngrade.grading.memo import DiskScope, ExpectationMemo
from rnngrade.grading.reference_cache import entry_key, lookup, value_of

from ..counting import Counted

BIG = "x" * 1000  # about 1.4 kB on disk with its key


def key(lab: str = "lab10", digest: str = "d" * 64, test: str = "t.py::test_a") -> dict:
    return entry_key(lab=lab, digest=digest, test=test, seed=0, key="k", device="cpu")


def path_of(k: dict) -> Path:
    """Where ``k``'s file is (without starting a run of its lab version, which would tidy)."""
    root = reference_cache.cache_dir()
    assert root is not None
    name = hashlib.sha256(reference_cache._dumps(reference_cache.encode(k)).encode())
    return root.joinpath(*cache_eviction.place(k), f"{name.hexdigest()}.json")


def new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget what this process tidied and wrote, as a new grading process would."""
    monkeypatch.setattr(cache_eviction, "_tidied", set())
    monkeypatch.setattr(cache_eviction, "_written", {})


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    new_process(monkeypatch)


def test_another_grader_s_entries_go_when_a_run_starts(cache, monkeypatch):
    value_of(key(), lambda: 1)
    value_of(key(lab="lab9"), lambda: 2)
    old = [path_of(key()), path_of(key(lab="lab9"))]
    assert all(p.is_file() for p in old)
    new_process(monkeypatch)
    monkeypatch.setattr(reference_cache, "_PACKAGE", ["an edited grader"])
    compute = Counted(1)
    assert value_of(key(), compute) == 1 and compute.calls == 1
    # the old grader's folder is removed whole, every lab's entries with it
    assert not any(p.exists() for p in old) and not old[0].parents[1].exists()
    assert len(list(cache.glob("*/*/*.json"))) == 1


def test_another_version_of_the_lab_goes_and_other_labs_stay(cache, monkeypatch):
    value_of(key(), lambda: 1)
    value_of(key(lab="lab1"), lambda: 2)
    value_of(key(lab="lab10-extra"), lambda: 3)  # a name that begins like lab10's
    new_process(monkeypatch)
    value_of(key(digest="e" * 64), lambda: 4)
    assert not path_of(key()).parent.exists()
    assert path_of(key(lab="lab1")).is_file() and path_of(key(lab="lab10-extra")).is_file()
    assert path_of(key(digest="e" * 64)).is_file()


def test_a_digest_memo_value_of_an_edited_lab_goes_too(cache, monkeypatch):
    memo_value = Counted(lambda: [1.5, 2.5])
    memo_key = ExpectationMemo.key("check", memo_value.value, ())
    ExpectationMemo(disk=DiskScope("lab1", "a" * 64, "cpu")).compute(
        memo_key, "reference", memo_value)
    (before,) = cache.glob("*/*/*.json")
    new_process(monkeypatch)
    ExpectationMemo(disk=DiskScope("lab1", "b" * 64, "cpu")).compute(
        memo_key, "reference", memo_value)
    assert memo_value.calls == 2 and not before.exists()
    assert len(list(cache.glob("*/*/*.json"))) == 1


def test_the_flat_layout_goes_and_foreign_files_stay(cache, monkeypatch):
    cache.mkdir()
    flat = cache / f"{'0' * 64}.json"
    flat.write_text("{}")
    mine = [cache / "notes.txt", cache / "photos" / "a.json", cache / "0123" / "x.json"]
    for path in mine:
        path.parent.mkdir(exist_ok=True)
        path.write_text("keep me")
    value_of(key(), lambda: 1)
    assert not flat.exists() and all(p.read_text() == "keep me" for p in mine)


def test_the_cap_removes_the_least_recently_used(cache, monkeypatch):
    monkeypatch.setenv(cache_eviction.MAX_ENV, "3500")  # two entries, not three
    keys = [key(test=f"t.py::test_{n}") for n in "abc"]
    value_of(keys[0], lambda: BIG)
    value_of(keys[1], lambda: BIG)
    os.utime(path_of(keys[0]), (1e9, 1e9))  # written first, long ago ...
    os.utime(path_of(keys[1]), (1e9 + 1, 1e9 + 1))
    compute = Counted(BIG)
    assert value_of(keys[0], compute) == BIG and compute.calls == 0  # ... but just used
    value_of(keys[2], lambda: BIG)
    assert path_of(keys[0]).is_file() and path_of(keys[2]).is_file()
    assert not path_of(keys[1]).exists()


def test_the_cap_is_kept_when_a_run_starts(cache, monkeypatch):
    monkeypatch.setenv(cache_eviction.MAX_ENV, "none")
    keys = [key(lab="lab1", test=f"t.py::test_{n}") for n in range(5)]
    for n, k in enumerate(keys):
        value_of(k, lambda: BIG)
        os.utime(path_of(k), (1e9 + n, 1e9 + n))
    assert all(path_of(k).is_file() for k in keys)
    new_process(monkeypatch)
    monkeypatch.setenv(cache_eviction.MAX_ENV, "4K")
    value_of(key(lab="lab2"), lambda: 1)  # another lab's run starts
    kept = [path_of(k).is_file() for k in keys]
    assert kept == [False, False, True, True, True]  # 1333 bytes each: three fit in 4 KiB


@pytest.mark.parametrize(("text", "cap"), [
    ("", cache_eviction.DEFAULT_MAX_BYTES), ("500M", 500 << 20), ("1.5G", 3 << 29),
    ("2gib", 2 << 30), (" 64 kB ", 64 << 10), ("123456", 123456), ("none", None),
    ("Unlimited", None)])
def test_the_cap_s_setting(monkeypatch, text, cap):
    monkeypatch.setenv(cache_eviction.MAX_ENV, text)
    assert cache_eviction.max_bytes() == cap


def test_a_setting_that_is_not_a_size_keeps_the_default_with_one_note(monkeypatch, capsys):
    monkeypatch.setattr(cache_eviction, "_warned_env", False)
    monkeypatch.setenv(cache_eviction.MAX_ENV, "lots")
    assert cache_eviction.max_bytes() == cache_eviction.DEFAULT_MAX_BYTES
    assert cache_eviction.max_bytes() == cache_eviction.DEFAULT_MAX_BYTES
    assert capsys.readouterr().err.count("RNNGRADE_CACHE_MAX='lots' is not a size") == 1


def test_a_file_removed_under_a_reader_is_a_miss(cache):
    value_of(key(), lambda: 1)
    path_of(key()).unlink()
    assert lookup(key()) is None
    shutil.rmtree(cache)
    compute = Counted(1)
    assert value_of(key(), compute) == 1 and compute.calls == 1
    assert path_of(key()).is_file()  # the folders are made again


def test_a_writer_whose_folder_is_removed_meanwhile_makes_it_again(cache, monkeypatch, capsys):
    real = reference_cache.write_atomic
    removed = []

    def racing(path: Path, text: str) -> Path:
        if len(removed) < 2:  # another process's tidy removes the folder, twice, under it
            removed.append(path)
            shutil.rmtree(path.parents[1])
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return real(path, text)

    monkeypatch.setattr(reference_cache, "write_atomic", racing)
    value_of(key(), lambda: 1)
    assert len(removed) == 2 and path_of(key()).is_file()
    assert capsys.readouterr().err == ""  # a race is no fault of the location


def test_a_stale_temporary_file_goes_and_a_fresh_one_stays(cache, monkeypatch):
    value_of(key(), lambda: 1)
    folder = path_of(key()).parent
    stale = folder / f".{'a' * 64}.json.123.deadbeef.tmp"
    fresh = folder / f".{'b' * 64}.json.124.deadbeef.tmp"
    for path in (stale, fresh):
        path.write_text("half")
    os.utime(stale, (1e9, 1e9))
    new_process(monkeypatch)
    value_of(key(), lambda: 1)
    assert not stale.exists() and fresh.exists()


READER = """
import sys, time
from rnngrade.grading.reference_cache import entry_key, value_of
key = entry_key(lab="lab10", digest="d" * 64, test="t", seed=0, key="k", device="cpu")
want = list(range(2000))
computed = reads = 0
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    def compute():
        global computed
        computed += 1
        return want
    assert value_of(key, compute) == want
    reads += 1
print(reads, computed)
"""


def test_another_process_reads_and_writes_through_removals(cache, monkeypatch):
    """A process reading and writing one entry while this one removes it over and over (the
    cap of another process's run, the folder of another lab version's run) sees misses only."""
    import subprocess
    import sys
    import time

    child = subprocess.Popen([sys.executable, "-c", READER, "2"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             env={**os.environ, cache_eviction.MAX_ENV: "none"})
    monkeypatch.setenv(cache_eviction.MAX_ENV, "1")  # every tidy here removes every file
    folder = cache / cache_eviction.place(key())[0] / cache_eviction.place(key())[1]
    removals = 0
    while child.poll() is None:
        cache_eviction.enforce_cap(cache)
        if removals % 5 == 0:
            shutil.rmtree(folder, ignore_errors=True)
        removals += 1
        time.sleep(0.002)
    out, err = child.communicate()
    assert child.returncode == 0, err
    reads, computed = map(int, out.split())
    assert reads > computed > 1 and err == ""
