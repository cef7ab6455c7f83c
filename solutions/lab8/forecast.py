"""Lab 8 — honest forecasting and residual monitoring (NumPy only).

A series is a 1-D float array ``(N,)``; indices are 0-based sample numbers. Conventions used by
every function below (README, "Conventions"):

- the window for first target ``t`` is ``series[t-W:t]`` (the ``W`` values strictly before ``t``)
  and its targets are ``series[t:t+h]``; ``t`` is that example's forecast origin;
- splitting at origin ``o``: a training example needs ``W <= t <= o - gap - h`` (all its targets
  before the origin, ``gap`` samples to spare); a validation example has ``o <= t <= o + L - h``;
- normalisation statistics come from ``series[:o]`` only, with the population sd (``ddof=0``);
- RMSE is computed in the series' own units, pooled over every forecast;
- a residual is ``r_t = x_t - x̂_t``; rolling statistics are trailing: output ``i`` covers
  ``values[i-w+1 : i+1]`` and the first ``w - 1`` outputs are NaN.

Part A imports nothing but NumPy; the optional Part B (the LSTM forecaster, at the end)
imports torch inside its functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch

METHODS = ("naive", "seasonal naive", "linear AR", "train mean")


# ------------------------------------------------------------------ the simulated sensor

def simulate_mount(seed: int = 0, n: int = 8000, force_scale: np.ndarray | None = None
                   ) -> np.ndarray:
    """Displacement of a machine mount, one sample every 0.1 s, shape ``(n,)``, float64.

    A Duffing oscillator (damping ζ = 0.05, natural frequency π rad/s, cubic stiffness 40, a
    periodic load 3·sin(2π·time/5 s)) driven by random force of strength 3, integrated with
    10 semi-implicit Euler sub-steps of dt = 0.01 s per sample; then a drift of 1e-3 per sample
    and measurement noise of sd 0.05 are added. ``force_scale`` (shape ``(10·n,)``) multiplies
    the random force sub-step by sub-step: 2.0 over a stretch doubles the excitation there, and
    the samples before the stretch equal the unscaled simulation's with the same seed.
    """
    sub, dt = 10, 0.01
    zeta, omega0, k3, load, sigma_f = 0.05, math.pi, 40.0, 3.0, 3.0
    drift, meas_sd = 1e-3, 0.05
    steps = n * sub
    rng = np.random.default_rng(seed)
    force = rng.standard_normal(steps)
    noise = rng.standard_normal(n)
    if force_scale is None:
        scale = np.ones(steps)
    else:
        scale = np.asarray(force_scale, dtype=np.float64)
        if scale.shape != (steps,):
            raise ValueError(f"force_scale must have shape ({steps},) (10 sub-steps per sample), "
                             f"not {scale.shape}")
    kicks = (sigma_f * math.sqrt(dt) * scale * force).tolist()
    damping, stiffness = 2 * zeta * omega0, omega0**2
    x = v = 0.0
    out = np.empty(n)
    for k in range(steps):
        acc = -damping * v - stiffness * x - k3 * x**3 + load * math.sin(2 * math.pi * k * dt / 5.0)
        v += dt * acc + kicks[k]
        x += dt * v
        if (k + 1) % sub == 0:
            out[(k + 1) // sub - 1] = x
    return out + drift * np.arange(n) + meas_sd * noise


# ------------------------------------------------------------------ private helpers
#
# The graded functions below use these, never each other, so that one wrong function cannot make
# another one's result wrong.

def _rows(series: np.ndarray, starts: np.ndarray, length: int) -> np.ndarray:
    """``series[s : s + length]`` for each ``s`` in ``starts``, stacked: ``(len(starts), length)``."""
    return series[starts[:, None] + np.arange(length)]


def _train_targets(origin: int, window: int, horizon: int, gap: int) -> np.ndarray:
    return np.arange(window, origin - gap - horizon + 1, dtype=np.int64)


def _fit_ar(series: np.ndarray, targets: np.ndarray, window: int, horizon: int) -> np.ndarray:
    X = _rows(series, targets - window, window)
    Y = _rows(series, targets, horizon)
    last = X[:, -1:]
    design = np.hstack([X - last, np.ones((len(X), 1))])
    coef, *_ = np.linalg.lstsq(design, Y - last, rcond=None)
    return coef


def _predict_ar(coef: np.ndarray, X: np.ndarray) -> np.ndarray:
    last = X[:, -1:]
    return last + np.hstack([X - last, np.ones((len(X), 1), dtype=X.dtype)]) @ coef


def _pooled_rmse(pred: np.ndarray, truth: np.ndarray) -> float:
    return float(np.sqrt(np.mean((pred - truth) ** 2)))


# ------------------------------------------------------------------ windows and splits

def make_windows(series: np.ndarray, window: int, first_target: int, last_target: int,
                 horizon: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Inputs and targets for the first targets ``t = first_target .. last_target``.

    Returns ``X (n, window)`` with row ``i`` = ``series[t-window:t]`` and ``Y (n, horizon)`` with
    row ``i`` = ``series[t:t+horizon]``, where ``t = first_target + i`` and
    ``n = last_target - first_target + 1``. Raises ValueError if ``first_target < window`` or
    ``last_target + horizon > len(series)``. Keeps the series' dtype.
    """
    # BEGIN SOLUTION
    series = np.asarray(series)
    if first_target < window:
        raise ValueError(f"first_target {first_target} < window {window}: the first window "
                         "would start before the series")
    if last_target + horizon > len(series):
        raise ValueError(f"last_target + horizon = {last_target + horizon} exceeds the series "
                         f"length {len(series)}")
    targets = np.arange(first_target, last_target + 1)
    X = series[targets[:, None] + np.arange(-window, 0)]
    Y = series[targets[:, None] + np.arange(0, horizon)]
    return X, Y
    # END SOLUTION


def split_targets(n_series: int, origin: int, window: int, horizon: int = 1, gap: int = 0,
                  val_len: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """First-target indices ``(train_t, val_t)`` of a split at ``origin``, two int64 arrays.

    Training: ``window <= t <= origin - gap - horizon`` (every target before the origin, with
    ``gap`` samples to spare). Validation: ``origin <= t <= origin + val_len - horizon`` (every
    target in ``[origin, origin + val_len)``); ``val_len=None`` runs to the end of the series.
    Raises ValueError if ``origin + val_len > n_series``.
    """
    # BEGIN SOLUTION
    length = n_series - origin if val_len is None else val_len
    if origin + length > n_series:
        raise ValueError(f"origin + val_len = {origin + length} exceeds the series length "
                         f"{n_series}")
    train_t = np.arange(window, origin - gap - horizon + 1, dtype=np.int64)
    val_t = np.arange(max(origin, window), origin + length - horizon + 1, dtype=np.int64)
    return train_t, val_t
    # END SOLUTION


def fit_scaler(series: np.ndarray, origin: int) -> tuple[float, float]:
    """``(mu, sd)`` of ``series[:origin]`` as Python floats; sd is the population one (ddof=0)."""
    # BEGIN SOLUTION
    past = np.asarray(series, dtype=np.float64)[:origin]
    return float(past.mean()), float(past.std())
    # END SOLUTION


# ------------------------------------------------------------------ forecasters

def naive_forecast(X: np.ndarray, horizon: int) -> np.ndarray:
    """The last value of each window, repeated: ``X (n, W)`` → ``(n, horizon)``."""
    # BEGIN SOLUTION
    return np.repeat(X[:, -1:], horizon, axis=1)
    # END SOLUTION


def seasonal_naive_forecast(series: np.ndarray, first_targets: np.ndarray, period: int,
                            horizon: int) -> np.ndarray:
    """Row ``i``, column ``j`` = ``series[t_i + j - period]``: ``(n, horizon)``.

    Requires ``horizon <= period`` (so that every value used is known at the origin) and raises
    ValueError otherwise.
    """
    # BEGIN SOLUTION
    if horizon > period:
        raise ValueError(f"horizon {horizon} > period {period}: the seasonal naive forecast "
                         "would read values after the origin")
    series = np.asarray(series)
    firsts = np.asarray(first_targets, dtype=np.int64)
    lags = np.arange(horizon) - period
    return series[firsts[:, None] + lags]
    # END SOLUTION


def fit_linear_ar(series: np.ndarray, origin: int, window: int, horizon: int = 1, gap: int = 0
                  ) -> np.ndarray:
    """Least-squares coefficients ``(window + 1, horizon)`` of the linear autoregression.

    Fitted on the training examples of ``split_targets(len(series), origin, window, horizon,
    gap)``: design ``[X - X[:, -1:], 1]`` (last-value-subtracted windows and an intercept), target
    ``Y - X[:, -1:]``, ``np.linalg.lstsq(..., rcond=None)``.
    """
    # BEGIN SOLUTION
    series = np.asarray(series, dtype=np.float64)
    last_t = origin - gap - horizon
    targets = np.arange(window, last_t + 1)
    X = series[targets[:, None] - window + np.arange(window)]
    Y = series[targets[:, None] + np.arange(horizon)]
    last = X[:, -1:]
    design = np.hstack([X - last, np.ones((len(targets), 1))])
    coef, *_ = np.linalg.lstsq(design, Y - last, rcond=None)
    return coef
    # END SOLUTION


def predict_linear_ar(coef: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``X[:, -1:] + [X - X[:, -1:], 1] @ coef``: ``(n, W)`` windows → ``(n, horizon)``."""
    # BEGIN SOLUTION
    return _predict_ar(coef, X)
    # END SOLUTION


def recursive_forecast(one_step: Callable[[np.ndarray], np.ndarray], X: np.ndarray,
                       horizon: int) -> np.ndarray:
    """``horizon`` steps ahead from windows ``X (n, W)`` with a one-step model: ``(n, horizon)``.

    ``one_step`` maps windows ``(n, W)`` to next values ``(n,)``. After each step the prediction
    is appended to every window and its oldest value dropped; no true future value is read.
    ``X`` itself is left unchanged.
    """
    # BEGIN SOLUTION
    windows = np.array(X, copy=True)
    out = np.empty((len(windows), horizon), dtype=windows.dtype)
    for j in range(horizon):
        nxt = np.asarray(one_step(windows), dtype=windows.dtype).reshape(len(windows))
        out[:, j] = nxt
        windows = np.concatenate([windows[:, 1:], nxt[:, None]], axis=1)
    return out
    # END SOLUTION


def per_window_normalize(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(X - X[:, -1:], X[:, -1])``: each window relative to its own last value, and that value."""
    # BEGIN SOLUTION
    last = np.array(X[:, -1], copy=True)
    return X - last[:, None], last
    # END SOLUTION


def per_window_denormalize(delta: np.ndarray, last: np.ndarray) -> np.ndarray:
    """``delta + last[:, None]``: undo ``per_window_normalize`` on forecasts ``(n, h)``."""
    # BEGIN SOLUTION
    return delta + last[:, None]
    # END SOLUTION


# ------------------------------------------------------------------ errors and tables

def rmse(pred: np.ndarray, truth: np.ndarray) -> float:
    """Root mean squared error pooled over every entry (not a mean of per-row RMSEs)."""
    # BEGIN SOLUTION
    err = np.asarray(pred, dtype=np.float64) - np.asarray(truth, dtype=np.float64)
    return float(np.sqrt(np.mean(err**2)))
    # END SOLUTION


def rmse_by_horizon(pred: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """RMSE per column of ``(n, horizon)`` forecasts: ``(horizon,)``."""
    # BEGIN SOLUTION
    return np.sqrt(np.mean((pred - truth) ** 2, axis=0))
    # END SOLUTION


def mase(pred: np.ndarray, truth: np.ndarray, train_series: np.ndarray, period: int = 1
         ) -> float:
    """``mean|pred - truth|`` over the in-sample naive MAE ``mean|train[p:] - train[:-p]|``.

    The scale comes from the training series only; ``inf`` when it is 0 (a constant series).
    """
    # BEGIN SOLUTION
    train = np.asarray(train_series, dtype=np.float64)
    lag = period
    scale = float(np.mean(np.abs(train[lag:] - train[:-lag])))
    error = float(np.mean(np.abs(np.asarray(pred, dtype=np.float64) - truth)))
    return math.inf if scale == 0.0 else error / scale
    # END SOLUTION


def walk_forward_table(series: np.ndarray, origins: Sequence[int], fold_len: int, window: int,
                       period: int) -> dict[str, np.ndarray]:
    """Per-fold RMSEs of four one-step forecasters: ``{method: (len(origins),)}``.

    Methods: ``"naive"``, ``"seasonal naive"`` (``series[t - period]``), ``"linear AR"``
    (``fit_linear_ar`` on the data before the origin) and ``"train mean"`` (the mean of
    ``series[:o]``). Fold ``o`` trains on ``series[:o]`` (an expanding window) and scores the
    targets ``o .. o + fold_len - 1``, in the series' own units.
    """
    # BEGIN SOLUTION
    series = np.asarray(series, dtype=np.float64)
    table: dict[str, list[float]] = {method: [] for method in METHODS}
    for origin in origins:
        if origin + fold_len > len(series) or origin <= max(window, period):
            raise ValueError(f"fold at origin {origin} does not fit in a series of "
                             f"{len(series)} samples")
        past = series[:origin]
        mu, sd = float(past.mean()), float(past.std())
        z = (series - mu) / sd  # each fold is scored on its own training statistics
        targets = np.arange(origin, origin + fold_len)
        X = _rows(z, targets - window, window)
        coef = _fit_ar(z, _train_targets(origin, window, 1, 0), window, 1)
        forecasts = {"naive": X[:, -1],
                     "seasonal naive": z[targets - period],
                     "linear AR": _predict_ar(coef, X)[:, 0],
                     "train mean": np.full(fold_len, np.mean(z[:origin]))}
        for method in METHODS:
            table[method].append(_pooled_rmse(forecasts[method], z[targets]) * sd)
    return {method: np.array(values) for method, values in table.items()}
    # END SOLUTION


# ------------------------------------------------------------------ monitoring

def rolling_stat(values: np.ndarray, width: int, stat: str) -> np.ndarray:
    """Trailing statistic over ``values[i-width+1 : i+1]``: an array like ``values``.

    ``stat`` is ``"rms"``, ``"std"`` (ddof=0) or ``"mean"``. The first ``width - 1`` outputs are
    NaN; a NaN inside a window makes that output NaN. Raises ValueError for another ``stat`` or a
    width outside ``1 .. len(values)``.
    """
    # BEGIN SOLUTION
    values = np.asarray(values)
    if stat not in ("rms", "std", "mean"):
        raise ValueError(f"stat must be 'rms', 'std' or 'mean', not {stat!r}")
    if not 1 <= width <= len(values):
        raise ValueError(f"width {width} must lie in 1 .. {len(values)}")
    frames = np.lib.stride_tricks.sliding_window_view(values, width)
    if stat == "rms":
        stats = np.sqrt(np.mean(frames**2, axis=-1))
    elif stat == "std":
        stats = frames.std(axis=-1)
    else:
        stats = frames.mean(axis=-1)
    out = np.full(values.shape, np.nan, dtype=stats.dtype)
    out[width - 1 :] = stats
    return out
    # END SOLUTION


def threshold_from_holdout(holdout_residuals: np.ndarray, false_alarm_rate: float) -> float:
    """The empirical ``1 - false_alarm_rate`` quantile of ``|r|`` (``np.quantile``, "linear")."""
    # BEGIN SOLUTION
    magnitudes = np.abs(np.asarray(holdout_residuals, dtype=np.float64))
    return float(np.quantile(magnitudes, 1 - false_alarm_rate))
    # END SOLUTION


def k_of_n(exceed: np.ndarray, k: int, n: int) -> np.ndarray:
    """Alarm at ``i`` when at least ``k`` of ``exceed[max(0, i-n+1) : i+1]`` are True: bool
    ``(N,)``."""
    # BEGIN SOLUTION
    hits = np.asarray(exceed, dtype=bool).astype(np.int64)
    counts = np.concatenate([[0], np.cumsum(hits)])
    i = np.arange(len(hits))
    in_window = counts[i + 1] - counts[np.maximum(0, i - n + 1)]
    return in_window >= k
    # END SOLUTION


def cusum(residuals: np.ndarray, sigma: float, kappa: float, limit: float, reset: bool = True
          ) -> tuple[np.ndarray, np.ndarray]:
    """CUSUM of squared standardised residuals: ``(S (N,), alarms (N,) bool)``.

    ``S_t = max(0, S_{t-1} + r_t²/σ² - κ)`` with ``S_{-1} = 0``; alarm where ``S_t > limit``.
    With ``reset`` the next step starts again from 0 after an alarm; the ``S_t`` returned is the
    value before the reset.
    """
    # BEGIN SOLUTION
    r = np.asarray(residuals, dtype=np.float64)
    S = np.empty(len(r))
    alarms = np.zeros(len(r), dtype=bool)
    total = 0.0
    for t, value in enumerate(r.tolist()):
        step = value * value / sigma**2
        total = max(0.0, total + step - kappa)
        S[t] = total
        if total > limit:
            alarms[t] = True
            if reset:
                total = 0.0
    return S, alarms
    # END SOLUTION


def inject_fault(series: np.ndarray, kind: str, start: int, stop: int, size: float = 0.0
                 ) -> np.ndarray:
    """A copy of ``series`` with one fault on ``[start, stop)``; the input is never modified.

    ``"spike"``: ``size`` added at ``start`` (``stop`` must be ``start + 1``); ``"offset"``:
    ``size`` added on ``[start, stop)``; ``"stuck"``: ``series[start - 1]``, the last good
    reading, held on ``[start, stop)``.
    """
    # BEGIN SOLUTION
    faulty = np.array(series, copy=True)
    if kind == "spike":
        if stop != start + 1:
            raise ValueError("a spike lasts one sample: stop must be start + 1")
        faulty[start] += size
    elif kind == "offset":
        faulty[start:stop] += size
    elif kind == "stuck":
        if start < 1:
            raise ValueError("a stuck sensor holds the reading before start: start must be ≥ 1")
        held = faulty[start - 1]
        faulty[start:stop] = held
    else:
        raise ValueError(f"kind must be 'spike', 'offset' or 'stuck', not {kind!r}")
    return faulty
    # END SOLUTION


def detection_report(alarms: np.ndarray, faults: Mapping[str, tuple[int, int]],
                     normal_mask: np.ndarray, tolerance: int = 20) -> dict:
    """Which faults the alarms caught, how late, and the false alarms.

    ``faults``: name → ``(start, stop)``, stop exclusive. An alarm counts for a fault when it
    falls in ``[start, stop + tolerance)``. Returns ``{"faults": {name: {"detected": bool,
    "delay": int | None, "alarm_samples": int}}, "false_alarm_samples": int}``, where the delay
    is the first counted alarm minus ``start`` and the false alarms are the alarms where
    ``normal_mask`` is True.
    """
    # BEGIN SOLUTION
    fired = np.asarray(alarms, dtype=bool)
    normal = np.asarray(normal_mask, dtype=bool)
    report = {}
    for name, (start, stop) in faults.items():
        lo, hi = int(start), int(stop) + tolerance
        hits = np.flatnonzero(fired[lo:hi]) + lo
        report[name] = {"detected": bool(hits.size),
                        "delay": int(hits[0] - start) if hits.size else None,
                        "alarm_samples": int(hits.size)}
    false_alarms = int(np.count_nonzero(fired & normal))
    return {"faults": report, "false_alarm_samples": false_alarms}
    # END SOLUTION


# ------------------------------------------------------------------ extension

def gaussian_false_alarms_per_day(k_sigma: float, sample_rate_hz: float, run_length: int = 1
                                  ) -> float:
    """False alarms a day of a two-sided ``|r| > kσ`` test on Gaussian residuals:
    ``86400 · rate · p**run_length`` with ``p = erfc(k/√2)`` (``run_length`` in a row)."""
    # BEGIN SOLUTION
    p = math.erfc(k_sigma / math.sqrt(2.0))
    return 86400.0 * sample_rate_hz * p**run_length
    # END SOLUTION


def monitor_precision(false_alarms_per_day: float, faults_per_month: float,
                      days_per_month: float = 30) -> float:
    """Share of alarm events that are real faults, over a month:
    ``faults / (faults + days · false_alarms_per_day)``."""
    # BEGIN SOLUTION
    false_per_month = days_per_month * false_alarms_per_day
    return faults_per_month / (faults_per_month + false_per_month)
    # END SOLUTION


def mahalanobis_sq(R: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """``r_tᵀ Σ⁻¹ r_t`` for each row of ``R (n, d)``: ``(n,)``, with a solve (no inverse)."""
    # BEGIN SOLUTION
    solved = np.linalg.solve(cov, R.T).T
    return np.einsum("ij,ij->i", R, solved)
    # END SOLUTION


def gaussian_nll(y: np.ndarray, mu: np.ndarray, var: np.ndarray) -> float:
    """Mean of ``½ ln var + (y - μ)² / (2 var)`` (the constant ½ ln 2π left out)."""
    # BEGIN SOLUTION
    return float(np.mean(0.5 * np.log(var) + (y - mu) ** 2 / (2 * var)))
    # END SOLUTION


def pinball_loss(y: np.ndarray, q: np.ndarray, tau: float) -> float:
    """Mean of ``max(τu, (τ - 1)u)`` with ``u = y - q``: the loss of a τ-quantile forecast."""
    # BEGIN SOLUTION
    u = y - q
    return float(np.mean(np.maximum(tau * u, (tau - 1) * u)))
    # END SOLUTION


def interval_coverage(y: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    """Fraction of ``y`` inside ``[lo, hi]`` (ends included)."""
    # BEGIN SOLUTION
    return float(np.mean((y >= lo) & (y <= hi)))
    # END SOLUTION


# ------------------------------------------------------------------ Part B (optional): torch
#
# The seed's forecaster: a 2-layer ``nn.LSTM(1, 32, dropout=0.1)`` read at its last step, then
# ``nn.Linear(32, 1)``. Parameters travel as a dict of tensors under the keys of its
# ``state_dict``. torch is imported inside these functions only: Part A never needs it.

HIDDEN = 32


def forecaster_modules(dtype: torch.dtype | None = None, device: str | torch.device = "meta"
                       ) -> torch.nn.ModuleDict:
    """The model's layers, ``{"lstm": nn.LSTM(1, 32, num_layers=2, batch_first=True,
    dropout=0.1), "head": nn.Linear(32, 1)}``, built without drawing from torch's generator.
    On the default ``"meta"`` device they hold no values (use them with
    ``torch.func.functional_call``); on a real device their values are arbitrary until
    ``load_state_dict``."""
    import torch
    from torch import nn

    dtype = dtype or torch.float32
    with torch.device("meta"):
        layers = nn.ModuleDict({
            "lstm": nn.LSTM(1, HIDDEN, num_layers=2, batch_first=True, dropout=0.1, dtype=dtype),
            "head": nn.Linear(HIDDEN, 1, dtype=dtype)})
    return layers if str(device) == "meta" else layers.to_empty(device=device)


def init_forecaster(seed: int, dtype: torch.dtype | None = None) -> dict[str, torch.Tensor]:
    """PyTorch's default initial parameters after ``torch.manual_seed(seed)`` (the model built
    the way the seed's ``Forecaster()`` is), as a dict of CPU tensors (float32 by default)."""
    import torch
    from torch import nn

    torch.manual_seed(seed)
    layers = nn.ModuleDict({
        "lstm": nn.LSTM(1, HIDDEN, num_layers=2, batch_first=True, dropout=0.1),
        "head": nn.Linear(HIDDEN, 1)})
    dtype = dtype or torch.float32
    return {k: v.detach().to(dtype).clone() for k, v in layers.state_dict().items()}


def lstm_forecaster_forward(params: Mapping[str, torch.Tensor], X: torch.Tensor,
                            per_window: bool) -> torch.Tensor:
    """One-step forecasts ``(n,)`` of windows ``X (n, W)`` (already z-scored), in eval mode: no
    dropout. The LSTM reads each window as a sequence of ``W`` scalar inputs from zero state;
    the head reads its top layer's output at the last step.

    ``per_window=True``: the LSTM reads ``X - X[:, -1:]`` and the window's last value is added
    back to the head's output (the model predicts the change from the last value).
    Differentiable in ``params`` and ``X``; the result has their dtype and device.
    """
    # BEGIN SOLUTION
    from torch.func import functional_call

    layers = forecaster_modules(X.dtype).eval()
    last = X[:, -1:]
    inputs = (X - last if per_window else X).unsqueeze(-1)
    lstm = {k.removeprefix("lstm."): v for k, v in params.items() if k.startswith("lstm.")}
    head = {k.removeprefix("head."): v for k, v in params.items() if k.startswith("head.")}
    out, _ = functional_call(layers["lstm"], lstm, (inputs,))
    pred = functional_call(layers["head"], head, (out[:, -1],))[:, 0]
    return pred + last[:, 0] if per_window else pred
    # END SOLUTION


def train_forecaster(params: Mapping[str, torch.Tensor], X: torch.Tensor, Y: torch.Tensor,
                     epochs: int, seed: int) -> tuple[dict[str, torch.Tensor], dict]:
    """Train from ``params`` on windows ``X (n, W)`` and targets ``Y (n,)``: ``(params,
    history)``; the ``params`` passed in are not modified.

    The seed's loop, in order: the model in train mode (dropout 0.1 between the LSTM layers),
    ``torch.optim.AdamW(lr=3e-3)`` (its default weight decay, 0.01), then
    ``torch.manual_seed(seed)``; each epoch draws ``perm = torch.randperm(n)`` and takes
    mini-batches ``perm[i : i + 128]`` in order; each update computes the mean squared error of
    the model's outputs on the batch, zeroes the gradients, back-propagates, clips the global
    gradient norm to 1.0 (``nn.utils.clip_grad_norm_``) and steps. The model's own forward is
    the plain one (no per-window step): to train the per-window model, pass per-window
    normalised windows and targets (``X - X[:, -1:]``, ``Y - X[:, -1]``).

    ``history``: ``"loss"`` (float64, one per update) the batch loss before the update,
    ``"grad_norm"`` (float64, one per update) the global norm before clipping.
    """
    # BEGIN SOLUTION
    import torch
    from torch import nn

    model = forecaster_modules(X.dtype, X.device)
    model.load_state_dict(dict(params))
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    torch.manual_seed(seed)
    losses, norms = [], []
    for _ in range(epochs):
        perm = torch.randperm(len(X)).to(X.device)
        for i in range(0, len(X), 128):
            idx = perm[i : i + 128]
            out, _ = model["lstm"](X[idx].unsqueeze(-1))
            loss = nn.functional.mse_loss(model["head"](out[:, -1])[:, 0], Y[idx])
            optimizer.zero_grad()
            loss.backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            losses.append(float(loss.detach()))
            norms.append(float(norm))
    trained = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return trained, {"loss": np.array(losses), "grad_norm": np.array(norms)}
    # END SOLUTION
