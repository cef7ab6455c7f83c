"""Lab 10 helpers, run beside the student's code (and beside the reference's): the functions that
take a ``torch.Generator`` get one built from a seed on the student's side (a generator is not
plain data), a probe of how many numbers ``recall_batch`` drew, the calls a correct
``train_recall`` makes to ``recall_batch`` (recorded beside the reference) and their replay for a
submission whose ``recall_batch`` gets them wrong, and the two halves of a recall run graded by
outcome: ``train_recall_observed`` (beside the student's code: the run, watched) and
``recall_figures`` (beside the reference, on the trusted side: what the watched parameters
score). Nothing here computes a batch of its own. See ``rnngrade.suite.worker`` for the rules."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn as nn

from rnngrade.suite.worker import helper, watch_training


@helper
def profile_seeded(module: Any, H: int, rho: float, sigma_x: float, T: int, seed: int) -> Any:
    """``orthogonal_rnn_profile(H, rho, sigma_x, T, Generator().manual_seed(seed))``."""
    return module.orthogonal_rnn_profile(H, rho, sigma_x, T, torch.Generator().manual_seed(seed))


@helper
def recall_seeded(module: Any, batch: int, lag: int, seed: int) -> Any:
    """``recall_batch(batch, lag, Generator().manual_seed(seed))``."""
    return module.recall_batch(batch, lag, torch.Generator().manual_seed(seed))


@helper
def recall_draws_next(module: Any, batch: int, lag: int, seed: int) -> int:
    """The next number the generator gives after ``recall_batch``: it tells how much the call
    drew (the README: one ``randint`` of ``batch`` values and nothing else)."""
    generator = torch.Generator().manual_seed(seed)
    module.recall_batch(batch, lag, generator)
    return int(torch.randint(0, 2 ** 30, (1,), generator=generator).item())


@helper
def recall_from_state(module: Any, batch: int, lag: int, state: torch.Tensor) -> list:
    """``recall_batch(batch, lag, generator)`` with a generator in ``state``: ``[x, y, the
    generator's state after the call]``."""
    generator = torch.Generator()
    generator.set_state(state)
    x, y = module.recall_batch(batch, lag, generator)
    return [x, y, generator.get_state()]


@helper
def recall_calls(module: Any, lag: int, updates: int, seed: int) -> list:
    """The calls a correct ``train_recall(kind, lag, ..., updates, seed)`` makes to
    ``recall_batch`` (the README: ``updates`` batches of 64 from ``Generator().manual_seed(seed +
    1)``, then the test set's 1,000 from ``manual_seed(12345)``), run with the module's own
    ``recall_batch``; called beside the reference, on the trusted side. Each call is
    ``[batch, lag, generator state before, x, y, generator state after]``."""
    calls = []
    for batch, count, generator in ((64, updates, torch.Generator().manual_seed(seed + 1)),
                                    (1000, 1, torch.Generator().manual_seed(12345))):
        for _ in range(count):
            before = generator.get_state()
            x, y = module.recall_batch(batch, lag, generator)
            calls.append([batch, lag, before, x, y, generator.get_state()])
    return calls


class _RecordedRecall:
    """Stands in for the module's ``recall_batch`` during one ``train_recall`` call: a call of
    the module's own code whose batch, lag and generator state are a recorded call's gets the
    recorded batch, and leaves the generator in the recorded state after it; any other call goes
    to the module's own ``recall_batch``."""

    def __init__(self, module: Any, own: Any, calls: list) -> None:
        self.module, self.own = module, own
        self.known = {(int(batch), int(lag), before.numpy().tobytes()): (x, y, after)
                      for batch, lag, before, x, y, after in calls}
        self.__name__ = "recall_batch"

    def __call__(self, batch: Any, lag: Any, generator: Any = None, *args: Any,
                 **kwargs: Any) -> Any:
        import sys

        if sys._getframe(1).f_globals is self.module.__dict__ and not args and not kwargs \
                and type(batch) is int and type(lag) is int \
                and isinstance(generator, torch.Generator) and generator.device.type == "cpu":
            found = self.known.get((batch, lag, generator.get_state().numpy().tobytes()))
            if found is not None:
                x, y, after = found
                generator.set_state(after)
                return x.clone(), y.clone()
        if not callable(self.own):
            raise NameError("name 'recall_batch' is not defined")
        return self.own(batch, lag, generator, *args, **kwargs)


@helper
def train_recall_alone(module: Any, kind: str, lag: int, forget_bias: float, updates: int,
                       seed: int, recorded: list | None = None) -> Any:
    """``train_recall(...)``; with ``recorded`` (``recall_calls`` beside the reference, given
    for a submission whose ``recall_batch`` gets them wrong), the module's ``recall_batch``
    answers those calls with the recorded batches while it runs (restored afterwards), so a
    test of the training loop never pays for a mistake in ``recall_batch``."""
    if recorded is None:
        return module.train_recall(kind, lag, forget_bias, updates, seed)
    saved = vars(module).get("recall_batch", None)
    module.recall_batch = _RecordedRecall(module, saved, recorded)
    try:
        return module.train_recall(kind, lag, forget_bias, updates, seed)
    finally:
        if saved is None:
            del module.recall_batch
        else:
            module.recall_batch = saved


def _role(module: Any, name: str) -> str:
    """A parameter's name in the README's model: ``embed.weight``, ``head.weight`` /
    ``head.bias`` (the Linear), ``core.<name>`` (any other module: the RNN, LSTM, GRU or
    DiagLinearRecurrence)."""
    if isinstance(module, nn.Embedding):
        return f"embed.{name}"
    if isinstance(module, nn.Linear):
        return f"head.{name}"
    return f"core.{name}"


@helper
def train_recall_observed(module: Any, kind: str, lag: int, forget_bias: float, updates: int,
                          seed: int, every: int, recorded: list | None = None,
                          reach: Any = None) -> dict:
    """``train_recall_alone(...)`` watched from outside the submission
    (``rnngrade.harness.training_watch``): what it returned, the optimiser's steps, the
    parameters before every ``every``-th update and after training, named as in the README's
    model (``_role``). ``reach``: ``(x, y, accuracy)``, the grader's test set and a band
    "reached by the last update": the run stops at the first checkpoint whose parameters,
    loaded into the README's model, reach it on that set (``_reaches``)."""
    stop = _reaches(module, kind, *reach) if reach is not None else None
    return watch_training(
        lambda: train_recall_alone(module, kind, lag, forget_bias, updates, seed, recorded),
        every, _role, stop)


def _reaches(module: Any, kind: str, x: Any, y: Any, accuracy: float) -> Any:
    """Whether a checkpoint's parameters score at least ``accuracy`` on ``(x, y)``: built
    before the run (with the global generators left as they were), evaluated without gradients
    on the run's own thread count; None when the model cannot be built (no stop)."""
    try:
        with torch.random.fork_rng(devices=[]):
            model, logits = _recall_model(module, kind)
    except Exception:  # noqa: BLE001 - the submission's DiagLinearRecurrence fails: no stop
        return None
    x, y = torch.as_tensor(x), torch.as_tensor(y)
    n = len(y)
    allowed = next((w for w in range(n, -1, -1) if (n - w) / n >= accuracy), -1)  # wrong ones

    def reached(params: dict) -> bool:
        if _load(model, params):
            return False
        wrong = 0
        with torch.no_grad():  # a tenth at a time: no more once too many are wrong
            for start in range(0, n, max(1, n // 10)):
                rows = slice(start, start + max(1, n // 10))
                wrong += int((logits(x[rows]).argmax(-1) != y[rows]).sum())
                if wrong > allowed:
                    return False
        return True

    return reached


def _recall_model(module: Any, kind: str) -> tuple[nn.ModuleDict, Any]:
    """The README's model for ``kind`` (the module's ``DiagLinearRecurrence`` for "lin"), as
    ``{embed, core, head}`` to load parameters into, and its logits on the last step."""
    embed = nn.Embedding(9, 16)
    if kind == "lin":
        core: nn.Module = module.DiagLinearRecurrence(16, 64, N=64)
    else:
        core = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}[kind](16, 64, batch_first=True)
    head = nn.Linear(64, 8)
    gelu = nn.GELU()

    def logits(tokens: torch.Tensor) -> torch.Tensor:
        out = core(embed(tokens))
        out = out if kind == "lin" else out[0]
        last = out[:, -1]
        return head(gelu(last) if kind == "lin" else last)

    return nn.ModuleDict({"embed": embed, "core": core, "head": head}), logits


def _load(model: nn.ModuleDict, params: Any) -> str:
    """Load ``params`` into ``model``; "" when they fit, else why not (names and shapes)."""
    if not isinstance(params, dict) or not params:
        return "no parameters were stepped by a torch optimiser"
    wanted = model.state_dict()
    missing = sorted(set(wanted) - set(params))
    extra = sorted(set(params) - set(wanted), key=str)
    if missing or extra:
        return ("the parameters the optimiser stepped are not the README's model's"
                + (f": missing {', '.join(missing)[:200]}" if missing else "")
                + (f"; not in the model: {', '.join(map(str, extra))[:200]}" if extra else ""))
    for name, value in params.items():
        if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(wanted[name].shape):
            shape = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
            return f"{name} has shape {shape}, the README's model {tuple(wanted[name].shape)}"
        if not value.is_floating_point():
            return f"{name} is not a floating-point tensor"
    try:
        model.load_state_dict(params)
    except (RuntimeError, TypeError, ValueError):
        return "the parameters the optimiser stepped do not load into the README's model"
    return ""


@helper
def recall_figures(module: Any, kind: str, lag: int, seed: int, run: Any) -> dict:
    """What the parameters of a watched run (``train_recall_observed``'s result) score, run
    beside the reference on the trusted side (its ``recall_batch`` draws the README's data), with
    one thread and the global generators left as they were: ``"losses"``, ``[update, loss]`` of
    each checkpoint's parameters on the batch that update drew (the README's data:
    ``Generator().manual_seed(seed + 1)``); ``"accuracy"``, of the final parameters on the
    README's test set (None when they do not load, and ``"problem"`` says why) — after the run's
    last update, or at the checkpoint where the watch stopped it (``run["stopped"]``)."""
    figures: dict[str, Any] = {"losses": [], "accuracy": None, "problem": ""}
    checkpoints = run.get("checkpoints") if isinstance(run, dict) else None
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]), torch.no_grad():
            model, logits = _recall_model(module, kind)
            data = torch.Generator().manual_seed(seed + 1)
            drawn = 0
            for entry in checkpoints if isinstance(checkpoints, list) else []:
                step = entry[0] if isinstance(entry, list | tuple) and len(entry) == 2 else None
                if not isinstance(step, int) or step <= drawn or _load(model, entry[1]):
                    continue
                while drawn < step:
                    x, y = module.recall_batch(64, lag, data)
                    drawn += 1
                loss = nn.functional.cross_entropy(logits(x), y)
                figures["losses"].append([step, float(loss)])
            figures["problem"] = _load(model, run.get("final") if isinstance(run, dict) else None)
            if not figures["problem"]:
                x, y = module.recall_batch(1000, lag, torch.Generator().manual_seed(12345))
                figures["accuracy"] = float((logits(x).argmax(-1) == y).double().mean())
    finally:
        torch.set_num_threads(threads)
    return figures
