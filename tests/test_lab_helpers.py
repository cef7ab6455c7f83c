"""Per-lab worker helpers: registered with ``@helper``/``@function`` in the lab's folder, kept out
of the engine, and checked on the trusted side before any worker sees them."""

from __future__ import annotations

from pathlib import Path

import pytest

from rnngrade.errors import SuiteError
from rnngrade.harness.worker_helpers import GENERIC, with_lab_helpers
from rnngrade.lab_helpers import lab_helpers

from .toy_course import TOY, toy_course

LAB_YAML = 'title: "Toy"\nmodule: toy\nfunctions: [f]\nuses_torch: false\n'


def test_lab_helpers_stay_with_their_lab():
    lab6, lab7 = lab_helpers("lab6").registry, lab_helpers("lab7").registry
    assert {"sample_seeded", "sample_counts"} <= set(lab6.helpers)
    assert {"table_lm", "random_lm", "torch_rnn_lm"} <= set(lab6.functions)
    assert {"init_lru_seeded", "autograd_params", "count_work"} <= set(lab7.helpers)
    assert "sample_seeded" not in lab7.helpers and "count_work" not in lab6.helpers
    assert "sample_seeded" not in GENERIC.helpers and "table_lm" not in GENERIC.functions
    assert {"autograd", "on_cache"} <= set(lab6.helpers) & set(GENERIC.helpers)
    lab1 = lab_helpers("lab1")  # the generic ones, its softmax stand-in, and rnn_utils
    assert set(lab1.registry.helpers) == set(GENERIC.helpers)
    assert set(lab1.registry.functions) == set(GENERIC.functions) | {"stand_in_softmax"}
    assert lab1.source.count("platform_module(") == 1  # rnn_utils, less its softmax


def test_a_helper_file_registers_with_decorators():
    source = ("from rnngrade.harness.worker_helpers import function, helper\n\n"
              "@helper\ndef twice(module, x):\n    return 2 * module.f(x)\n\n"
              "@function\ndef constant(c):\n    return lambda: c\n")
    registry = with_lab_helpers(source, "<toy helpers>")
    module = type("M", (), {"f": staticmethod(lambda x: x + 1)})
    assert registry.helpers["twice"](module, 3) == 8
    assert registry.functions["constant"](5)() == 5
    assert "twice" not in GENERIC.helpers  # registered for that lab only


@pytest.mark.parametrize("body, complaint", [
    ("@helper\ndef autograd(module):\n    pass\n", "registered twice"),
    ("raise RuntimeError('boom')\n", "RuntimeError: boom"),
    ("def broken(:\n", "SyntaxError"),
])
def test_a_broken_helpers_file_is_the_grader_s_fault(tmp_path: Path, body: str,
                                                      complaint: str):
    source = "from rnngrade.harness.worker_helpers import function, helper\n\n" + body
    files = {f"graders/suites/{TOY}/lab.yaml": LAB_YAML,
             f"graders/suites/{TOY}/helpers.py": source}
    with toy_course(tmp_path, files):
        with pytest.raises(SuiteError, match=complaint):
            lab_helpers(TOY)


def test_lab1s_softmax_stand_in_is_a_correct_softmax_over_axis_0():
    """It answers every call a classic cell makes while rnn_cell_forward is checked again, so it
    must be the contract's softmax: columns sum to 1, no overflow at ±1000, the input's dtype."""
    import numpy as np

    softmax = lab_helpers("lab1").registry.functions["stand_in_softmax"]()
    x = np.array([[1000.0, -1000.0, 0.0], [999.0, -1000.0, 1.0]])
    expected = np.exp(x - x.max(axis=0)) / np.exp(x - x.max(axis=0)).sum(axis=0)
    np.testing.assert_allclose(softmax(x), expected, rtol=1e-12)  # float64: rounding only
    assert softmax(x.astype(np.float32)).dtype == np.float32
