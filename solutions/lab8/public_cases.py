"""Inputs of lab8's public test vectors: ``CASES[name] = (function_name, args)``.

Small hand-made series, so that a failing case can be read by eye. ``recursive_forecast`` takes a
one-step model (a function), and the walk-forward, horizon and monitoring figures come from
``simulate_mount``, which ships filled in: their public tests build those inputs directly.
Part B's cases start from ``init_forecaster(seed)`` (shipped filled in) in float64, so the
vectors hold a seed instead of 12,961 parameters.
"""

from contextlib import contextmanager

import numpy as np

_rng = np.random.default_rng(8008)


def _wavy(n: int, seed: int) -> np.ndarray:
    """A drifting, oscillating, noisy series: a miniature of the lab's sensor."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return 0.02 * t + np.sin(2 * np.pi * t / 11) + 0.1 * rng.standard_normal(n)


_SERIES = _wavy(40, 1)
_LONG = _wavy(200, 2)
_COEF = 0.3 * _rng.standard_normal((7, 3))
_WINDOWS = _rng.standard_normal((5, 6))
_RESIDUALS = 0.2 * _rng.standard_normal(30)
_RESIDUALS[17] = 1.5  # one large residual
_EXCEED = np.array([0, 1, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0], dtype=bool)



@contextmanager
def _one_thread():
    """torch on one thread while a case runs (the generator runs every known mistake on these
    cases: a small LSTM gains nothing from more threads, and a busy machine loses seconds)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield torch
    finally:
        torch.set_num_threads(threads)


def forecaster_forward_both(m, seed, X):
    """``lstm_forecaster_forward`` of ``init_forecaster(seed)`` in float64, global and
    per-window."""
    with _one_thread() as torch:
        params = m.init_forecaster(seed, torch.float64)
        return (m.lstm_forecaster_forward(params, X, False),
                m.lstm_forecaster_forward(params, X, True))


def forecaster_training(m, seed, X, Y, epochs):
    """``train_forecaster`` from ``init_forecaster(seed)`` in float64: the history, and the
    trained head (the last layer's parameters)."""
    with _one_thread() as torch:
        params, history = m.train_forecaster(m.init_forecaster(seed, torch.float64), X, Y,
                                             epochs, seed)
    return history["loss"], history["grad_norm"], params["head.weight"], params["head.bias"]


def _forecaster_data(n: int, window: int, seed: int) -> tuple:
    import torch

    z = _wavy(n + window, seed)
    z = (z - z.mean()) / z.std()
    X = np.stack([z[i : i + window] for i in range(n)])
    return torch.tensor(X), torch.tensor(3.0 * z[window:])


CASES: dict[str, tuple] = {
    "windows_h3": ("make_windows", (_SERIES, 4, 4, 12, 3)),
    "windows_float32": ("make_windows", (_SERIES.astype(np.float32), 5, 6, 30, 1)),
    "split_h3_gap2": ("split_targets", (100, 60, 8, 3, 2, 20)),
    "split_to_the_end": ("split_targets", (50, 30, 6)),
    "scaler_origin_25": ("fit_scaler", (_SERIES, 25)),
    "naive_h3": ("naive_forecast", (_WINDOWS, 3)),
    "seasonal_p7_h4": ("seasonal_naive_forecast", (_SERIES, np.arange(12, 20), 7, 4)),
    "linear_ar_h3_gap2": ("fit_linear_ar", (_LONG, 150, 6, 3, 2)),
    "linear_ar_h1": ("fit_linear_ar", (_LONG, 120, 8)),
    "predict_linear_ar": ("predict_linear_ar", (_COEF, _WINDOWS)),
    "per_window_normalize": ("per_window_normalize", (_WINDOWS,)),
    "per_window_denormalize": ("per_window_denormalize", (_COEF[:5, :2], _WINDOWS[:, 0])),
    "rmse_2d": ("rmse", (_COEF[:, :2], _COEF[::-1, 1:])),
    "rmse_by_horizon": ("rmse_by_horizon", (_COEF[:, :2], _COEF[::-1, 1:])),
    "mase_h3": ("mase", (_COEF[:4], _COEF[3:], _SERIES[:20])),
    "mase_seasonal": ("mase", (_COEF[:4], _COEF[3:], _SERIES, 11)),
    "rolling_rms_5": ("rolling_stat", (_RESIDUALS, 5, "rms")),
    "rolling_std_4": ("rolling_stat", (_RESIDUALS, 4, "std")),
    "rolling_mean_3": ("rolling_stat", (_RESIDUALS, 3, "mean")),
    "threshold_10pct": ("threshold_from_holdout", (_RESIDUALS, 0.1)),
    "k_of_n_2_of_4": ("k_of_n", (_EXCEED, 2, 4)),
    "k_of_n_3_of_3": ("k_of_n", (_EXCEED, 3, 3)),
    "cusum_reset": ("cusum", (_RESIDUALS, 0.2, 1.25, 4.0)),
    "cusum_no_reset": ("cusum", (_RESIDUALS, 0.2, 1.25, 4.0, False)),
    "fault_spike": ("inject_fault", (_SERIES, "spike", 10, 11, 1.5)),
    "fault_offset": ("inject_fault", (_SERIES, "offset", 10, 20, 0.8)),
    "fault_stuck": ("inject_fault", (_SERIES, "stuck", 10, 20)),
    "detection_report": (
        "detection_report",
        (np.isin(np.arange(60), [3, 12, 14, 33, 41, 58]),
         {"early": (10, 11), "late": (30, 40), "missed": (50, 52)},
         ~np.isin(np.arange(60), np.r_[10:31, 30:61]), 3)),
    "false_alarms_3p5_sigma": ("gaussian_false_alarms_per_day", (3.5, 10.0)),
    "false_alarms_run_of_3": ("gaussian_false_alarms_per_day", (3.5, 10.0, 3)),
    "precision": ("monitor_precision", (5.5, 1.0)),
    "mahalanobis": ("mahalanobis_sq", (_WINDOWS[:, :3], np.array([[2.0, 0.3, 0.0],
                                                                 [0.3, 1.0, 0.2],
                                                                 [0.0, 0.2, 0.5]]))),
    "gaussian_nll": ("gaussian_nll", (_SERIES[:8], _SERIES[1:9], np.linspace(0.5, 2.0, 8))),
    "pinball_0p9": ("pinball_loss", (_SERIES[:8], _SERIES[1:9], 0.9)),
    "coverage": ("interval_coverage", (_SERIES[:10], _SERIES[:10] - 0.1 * np.arange(10) + 0.3,
                                       _SERIES[:10] + 0.2)),
    "forecaster_forward": (forecaster_forward_both,
                           (3, _forecaster_data(5, 10, 3)[0] + 0.5)),
    "forecaster_training": (forecaster_training, (4, *_forecaster_data(150, 10, 4), 2)),
}
