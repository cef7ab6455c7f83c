"""``rnngrade.suite``: the lab author's API, what a lab's hidden suite imports
(``graders/suites/labN/test_*_hidden.py`` and ``mutants.py``), as ``pytest`` is the public face
of its private package.
The engine's modules behind these names may move; a suite imports nothing else of ``rnngrade``
(``tests/test_suite_facade.py`` fails on a file under ``graders/suites`` that does).

- tolerances: ``Tolerance``, ``tolerance_for`` (a dtype's), ``EXACT``, ``FLOAT32``, ``FLOAT64``;
- devices: ``device_params`` (CPU, and CUDA when present: a test's ``device`` parameter),
  ``cuda_unavailable_reason``;
- checks: ``CheckFailure``, ``to_numpy``, ``assert_outputs``, the causal probe
  ``assert_causal``;
- gradient checks: ``OutputLoss``, ``central_differences``, ``relative_error``,
  ``sample_indices``, ``locate``; along random directions first (``random_directions``,
  ``DIRECTIONS`` of them per key, ``directional_agreement`` within ``DIRECTIONAL_RTOL``), for a
  suite that writes its own check (``expect_gradient_check`` does both);
- chained checks (a function that consumes another's output, graded on the student's own
  upstream when it can feed it, else on the reference's):
  ``Chain``, ``expect_chained``, ``run_chained``, ``expect_gradient_check``,
  ``expect_distinct_caches`` (a forward pass's caches hold distinct arrays where the course's do),
  ``reference_module``, ``add_note`` (a sentence for the report's notes); ``promoted_oracle``
  (an independent oracle such as ``torch.nn.LSTM`` run in float64); ``trusted_value`` (a
  value the trusted side computes from plain arguments, such as the reference's recorded
  calls: memoised across submissions and kept on disk for the next grading process);
- calls into the submission: ``FunctionRef``, ``ArgRef``, ``StudentError``, ``EXCEPTION``,
  ``ModuleProxy``, ``InProcessRunner``; the lab's own helpers on the trusted side:
  ``lab_helpers``;
- mutants (``mutants.py``): ``Mutant``; figures of outcome tests: ``plots``.

A lab's worker code (``helpers.py``, ``platform_*.py``) runs in the sandboxed worker and imports
``rnngrade.suite.worker`` instead (``helper``, ``function``, ``watch_training``). The worker
loads that module, and so this package: hence this package is lazy, and its names come from
``rnngrade.suite._grading`` on first use (on the trusted side, where suites run), so that the
worker holds nothing of the grading engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what a type checker sees; at run time ``__getattr__`` loads them
    from rnngrade.suite._grading import (
        DIRECTIONAL_RTOL,
        DIRECTIONS,
        EXACT,
        EXCEPTION,
        FLOAT32,
        FLOAT64,
        ArgRef,
        Chain,
        CheckFailure,
        FunctionRef,
        InProcessRunner,
        ModuleProxy,
        Mutant,
        OutputLoss,
        StudentError,
        Tolerance,
        add_note,
        assert_causal,
        assert_outputs,
        central_differences,
        cuda_unavailable_reason,
        device_params,
        directional_agreement,
        expect_chained,
        expect_distinct_caches,
        expect_gradient_check,
        lab_helpers,
        locate,
        plots,
        promoted_oracle,
        random_directions,
        reference_module,
        relative_error,
        run_chained,
        sample_indices,
        to_numpy,
        tolerance_for,
        trusted_value,
    )

__all__ = [
    "DIRECTIONAL_RTOL",
    "DIRECTIONS",
    "EXACT",
    "EXCEPTION",
    "FLOAT32",
    "FLOAT64",
    "ArgRef",
    "Chain",
    "CheckFailure",
    "FunctionRef",
    "InProcessRunner",
    "ModuleProxy",
    "Mutant",
    "OutputLoss",
    "StudentError",
    "Tolerance",
    "add_note",
    "assert_causal",
    "assert_outputs",
    "central_differences",
    "cuda_unavailable_reason",
    "device_params",
    "directional_agreement",
    "expect_chained",
    "expect_distinct_caches",
    "expect_gradient_check",
    "lab_helpers",
    "locate",
    "plots",
    "promoted_oracle",
    "random_directions",
    "reference_module",
    "relative_error",
    "run_chained",
    "sample_indices",
    "to_numpy",
    "tolerance_for",
    "trusted_value",
]


def __getattr__(name: str) -> Any:
    """A name of ``__all__``, loaded with the engine on first use (then kept in this module)."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from rnngrade.suite import _grading

    value = getattr(_grading, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
