"""Known lab 8 mistakes, each written as an edit of the reference ``solutions/lab8/forecast.py``
(the list of the lab README's "Pitfalls", in its order)."""

from rnngrade.suite import Mutant

MUTANTS = [
    # --- make_windows -----------------------------------------------------------------------
    Mutant(
        name="window_includes_target",
        function="make_windows",
        description="the window is series[t-W+1 : t+1]: it ends with its own target",
        hint="Which values are known when you forecast series[t]? The window must stop just "
        "before the first target.",
        edits=(("series[targets[:, None] + np.arange(-window, 0)]",
                "series[targets[:, None] + np.arange(-window + 1, 1)]"),),
    ),
    Mutant(
        name="target_shifted_by_one",
        function="make_windows",
        description="the targets are series[t+1 : t+1+h] instead of series[t : t+h]",
        hint="The first target of the example with origin t is series[t] itself, the value "
        "right after the window. Check where your targets start.",
        edits=(("series[targets[:, None] + np.arange(0, horizon)]",
                "series[targets[:, None] + np.arange(1, horizon + 1)]"),),
        patterns=("off_by_one_step",),
    ),
    # --- split_targets ----------------------------------------------------------------------
    Mutant(
        name="train_targets_cross_origin",
        function="split_targets",
        description="training first targets run up to origin - 1, so for h > 1 their later "
        "targets lie at or after the origin",
        hint="An example with first target t has targets up to t + h - 1. Which is the last t "
        "whose targets all lie before the origin (and the gap)?",
        edits=(("train_t = np.arange(window, origin - gap - horizon + 1, dtype=np.int64)",
                "train_t = np.arange(window, origin - gap, dtype=np.int64)"),),
    ),
    Mutant(
        name="random_split",
        function="split_targets",
        description="overlapping windows shuffled and split at random: training targets after "
        "the origin",
        hint="A random split of overlapping windows puts examples from after the origin into "
        "training, and their windows overlap the validation targets. Split by time.",
        edits=(("train_t = np.arange(window, origin - gap - horizon + 1, dtype=np.int64)",
                "train_t = np.sort(np.random.default_rng(0).permutation(np.arange("
                "window, n_series - horizon + 1))[:max(origin - gap - horizon + 1 - window, 0)]"
                ").astype(np.int64)"),),
    ),
    # --- fit_scaler -------------------------------------------------------------------------
    Mutant(
        name="scaler_on_whole_series",
        function="fit_scaler",
        description="mean and sd computed over the whole series, not series[:origin]",
        hint="At the forecast origin the later values do not exist yet. Which part of the "
        "series may the statistics come from?",
        edits=(("past = np.asarray(series, dtype=np.float64)[:origin]",
                "past = np.asarray(series, dtype=np.float64)"),),
    ),
    Mutant(
        name="scaler_ddof_1",
        function="fit_scaler",
        description="sample standard deviation (ddof=1) instead of the population one",
        hint="The lab fixes the population standard deviation (np.std's default). Check the "
        "ddof you use.",
        edits=(("return float(past.mean()), float(past.std())",
                "return float(past.mean()), float(past.std(ddof=1))"),),
    ),
    # --- seasonal_naive_forecast ------------------------------------------------------------
    Mutant(
        name="seasonal_same_lag_every_step",
        function="seasonal_naive_forecast",
        description="series[t - period] used for every horizon step instead of "
        "series[t + j - period]",
        hint="Step j of the forecast is one period before its own target, t + j. Does your "
        "forecast move along with j?",
        edits=(("lags = np.arange(horizon) - period", "lags = np.zeros(horizon, dtype=np.int64) "
                "- period"),),
    ),
    # --- fit_linear_ar ----------------------------------------------------------------------
    Mutant(
        name="linear_ar_raw_windows",
        function="fit_linear_ar",
        description="fitted on raw windows and raw targets: no last-value centring",
        hint="The design subtracts each window's last value from the window, and the target is "
        "the change from that last value. Check both.",
        edits=(("design = np.hstack([X - last, np.ones((len(targets), 1))])\n"
                "    coef, *_ = np.linalg.lstsq(design, Y - last, rcond=None)",
                "design = np.hstack([X, np.ones((len(targets), 1))])\n"
                "    coef, *_ = np.linalg.lstsq(design, Y, rcond=None)"),),
    ),
    Mutant(
        name="linear_ar_no_intercept",
        function="fit_linear_ar",
        description="no intercept column in the design: coef has window rows, not window + 1",
        hint="The design has a column of ones after the centred window, so the coefficients "
        "have window + 1 rows. Is the intercept there?",
        edits=(("design = np.hstack([X - last, np.ones((len(targets), 1))])",
                "design = X - last"),),
    ),
    Mutant(
        name="linear_ar_fit_on_validation",
        function="fit_linear_ar",
        description="fitted on every example of the series, validation targets included",
        hint="Which examples may a model fitted at the origin learn from? Only those whose "
        "targets all lie before the origin (and the gap).",
        edits=(("last_t = origin - gap - horizon", "last_t = len(series) - horizon"),),
    ),
    # --- recursive_forecast -----------------------------------------------------------------
    Mutant(
        name="recursive_appends_observed_value",
        function="recursive_forecast",
        description="appends a known value (the window's last one) instead of the prediction",
        hint="Each step must append the value just predicted: the later steps depend on it. "
        "Which value do you append?",
        edits=(("windows = np.concatenate([windows[:, 1:], nxt[:, None]], axis=1)",
                "windows = np.concatenate([windows[:, 1:], windows[:, -1:]], axis=1)"),),
    ),
    Mutant(
        name="recursive_drops_newest",
        function="recursive_forecast",
        description="drops the newest value instead of the oldest when appending",
        hint="The window slides forward: the oldest value (column 0) leaves, the prediction "
        "enters at the end. Which column do you drop?",
        edits=(("windows = np.concatenate([windows[:, 1:], nxt[:, None]], axis=1)",
                "windows = np.concatenate([windows[:, :-1], nxt[:, None]], axis=1)"),),
    ),
    # --- rmse and walk_forward_table --------------------------------------------------------
    Mutant(
        name="rmse_mean_over_windows",
        function="rmse",
        description="the mean of per-window RMSEs instead of one RMSE pooled over all forecasts",
        hint="RMSE is pooled: square every error, average all of them, then take one root.",
        edits=(("return float(np.sqrt(np.mean(err**2)))",
                "return float(np.mean(np.sqrt(np.mean(err**2, axis=-1))))"),),
    ),
    Mutant(
        name="rmse_in_z_units",
        function="walk_forward_table",
        description="fold RMSEs left in z-units (not multiplied back by the fold's sd)",
        hint="Errors are reported in the series' own units. If you score normalised forecasts, "
        "bring the error back by the fold's standard deviation.",
        edits=(("table[method].append(_pooled_rmse(forecasts[method], z[targets]) * sd)",
                "table[method].append(_pooled_rmse(forecasts[method], z[targets]))"),),
    ),
    # --- mase -------------------------------------------------------------------------------
    Mutant(
        name="mase_scale_on_test",
        function="mase",
        description="MASE scaled by the naive MAE of the test values instead of the training "
        "series",
        hint="MASE divides by the in-sample naive error: computed on the training series, "
        "never on the values being forecast.",
        edits=(("scale = float(np.mean(np.abs(train[lag:] - train[:-lag])))",
                "scale = float(np.mean(np.abs(np.asarray(truth)[lag:] - "
                "np.asarray(truth)[:-lag])))"),),
    ),
    Mutant(
        name="mase_h_step_naive_scale",
        function="mase",
        description="MASE scaled by the h-step naive error instead of the lag-period one",
        hint="The scale is the naive forecast's error at lag `period` on the training series, "
        "whatever the forecast horizon.",
        edits=(("lag = period", "lag = np.shape(pred)[-1]"),),
    ),
    # --- rolling_stat -----------------------------------------------------------------------
    Mutant(
        name="rolling_centred",
        function="rolling_stat",
        description="a centred window (reads values after i) instead of a trailing one",
        hint="A monitor at sample i knows only samples up to i. Output i covers "
        "values[i-width+1 : i+1], and the first width - 1 outputs are NaN.",
        edits=(("out[width - 1 :] = stats", "out[(width - 1) // 2 : len(values) - width // 2]"
                " = stats"),),
    ),
    Mutant(
        name="rolling_width_plus_one",
        function="rolling_stat",
        description="windows of width + 1 values",
        hint="Count the values in your window: values[i-width+1 : i+1] holds exactly width.",
        edits=(("frames = np.lib.stride_tricks.sliding_window_view(values, width)",
                "frames = np.lib.stride_tricks.sliding_window_view(values, width + 1)"),
               ("out[width - 1 :] = stats", "out[width:] = stats")),
    ),
    Mutant(
        name="rolling_std_ddof_1",
        function="rolling_stat",
        description="rolling std with ddof=1",
        hint="The lab's rolling std is the population one (ddof=0).",
        edits=(("stats = frames.std(axis=-1)", "stats = frames.std(axis=-1, ddof=1)"),),
    ),
    # --- threshold_from_holdout -------------------------------------------------------------
    Mutant(
        name="threshold_signed_residuals",
        function="threshold_from_holdout",
        description="quantile of the signed residuals instead of |r|",
        hint="The test alarms on large residuals of either sign. Of which values do you take "
        "the quantile?",
        edits=(("magnitudes = np.abs(np.asarray(holdout_residuals, dtype=np.float64))",
                "magnitudes = np.asarray(holdout_residuals, dtype=np.float64)"),),
    ),
    Mutant(
        name="threshold_wrong_tail",
        function="threshold_from_holdout",
        description="np.percentile(|r|, 100·rate): the lower tail instead of 1 - rate",
        hint="A false-alarm rate of 1% puts the threshold above 99% of the clean residuals. "
        "Which quantile is that?",
        edits=(("return float(np.quantile(magnitudes, 1 - false_alarm_rate))",
                "return float(np.percentile(magnitudes, 100 * false_alarm_rate))"),),
    ),
    # --- k_of_n -----------------------------------------------------------------------------
    Mutant(
        name="k_of_n_looks_ahead",
        function="k_of_n",
        description="counts exceed[i : i+n] (the future) instead of exceed[i-n+1 : i+1]",
        hint="The alarm at i may only use the exceedances up to and including i.",
        edits=(("in_window = counts[i + 1] - counts[np.maximum(0, i - n + 1)]",
                "in_window = counts[np.minimum(i + n, len(hits))] - counts[i]"),),
    ),
    # --- cusum ------------------------------------------------------------------------------
    Mutant(
        name="cusum_without_floor",
        function="cusum",
        description="S_t = S_{t-1} + r²/σ² - κ without max(0, ·)",
        hint="Between faults the statistic should rest at 0, not drift downwards: what keeps "
        "it from going negative?",
        edits=(("total = max(0.0, total + step - kappa)", "total = total + step - kappa"),),
    ),
    Mutant(
        name="cusum_abs_residual",
        function="cusum",
        description="|r|/σ accumulated instead of r²/σ²",
        hint="The statistic accumulates squared standardised residuals.",
        edits=(("step = value * value / sigma**2", "step = abs(value) / sigma"),),
    ),
    Mutant(
        name="cusum_no_reset",
        function="cusum",
        description="no restart from 0 after an alarm when reset=True",
        hint="With reset=True the statistic starts again from 0 on the step after an alarm.",
        edits=(("                total = 0.0\n", "                pass\n"),),
    ),
    # --- inject_fault -----------------------------------------------------------------------
    Mutant(
        name="stuck_holds_first_faulty_reading",
        function="inject_fault",
        description="a stuck sensor holds series[start] instead of the last good reading",
        hint="A stuck sensor repeats the last reading it made before it stuck. Which index is "
        "that?",
        edits=(("held = faulty[start - 1]", "held = faulty[start]"),),
    ),
    # --- detection_report -------------------------------------------------------------------
    Mutant(
        name="delay_from_alarm_before_onset",
        function="detection_report",
        description="alarms before the fault's start count for it (negative delays)",
        hint="An alarm raised before a fault began cannot have detected it. Where does your "
        "search for a fault's alarms begin?",
        edits=(("lo, hi = int(start), int(stop) + tolerance",
                "lo, hi = 0, int(stop) + tolerance"),),
    ),
    Mutant(
        name="tolerance_not_applied",
        function="detection_report",
        description="alarms counted only inside [start, stop), not up to stop + tolerance",
        hint="Alarms shortly after a fault ends still belong to it: the lab counts them up to "
        "stop + tolerance.",
        edits=(("lo, hi = int(start), int(stop) + tolerance", "lo, hi = int(start), int(stop)"),),
    ),
    Mutant(
        name="false_alarms_inside_faults",
        function="detection_report",
        description="every alarm counted as false, normal_mask ignored",
        hint="A false alarm is an alarm where normal_mask is True; alarms during faults are "
        "not false.",
        edits=(("false_alarms = int(np.count_nonzero(fired & normal))",
                "false_alarms = int(np.count_nonzero(fired))"),),
    ),
    # --- extension --------------------------------------------------------------------------
    Mutant(
        name="one_sided_tail",
        function="gaussian_false_alarms_per_day",
        description="one-sided tail p = Q(k): half the false alarms of the two-sided test",
        hint="The test alarms when |r| > kσ: both tails count.",
        edits=(("p = math.erfc(k_sigma / math.sqrt(2.0))",
                "p = math.erfc(k_sigma / math.sqrt(2.0)) / 2"),),
        patterns=("constant_factor",),
    ),
    Mutant(
        name="precision_units_mixed",
        function="monitor_precision",
        description="false alarms per day compared with faults per month (not scaled to a "
        "month)",
        hint="Precision compares events over the same stretch of time: how many false alarms "
        "does a month bring?",
        edits=(("false_per_month = days_per_month * false_alarms_per_day",
                "false_per_month = false_alarms_per_day"),),
    ),
    # --- Part B (optional): the LSTM forecaster -----------------------------------------------
    Mutant(
        name="last_value_not_added_back",
        function="lstm_forecaster_forward",
        description="per_window subtracts the window's last value but never adds it back: the "
        "forecast is the predicted change, not the next value",
        hint="With per_window the network predicts the change from the window's last value. "
        "What must happen to its output before it is a forecast of the next value?",
        edits=(("return pred + last[:, 0] if per_window else pred", "return pred"),),
    ),
    Mutant(
        name="dropout_in_eval",
        function="lstm_forecaster_forward",
        description="the forward pass runs the LSTM in train mode, so dropout stays on and the "
        "forecasts are random",
        hint="Forecasting is evaluation: which mode must the LSTM be in so that dropout between "
        "its layers is switched off?",
        edits=(("layers = forecaster_modules(X.dtype).eval()",
                "layers = forecaster_modules(X.dtype).train()"),),
    ),
    Mutant(
        name="adam_not_adamw",
        function="train_forecaster",
        description="torch.optim.Adam instead of AdamW: no decoupled weight decay",
        hint="The README's optimiser decays the weights at every step (decoupled weight decay, "
        "its default 0.01). Check which optimiser class you build.",
        edits=(("optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)",
                "optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)"),),
    ),
    Mutant(
        name="no_gradient_clipping",
        function="train_forecaster",
        description="the gradient norm is measured but never clipped to 1.0",
        hint="Look at the updates whose gradient norm is above 1: the README clips the global "
        "norm to 1.0 before every step.",
        edits=(("norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
                "norm = nn.utils.clip_grad_norm_(model.parameters(), math.inf)"),),
    ),
    Mutant(
        name="no_reseed",
        function="train_forecaster",
        description="torch.manual_seed(seed) is never called, so the batches follow whatever "
        "state torch's generator was in",
        hint="Your mini-batches differ from the expected ones from the first update on. Where "
        "must the generator be seeded, and with what, before the first randperm?",
        edits=(("    torch.manual_seed(seed)\n    losses, norms = [], []",
                "    losses, norms = [], []"),),
    ),
    Mutant(
        name="trained_without_dropout",
        function="train_forecaster",
        description="the model is trained in eval mode: no dropout between the LSTM layers",
        hint="Training uses the model in train mode, with dropout 0.1 between the LSTM layers "
        "(README, Part B).",
        edits=(("    model.train()\n    optimizer", "    model.eval()\n    optimizer"),),
    ),
    Mutant(
        name="gradients_accumulate",
        function="train_forecaster",
        description="the gradients are never zeroed, so each update adds the new gradient to "
        "all earlier ones",
        hint="PyTorch adds each backward pass into .grad. What must happen to the gradients "
        "before every backward pass?",
        edits=(("            optimizer.zero_grad()\n", ""),),
    ),
]
