"""Lab 1's grader helpers, run beside the student's code (docs/AUTHORING.md, "Helpers beside the
student's code")."""

from collections.abc import Callable

from rnngrade.suite.worker import function


@function
def stand_in_softmax() -> Callable:
    """torch's own softmax over axis 0, with ``softmax``'s signature and dtype: the stand-in for
    a student's ``softmax`` that is missing or wrong while a check of ``rnn_cell_forward`` is run
    again (``rnngrade.grading.stand_ins``). A classic submission's ``softmax`` comes from
    ``rnn_utils``, which gives none in this lab, so every call its cell makes needs an answer,
    not only the calls a correct cell makes."""
    import numpy as np
    import torch

    def by_torch(x):
        x = np.asarray(x)
        return torch.softmax(torch.from_numpy(np.array(x, dtype=np.float64)), dim=0).numpy() \
            .astype(x.dtype if x.dtype.kind == "f" else np.float64)

    return by_torch
