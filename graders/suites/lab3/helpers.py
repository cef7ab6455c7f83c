"""Lab 3's grader helpers, run beside the student's code (docs/AUTHORING.md, "Helpers beside the
student's code")."""

from collections.abc import Callable

from rnngrade.suite.worker import function


@function
def stand_in_lstm_cell() -> Callable:
    """torch's own LSTM step (what ``nn.LSTMCell`` runs), with ``lstm_cell``'s signature: the
    stand-in for a student's ``lstm_cell`` that fails its checks while ``lstm_layer`` is graded
    through autograd (``rnngrade.grading.stand_ins``)."""
    import torch

    def cell(x, h, c, W_ih, W_hh, b_ih, b_hh):
        return torch.lstm_cell(x, (h, c), W_ih, W_hh, b_ih, b_hh)

    return cell
