"""Hidden suite for lab 8, Part B (optional): the LSTM forecaster in torch
(contract: assignments/lab8/README.md, "Part B", and the docstrings of forecast.py).

The forward pass is compared with the reference in eval mode, values and gradients (float64 on
the CPU; float32 on CUDA with TF32 off). The training loop is compared update by update on a
small float64 problem. One test is graded by outcome: four epochs on the lab's fold must
reproduce the README's lesson — the globally z-scored model loses to the naive forecast and
forecasts too low, the per-window model beats 0.2. The trusted side builds the data and
evaluates with the reference, so the outcome grades ``train_forecaster`` alone.

torch is imported inside the tests only: collecting this file (and grading Part A) loads none.
"""

from __future__ import annotations

import numpy as np
import pytest

from rnngrade.suite import Tolerance

# Float64 on the same formulas: only the order of sums may differ (~1e-15 relative);
# every known mistake changes the forecasts or gradients by > 1e-4.
FLOAT64 = Tolerance(1e-12, 1e-10, "the same float64 arithmetic up to summation order (~1e-15)")
# README: on CUDA the forward runs in float32 with TF32 off and must agree to 1e-5.
CUDA_FLOAT32 = Tolerance(1e-5, 1e-5, "README: float32 on CUDA, TF32 off, agrees to 1e-5")
# README: the updates of train_forecaster match the reference's (loss, norm, parameters) to
# rtol 1e-9 in float64; a correct loop drifts < 1e-13 in these few updates. AdamW divides by
# √v̂, so the parameters get a small absolute floor too.
UPDATES = Tolerance(1e-12, 1e-9, "README: the updates agree to rtol 1e-9 in float64")

W_SMALL = 12  # window length of the small cases (the lab's model takes any W)


def torch_module():
    import torch

    return torch


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """torch on one thread in this process while a Part B test runs (the reference's side): the
    model is small, and on a busy machine a second thread's waiting costs seconds per call."""
    torch = torch_module()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def initial_params(reference, seed: int, dtype, device: str = "cpu") -> dict:
    """The model's initial parameters for ``seed`` (the reference's ``init_forecaster``),
    without disturbing the grader's generators."""
    torch = torch_module()
    with torch.random.fork_rng(devices=[]):
        params = reference.init_forecaster(seed)
    return {k: v.to(dtype=dtype, device=device) for k, v in params.items()}


def small_windows(rng: np.random.Generator, n: int, window: int) -> tuple[np.ndarray, ...]:
    """Windows and next values of a drifting, oscillating, noisy series, z-scored."""
    t = np.arange(n + window)
    series = 0.01 * t + np.sin(2 * np.pi * t / rng.uniform(7, 15)) \
        + 0.1 * rng.standard_normal(len(t))
    z = (series - series.mean()) / series.std()
    X = np.stack([z[i : i + window] for i in range(n)])
    return X, z[window:]


# ------------------------------------------------------------------ lstm_forecaster_forward

def _forward_probe(per_window: bool):
    def probe(m, params, X, upstream):
        return m.helper("forecaster_gradients", params, X, per_window, upstream)
    return probe


@pytest.mark.parametrize("per_window", [False, True], ids=["global", "per_window"])
@pytest.mark.parametrize("device", [pytest.param("cpu", id="cpu"),
                                    pytest.param("cuda", id="cuda", marks=pytest.mark.cuda)])
def test_lstm_forecaster_forward(check, reference, rng, device, per_window):
    torch = torch_module()
    if device == "cuda":
        from rnngrade.suite import cuda_unavailable_reason

        reason = cuda_unavailable_reason()
        if reason:
            pytest.skip(reason)
    dtype = torch.float64 if device == "cpu" else torch.float32
    params = initial_params(reference, 7, dtype, device)
    X, _ = small_windows(rng, 6, W_SMALL)
    X = torch.tensor(X + 0.5, dtype=dtype, device=device)  # off zero: the level matters
    upstream = torch.tensor(rng.standard_normal(6), dtype=dtype, device=device)
    check.expect(f"lstm_forecaster_forward (per_window={per_window}) on {device}, with "
                 "gradients", _forward_probe(per_window), (params, X, upstream),
                 tol=FLOAT64 if device == "cpu" else CUDA_FLOAT32, promote=False)


# ------------------------------------------------------------------ train_forecaster

@pytest.mark.parametrize("n, epochs, seed, scale", [
    pytest.param(300, 2, 3, 1.0, id="n300-2epochs"),
    pytest.param(200, 1, 0, 4.0, id="n200-large_targets"),
])
def test_train_forecaster_updates(check, reference, rng, n, epochs, seed, scale):
    torch = torch_module()
    X, Y = small_windows(rng, n, W_SMALL)
    args = (initial_params(reference, seed + 11, torch.float64),
            torch.tensor(X, dtype=torch.float64), torch.tensor(scale * Y, dtype=torch.float64),
            epochs, seed)
    check.expect("train_forecaster", lambda m, *a: m.helper("train_from_known_state", *a), args,
                 names=("params", "history"), tol=UPDATES, promote=False)


# ------------------------------------------------------------------ graded by outcome

ORIGIN, WINDOW, EPOCHS, LAST = 6000, 64, 4, 7999  # README, Part B: the lab's fold, 4 epochs
BAND = 0.2  # README: the per-window model's RMSE must beat 0.2 (the reference: 0.139)
_DATA: dict[int, dict] = {}  # by the reference module: the fold's tensors


def fold_data(reference) -> dict:
    """The README's fold, made with the reference (trusted; once per reference module):
    windows z-scored with the training period's statistics; training targets 64 .. 5999,
    test targets 6064 .. 7999 (test windows lie wholly after the origin)."""
    key = id(getattr(reference.runner, "module", reference))
    if key not in _DATA:
        torch = torch_module()
        series = reference.simulate_mount(0)
        mu, sd = reference.fit_scaler(series, ORIGIN)
        z = (series - mu) / sd
        Xtr, Ytr = reference.make_windows(z, WINDOW, WINDOW, ORIGIN - 1)
        Xte, Yte = reference.make_windows(z, WINDOW, ORIGIN + WINDOW, LAST)
        last = Xtr[:, -1]

        def f32(a: np.ndarray):
            return torch.tensor(a, dtype=torch.float32)

        _DATA[key] = {
            "sd": sd, "X": f32(Xtr), "Y": f32(Ytr[:, 0]), "dX": f32(Xtr - last[:, None]),
            "dY": f32(Ytr[:, 0] - last), "X_test": f32(Xte), "Y_test": Yte[:, 0],
            "naive": float(np.sqrt(np.mean((Xte[:, -1] - Yte[:, 0]) ** 2)) * sd)}
    return _DATA[key]


def _train_both(m, data: dict, params: dict, seed: int) -> tuple:
    """The global model on z-scored windows, the per-window model on windows relative to
    their last value (README: the same training loop, per-window normalised data)."""
    global_fit = m.train_forecaster(params, data["X"], data["Y"], EPOCHS, seed)
    per_window_fit = m.train_forecaster(params, data["dX"], data["dY"], EPOCHS, seed)
    return global_fit, per_window_fit


def _errors(reference, data: dict, fit, per_window: bool) -> tuple[float | None, float | None]:
    """RMSE and mean error, in the series' units, of the trained parameters on the test
    windows (the reference's forward pass; None when the parameters cannot be used)."""
    torch = torch_module()
    try:
        with torch.no_grad():
            pred = reference.lstm_forecaster_forward(fit[0], data["X_test"], per_window)
        error = (np.asarray(pred.detach().cpu(), dtype=np.float64) - data["Y_test"]) * data["sd"]
        if error.shape != data["Y_test"].shape:
            return None, None
    except Exception:  # noqa: BLE001 - parameters of the wrong keys, shapes or kind: no figure
        return None, None
    return float(np.sqrt(np.mean(error**2))), float(np.mean(error))


def _losses(fit) -> list[float]:
    try:
        return [float(v) for v in np.asarray(fit[1]["loss"], dtype=np.float64).ravel()]
    except Exception:  # noqa: BLE001 - no usable history: the picture shows no curve
        return []


def _reference_run(reference, data: dict, seed: int) -> list[float]:
    """The reference's per-window training curve (on one thread, as in the worker)."""
    torch = torch_module()
    with torch.random.fork_rng(devices=[]):
        params = initial_params(reference, seed, torch.float32)
        fit = reference.train_forecaster(params, data["dX"], data["dY"], EPOCHS, seed)
    return _losses(fit)


@pytest.mark.outcome(wall=120, cpu=240, memory="4 GiB", catches=("gradients_accumulate",))
def test_forecaster_training_reproduces_the_lesson(student, reference, outcome):
    torch = torch_module()
    data = fold_data(reference)
    params = initial_params(reference, outcome.seed, torch.float32)
    global_fit, per_window_fit = _train_both(student, data, params, outcome.seed)
    reference_curve = outcome.reference_value(
        "per-window curve", lambda: _reference_run(reference, data, outcome.seed))
    context = f"one-step forecasts of samples {ORIGIN + WINDOW}-{LAST} after {EPOCHS} epochs"
    naive = [("the naive forecast scores", data["naive"])]
    rmse_global, bias_global = _errors(reference, data, global_fit, per_window=False)
    outcome.measure("RMSE of the globally z-scored model", rmse_global, bound=">",
                    threshold=data["naive"], context=context + " (it should lose to naive)",
                    baselines=naive)
    outcome.measure("mean error of the globally z-scored model", bias_global, bound="<",
                    threshold=0.0, context="forecast minus measured (it should forecast low)")
    rmse_window, _ = _errors(reference, data, per_window_fit, per_window=True)
    outcome.measure("RMSE of the per-window model", rmse_window, bound="<", threshold=BAND,
                    context=context, baselines=naive, curve=_losses(per_window_fit),
                    reference_curve=reference_curve,
                    curve_label="training loss per update, per-window model")
    outcome.verdict(hint="Both models are trained by your train_forecaster; the figures come "
                         "from the lab's own forward pass. Compare your loop with the README's "
                         "order of steps for every update (Part B, 'Training').")
