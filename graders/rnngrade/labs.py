"""The lab registry: which module each lab asks for and which functions it contains."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rnngrade.errors import UsageError
from rnngrade.paths import course_root
from rnngrade.sandbox.limits import Limits


class UnknownLabError(UsageError):
    """A lab name that the course does not have."""


@dataclass(frozen=True)
class Lab:
    """One lab: the student module file and the functions graded in it (SPEC order)."""

    name: str
    title: str
    module: str
    functions: tuple[str, ...]
    uses_torch: bool
    limits: Limits = field(default_factory=Limits)  # per worker; a test may override by marker
    budget_seconds: float = 300.0  # wall clock for one whole submission's hidden suite

    @property
    def filename(self) -> str:
        return f"{self.module}.py"

    def solution_path(self, root: Path | None = None) -> Path:
        return (root or course_root()) / "solutions" / self.name / self.filename

    def stub_path(self, root: Path | None = None) -> Path:
        return (root or course_root()) / "assignments" / self.name / self.filename

    def assignment_dir(self, root: Path | None = None) -> Path:
        return (root or course_root()) / "assignments" / self.name

    def suite_dir(self, root: Path | None = None) -> Path:
        return (root or course_root()) / "graders" / "suites" / self.name

    def public_fixture_path(self, root: Path | None = None) -> Path:
        return (root or course_root()) / "fixtures" / "public" / f"{self.name}.npz"


LABS: dict[str, Lab] = {
    lab.name: lab
    for lab in (
        Lab(
            "lab1",
            "RNN forward, step by step",
            "rnn",
            ("softmax", "rnn_cell_forward", "rnn_forward", "rnn_forward_batch"),
            uses_torch=True,
        ),
        Lab(
            "lab2",
            "Backpropagation through time",
            "bptt",
            (
                "rnn_cell_backward",
                "rnn_backward",
                "clip",
                "clip_by_global_norm",
                "numerical_gradient",
                "relative_error",
                "char_rnn_loss_and_grads",
            ),
            uses_torch=False,
        ),
        Lab(
            "lab3",
            "The LSTM",
            "lstm",
            (
                "lstm_cell_forward",
                "lstm_forward",
                "lstm_cell_backward",
                "lstm_backward",
                "lstm_cell",
                "lstm_layer",
                "to_torch_lstm",
                "set_forget_bias",
            ),
            uses_torch=True,
        ),
        Lab(
            "lab4",
            "The GRU and masking",
            "gru",
            (
                "gru_cell_forward",
                "gru_cell_backward",
                "gru_cell",
                "gru_layer",
                "classic_to_torch_gru",
            ),
            uses_torch=True,
        ),
        Lab(
            "lab5",
            "Attention",
            "attention",
            (
                "masked_softmax",
                "additive_attention",
                "dot_attention",
                "general_attention",
                "scaled_dot_product_attention",
                "causal_linear_attention",
            ),
            uses_torch=True,
        ),
        Lab(
            "lab6",
            "Decoding: greedy, beam search, sampling",
            "decoding",
            (
                "softmax_with_temperature",
                "greedy_decode",
                "beam_search",
                "gnmt_length_penalty",
                "sample_sequence",
            ),
            uses_torch=False,
        ),
        Lab(
            "lab7",
            "The linear recurrent unit",
            "lru",
            (
                "lru_lambda",
                "lru_gamma",
                "init_lru",
                "lru_forward_loop",
                "lru_forward_fft",
                "linear_scan",
                "lru_forward_scan",
            ),
            uses_torch=True,
        ),
    )
}


def get_lab(name: str) -> Lab:
    """Return the lab called ``name`` or raise UnknownLabError listing the known ones."""
    try:
        return LABS[name]
    except KeyError:
        known = ", ".join(LABS)
        raise UnknownLabError(f"unknown lab {name!r}; this course has: {known}") from None


def available_labs(root: Path | None = None) -> list[Lab]:
    """The labs whose reference solution exists in this checkout."""
    return [lab for lab in LABS.values() if lab.solution_path(root).exists()]
