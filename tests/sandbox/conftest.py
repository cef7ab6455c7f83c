"""Fixtures of the sandbox tests: runners that are closed afterwards, lab1 arguments, and canary
directories (the only things hostile code is ever pointed at)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from rnngrade.paths import course_root

ROOT = course_root()
HOSTILE = ROOT / "fixtures" / "submissions" / "hostile"
REFERENCE = (ROOT / "solutions" / "lab1" / "rnn.py").read_text()
REQUIRED = ("private filesystem", "unprivileged uid")


def require_protected(runner) -> None:
    """Skip (saying why) unless the worker reports a private filesystem and a non-root uid.
    Every test that runs hostile or failing code goes through this first."""
    protections = runner.protections()
    missing = [name for name in REQUIRED if not protections.get(name)]
    if missing:
        runner.close()
        pytest.skip(f"the sandbox cannot establish {', '.join(missing)} here: not running "
                    "hostile code unprotected")


@pytest.fixture(scope="session")
def sandbox_available() -> None:
    """Skip when this machine cannot run sandboxed workers at all (not Linux, no namespaces)."""
    from rnngrade.sandbox import SandboxRunner, SandboxUnavailable

    try:
        SandboxRunner("", "probe.py").close()
    except SandboxUnavailable as exc:
        pytest.skip(f"sandbox unavailable here: {exc}")


@pytest.fixture(scope="session")
def sandbox_protected(sandbox_available: None) -> None:
    """Skip unless workers here get a private filesystem and a non-root uid (safety first)."""
    from rnngrade.sandbox import SandboxRunner

    probe = SandboxRunner("", "probe.py")
    require_protected(probe)
    probe.close()


@pytest.fixture
def sandbox(sandbox_available: None) -> Iterator[Callable]:
    """``sandbox(source, **kwargs)``: a protected SandboxRunner, closed after the test."""
    from rnngrade.sandbox import SandboxRunner

    runners = []

    def make(source: str, filename: str = "rnn.py", **kwargs):
        runner = SandboxRunner(source, filename, **kwargs)
        runners.append(runner)
        require_protected(runner)
        return runner

    yield make
    for runner in runners:
        runner.close()


@pytest.fixture
def lab1_args() -> tuple:
    """(xt, a_prev, parameters) for rnn_cell_forward, and the expected (a_next, yt_pred)."""
    rng = np.random.default_rng(7)
    p = {"Wax": rng.standard_normal((5, 3)), "Waa": rng.standard_normal((5, 5)),
         "Wya": rng.standard_normal((2, 5)), "ba": rng.standard_normal((5, 1)),
         "by": rng.standard_normal((2, 1))}
    xt, a_prev = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))
    a_next = np.tanh(p["Waa"] @ a_prev + p["Wax"] @ xt + p["ba"])
    z = p["Wya"] @ a_next + p["by"]
    e = np.exp(z - z.max(axis=0))
    return (xt, a_prev, p), (a_next, e / e.sum(axis=0))


@dataclass
class Canary:
    """A fake course root the test owns: marked with RNNGRADE_CANARY, holding a copy of the
    reference and the hidden suite with a secret token in them, and an output directory."""

    root: Path
    token: str

    def snapshot(self) -> dict[str, str]:
        """Every file under the root (and the empty directories) with a hash of its bytes."""
        state = {}
        for path in sorted(self.root.rglob("*")):
            rel = str(path.relative_to(self.root))
            if path.is_file():
                state[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            elif path.is_dir() and not any(path.iterdir()):
                state[rel] = "<empty dir>"
        return state


@pytest.fixture
def canary(tmp_path: Path) -> Canary:
    """A fresh canary course root under the test's tmp_path."""
    token = f"RNNGRADE-CANARY-{secrets.token_hex(8)}"
    root = tmp_path / "canary-course"
    (root / "solutions" / "lab1").mkdir(parents=True)
    (root / "graders" / "suites" / "lab1").mkdir(parents=True)
    (root / "out").mkdir()
    (root / "RNNGRADE_CANARY").write_text("a test's canary directory\n")
    (root / "solutions" / "lab1" / "rnn.py").write_text(f"# {token}\n{REFERENCE}")
    (root / "solutions" / "lab1" / "rnn_reference_copy.py").write_text(f"# {token}\n{REFERENCE}")
    suite = ROOT / "graders" / "suites" / "lab1" / "test_rnn_hidden.py"
    (root / "graders" / "suites" / "lab1" / "test_rnn_hidden.py").write_text(
        f"# {token}\n{suite.read_text()}")
    (root / "out" / "results.json").write_text(f'{{"token": "{token}", "score": 0}}\n')
    return Canary(root, token)


@pytest.fixture
def hostile_source() -> Callable[..., str]:
    """``hostile_source(name, canary=None, port=None)``."""
    return _hostile_source


def _hostile_source(name: str, canary: Canary | None = None, port: int | None = None) -> str:
    """A hostile fixture's text with the test's canary root and port filled in."""
    text = (HOSTILE / f"{name}.py").read_text()
    if canary is not None:
        text = text.replace("__CANARY_ROOT__", str(canary.root))
    if port is not None:
        text = text.replace("__LOOPBACK_PORT__", str(port))
    return text
