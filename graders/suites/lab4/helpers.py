"""Lab 4's grader helpers, run beside the student's code (docs/AUTHORING.md, "Helpers beside the
student's code")."""

from collections.abc import Callable

from rnngrade.suite.worker import function


@function
def stand_in_gru_cell() -> Callable:
    """torch's own GRU step (what ``nn.GRUCell`` runs), with ``gru_cell``'s signature: the
    stand-in for a student's ``gru_cell`` that fails its checks while ``gru_layer`` is graded
    (through autograd too; ``rnngrade.grading.stand_ins``)."""
    import torch

    def cell(x, h, W_ih, W_hh, b_ih, b_hh):
        return torch.gru_cell(x, h, W_ih, W_hh, b_ih, b_hh)

    return cell
