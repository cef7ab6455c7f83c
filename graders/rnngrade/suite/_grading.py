"""What ``rnngrade.suite`` gives a lab's hidden suite, imported from wherever it lives in the
engine (loaded on a suite's first use of a name, on the trusted side only: see the package)."""

from __future__ import annotations

from rnngrade.diagnosis.mutants import Mutant
from rnngrade.grading.chained import (
    Chain,
    add_note,
    directional_agreement,
    expect_chained,
    expect_distinct_caches,
    expect_gradient_check,
    reference_module,
    run_chained,
    trusted_value,
)
from rnngrade.grading.precision import promoted_oracle
from rnngrade.harness.checks.causal import assert_causal
from rnngrade.harness.checks.compare import CheckFailure, to_numpy
from rnngrade.harness.checks.devices import cuda_unavailable_reason, device_params
from rnngrade.harness.checks.gradcheck import (
    DIRECTIONAL_RTOL,
    DIRECTIONS,
    OutputLoss,
    central_differences,
    locate,
    random_directions,
    relative_error,
    sample_indices,
)
from rnngrade.harness.checks.structure import assert_outputs
from rnngrade.harness.checks.tolerance import EXACT, FLOAT32, FLOAT64, Tolerance, tolerance_for
from rnngrade.harness.runner.base import EXCEPTION, ArgRef, FunctionRef, StudentError
from rnngrade.harness.runner.inprocess import InProcessRunner
from rnngrade.harness.runner.proxy import ModuleProxy
from rnngrade.lab_helpers import lab_helpers
from rnngrade.results import plots
from rnngrade.suite import __all__  # the one list of the names: the package's
