"""The ``rnngrade`` command's exit: the command's code, its output flushed, the exit handlers run,
without the interpreter's teardown."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rnngrade import __version__

SCRIPT = """
import atexit, sys, threading, time
from rnngrade import cli

def work():
    time.sleep(0.2)
    print("thread done", file=sys.stderr)

def fake_main():
    threading.Thread(target=work).start()  # not a daemon: the exit waits for it
    atexit.register(lambda: print("handler ran", file=sys.stderr))
    print("buffered output", end="")
    return 3

cli.main = fake_main
cli.console()
print("never reached")
"""


def test_the_exit_keeps_the_code_the_output_threads_and_handlers():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 3
    assert done.stdout == "buffered output"
    assert done.stderr.splitlines() == ["thread done", "handler ran"]


@pytest.mark.parametrize("args, code, stream, words", [
    (["--version"], 0, "stdout", f"rnngrade {__version__}"),
    (["grade"], 2, "stderr", "the following arguments are required"),
])
def test_argument_parsing_exits_as_argparse_says(args, code, stream, words):
    done = subprocess.run([sys.executable, "-m", "rnngrade.cli", *args], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == code
    assert words in getattr(done, stream)
