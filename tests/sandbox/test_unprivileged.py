"""The sandbox of a grader that is not root: a user namespace maps the grader's own uid, and
the worker still gets its private root, namespaces and limits. Run as ``nobody`` from a root
test process; skipped (saying why) where that user cannot reach the interpreter or the course."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from rnngrade.paths import course_root

NOBODY = 65534

PROBE = textwrap.dedent('''
    import json
    import sys

    import numpy as np

    from rnngrade.sandbox import SandboxRunner, SandboxUnavailable

    source = open(sys.argv[1]).read()
    try:
        runner = SandboxRunner(source, "rnn.py")
    except SandboxUnavailable as exc:
        print(json.dumps({"unavailable": str(exc)}))
        raise SystemExit(0)
    value = runner.call("softmax", (np.zeros((3, 2)),)).value
    print(json.dumps({"protections": runner.protections(),
                      "details": runner.protection_details(), "value": value.tolist()}))
    runner.close()
''')


def as_nobody(tmp_path, *args: str) -> subprocess.CompletedProcess:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    os.chown(home, NOBODY, NOBODY)
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "PYTHONPATH": str(course_root() / "graders")}
    command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
               sys.executable, *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=180,
                          cwd=home)


@pytest.fixture
def nobody():
    """A folder the unprivileged user can read (pytest's own tmp_path is private to root)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root (to become nobody) and setpriv")
    folder = Path(tempfile.mkdtemp(prefix="rnngrade-nobody-"))
    os.chmod(folder, 0o755)
    try:
        # the zygote starts the interpreter anew: that must work for the user, too
        reach = as_nobody(folder, "-c", "import subprocess, sys; import numpy, rnngrade.sandbox;"
                          " sys.exit(subprocess.run([sys.executable, '-c', 'import numpy'])"
                          ".returncode)")
        if reach.returncode != 0:
            pytest.skip("the unprivileged user cannot run this interpreter or import the "
                        f"course here: {reach.stderr.strip().splitlines()[-1:]}")
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_grader_without_root_still_jails_the_worker(nobody):
    script = nobody / "probe.py"
    script.write_text(PROBE)
    reference = nobody / "rnn.py"
    reference.write_text((course_root() / "solutions" / "lab1" / "rnn.py").read_text())
    os.chmod(script, 0o644)
    os.chmod(reference, 0o644)
    run = as_nobody(nobody, str(script), str(reference))
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    if "unavailable" in report and "unshare" in report["unavailable"]:
        pytest.skip(f"no unprivileged user namespaces here: {report['unavailable']}")
    assert "unavailable" not in report, report["unavailable"]
    protections = report["protections"]
    for measure in ("private filesystem", "read-only system directories", "pid namespace",
                    "network namespace", "unprivileged uid", "no_new_privs", "resource limits",
                    "scrubbed environment", "output captured", "cgroup namespace",
                    "host environment hidden in /proc", "system call filter",
                    "shared memory bounded"):
        assert protections[measure], (measure, report["details"])
    assert "process-count" in report["details"]["resource limits"]
    assert report["value"] == [[1 / 3] * 2] * 3
