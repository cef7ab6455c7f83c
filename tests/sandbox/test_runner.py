"""SandboxRunner with well-behaved code: the StudentRunner contract, the same results as the
in-process runner, handles, callable arguments, helpers, captured output."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import torch

from rnngrade.harness.runner.base import (
    EXCEPTION,
    LOAD_ERROR,
    MISSING_FUNCTION,
    NOT_IMPLEMENTED,
    ArgRef,
    FunctionRef,
    Handle,
    StudentError,
)
from rnngrade.harness.runner.inprocess import InProcessRunner
from rnngrade.sandbox import Limits

REFERENCE_CALLS = [
    ("softmax", lambda rng: (rng.standard_normal((5, 4)) * 3,)),
    ("softmax", lambda rng: (rng.standard_normal((3, 2)).astype(np.float32),)),
    ("rnn_cell_forward", lambda rng: (rng.standard_normal((3, 4)), rng.standard_normal((5, 4)),
                                      {"Wax": rng.standard_normal((5, 3)),
                                       "Waa": rng.standard_normal((5, 5)),
                                       "Wya": rng.standard_normal((2, 5)),
                                       "ba": rng.standard_normal((5, 1)),
                                       "by": rng.standard_normal((2, 1))})),
    ("rnn_forward_batch", lambda rng: tuple(torch.from_numpy(rng.standard_normal(s))
                                            for s in ((2, 3, 4), (5, 5), (5, 4), (5,), (2, 5)))),
]


def same_tree(a, b) -> bool:
    if isinstance(a, tuple | list):
        return type(a) is type(b) and len(a) == len(b) and all(map(same_tree, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_tree(a[k], b[k]) for k in a)
    if isinstance(a, torch.Tensor):
        return type(b) is torch.Tensor and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, np.ndarray):
        return type(b) is np.ndarray and a.dtype == b.dtype and np.array_equal(a, b)
    return a == b


@pytest.mark.parametrize("function, make_args", REFERENCE_CALLS)
def test_the_reference_gives_bit_identical_results_in_both_runners(sandbox, function, make_args):
    from rnngrade.paths import course_root

    source = (course_root() / "solutions" / "lab1" / "rnn.py").read_text()
    args = make_args(np.random.default_rng(3))
    sandboxed = sandbox(source).call(function, args)
    inprocess = InProcessRunner.from_source(source, "rnn.py").call(function, args)
    assert same_tree(sandboxed.value, inprocess.value)
    assert same_tree(sandboxed.args_after, args)
    assert sandboxed.seconds > 0


STUDENT = textwrap.dedent('''
    import os
    import sys

    import numpy as np


    class Cache:
        def __init__(self, value):
            self.value = value


    def bump(a, d):
        a += 1
        d["new"] = np.zeros(2)
        return None


    def make_cache(v):
        return Cache(v), [Cache(v + 1)]


    def read_cache(cache, extra=0):
        cache.value += extra
        return cache.value


    def same_object(a, b):
        return a is b


    def gradient_at(f, x):
        x[0] += 1.0  # f reads x: it must see this change
        value = f()
        x[0] -= 1.0
        return value


    def chatty(n):
        print("to stdout", n)
        print("to stderr", n, file=sys.stderr)
        os.write(1, b"straight to fd 1\\n")
        return n


    def flood():
        print("x" * 100_000)
        return 1


    def stub():
        raise NotImplementedError("stub: not implemented yet")


    def broken(x):
        return x.astype(np.float)  # removed in NumPy 1.24


    def scalar():
        return np.float64(2.5), np.int32(3), np.sum(np.ones(3))


    def tensors(t):
        return t * 2, (t.detach() + 1).requires_grad_(True)


    def twice(layer, x):
        return layer(x)
''')


def test_arguments_after_the_call_show_in_place_changes_and_the_callers_stay_untouched(sandbox):
    runner = sandbox(STUDENT)
    a, d = np.zeros(3), {"old": 1}
    result = runner.call("bump", (a, d))
    assert result.value is None
    assert np.array_equal(result.args_after[0], np.ones(3))
    assert set(result.args_after[1]) == {"old", "new"}
    assert np.array_equal(a, np.zeros(3)) and d == {"old": 1}  # the grader's own objects


def test_objects_that_are_not_data_stay_in_the_worker_as_handles(sandbox):
    runner = sandbox(STUDENT)
    cache, more = runner.call("make_cache", (5,)).value
    assert type(cache) is Handle and cache.type_name == "Cache" and type(more[0]) is Handle
    assert runner.call("read_cache", (cache,)).value == 5
    result = runner.call("read_cache", (cache,), {"extra": 2})
    assert result.value == 7 and result.args_after == (cache,) and result.kwargs_after == {
        "extra": 2}
    assert runner.call("read_cache", (cache,)).value == 7  # the same object, changed
    assert runner.call("same_object", (cache, cache)).value is True


def test_a_function_argument_reads_the_very_array_the_student_changes(sandbox):
    runner = sandbox(STUDENT)
    x = np.array([0.5, -1.0, 2.0])
    f = FunctionRef("sin_sum_of", (ArgRef(1),))
    expected = InProcessRunner.from_source(STUDENT, "s.py").call("gradient_at", (f, x)).value
    result = runner.call("gradient_at", (f, x))
    shifted = x.copy()
    shifted[0] += 1
    assert result.value == expected == pytest.approx(float(np.sum(np.sin(shifted) * shifted)))
    assert result.args_after[0] == f and np.array_equal(result.args_after[1], x)
    coefficients = np.ones((3, 3))
    poly = FunctionRef("polynomial_of", (ArgRef(1), coefficients))
    assert runner.call("gradient_at", (poly, x)).value == pytest.approx(
        float(np.sum(shifted + shifted**2 + shifted**3)))


def test_helpers_run_beside_the_student_code(sandbox):
    runner = sandbox(STUDENT)
    t = torch.tensor([1.0, 2.0], dtype=torch.float64)
    result = runner.call_helper("autograd", ("tensors", (t,), [torch.ones(2), torch.ones(2)],
                                             [0]))
    assert torch.equal(result.value["grads"][0], torch.full((2,), 2.0, dtype=torch.float64))
    state = {"weight": torch.eye(2, dtype=torch.float64), "bias": torch.zeros(2)}
    returned, args = runner.call_helper("call_and_mutated", ("bump", (np.zeros(2), {}))).value
    assert returned is None and np.array_equal(args[0], np.ones(2)) and "new" in args[1]
    built = runner.call_helper("set_on_module", ("twice", "Linear",
                                                 {"in_features": 2, "out_features": 2},
                                                 state, (t,))).value
    assert torch.allclose(built["returned"], t) and set(built["state"]) == {"weight", "bias"}


def test_output_is_captured_per_call_at_the_descriptor_level_and_truncated(sandbox):
    runner = sandbox(STUDENT, limits=Limits(output_bytes=1000))
    result = runner.call("chatty", (4,))
    assert result.stdout == "to stdout 4\nstraight to fd 1\n" or result.stdout == (
        "straight to fd 1\nto stdout 4\n")
    assert result.stderr == "to stderr 4\n"
    assert runner.call("chatty", (5,)).stdout.count("5") == 1  # nothing left from before
    flood = runner.call("flood")
    assert flood.value == 1 and flood.stdout.endswith("\n[... truncated]")
    assert len(flood.stdout) == 1000 + len("\n[... truncated]")


def test_student_errors_have_the_in_process_kinds_and_messages(sandbox):
    runner = sandbox(STUDENT)
    local = InProcessRunner.from_source(STUDENT, "rnn.py")
    for function, args, kind in [("stub", (), NOT_IMPLEMENTED),
                                 ("broken", (np.zeros(2),), EXCEPTION),
                                 ("nowhere", (), MISSING_FUNCTION)]:
        with pytest.raises(StudentError) as sandboxed:
            runner.call(function, args)
        with pytest.raises(StudentError) as inprocess:
            local.call(function, args)
        assert sandboxed.value.kind == inprocess.value.kind == kind
        assert sandboxed.value.message == inprocess.value.message
        assert sandboxed.value.function == function
    assert "use the builtin `float`" in sandboxed.value.message or kind == MISSING_FUNCTION
    assert runner.has_function("bump") and not runner.has_function("nowhere")
    assert not runner.has_function("np")  # a module, not a function


def test_numpy_scalars_and_tensors_come_back_as_they_were(sandbox):
    runner = sandbox(STUDENT)
    values = runner.call("scalar").value
    assert [type(v) for v in values] == [np.float64, np.int32, np.float64]
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    doubled, plus = runner.call("tensors", (t,)).value
    assert type(doubled) is torch.Tensor and torch.equal(doubled.detach(), t.detach() * 2)
    assert plus.requires_grad


def test_load_notes_salvage_and_fatal_load_errors(sandbox):
    runner = sandbox("def f(:\n    pass\n\nx = 1 / 0\n\ndef g():\n    return 2\n")
    notes = runner.load_notes()
    assert any("lines 1-2 do not parse" in n for n in notes)
    assert any("ZeroDivisionError" in n for n in notes)
    assert runner.call("g").value == 2
    fatal = sandbox("x = 1\x00\n")
    with pytest.raises(StudentError) as info:
        fatal.call("g")
    assert info.value.kind == LOAD_ERROR and "NUL" in info.value.message
    assert not fatal.has_function("g")


def test_protections_are_reported_and_close_is_final(sandbox):
    runner = sandbox(STUDENT)
    protections = runner.protections()
    assert protections["separate process"] and protections["private filesystem"]
    assert set(protections) >= {"network namespace", "pid namespace", "unprivileged uid",
                                "no_new_privs", "resource limits", "scrubbed environment",
                                "read-only system directories", "output captured"}
    runner.close()
    runner.close()
    with pytest.raises(RuntimeError, match="closed"):
        runner.call("bump", (np.zeros(1), {}))


def test_an_argument_that_cannot_cross_is_the_grader_s_error_not_the_student_s(sandbox):
    runner = sandbox(STUDENT)
    pid = runner.worker_pid
    with pytest.raises(TypeError, match="cannot be sent to the sandbox"):
        runner.call("same_object", (object(), 1))
    assert runner.call("same_object", (1, 1)).value is True and runner.worker_pid == pid


LIMITS_PROBE = textwrap.dedent('''
    import os
    import resource

    def cpu_limit():
        return resource.getrlimit(resource.RLIMIT_CPU)[0]

    def pid():
        return os.getpid()
''')


def test_a_closed_runner_leaves_a_worker_on_standby_for_the_next_one(sandbox):
    from rnngrade.sandbox.zygote.client import shared_client

    client = shared_client()
    first = sandbox(LIMITS_PROBE)
    first.close()
    assert client.on_standby is not None
    second = sandbox(LIMITS_PROBE)
    assert client.on_standby is None  # the second runner took it
    assert second.call("cpu_limit").value == Limits().cpu_seconds
    assert second.call("pid").value == 1  # a worker like any other: PID 1 of its namespace
    second.close()
    assert client.on_standby is not None
    sandbox(LIMITS_PROBE, standby=False)
    assert client.on_standby is not None  # left for a runner that wants one


def test_a_standby_worker_with_other_limits_is_not_used(sandbox):
    sandbox(LIMITS_PROBE).close()  # leaves a worker with the default limits on standby
    other = sandbox(LIMITS_PROBE, limits=Limits(cpu_seconds=7))
    assert other.call("cpu_limit").value == 7
    fresh = sandbox(LIMITS_PROBE, standby=False)
    assert fresh.call("cpu_limit").value == Limits().cpu_seconds


def test_a_backward_pass_on_its_own_cache_runs_in_one_call_as_in_process(sandbox, lab1_args):
    """``on_cache`` in the worker gives the same numbers as in-process."""
    from rnngrade.harness.runner.proxy import ModuleProxy
    from rnngrade.paths import course_root

    source = (course_root() / "solutions" / "lab2" / "bptt.py").read_text()
    (xt, a_prev, p), _ = lab1_args
    da = np.random.default_rng(5).standard_normal(a_prev.shape)
    args = ("rnn_cell_backward", (da,), "rnn_cell_forward", (xt, a_prev, p), 2)
    here = ModuleProxy(InProcessRunner.from_source(source, "bptt.py")).on_cache(*args)
    runner = sandbox(source, "bptt.py")
    there = ModuleProxy(runner).on_cache(*args)
    assert set(there) == set(here)
    assert all(np.array_equal(there[k], here[k]) for k in here)


def test_a_standby_worker_that_ended_while_waiting_is_replaced_by_a_fresh_one(sandbox,
                                                                               monkeypatch):
    from rnngrade.sandbox import runner as runner_module

    sandbox(LIMITS_PROBE).close()  # a worker on standby
    receive = runner_module._Worker.receive
    ended = []

    def first_hello_lost(self, *args, **kwargs):
        if not ended:
            ended.append(self.pid)
            self.kill()
            raise runner_module._Died()
        return receive(self, *args, **kwargs)

    monkeypatch.setattr(runner_module._Worker, "receive", first_hello_lost)
    runner = sandbox(LIMITS_PROBE)
    assert ended and runner.worker_pid != ended[0]
    assert runner.call("pid").value == 1 and runner.restarts == 0
