"""Hidden suite for lab 8: honest forecasting and residual monitoring
(contract: assignments/lab8/README.md and the docstrings of forecast.py). NumPy only.

Values are compared with the reference; the leakage probes (``rnngrade.harness.checks.causal``)
call the submission twice on series that differ only from some index on and require what must
not see the future to stay bit-for-bit the same. The lab's figures (walk-forward table, detector
pattern) come from ``simulate_mount``, which ships filled in; the suite builds those
series on its own side and hands them over, so a function is only ever graded on its own work.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from rnngrade.suite import (
    EXACT,
    EXCEPTION,
    FunctionRef,
    StudentError,
    assert_causal,
    assert_outputs,
    plots,
)

# The README fixes the split and index rules exactly: integer indices, bools and the values a
# function only copies (windows, a held reading) must match bit for bit.
COPIED = EXACT

FAULTS = {"spike": (7100, 7101), "offset": (7250, 7350), "excitation": (7450, 7750),
          "stuck": (7850, 7950)}
ORIGINS = [4000, 5000, 6000, 7000]


def wavy(rng: np.random.Generator, n: int) -> np.ndarray:
    """A drifting, oscillating, noisy series (a small cousin of simulate_mount's)."""
    t = np.arange(n)
    period = rng.uniform(7, 15)
    return 0.02 * t + np.sin(2 * np.pi * t / period) + 0.1 * rng.standard_normal(n)


def outcome(m, name, *args):
    """What ``m.name(*args)`` does with arguments the contract rejects."""
    try:
        getattr(m, name)(*args)
    except StudentError as error:
        if error.kind != EXCEPTION:
            raise  # not implemented, timeout, crash ...: reported as such
        kind = (error.message.splitlines()[0] if error.message else "").partition(":")[0]
        return "raised ValueError" if kind.strip() == "ValueError" \
            else f"raised {kind.strip()} instead of ValueError"
    return "returned without raising"


def expect_value_error(check, name, *args):
    check.expect(f"{name} on arguments it must reject", lambda m, *a: outcome(m, name, *a), args,
                 oracle=lambda *a: "raised ValueError", names=("outcome",))


# ------------------------------------------------------------------ make_windows

@pytest.mark.parametrize("n, window, first, last, horizon", [
    pytest.param(30, 4, 4, 12, 1, id="h1"),
    pytest.param(40, 6, 9, 30, 4, id="h4"),
    pytest.param(25, 5, 5, 20, 5, id="first_is_window-last_at_end"),
    pytest.param(12, 3, 7, 7, 2, id="one_example"),
    pytest.param(50, 1, 1, 48, 1, id="window1"),
])
def test_make_windows_random(check, rng, n, window, first, last, horizon):
    check.expect("make_windows", lambda m, *a: m.make_windows(*a),
                 (wavy(rng, n), window, first, last, horizon), names=("X", "Y"), tol=COPIED)


def test_make_windows_float32(check, rng):
    check.expect("make_windows", lambda m, *a: m.make_windows(*a),
                 (wavy(rng, 30).astype(np.float32), 5, 6, 25, 2), names=("X", "Y"), tol=COPIED)


@pytest.mark.parametrize("args", [
    pytest.param((20, 5, 4, 10, 1), id="first_target_below_window"),
    pytest.param((20, 5, 5, 18, 3), id="targets_past_the_end"),
])
def test_make_windows_rejects(check, rng, args):
    n, *rest = args
    expect_value_error(check, "make_windows", wavy(rng, n), *rest)


@pytest.mark.parametrize("horizon", [1, 3])
def test_make_windows_causal(student, rng, horizon):
    """The window of the example with first target t must not see series[t:]."""
    series, t = wavy(rng, 40), 20
    assert_causal(lambda s: student.make_windows(s, 6, t, t, horizon), series, t,
                  name=f"make_windows(series, 6, {t}, {t}, {horizon})",
                  leak="your window includes its own target",
                  outputs=lambda result: result[0],
                  hint="the window of first target t is series[t-W:t], the W values strictly "
                  "before t")


# ------------------------------------------------------------------ split_targets

@pytest.mark.parametrize("args", [
    pytest.param((100, 60, 8, 1, 0, None), id="h1"),
    pytest.param((100, 60, 8, 3, 0, 20), id="h3"),
    pytest.param((100, 60, 8, 3, 5, 20), id="h3-gap5"),
    pytest.param((200, 150, 10, 20, 0, 50), id="h20-val50"),
    pytest.param((8000, 6000, 64, 1, 0, 1000), id="lab_fold"),
])
def test_split_targets_cases(check, args):
    check.expect("split_targets", lambda m, *a: m.split_targets(*a), args,
                 names=("train_t", "val_t"), tol=COPIED)


def test_split_targets_rejects_validation_past_the_end(check):
    expect_value_error(check, "split_targets", 100, 90, 8, 1, 0, 20)


# ------------------------------------------------------------------ fit_scaler

@pytest.mark.parametrize("n, origin", [(50, 20), (200, 199), (30, 2)])
def test_fit_scaler_values(check, rng, n, origin):
    check.expect("fit_scaler", lambda m, s, o: m.fit_scaler(s, o), (wavy(rng, n), origin),
                 names=("mu", "sd"))


def test_fit_scaler_causal(student, rng):
    series, origin = wavy(rng, 60), 35
    assert_causal(lambda s: student.fit_scaler(s, origin), series, origin,
                  name=f"fit_scaler(series, {origin})",
                  leak="your scaler reads values after the origin",
                  hint="the statistics come from series[:origin] only")


# ------------------------------------------------------------------ naive and seasonal naive

@pytest.mark.parametrize("horizon", [1, 4])
def test_naive_forecast(check, rng, horizon):
    check.expect("naive_forecast", lambda m, X, h: m.naive_forecast(X, h),
                 (rng.standard_normal((7, 5)), horizon), tol=COPIED)


@pytest.mark.parametrize("period, horizon", [(7, 1), (7, 4), (5, 5)])
def test_seasonal_naive_forecast(check, rng, period, horizon):
    series = wavy(rng, 40)
    check.expect("seasonal_naive_forecast", lambda m, *a: m.seasonal_naive_forecast(*a),
                 (series, np.arange(10, 30, 3), period, horizon), tol=COPIED)


def test_seasonal_naive_rejects_horizon_above_period(check, rng):
    expect_value_error(check, "seasonal_naive_forecast", wavy(rng, 40), np.arange(10, 20), 5, 6)


def test_seasonal_naive_causal(student, rng):
    series, t = wavy(rng, 40), 21
    assert_causal(lambda s: student.seasonal_naive_forecast(s, np.array([t]), 7, 7), series, t,
                  name=f"seasonal_naive_forecast(series, [{t}], period=7, horizon=7)",
                  leak="your seasonal forecast reads values at or after the origin")


# ------------------------------------------------------------------ linear AR

@pytest.mark.parametrize("n, origin, window, horizon, gap", [
    pytest.param(200, 150, 6, 1, 0, id="h1"),
    pytest.param(200, 150, 6, 3, 2, id="h3-gap2"),
    pytest.param(300, 200, 12, 5, 0, id="h5"),
    pytest.param(120, 60, 1, 1, 0, id="window1"),
])
def test_fit_linear_ar_cases(check, rng, n, origin, window, horizon, gap):
    # promote=False: np.linalg.lstsq has no long-double version. The default float64 tolerance
    # (atol 1e-10) holds for any correct solver: the centred designs here have condition numbers
    # below 100 (the all-zero last column aside, which lstsq's minimum-norm answer sets to 0), and
    # lstsq, pinv, QR and the normal equations agree to ~1e-13 on coefficients of size ~1.
    check.expect("fit_linear_ar", lambda m, *a: m.fit_linear_ar(*a),
                 (wavy(rng, n), origin, window, horizon, gap), promote=False)


@pytest.mark.parametrize("horizon", [1, 3])
def test_fit_linear_ar_causal(student, rng, horizon):
    series, origin = wavy(rng, 200), 140
    assert_causal(lambda s: student.fit_linear_ar(s, origin, 6, horizon), series, origin,
                  name=f"fit_linear_ar(series, {origin}, 6, {horizon})",
                  leak="your linear model learns from values at or after the origin",
                  hint="only the examples whose targets all lie before the origin may be fitted")


def test_predict_linear_ar(check, rng):
    check.expect("predict_linear_ar", lambda m, c, X: m.predict_linear_ar(c, X),
                 (0.3 * rng.standard_normal((7, 3)), rng.standard_normal((9, 6))))


# ------------------------------------------------------------------ recursive_forecast

def test_recursive_forecast_linear(check, rng):
    X = wavy(rng, 60)[np.arange(10)[:, None] + np.arange(8)]
    step = FunctionRef("linear_one_step", (0.2 * rng.standard_normal((9, 1)),))
    check.expect("recursive_forecast", lambda m, f, X, h: m.recursive_forecast(f, X, h),
                 (step, X, 6), promote=False)


@pytest.mark.parametrize("horizon", [1, 2, 7])
def test_recursive_forecast_nonlinear(check, rng, horizon):
    step = FunctionRef("tanh_one_step", (rng.standard_normal(5),))
    check.expect("recursive_forecast", lambda m, f, X, h: m.recursive_forecast(f, X, h),
                 (step, rng.standard_normal((4, 5)), horizon), promote=False)


# ------------------------------------------------------------------ per-window normalisation

def test_per_window_normalize(check, rng):
    check.expect("per_window_normalize", lambda m, X: m.per_window_normalize(X),
                 (rng.standard_normal((6, 5)) + 3.0,), names=("delta", "last"))


def test_per_window_denormalize(check, rng):
    check.expect("per_window_denormalize", lambda m, d, last: m.per_window_denormalize(d, last),
                 (rng.standard_normal((6, 3)), rng.standard_normal(6)))


# ------------------------------------------------------------------ errors

def test_rmse_pooled(check, rng):
    """Rows with very different errors: a mean of per-row RMSEs differs from the pooled one."""
    truth = rng.standard_normal((8, 3))
    pred = truth + np.linspace(0.01, 2.0, 8)[:, None] * rng.standard_normal((8, 3))
    check.expect("rmse", lambda m, p, t: m.rmse(p, t), (pred, truth), names=("rmse",))


def test_rmse_one_dimensional(check, rng):
    check.expect("rmse", lambda m, p, t: m.rmse(p, t),
                 (rng.standard_normal(20), rng.standard_normal(20)), names=("rmse",))


def test_rmse_by_horizon(check, rng):
    truth = rng.standard_normal((9, 4))
    check.expect("rmse_by_horizon", lambda m, p, t: m.rmse_by_horizon(p, t),
                 (truth + rng.standard_normal((9, 4)) * [0.1, 0.5, 1.0, 2.0], truth))


@pytest.mark.parametrize("period", [1, 5])
def test_mase(check, rng, period):
    truth = rng.standard_normal((6, 3))
    check.expect("mase", lambda m, *a: m.mase(*a),
                 (truth + 0.3 * rng.standard_normal((6, 3)), truth, wavy(rng, 50), period),
                 names=("mase",))


def test_mase_constant_training_series_is_inf(check, rng):
    truth = rng.standard_normal((4, 2))
    check.expect("mase", lambda m, *a: m.mase(*a), (truth + 0.1, truth, np.full(20, 3.0)),
                 names=("mase",))


def test_walk_forward_table_small(check, rng):
    check.expect("walk_forward_table", lambda m, *a: m.walk_forward_table(*a),
                 (wavy(rng, 300), [150, 200, 250], 50, 8, 11), promote=False)


def test_walk_forward_table_lab_folds(student, reference, request):
    """The lab's table: simulate_mount(0), origins 4000..7000, folds of 1000, W = 64, P = 50.

    Compared with the reference without running the known mistakes on it (each would refit four
    least-squares problems on 7000 windows): a mistake here is named by the short-series test."""
    args = (lab_scene(reference, "series"), ORIGINS, 1000, 64, 50)
    got = student.walk_forward_table(*args)  # first: a submission that raises costs nothing more
    want = lab_scene(reference, "walk-forward")
    picture(request, lambda: plots.figure(
        "Walk-forward folds: your RMSE (solid) beside the reference's (dashed)",
        [plots.panel("one-step RMSE per fold", [
            plots.line(f"{method}{who}", table[method], x=ORIGINS, dashed=dashed, colour=i)
            for i, method in enumerate(("naive", "seasonal naive", "linear AR"))
            for table, who, dashed in
            ((got, "", False), (want, " (reference)", True))], x_label="forecast origin")]))
    assert_outputs(got, want, "walk_forward_table on the lab's four folds", inputs=args,
                   reveal=False)


# ------------------------------------------------------------------ rolling statistics

@pytest.mark.parametrize("stat", ["rms", "std", "mean"])
@pytest.mark.parametrize("width", [1, 4, 9])
def test_rolling_stat_values(check, rng, stat, width):
    check.expect("rolling_stat", lambda m, v, w, s: m.rolling_stat(v, w, s),
                 (rng.standard_normal(25) + 0.5, width, stat))


def test_rolling_stat_nan_propagates(check, rng):
    values = rng.standard_normal(20)
    values[8] = np.nan
    check.expect("rolling_stat", lambda m, v, w, s: m.rolling_stat(v, w, s), (values, 4, "rms"))


@pytest.mark.parametrize("stat", ["rms", "std"])
def test_rolling_stat_causal(student, rng, stat):
    values, i = rng.standard_normal(30), 17
    assert_causal(lambda v: student.rolling_stat(v, 5, stat), values, i + 1,
                  name=f"rolling_stat(values, 5, {stat!r})",
                  leak=f"your rolling statistic at sample {i} reads values after it",
                  outputs=lambda out: np.asarray(out)[: i + 1],
                  hint="output i covers values[i-width+1 : i+1]: a trailing window")


# ------------------------------------------------------------------ thresholds and alarms

@pytest.mark.parametrize("rate", [0.01, 0.1, 0.25])
def test_threshold_from_holdout(check, rng, rate):
    residuals = rng.standard_normal(200) - 0.8  # skewed: the signed quantile differs from |r|'s
    check.expect("threshold_from_holdout", lambda m, r, a: m.threshold_from_holdout(r, a),
                 (residuals, rate), names=("threshold",))


@pytest.mark.parametrize("k, n", [(2, 4), (3, 3), (1, 1), (4, 6)])
def test_k_of_n(check, rng, k, n):
    check.expect("k_of_n", lambda m, e, k, n: m.k_of_n(e, k, n), (rng.random(40) < 0.35, k, n),
                 tol=COPIED)


def test_k_of_n_causal(student, rng):
    exceed, i = rng.random(30) < 0.4, 14
    assert_causal(lambda e: student.k_of_n(e, 2, 4), exceed, i + 1,
                  name="k_of_n(exceed, 2, 4)",
                  leak=f"your alarm at sample {i} counts exceedances after it",
                  outputs=lambda out: np.asarray(out)[: i + 1])


@pytest.mark.parametrize("kappa, limit, reset", [
    pytest.param(1.25, 4.0, True, id="reset"),
    pytest.param(1.25, 4.0, False, id="no_reset"),
    pytest.param(0.0, 30.0, True, id="kappa0"),
    pytest.param(3.0, 2.0, True, id="mostly_at_zero"),
])
def test_cusum(check, rng, kappa, limit, reset):
    residuals = 0.2 * rng.standard_normal(60)
    residuals[30:40] += 0.5  # a stretch of larger residuals
    check.expect("cusum", lambda m, *a: m.cusum(*a), (residuals, 0.2, kappa, limit, reset),
                 names=("S", "alarms"))


def test_cusum_causal(student, rng):
    residuals, i = 0.2 * rng.standard_normal(40), 25
    assert_causal(lambda r: student.cusum(r, 0.2, 1.25, 4.0), residuals, i,
                  name="cusum(residuals, 0.2, 1.25, 4.0)",
                  leak=f"your CUSUM before sample {i} depends on residuals from {i} on",
                  outputs=lambda out: tuple(np.asarray(o)[:i] for o in out))


# ------------------------------------------------------------------ faults and their report

@pytest.mark.parametrize("kind, start, stop, size", [
    pytest.param("spike", 10, 11, 1.5, id="spike"),
    pytest.param("spike", 0, 1, -2.0, id="spike_at_0"),
    pytest.param("offset", 5, 25, 0.8, id="offset"),
    pytest.param("stuck", 12, 30, 0.0, id="stuck"),
    pytest.param("stuck", 1, 4, 0.0, id="stuck_from_1"),
])
def test_inject_fault(check, rng, kind, start, stop, size):
    check.expect("inject_fault", lambda m, *a: m.inject_fault(*a),
                 (wavy(rng, 40), kind, start, stop, size))


def test_inject_fault_rejects(check, rng):
    expect_value_error(check, "inject_fault", wavy(rng, 20), "spike", 5, 7, 1.0)


def _report_case(rng, n=120):
    alarms = rng.random(n) < 0.08
    faults = {"a": (20, 21), "b": (40, 55), "c": (80, 90), "quiet": (100, 101)}
    alarms[100:115] = False
    alarms[18] = True  # just before fault "a"
    alarms[57] = True  # inside b's tolerance, after its stop
    normal = np.ones(n, dtype=bool)
    for start, stop in faults.values():
        normal[start : stop + 10] = False
    return alarms, faults, normal


@pytest.mark.parametrize("tolerance", [0, 5, 20])
def test_detection_report(check, rng, tolerance):
    alarms, faults, normal = _report_case(rng)
    check.expect("detection_report", lambda m, *a: m.detection_report(*a),
                 (alarms, faults, normal, tolerance), tol=COPIED)


def picture(request, build):
    """Attach the figure ``build()`` makes to this test's feedback; a result that cannot be drawn
    (a wrong type or shape, which the test itself reports) leaves the picture out."""
    try:
        data = build()
    except Exception:  # noqa: BLE001 - the submission's values did not fit a picture
        return
    plots.attach_figure(request, data)


def timeline(residuals, yours, theirs):
    """The residual stream with its faults, and the rolling RMS and std with their limits and
    alarms: the submission's (solid, upper ticks) beside the reference's (dashed, lower ticks)."""
    spans = [(start - 6000, stop - 6000) for start, stop in FAULTS.values()]
    sigma = residuals[:1000].std()
    rms_limit = 1.1 * np.nanmax(theirs[0][:1000])
    std_floor = 0.5 * np.nanmin(theirs[1][:1000])

    def alarms(values, low):
        values = np.asarray(values, dtype=np.float64)
        if values.shape != residuals.shape:
            raise ValueError("not a rolling statistic of the stream")
        with np.errstate(invalid="ignore"):
            fired = (values < std_floor) if low else (values > rms_limit)
        fired[:1000] = False
        return fired

    panels = [plots.panel("residuals (faults shaded; dashed: ±4σ)",
                          [plots.line("residual", residuals, x0=6000, colour=5)],
                          spans=[(a + 6000, b + 6000) for a, b in spans],
                          limits=[4 * sigma, -4 * sigma])]
    for k, (title, low, limit) in enumerate((("rolling RMS over 50 samples", False, rms_limit),
                                             ("rolling std over 20 samples", True, std_floor))):
        panels.append(plots.panel(
            title, [plots.line("yours", yours[k], x0=6000, colour=0),
                    plots.line("reference", theirs[k], x0=6000, dashed=True, colour=1)],
            spans=[(a + 6000, b + 6000) for a, b in spans], limits=[limit],
            events=[plots.marks("your alarms", alarms(yours[k], low), x0=6000, row=1, colour=0),
                    plots.marks("reference alarms", alarms(theirs[k], low), x0=6000, colour=1)],
            x_label="sample"))
    return plots.figure("Residual monitoring of the faulted stream: yours beside the reference",
                        panels)


_SCENES: dict[str, object] = {}


def lab_scene(reference, name):
    """A scene of the lab built once with the reference and kept: it depends on nothing but the
    reference, and rebuilding it for every submission would cost seconds."""
    if name not in _SCENES:
        builders = {"series": lambda: reference.simulate_mount(0),
                    "walk-forward": lambda: reference.walk_forward_table(
                        lab_scene(reference, "series"), ORIGINS, 1000, 64, 50),
                    "residuals": lambda: _faulted_stream(reference)}
        _SCENES[name] = builders[name]()
    return copy.deepcopy(_SCENES[name])  # a test may not change what the next one reads


def _faulted_stream(reference):
    """The lab's monitoring scene, built with the reference: linear-AR residuals (fold-6000
    coefficients) on the clean hold-out 6000–6999 and on the faulted 6000–7999."""
    clean = reference.simulate_mount(0)
    scale = np.ones(80000)
    scale[74500:77500] = 2.0
    faulty = reference.simulate_mount(0, 8000, scale)
    faulty[7100] += 1.5
    faulty[7250:7350] += 0.8
    faulty[7850:7950] = faulty[7849]
    coef = reference.fit_linear_ar(clean, 6000, 64)
    t = np.arange(6000, 8000)
    X = faulty[t[:, None] - 64 + np.arange(64)]
    last = X[:, -1:]
    residuals = faulty[t] - (last + np.hstack([X - last, np.ones((len(t), 1))]) @ coef)[:, 0]
    return residuals


def test_monitors_on_faulted_stream(check, reference, student, request):
    """Rolling RMS (50) and rolling std (20) of the lab's residual stream (limits from the clean
    hold-out, as in the README), pictured beside the reference's."""
    residuals = lab_scene(reference, "residuals")
    yours = (student.rolling_stat(residuals, 50, "rms"), student.rolling_stat(residuals, 20, "std"))
    theirs = (reference.rolling_stat(residuals, 50, "rms"),
              reference.rolling_stat(residuals, 20, "std"))
    picture(request, lambda: timeline(residuals, yours, theirs))
    check.expect("rolling_stat", lambda m, r: (m.rolling_stat(r, 50, "rms"),
                                               m.rolling_stat(r, 20, "std")), (residuals,),
                 names=("rolling RMS", "rolling std"), promote=False)


def test_detection_report_on_faulted_stream(check, reference):
    residuals = lab_scene(reference, "residuals")
    roll_rms = reference.rolling_stat(residuals, 50, "rms")
    roll_std = reference.rolling_stat(residuals, 20, "std")
    alarms = np.stack([np.abs(residuals) > 4 * residuals[:1000].std(),
                       np.nan_to_num(roll_rms) > 1.1 * np.nanmax(roll_rms[:1000]),
                       ~np.isnan(roll_std) & (roll_std < 0.5 * np.nanmin(roll_std[:1000]))])
    alarms[:, :1000] = False
    normal = np.zeros(2000, dtype=bool)
    normal[1000:] = True
    faults = {name: (start - 6000, stop - 6000) for name, (start, stop) in FAULTS.items()}
    for start, stop in faults.values():
        normal[start : stop + 70] = False
    check.expect("detection_report",
                 lambda m, a, f, n: [m.detection_report(row, f, n) for row in a],
                 (alarms, faults, normal), tol=COPIED)


# ------------------------------------------------------------------ extension

@pytest.mark.parametrize("k, rate, run", [(3.5, 10.0, 1), (4.5, 10.0, 1), (5.5, 10.0, 1),
                                          (3.0, 1.0, 1), (3.5, 10.0, 3)])
def test_gaussian_false_alarms_per_day(check, k, rate, run):
    check.expect("gaussian_false_alarms_per_day",
                 lambda m, *a: m.gaussian_false_alarms_per_day(*a), (k, rate, run),
                 names=("false alarms per day",))


@pytest.mark.parametrize("fa, faults, days", [(5.5, 1.0, 30), (0.1, 2.0, 30), (2.0, 0.5, 7)])
def test_monitor_precision(check, fa, faults, days):
    check.expect("monitor_precision", lambda m, *a: m.monitor_precision(*a), (fa, faults, days),
                 names=("precision",))


def test_mahalanobis_sq(check, rng):
    A = rng.standard_normal((3, 3))
    cov = A @ A.T + 0.5 * np.eye(3)
    # promote=False: np.linalg.solve has no long-double version.
    check.expect("mahalanobis_sq", lambda m, R, c: m.mahalanobis_sq(R, c),
                 (rng.standard_normal((10, 3)), cov), promote=False)


def test_gaussian_nll(check, rng):
    check.expect("gaussian_nll", lambda m, *a: m.gaussian_nll(*a),
                 (rng.standard_normal(12), rng.standard_normal(12), rng.uniform(0.2, 3.0, 12)),
                 names=("nll",))


@pytest.mark.parametrize("tau", [0.1, 0.5, 0.9])
def test_pinball_loss(check, rng, tau):
    check.expect("pinball_loss", lambda m, *a: m.pinball_loss(*a),
                 (rng.standard_normal(15), rng.standard_normal(15), tau), names=("loss",))


def test_interval_coverage(check, rng):
    y = rng.standard_normal(30)
    y[:3] = [-1.0, 1.0, 0.0]  # exactly on the ends: inside
    lo = np.full(30, -1.0)
    check.expect("interval_coverage", lambda m, *a: m.interval_coverage(*a), (y, lo, -lo),
                 names=("coverage",))

