"""Submission times: the manifest, then the git commit time, then (when asked) the file time;
dates out of range; times shown in the course's zone; what a copied class's file times say."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from rnngrade.course.config import CourseError, LabPlan, LatePolicy
from rnngrade.course.times import (
    MANIFEST,
    SubmissionTime,
    TimesFrom,
    TimeSource,
    Timing,
    file_time_warnings,
    find_time,
    git_commit_time,
    newest_mtime,
    read_manifest,
    show_time,
    submission_time,
    untimed_refusal,
)
from rnngrade.submission.gitmeta import CommitTime, head_commit_time

UTC = dt.timezone.utc
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def stamp(path: Path, when: dt.datetime) -> None:
    os.utime(path, (when.timestamp(), when.timestamp()), follow_symlinks=False)


def git(folder: Path, *args: str, date: str = "2026-09-20T12:00:00+00:00") -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(folder.parent), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "s", "GIT_AUTHOR_EMAIL": "s@x", "GIT_COMMITTER_NAME": "s",
           "GIT_COMMITTER_EMAIL": "s@x", "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True)


def test_the_manifest_comes_first_by_student_id_or_entry_name(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.py").write_text("x = 1\n")
    (subs / "bob.zip").write_bytes(b"PK")
    (subs / MANIFEST).write_text(json.dumps({
        "alice": {"submitted_at": "2026-09-21T22:10:00Z"},
        "bob.zip": {"submitted_at": "2026-09-22T01:00:00+02:00"}}))
    manifest = read_manifest(subs)
    alice = submission_time(subs / "alice.py", "alice", manifest)
    bob = submission_time(subs / "bob.zip", "bob", manifest)
    assert alice is not None and alice.source is TimeSource.MANIFEST
    assert alice.at == dt.datetime(2026, 9, 21, 22, 10, tzinfo=UTC)
    assert bob is not None and bob.at == dt.datetime(2026, 9, 21, 23, 0, tzinfo=UTC)


def test_a_manifest_inside_a_students_own_folder_is_never_read(tmp_path):
    subs = tmp_path / "subs"
    (subs / "mallory").mkdir(parents=True)
    (subs / "mallory" / "rnn.py").write_text("x = 1\n")
    stamp(subs / "mallory" / "rnn.py", dt.datetime(2026, 9, 25, tzinfo=UTC))
    (subs / "mallory" / MANIFEST).write_text(json.dumps(
        {"mallory": {"submitted_at": "2020-01-01T00:00:00Z"}}))
    when = submission_time(subs / "mallory", "mallory", read_manifest(subs), TimesFrom.FILES)
    assert when is not None and when.source is TimeSource.FILE
    assert when.at == dt.datetime(2026, 9, 25, tzinfo=UTC)


@pytest.mark.parametrize("text", ["[1, 2]", "{\"alice\": {\"submitted_at\": \"soon\"}}",
                                  "{\"alice\": 3}", "{not json"])
def test_a_bad_manifest_is_a_clear_error(tmp_path, text):
    (tmp_path / MANIFEST).write_text(text)
    with pytest.raises(CourseError, match=MANIFEST):
        read_manifest(tmp_path)


def test_a_folders_file_time_is_its_newest_files_links_and_hidden_names_aside(tmp_path):
    folder = tmp_path / "carol"
    (folder / "sub").mkdir(parents=True)
    for name, day in (("rnn.py", 20), ("sub/notes.py", 22), (".hidden", 28)):
        (folder / name).write_text("x")
        stamp(folder / name, dt.datetime(2026, 9, day, tzinfo=UTC))
    (folder / "link").symlink_to("/etc/hostname")
    assert newest_mtime(folder) == dt.datetime(2026, 9, 22, tzinfo=UTC)


@needs_git
def test_a_git_clone_gives_its_head_commit_time(tmp_path):
    repo = tmp_path / "dave"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "rnn.py").write_text("x = 1\n")
    git(repo, "add", "rnn.py")
    git(repo, "commit", "-qm", "done", date="2026-09-21T23:30:00+02:00")
    stamp(repo / "rnn.py", dt.datetime(2026, 12, 1, tzinfo=UTC))
    when = submission_time(repo, "dave", {})
    assert when is not None and when.source is TimeSource.GIT
    assert when.at == dt.datetime(2026, 9, 21, 21, 30, tzinfo=UTC)


@needs_git
def test_reading_git_never_runs_what_the_repository_configures(tmp_path):
    repo = tmp_path / "eve"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "rnn.py").write_text("x = 1\n")
    git(repo, "add", "rnn.py")
    git(repo, "commit", "-qm", "done")
    proof = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {proof}\nexit 1\n")
    script.chmod(0o755)
    with (repo / ".git" / "config").open("a") as config:
        config.write(f"[core]\n\tfsmonitor = {script}\n\tpager = {script}\n"
                     f"[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {script}\n")
    assert git_commit_time(repo) == dt.datetime(2026, 9, 20, 12, tzinfo=UTC)
    assert not proof.exists()


@needs_git
def test_a_git_folder_that_is_a_link_elsewhere_is_not_followed(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    (other / "a.py").write_text("x = 1\n")
    git(other, "add", "a.py")
    git(other, "commit", "-qm", "theirs")
    entry = tmp_path / "frank"
    entry.mkdir()
    (entry / "rnn.py").write_text("x = 2\n")
    stamp(entry / "rnn.py", dt.datetime(2026, 9, 30, tzinfo=UTC))
    (entry / ".git").symlink_to(other / ".git")
    when = submission_time(entry, "frank", {}, TimesFrom.FILES)
    assert when is not None and when.source is TimeSource.FILE
    assert when.at == dt.datetime(2026, 9, 30, tzinfo=UTC)


def test_nothing_readable_gives_no_time(tmp_path):
    (tmp_path / "ghost").symlink_to(tmp_path / "missing")
    assert submission_time(tmp_path / "ghost", "ghost", {}, TimesFrom.FILES) is None


def test_file_times_are_used_only_when_the_instructor_asks(tmp_path):
    entry = tmp_path / "alice.py"
    entry.write_text("x = 1\n")
    stamp(entry, dt.datetime(2026, 12, 5, 14, 2, tzinfo=UTC))
    for allowed in (TimesFrom.AUTO, TimesFrom.MANIFEST, TimesFrom.GIT):
        assert submission_time(entry, "alice", {}, allowed) is None
    assert submission_time(entry, "alice", {}) is None  # the default is auto
    when = submission_time(entry, "alice", {}, TimesFrom.FILES)
    assert when == find_time(entry, "alice", {}, TimesFrom.FILES).time
    assert when is not None and when.source is TimeSource.FILE
    assert when.at == dt.datetime(2026, 12, 5, 14, 2, tzinfo=UTC)


@needs_git
def test_manifest_and_git_each_use_only_their_own_source(tmp_path):
    repo = tmp_path / "dave"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "rnn.py").write_text("x = 1\n")
    git(repo, "add", "rnn.py")
    git(repo, "commit", "-qm", "done", date="2026-09-21T23:30:00+00:00")
    listed = {"dave": dt.datetime(2026, 9, 20, tzinfo=UTC)}
    sources = {allowed: submission_time(repo, "dave", listed, allowed) for allowed in TimesFrom}
    assert {a: w.source if w else None for a, w in sources.items()} == {
        TimesFrom.AUTO: TimeSource.MANIFEST, TimesFrom.MANIFEST: TimeSource.MANIFEST,
        TimesFrom.GIT: TimeSource.GIT, TimesFrom.FILES: TimeSource.MANIFEST}
    assert submission_time(repo, "dave", {}, TimesFrom.MANIFEST) is None
    assert submission_time(repo, "dave", {}, TimesFrom.AUTO).source is TimeSource.GIT


@needs_git
def test_a_git_date_out_of_range_is_no_time_with_a_note(tmp_path):
    repo = tmp_path / "mallory"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "rnn.py").write_text("x = 1\n")
    stamp(repo / "rnn.py", dt.datetime(2026, 9, 21, tzinfo=UTC))
    git(repo, "add", "rnn.py")
    git(repo, "commit", "-qm", "from the future", date="@300000000000 +0000")  # year 11476
    assert git_commit_time(repo) is None
    found = find_time(repo, "mallory", {})
    assert found.time is None and "out of range" in found.note and "300000000000" in found.note
    fallback = find_time(repo, "mallory", {}, TimesFrom.FILES)
    assert fallback.time is not None and fallback.time.source is TimeSource.FILE
    assert "out of range" in fallback.note


@pytest.mark.parametrize("text", ["9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+01:00",
                                  "1969-07-20T20:17:00Z", "9999-06-01T00:00:00Z"])
def test_a_manifest_time_out_of_range_is_a_usage_error_naming_the_key(tmp_path, text):
    (tmp_path / MANIFEST).write_text(json.dumps({"bob": {"submitted_at": "2026-09-21T22:00Z"},
                                                 "alice": {"submitted_at": text}}))
    with pytest.raises(CourseError, match=r"alice\.submitted_at: .*out of range"):
        read_manifest(tmp_path)


def test_times_are_shown_in_the_courses_zone_with_utc_beside():
    berlin = ZoneInfo("Europe/Berlin")
    due = dt.datetime(2026, 9, 21, 21, 59, tzinfo=UTC)
    assert show_time(due, berlin) == "2026-09-21 23:59 Europe/Berlin (21:59 UTC)"
    late = dt.datetime(2026, 9, 21, 22, 30, tzinfo=UTC)
    assert show_time(late, berlin) == "2026-09-22 00:30 Europe/Berlin (2026-09-21 22:30 UTC)"
    assert show_time(due, UTC) == "2026-09-21 21:59 UTC"


PENALTY = LabPlan("lab1", due=dt.datetime(2026, 9, 21, 21, 59, tzinfo=UTC),
                  late=LatePolicy(penalty_per_day=10))


def test_no_time_is_refused_only_when_lateness_can_cost_points():
    at = dt.datetime(2026, 9, 21, tzinfo=UTC)
    timings = {"zed": Timing(SubmissionTime(at, TimeSource.MANIFEST)), "bob": Timing(None),
               "carol": Timing(None, "its git commit date (1 seconds) is out of range")}
    refusal = untimed_refusal(PENALTY, ZoneInfo("Europe/Berlin"), timings, TimesFrom.AUTO)
    assert "2 of 3 submission(s) have no time" in refusal
    assert "bob, carol (its git commit date" in refusal and "zed" not in refusal
    assert "due 2026-09-21 23:59 Europe/Berlin (21:59 UTC)" in refusal
    for fix in (".submissions.json", "git clones", "--times-from files"):
        assert fix in refusal
    capped = LabPlan("lab1", due=PENALTY.due, late=LatePolicy(max_days=3))
    assert untimed_refusal(capped, UTC, timings, TimesFrom.AUTO)
    free = LabPlan("lab1", due=PENALTY.due, late=LatePolicy(grace_minutes=30))
    assert untimed_refusal(free, UTC, timings, TimesFrom.AUTO) == ""
    assert untimed_refusal(LabPlan("lab1", late=LatePolicy(penalty_per_day=10)), UTC, timings,
                           TimesFrom.AUTO) == ""
    assert untimed_refusal(PENALTY, UTC, {"zed": timings["zed"]}, TimesFrom.AUTO) == ""


def test_a_class_of_copied_file_times_is_warned_about():
    start = dt.datetime(2026, 12, 5, 14, 2, tzinfo=UTC)
    copied = [start + dt.timedelta(seconds=20 * i) for i in range(3)]
    [clustered] = file_time_warnings(copied, late=0)
    assert "within 1 minute of each other" in clustered and ".submissions.json" in clustered
    spread = [start + dt.timedelta(hours=5 * i) for i in range(4)]
    assert file_time_warnings(spread, late=2) == []  # half late: a bad week, not a copy
    [mostly_late] = file_time_warnings(spread, late=3)
    assert "3 of the 4 submissions timed by their files are late" in mostly_late
    [both] = file_time_warnings(copied, late=3)
    assert "within 1 minute" in both and "3 of the 3" in both
    assert file_time_warnings(copied[:2], late=2) == []  # two students are no class


# A student's .git is hostile input: each attack below once stalled the batch, filled the
# grader's temporary folder or made git inflate hundreds of MiB outside the sandbox.

MIB = 1 << 20
BOUNDED = """
import json, sys
from pathlib import Path
from rnngrade.course.times import find_time
found = find_time(Path(sys.argv[1]), "mallory", {})
print(json.dumps({"at": found.time.at.isoformat() if found.time else None, "note": found.note}))
"""


def bounded_find_time(entry: Path, tmp: Path, *, memory: int = 512 * MIB,
                      written: int = MIB) -> dict[str, str | None]:
    """``find_time`` in a child process that may use ``memory`` bytes of address space and write
    no file larger than ``written`` (its temporary folder is ``tmp``); what it found."""
    import resource
    import sys

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_FSIZE, (written, written))

    env = {**os.environ, "TMPDIR": str(tmp)}
    done = subprocess.run([sys.executable, "-c", BOUNDED, str(entry)], preexec_fn=limits,
                          env=env, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def clone(tmp_path: Path, name: str = "mallory") -> Path:
    repo = tmp_path / name
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "rnn.py").write_text("x = 1\n")
    git(repo, "add", "rnn.py")
    git(repo, "commit", "-qm", "done", date="2026-09-21T21:30:00+00:00")
    return repo


HEAD_TIME = "2026-09-21T21:30:00+00:00"


@needs_git
def test_a_sparse_300_mib_file_under_refs_is_never_copied(tmp_path):
    repo = clone(tmp_path)
    huge = repo / ".git" / "refs" / "tags" / "huge"
    with huge.open("wb") as sparse:
        sparse.truncate(300 * MIB)  # costs no disk
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    found = bounded_find_time(repo, scratch)
    assert found == {"at": HEAD_TIME, "note": ""}  # read in place, nothing written
    assert list(scratch.iterdir()) == []
    (repo / ".git" / "refs" / "heads" / "main").unlink()  # HEAD's ref itself the huge file
    os.link(huge, repo / ".git" / "refs" / "heads" / "main")
    found = bounded_find_time(repo, scratch)
    assert found["at"] is None and "refs/heads/main is larger than 4 KiB" in found["note"]


@needs_git
@pytest.mark.parametrize("how", ["fifo", "link to a fifo", "link out"])
def test_heads_ref_as_a_pipe_or_a_link_is_no_time_with_a_note_and_no_wait(tmp_path, how):
    repo = clone(tmp_path)
    ref = repo / ".git" / "refs" / "heads" / "main"
    ref.unlink()
    if how == "fifo":
        os.mkfifo(ref)
    elif how == "link to a fifo":
        os.mkfifo(tmp_path / "pipe")
        ref.symlink_to(tmp_path / "pipe")  # git would open it and wait for a writer
    else:
        other = clone(tmp_path, "other")
        ref.symlink_to(other / ".git" / "refs" / "heads" / "main")
    stamp(repo / "rnn.py", dt.datetime(2026, 9, 25, tzinfo=UTC))
    found = find_time(repo, "mallory", {})
    assert found.time is None
    why = "named pipe" if how == "fifo" else "symbolic link"
    assert found.note.startswith("its .git folder gives no time: refs/heads/main: ")
    assert why in found.note
    fallback = find_time(repo, "mallory", {}, TimesFrom.FILES)
    assert fallback.time == SubmissionTime(dt.datetime(2026, 9, 25, tzinfo=UTC), TimeSource.FILE)


@needs_git
def test_a_commit_object_that_inflates_to_768_mib_is_not_inflated(tmp_path):
    import zlib

    repo = clone(tmp_path)
    lines = (b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
             b"committer s <s@x> 1790000000 +0000\n\n")
    zeros = 768
    head = b"commit %d\0" % (len(lines) + zeros * MIB) + lines
    comp = zlib.compressobj(9)
    start = comp.compress(head) + comp.flush(zlib.Z_FULL_FLUSH)
    block = comp.compress(bytes(MIB)) + comp.flush(zlib.Z_FULL_FLUSH)  # the same after a reset
    check = zlib.adler32(head)
    for _ in range(zeros):
        check = zlib.adler32(bytes(MIB), check)
    sha = "ab" * 20
    loose = repo / ".git" / "objects" / sha[:2] / sha[2:]
    loose.parent.mkdir(exist_ok=True)
    with loose.open("wb") as out:
        out.write(start)
        for _ in range(zeros):
            out.write(block)
        out.write(comp.flush()[:-4] + check.to_bytes(4, "big"))
    assert loose.stat().st_size < MIB  # 0.8 MB on disk, 768 MiB inflated
    (repo / ".git" / "refs" / "heads" / "main").write_text(sha + "\n")
    found = bounded_find_time(repo, tmp_path, memory=512 * MIB)
    assert found["at"] is None
    assert f"inflates to {len(lines) + zeros * MIB} bytes, more than 64 KiB" in found["note"]


@needs_git
@pytest.mark.parametrize("attack", ["gitdir file", "impossible ref", "dangling ref",
                                    "not a commit", "damaged object"])
def test_a_git_folder_that_cannot_be_read_safely_is_no_time_with_a_note(tmp_path, attack):
    repo = clone(tmp_path)
    git_dir = repo / ".git"
    expected = {"gitdir file": ".git is a file, not a folder",
                "impossible ref": "HEAD names an impossible ref ('refs/heads/../../../etc')",
                "dangling ref": "refs/heads/gone does not exist",
                "not a commit": "HEAD names a blob, not a commit",
                "damaged object": "the commit object is damaged"}[attack]
    if attack == "gitdir file":
        shutil.rmtree(git_dir)
        git_dir.write_text(f"gitdir: {clone(tmp_path, 'other') / '.git'}\n")
    elif attack == "impossible ref":
        (git_dir / "HEAD").write_text("ref: refs/heads/../../../etc\n")
    elif attack == "dangling ref":
        (git_dir / "HEAD").write_text("ref: refs/heads/gone\n")
    else:
        blob = subprocess.run(["git", "hash-object", "-w", "rnn.py"], cwd=repo, check=True,
                              capture_output=True, text=True).stdout.strip()
        if attack == "damaged object":
            path = git_dir / "objects" / blob[:2] / blob[2:]
            path.chmod(0o644)
            path.write_bytes(b"not zlib at all")
        (git_dir / "refs" / "heads" / "main").write_text(blob + "\n")
    found = find_time(repo, "mallory", {})
    assert found.time is None and expected in found.note, found.note


@needs_git
def test_a_packed_clone_gives_its_head_commit_time(tmp_path):
    repo = clone(tmp_path)
    for day in (22, 23):
        (repo / "rnn.py").write_text(f"x = {day}\n")
        git(repo, "commit", "-qam", "more", date=f"2026-09-{day}T08:00:00+00:00")
    git(repo, "gc", "-q")  # every object in a pack, every ref in packed-refs
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert list((repo / ".git" / "objects" / "pack").glob("*.idx"))
    assert git_commit_time(repo) == dt.datetime(2026, 9, 23, 8, tzinfo=UTC)
    copy = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(copy)],
                   check=True, capture_output=True)
    assert git_commit_time(copy) == dt.datetime(2026, 9, 23, 8, tzinfo=UTC)


@needs_git
@pytest.mark.parametrize("offsets", [True, False], ids=["ofs-delta", "ref-delta"])
def test_commits_stored_as_deltas_in_a_pack_give_their_time(tmp_path, offsets):
    """Many similar commits packed with ``gc --aggressive``: git stores most as deltas on
    another (the last commit, with the shortest message, among them); each commit's time reads
    as git itself says."""
    repo = clone(tmp_path)
    for day in range(1, 25):
        (repo / "rnn.py").write_text(f"x = {100 + day}\n")
        message = "Work on the cell. " * (150 - 5 * day) + f"step {day}"
        git(repo, "commit", "-qam", message, date=f"2026-10-{day:02d}T08:00:00+00:00")
    git(repo, "-c", f"repack.useDeltaBaseOffset={str(offsets).lower()}", "gc", "-q",
        "--aggressive")
    listing = subprocess.run(
        ["git", "verify-pack", "-v", *map(str, (repo / ".git/objects/pack").glob("*.idx"))],
        capture_output=True, text=True, check=True).stdout
    deltas = [line.split()[0] for line in listing.splitlines()
              if line.split()[1:2] == ["commit"] and len(line.split()) == 7]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True,
                          text=True, check=True).stdout.strip()
    assert head in deltas and len(deltas) >= 10
    assert git_commit_time(repo) == dt.datetime(2026, 10, 24, 8, tzinfo=UTC)
    ref = repo / ".git" / "refs" / "heads" / "main"
    for sha in deltas:
        ref.write_text(sha + "\n")
        seconds = subprocess.run(["git", "show", "-s", "--format=%ct", sha], cwd=repo,
                                 capture_output=True, text=True, check=True).stdout.strip()
        assert head_commit_time(repo) == CommitTime(int(seconds)), sha


@needs_git
def test_a_delta_chain_that_loops_or_inflates_past_the_bound_gives_no_time(tmp_path):
    """A pack whose delta names itself as its base, or claims a huge result, is refused with a
    note (never followed forever, never inflated)."""
    import hashlib
    import zlib

    repo = clone(tmp_path)
    pack_dir = repo / ".git" / "objects" / "pack"
    pack_dir.mkdir(parents=True, exist_ok=True)

    def varint(n: int) -> bytes:
        out = b""
        while True:
            byte, n = n & 0x7F, n >> 7
            out += bytes([byte | (0x80 if n else 0)])
            if not n:
                return out

    def entry(kind: int, size: int, rest: bytes) -> bytes:
        head = [(kind << 4) | (size & 15) | (0x80 if size >> 4 else 0)]
        size >>= 4
        while size:
            head.append((size & 0x7F) | (0x80 if size >> 7 else 0))
            size >>= 7
        return bytes(head) + rest

    sha = bytes.fromhex("cd" * 20)
    commit = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ncommitter s <s@x> 1790000000 +0000\n"
    whole = entry(1, len(commit), zlib.compress(commit))
    grows = varint(len(commit)) + varint(1 << 30) + b"\x90\x00"  # copy 64 KiB, many times
    cases = {"loop": [entry(7, 4, sha + zlib.compress(b"\x00\x00\x00\x00"))],
             "huge": [whole, entry(6, len(grows), varint(len(whole)) + zlib.compress(grows))]}
    for case, entries in cases.items():
        for old in pack_dir.iterdir():
            old.unlink()
        body = b"".join(entries)
        at = 12 + len(body) - len(entries[-1])
        pack = b"PACK" + (2).to_bytes(4, "big") + len(entries).to_bytes(4, "big") + body
        pack += hashlib.sha1(pack).digest()
        idx = b"\xfftOc" + (2).to_bytes(4, "big")
        idx += b"".join((0 if i < sha[0] else 1).to_bytes(4, "big") for i in range(256))
        idx += sha + b"\0\0\0\0" + at.to_bytes(4, "big") + bytes(40)
        (pack_dir / "pack-x.pack").write_bytes(pack)
        (pack_dir / "pack-x.idx").write_bytes(idx)
        (repo / ".git" / "refs" / "heads" / "main").write_text(sha.hex() + "\n")
        found = head_commit_time(repo)
        assert found.seconds is None
        assert {"loop": "a chain of more than 64 deltas",
                "huge": "inflates to 1073741824 bytes, more than 64 KiB"}[case] in found.note, \
            found.note
