"""torch's refusal of an in-place write into a tensor that requires grad says what to do instead,
in the sandboxed worker as in-process."""

import pytest

from rnngrade.harness.runner.base import EXCEPTION, StudentError
from rnngrade.harness.runner.inprocess import InProcessRunner

torch = pytest.importorskip("torch")

SOURCE = '''
import torch

def sgd_step(w, g):
    w -= 0.1 * g
    return w

def make_and_step(n):
    w = torch.ones(n, requires_grad=True)
    return sgd_step(w, torch.ones(n))
'''


def _message(runner) -> str:
    with pytest.raises(StudentError) as info:
        runner.call("make_and_step", (3,))
    assert info.value.kind == EXCEPTION
    return info.value.message


def _says_what_to_do(message: str) -> None:
    assert message.startswith("RuntimeError: a leaf Variable that requires grad"), message
    assert "with torch.no_grad():" in message and "`h = h + dh`" in message
    assert "line 5, in sgd_step" in message  # the student's line is still shown


def test_in_process():
    _says_what_to_do(_message(InProcessRunner.from_source(SOURCE, "train.py")))


def test_in_the_sandboxed_worker(sandbox):
    _says_what_to_do(_message(sandbox(SOURCE, "train.py")))
