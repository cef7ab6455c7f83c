"""A lab's public vectors and mistake fingerprints computed once per test run, not once per
pytest-xdist worker.

``authoring.generate.public_fixtures`` keeps the pair once per process for the same inputs; the
release build (tests/release) and the staleness check (tests/test_generated.py) ask for the same
pair, often in two workers. The first worker to ask for a lab computes it under a lock in the
folder the workers' temporary folders share and pickles it there; the others wait for it and put
it in their own process's cache through ``public_fixtures``'s ``kept_in`` (named by the lab and the
digest of every input file), so what they check is what ``public_fixtures`` would compute. The
grader's disk cache is not used: authoring may not import grading (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import fcntl
import os
import pickle
from collections.abc import Callable
from pathlib import Path

from rnngrade.authoring.generate import FixturePair, public_fixtures
from rnngrade.labs import Lab
from rnngrade.paths import course_root


def share_public_fixtures(lab: Lab, shared: Path) -> None:
    """Compute ``lab``'s pair for the course at ``course_root()`` once per test run (``shared``
    is a folder every worker sees), and leave it in this process's cache. Without xdist the
    process's own cache is enough."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    shared.mkdir(parents=True, exist_ok=True)

    def kept(name: str, compute: Callable[[], FixturePair]) -> FixturePair:
        stored = shared / f"{name}.pickle"
        with open(shared / f"{lab.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            if stored.exists():
                pair: FixturePair = pickle.loads(stored.read_bytes())
                return pair
            pair = compute()
            partial = stored.with_suffix(".partial")
            partial.write_bytes(pickle.dumps(pair))
            partial.replace(stored)
            return pair

    public_fixtures(lab, course_root(), kept_in=kept)
