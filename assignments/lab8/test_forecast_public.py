"""Public tests for lab 8. Run them with:  pytest assignments/lab8

Each test says which check failed, where, and by how much. Expected values come from
fixtures/public/lab8.npz, computed by the course's reference solution, and from the tables of
the lab README (rounded as printed there). The leakage probes call your function twice, on series
that differ only from some index on, and require what must not see the future to stay identical.

The harness calls your functions on copies of their arguments, so a test sees exactly what your
function did to them. Part A needs NumPy only; the Part B tests (at the end) need torch, and
its training run runs only with:  pytest assignments/lab8 --outcome
"""

import numpy as np
import pytest

from rnngrade.testing import (
    EXCEPTION,
    CheckFailure,
    StudentError,
    Tolerance,
    assert_causal,
    assert_outputs,
    progress,
)

STUDENT_MODULE = "forecast"

# The README prints its tables with 3 decimals (2 for the sensor's summary): a correct result
# rounds to the printed digits, so it lies within half a unit of the last one.
THREE_DECIMALS = Tolerance(5e-4 + 1e-9, 0.0, "the README's tables are rounded to 3 decimals")
TWO_DECIMALS = Tolerance(5e-3 + 1e-9, 0.0, "the README's figures are rounded to 2 decimals")

ORIGINS = [4000, 5000, 6000, 7000]
FAULTS = {"spike": (7100, 7101), "offset": (7250, 7350), "excitation": (7450, 7750),
          "stuck": (7850, 7950)}


def stored(student, vectors, *names):
    """Check your function on stored cases: ``names`` of fixtures/public/lab8.npz."""
    for name in names:
        case = vectors.case(name)
        got = getattr(student, case.function)(*case.args)
        assert_outputs(got, case.outputs, f"{case.function} (case {name})", inputs=case.args)


def raises_value_error(call, what):
    """Require ``call()`` to raise ValueError (your exceptions reach the test as StudentError)."""
    try:
        call()
    except StudentError as error:
        if error.kind != EXCEPTION:
            raise  # not implemented yet, or a crash: reported as such
        kind = (error.message.splitlines()[0] if error.message else "").partition(":")[0].strip()
        if kind != "ValueError":
            raise CheckFailure(f"{what}: raised {kind}, the README asks for ValueError") from None
        return
    raise CheckFailure(f"{what}: returned without raising; the README asks for ValueError")


# ------------------------------------------------------------------ the sensor

def test_simulate_mount_figures(student):
    """simulate_mount ships filled in: these are the README's printed figures (no points: a
    failure here means the file's simulate_mount was changed)."""
    series = student.simulate_mount(0)
    assert_outputs(len(series), 8000, "len(simulate_mount(0))")
    got = np.array([series.min(), series.max(), series.std(), series[:1000].mean(),
                    series[-1000:].mean()])
    assert_outputs(got, np.array([-1.00, 9.49, 2.38, 0.49, 7.48]),
                   "simulate_mount(0): min, max, sd, mean of the first and last 1000",
                   tol=TWO_DECIMALS)


# ------------------------------------------------------------------ windows, split, scaler

@pytest.mark.points(2)
def test_make_windows(student, vectors):
    stored(student, vectors, "windows_h3", "windows_float32")


@pytest.mark.points(1)
def test_make_windows_rejects(student):
    series = np.arange(20.0)
    raises_value_error(lambda: student.make_windows(series, 5, 4, 10), "make_windows with "
                       "first_target < window")
    raises_value_error(lambda: student.make_windows(series, 5, 5, 18, 3), "make_windows with "
                       "last_target + horizon > len(series)")


@pytest.mark.points(2)
def test_make_windows_leak(student, rng):
    series = rng.standard_normal(40).cumsum()
    assert_causal(lambda s: student.make_windows(s, 6, 20, 20, 3)[0], series, 20,
                  name="make_windows(series, 6, 20, 20, 3): X",
                  leak="your window includes its own target")


@pytest.mark.points(2)
def test_split_targets(student, vectors):
    stored(student, vectors, "split_h3_gap2", "split_to_the_end")


@pytest.mark.points(1)
def test_fit_scaler(student, vectors):
    stored(student, vectors, "scaler_origin_25")


@pytest.mark.points(2)
def test_fit_scaler_leak(student, rng):
    series = rng.standard_normal(60).cumsum()
    assert_causal(lambda s: student.fit_scaler(s, 35), series, 35, name="fit_scaler(series, 35)",
                  leak="your scaler reads values after the origin")


@pytest.mark.points(1)
def test_global_scaler_ranges(student):
    """README section 1: the ranges of the normalised windows around origin 6000."""
    series = student.simulate_mount(0)
    mu, sd = student.fit_scaler(series, 6000)
    z = (series - mu) / sd
    X_train, _ = student.make_windows(z, 64, 64, 5999)
    X_test, _ = student.make_windows(z, 64, 6064, 7999)
    got = np.array([X_train.min(), X_train.max(), X_test.min(), X_test.max()])
    assert_outputs(got, np.array([-2.18, 2.32, 1.02, 3.55]),
                   "normalised ranges: training min, max; test min, max", tol=TWO_DECIMALS)


# ------------------------------------------------------------------ baselines

@pytest.mark.points(1)
def test_naive_forecast(student, vectors):
    stored(student, vectors, "naive_h3")


@pytest.mark.points(2)
def test_seasonal_naive_forecast(student, vectors):
    stored(student, vectors, "seasonal_p7_h4")
    raises_value_error(lambda: student.seasonal_naive_forecast(np.arange(30.0), np.arange(10, 15),
                                                               5, 6),
                       "seasonal_naive_forecast with horizon > period")


@pytest.mark.points(2)
def test_fit_linear_ar(student, vectors):
    stored(student, vectors, "linear_ar_h3_gap2", "linear_ar_h1")


@pytest.mark.points(2)
def test_fit_linear_ar_leak(student, rng):
    series = rng.standard_normal(200).cumsum()
    assert_causal(lambda s: student.fit_linear_ar(s, 140, 6, 3), series, 140,
                  name="fit_linear_ar(series, 140, 6, 3)",
                  leak="your linear model learns from values at or after the origin")


@pytest.mark.points(1)
def test_predict_linear_ar(student, vectors):
    stored(student, vectors, "predict_linear_ar")


@pytest.mark.points(2)
def test_recursive_forecast(student, rng):
    weights = rng.standard_normal(5)

    def one_step(windows):
        return np.tanh(windows @ weights)

    X = rng.standard_normal((4, 5))
    want = np.empty((4, 3))
    window = X.copy()
    for j in range(3):  # predict, append the prediction, drop the oldest value
        want[:, j] = one_step(window)
        window = np.hstack([window[:, 1:], want[:, j : j + 1]])
    assert_outputs(student.recursive_forecast(one_step, X, 3), want,
                   "recursive_forecast with tanh(window @ w), 3 steps", inputs=(X,))


@pytest.mark.points(1)
def test_per_window_normalisation(student, vectors):
    stored(student, vectors, "per_window_normalize", "per_window_denormalize")


# ------------------------------------------------------------------ errors and tables

@pytest.mark.points(2)
def test_errors(student, vectors):
    stored(student, vectors, "rmse_2d", "rmse_by_horizon", "mase_h3", "mase_seasonal")


@pytest.mark.points(1)
def test_mase_constant_training_series(student):
    got = student.mase(np.ones(3), np.zeros(3), np.full(10, 2.0))
    if got != np.inf:
        raise CheckFailure(f"mase with a constant training series returned {got!r}; the README "
                           "asks for inf (its naive scale is 0)")


@pytest.mark.points(3)
def test_walk_forward_table(student):
    """README section 3: the table on simulate_mount(0)."""
    table = student.walk_forward_table(student.simulate_mount(0), ORIGINS, 1000, 64, 50)
    want = {"naive": [0.393, 0.389, 0.342, 0.377],
            "seasonal naive": [0.869, 0.844, 0.791, 0.854],
            "linear AR": [0.166, 0.148, 0.151, 0.154]}
    for method, folds in want.items():
        got = np.asarray(table[method])
        assert_outputs(got, np.array(folds), f"walk_forward_table[{method!r}]",
                       tol=THREE_DECIMALS)
        assert_outputs(np.array([got.mean(), got.std()]),
                       np.array({"naive": [0.375, 0.020], "seasonal naive": [0.840, 0.029],
                                 "linear AR": [0.155, 0.007]}[method]),
                       f"mean and sd over folds of {method!r}", tol=THREE_DECIMALS)


@pytest.mark.points(2)
def test_horizon_table(student):
    """README section 3: recursive and direct linear forecasts from origin 6000."""
    series = student.simulate_mount(0)
    firsts = np.arange(6000, 6981)
    X, truth = student.make_windows(series, 64, 6000, 6980, 20)
    coef1 = student.fit_linear_ar(series, 6000, 64)
    coef20 = student.fit_linear_ar(series, 6000, 64, 20)
    forecasts = {
        "naive": (student.naive_forecast(X, 20), [0.342, 1.018, 0.621, 0.720]),
        "seasonal naive": (student.seasonal_naive_forecast(series, firsts, 50, 20),
                           [0.792, 0.791, 0.790, 0.789]),
        "linear recursive": (student.recursive_forecast(
            lambda w: student.predict_linear_ar(coef1, w)[:, 0], X, 20),
            [0.151, 0.400, 0.526, 0.551]),
        "linear direct": (student.predict_linear_ar(coef20, X), [0.151, 0.400, 0.526, 0.552]),
    }
    for method, (forecast, want) in forecasts.items():
        by_h = np.asarray(student.rmse_by_horizon(forecast, truth))
        assert_outputs(by_h[[0, 4, 9, 19]], np.array(want),
                       f"RMSE of {method} at h = 1, 5, 10, 20", tol=THREE_DECIMALS)


# ------------------------------------------------------------------ monitoring

@pytest.mark.points(2)
def test_rolling_stat(student, vectors):
    stored(student, vectors, "rolling_rms_5", "rolling_std_4", "rolling_mean_3")


@pytest.mark.points(2)
def test_rolling_stat_leak(student, rng):
    values = rng.standard_normal(30)
    assert_causal(lambda v: np.asarray(student.rolling_stat(v, 5, "rms"))[:18], values, 18,
                  name="rolling_stat(values, 5, 'rms')[:18]",
                  leak="your rolling statistic reads values after the sample it is for")


@pytest.mark.points(1)
def test_threshold_from_holdout(student, vectors):
    stored(student, vectors, "threshold_10pct")


@pytest.mark.points(2)
def test_k_of_n(student, vectors, rng):
    stored(student, vectors, "k_of_n_2_of_4", "k_of_n_3_of_3")
    exceed = rng.random(30) < 0.4
    assert_causal(lambda e: np.asarray(student.k_of_n(e, 2, 4))[:15], exceed, 15,
                  name="k_of_n(exceed, 2, 4)[:15]", leak="your alarms count exceedances "
                  "that come after them")


@pytest.mark.points(2)
def test_cusum(student, vectors):
    stored(student, vectors, "cusum_reset", "cusum_no_reset")


@pytest.mark.points(2)
def test_inject_fault(student, vectors):
    stored(student, vectors, "fault_spike", "fault_offset", "fault_stuck")


@pytest.mark.points(2)
def test_detection_report(student, vectors):
    stored(student, vectors, "detection_report")


@pytest.mark.points(2)
def test_every_fault_needs_its_own_detector(student):
    """README section 5: the detector table on linear-AR residuals."""
    clean = student.simulate_mount(0)
    scale = np.ones(80000)
    scale[74500:77500] = 2.0
    faulty = student.simulate_mount(0, 8000, scale)
    faulty = student.inject_fault(faulty, "spike", 7100, 7101, 1.5)
    faulty = student.inject_fault(faulty, "offset", 7250, 7350, 0.8)
    faulty = student.inject_fault(faulty, "stuck", 7850, 7950)
    coef = student.fit_linear_ar(clean, 6000, 64)
    X, Y = student.make_windows(faulty, 64, 6000, 7999)
    residuals = Y[:, 0] - student.predict_linear_ar(coef, X)[:, 0]
    sigma = residuals[:1000].std()
    roll_rms = student.rolling_stat(residuals, 50, "rms")
    roll_std = student.rolling_stat(residuals, 20, "std")
    alarms = {"point": np.abs(residuals) > 4 * sigma,
              "rolling RMS": np.nan_to_num(roll_rms) > 1.1 * np.nanmax(roll_rms[:1000]),
              "rolling std": ~np.isnan(roll_std) & (roll_std < 0.5 * np.nanmin(roll_std[:1000]))}
    normal = np.zeros(2000, dtype=bool)
    normal[1000:] = True
    faults = {name: (start - 6000, stop - 6000) for name, (start, stop) in FAULTS.items()}
    for start, stop in faults.values():
        normal[start : stop + 70] = False
    want = {"point": {"spike": 0, "offset": 0, "excitation": 101, "stuck": None},
            "rolling RMS": {"spike": 1, "offset": 4, "excitation": 104, "stuck": None},
            "rolling std": {"spike": None, "offset": None, "excitation": None, "stuck": 19}}
    for detector, fired in alarms.items():
        fired[:1000] = False
        report = student.detection_report(fired, faults, normal)
        delays = {name: report["faults"][name]["delay"] for name in faults}
        if delays != want[detector] or report["false_alarm_samples"] != 0:
            raise CheckFailure(f"{detector}: delays {delays} and "
                               f"{report['false_alarm_samples']} false alarms; the README's table "
                               f"says {want[detector]} and 0")


# ------------------------------------------------------------------ extension

@pytest.mark.points(1)
def test_false_alarms_per_day(student, vectors):
    got = np.array([student.gaussian_false_alarms_per_day(k, 10.0) for k in (3.5, 4.5, 5.5)])
    assert_outputs(got, np.array([401.983, 5.871, 0.033]),
                   "false alarms per day at 10 Hz for 3.5σ, 4.5σ, 5.5σ", tol=THREE_DECIMALS)
    stored(student, vectors, "false_alarms_3p5_sigma", "false_alarms_run_of_3")


@pytest.mark.points(1)
def test_monitor_precision(student, vectors):
    stored(student, vectors, "precision")
    assert_outputs(student.monitor_precision(5.5, 1.0), 1 / 166,
                   "monitor_precision(5.5 a day, 1 a month)")


@pytest.mark.points(2)
def test_extension_losses(student, vectors):
    stored(student, vectors, "mahalanobis", "gaussian_nll", "pinball_0p9", "coverage")


# ------------------------------------------------------------------ Part B (optional): torch

def forecaster_forward_both(m, seed, X):
    """lstm_forecaster_forward of init_forecaster(seed) in float64, global and per-window."""
    import torch

    params = m.init_forecaster(seed, torch.float64)
    return (m.lstm_forecaster_forward(params, X, False),
            m.lstm_forecaster_forward(params, X, True))


def forecaster_training(m, seed, X, Y, epochs):
    """train_forecaster from init_forecaster(seed) in float64: the history and the trained
    head."""
    import torch

    params, history = m.train_forecaster(m.init_forecaster(seed, torch.float64), X, Y, epochs,
                                         seed)
    return history["loss"], history["grad_norm"], params["head.weight"], params["head.bias"]


@pytest.mark.points(1)
def test_lstm_forecaster_forward(student, vectors):
    case = vectors.case("forecaster_forward")
    assert_outputs(forecaster_forward_both(student, *case.args), case.outputs,
                   "lstm_forecaster_forward (float64 windows)", names=("global", "per_window"),
                   inputs=case.args)


@pytest.mark.points(1)
def test_train_forecaster(student, vectors):
    case = vectors.case("forecaster_training")
    assert_outputs(forecaster_training(student, *case.args), case.outputs,
                   "train_forecaster (float64, 150 windows, 2 epochs: 4 updates)",
                   names=("loss", "grad_norm", "head.weight", "head.bias"), inputs=case.args)


@pytest.mark.outcome(wall=120, cpu=240)
def test_forecaster_training_reproduces_the_lesson(student):
    """README section 7: both models for 4 epochs on the fold at 6000; run with
    pytest --outcome. Not counted in the public points: the grader grades the same run."""
    import torch

    series = student.simulate_mount(0)
    mu, sd = float(series[:6000].mean()), float(series[:6000].std())
    z = (series - mu) / sd
    windows = np.stack([z[t - 64 : t] for t in range(64, 8000)])
    targets = z[64:8000]
    train, test = slice(0, 6000 - 64), slice(6064 - 64, None)

    def f32(a):
        return torch.tensor(a, dtype=torch.float32)

    last = windows[train, -1]
    params = student.init_forecaster(0)
    with progress(student, "train_forecaster", every=1, total=2, label="model trained"):
        global_params, _ = student.train_forecaster(params, f32(windows[train]),
                                                    f32(targets[train]), 4, 0)
        window_params, _ = student.train_forecaster(params, f32(windows[train] - last[:, None]),
                                                    f32(targets[train] - last), 4, 0)
    truth = targets[test]
    errors = {}
    for name, trained, per_window in (("global", global_params, False),
                                      ("per-window", window_params, True)):
        with torch.no_grad():
            pred = student.lstm_forecaster_forward(trained, f32(windows[test]), per_window)
        errors[name] = (np.asarray(pred, dtype=np.float64) - truth) * sd
    naive = float(np.sqrt(np.mean((windows[test, -1] - truth) ** 2)) * sd)
    rmse_of = {k: float(np.sqrt(np.mean(e**2))) for k, e in errors.items()}
    bias = float(np.mean(errors["global"]))
    figure = (f"RMSE global {rmse_of['global']:.3f} (needs > naive {naive:.3f}), mean error "
              f"{bias:+.3f} (needs < 0); RMSE per-window {rmse_of['per-window']:.3f} "
              "(needs < 0.2)")
    if not (rmse_of["global"] > naive and bias < 0 and rmse_of["per-window"] < 0.2):
        raise CheckFailure("outside the band: " + figure)
    print(figure)
