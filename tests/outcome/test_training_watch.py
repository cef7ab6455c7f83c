"""A training run watched from outside the code that trains: the optimiser's steps, the stepped
parameters named by the module that registered them, their values before every k-th step and
after the run."""

from __future__ import annotations

import torch
import torch.nn as nn

from rnngrade.harness.training_watch import StopTraining, watch_training


def small_run(steps: int, before: nn.Module | None = None) -> tuple:
    """A Linear(3, 2) and an Embedding(4, 3) trained by SGD (lr 0.1) for ``steps`` steps; the
    losses, and the Linear's weight before each step and after the last."""
    torch.manual_seed(0)
    embed, head = nn.Embedding(4, 3), nn.Linear(3, 2)
    params = [*embed.parameters(), *head.parameters()]
    if before is not None:
        params += list(before.parameters())
    optimizer = torch.optim.SGD(params, lr=0.1)
    weights, losses = [], []
    for _ in range(steps):
        loss = head(embed(torch.tensor([0, 1, 2]))).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        weights.append(head.weight.detach().clone())
        optimizer.step()
        losses.append(loss.item())
    weights.append(head.weight.detach().clone())
    return losses, weights


def test_steps_checkpoints_and_final_parameters_are_the_run_s():
    watched = watch_training(lambda: small_run(7), every=3)
    losses, weights = watched["returned"]
    assert watched["steps"] == 7 and len(losses) == 7
    assert [step for step, _ in watched["checkpoints"]] == [1, 4, 7]
    for step, params in watched["checkpoints"]:
        assert sorted(params) == ["Embedding.weight", "Linear.bias", "Linear.weight"]
        assert torch.equal(params["Linear.weight"], weights[step - 1])
    assert torch.equal(watched["final"]["Linear.weight"], weights[-1])
    assert not torch.equal(weights[-1], weights[0])  # the run trained


def test_parameters_from_before_the_run_are_unnamed_and_names_never_collide():
    outside = nn.Linear(2, 2)  # registered before the watch
    watched = watch_training(lambda: small_run(1, before=outside), every=1)
    assert sorted(watched["final"]) == ["Embedding.weight", "Linear.bias", "Linear.weight",
                                        "unnamed.3", "unnamed.4"]

    def two_heads() -> None:
        first, second = nn.Linear(1, 1), nn.Linear(1, 1)
        torch.optim.SGD([first.weight, second.weight], lr=0.1).step()

    assert sorted(watch_training(two_heads, every=1)["final"]) == ["Linear.weight",
                                                                   "Linear.weight#2"]


def test_a_run_that_never_steps_an_optimiser_is_seen_as_such():
    watched = watch_training(lambda: (nn.LSTM(2, 3), 0.99)[1], every=1)
    assert watched == {"returned": 0.99, "steps": 0, "checkpoints": [], "final": {},
                       "stopped": None}
    # and the hooks are gone afterwards: a later run counts from zero
    assert watch_training(lambda: small_run(2), every=5)["steps"] == 2


def test_a_run_is_stopped_at_the_first_checkpoint_its_own_parameters_decide():
    """``stop`` sees the watch's copies at each checkpoint after the first; once it says yes the
    step is refused, the run returns nothing, and ``final`` is that checkpoint's parameters,
    bit for bit those a full run has after as many updates."""
    full = watch_training(lambda: small_run(10), every=3)
    _, weights = full["returned"]
    asked: list[int] = []

    def stop(params: dict) -> bool:
        asked.append(len(asked))
        return bool(torch.equal(params["Linear.weight"], weights[6]))

    watched = watch_training(lambda: small_run(10), every=3, stop=stop)
    assert watched["stopped"] == 6 and watched["steps"] == 6 and watched["returned"] is None
    assert asked == [0, 1]  # before steps 4 and 7; never before step 1
    assert [step for step, _ in watched["checkpoints"]] == [1, 4, 7]
    assert torch.equal(watched["final"]["Linear.weight"], weights[6])
    assert full["stopped"] is None and full["steps"] == 10


def swallowing_run(steps: int) -> str:
    """A run that catches everything its optimiser raises, keeps stepping, then raises."""
    torch.manual_seed(0)
    head = nn.Linear(3, 2)
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    refused = 0
    for _ in range(steps):
        head(torch.ones(1, 3)).sum().backward()
        try:
            optimizer.step()
        except BaseException:  # noqa: BLE001 - what a hostile run does
            refused += 1
    raise ValueError(f"refused {refused}")


def test_a_stopped_run_that_swallows_the_stop_is_refused_every_later_step():
    watched = watch_training(lambda: swallowing_run(9), every=2, stop=lambda params: True)
    assert watched["stopped"] == 2 and watched["steps"] == 2 and watched["returned"] is None
    assert [step for step, _ in watched["checkpoints"]] == [1, 3]
    assert watched["final"] is watched["checkpoints"][-1][1]
    assert issubclass(StopTraining, BaseException) and not issubclass(StopTraining, Exception)


def test_a_stop_that_fails_never_stops_the_run():
    def broken(params: dict) -> bool:
        raise RuntimeError("the submission's model does not build")

    watched = watch_training(lambda: small_run(5), every=2, stop=broken)
    assert watched["stopped"] is None and watched["steps"] == 5
    assert len(watched["returned"][0]) == 5


def test_lab10s_watched_run_in_the_jailed_worker_is_measured_alike_on_the_trusted_side(sandbox):
    """The jailed worker reads no grader file: the watch must be loaded there already. The
    parameters it copies are measured by the reference beside the grader to the same losses
    and test accuracy the reference's train_recall returned."""
    from rnngrade.diagnosis.mutants import strip_markers
    from rnngrade.harness.runner.inprocess import InProcessRunner
    from rnngrade.lab_helpers import lab_helpers
    from rnngrade.labs import get_lab

    lab = get_lab("lab10")
    source = strip_markers(lab.solution_path().read_text(encoding="utf-8"))
    helpers = lab_helpers(lab)
    runner = sandbox(source, lab.filename, helpers=helpers.source)
    run = runner.call_helper("train_recall_observed", ("lstm", 3, 5.0, 5, 0, 2)).value
    acc, solved, losses = run["returned"]
    assert run["steps"] == 5 and [step for step, _ in run["checkpoints"]] == [1, 3, 5]
    assert sorted(run["final"]) == ["core.bias_hh_l0", "core.bias_ih_l0", "core.weight_hh_l0",
                                    "core.weight_ih_l0", "embed.weight", "head.bias",
                                    "head.weight"]
    trusted = InProcessRunner.from_source(source, lab.filename, helpers=helpers.registry)
    figures = trusted.call_helper("recall_figures", ("lstm", 3, 0, run)).value
    assert figures["problem"] == "" and figures["accuracy"] == acc
    assert [step for step, _ in figures["losses"]] == [1, 3, 5]
    for step, loss in figures["losses"]:
        assert abs(loss - losses[step - 1]) <= 1e-6 * abs(loss)
    # a band reached: stopped in the worker at the first checkpoint that reaches it, and the
    # trusted side measures that checkpoint (the accuracy the worker's model saw)
    x, y = trusted.call_helper("recall_seeded", (1000, 3, 12345)).value
    stopped = runner.call_helper("train_recall_observed",
                                 ("lstm", 3, 5.0, 40, 0, 4, None, (x, y, 0.0))).value
    assert stopped["stopped"] == 4 and stopped["steps"] == 4 and stopped["returned"] is None
    figures = trusted.call_helper("recall_figures", ("lstm", 3, 0, stopped)).value
    assert figures["problem"] == "" and [step for step, _ in figures["losses"]] == [1, 5]
