"""Known lab 2 mistakes, each written as an edit of the reference ``solutions/lab2/bptt.py``."""

from rnngrade.suite import Mutant

MUTANTS = [
    # --- rnn_cell_backward -------------------------------------------------------------------
    Mutant(
        name="tanh_derivative_at_a_prev",
        function="rnn_cell_backward",
        description="tanh' evaluated at a_prev (1 − a_prev²) instead of at a_next",
        hint="Check where you evaluate the derivative of tanh. It belongs to the step that "
        "produced a_next = tanh(z): which state equals tanh(z) in this step?",
        edits=(("dz = (1 - a_next ** 2) * da_next", "dz = (1 - a_prev ** 2) * da_next"),),
    ),
    Mutant(
        name="dba_not_summed_over_batch",
        function="rnn_cell_backward",
        description="dba returned per example, shape (n_a, m), instead of summed to (n_a, 1)",
        hint="dba must have the shape of ba, (n_a, 1). The same bias serves every example of "
        "the batch: how do the per-example contributions combine?",
        edits=(("dba = np.sum(dz, axis=1, keepdims=True)", "dba = dz"),),
    ),
    Mutant(
        name="dba_averaged_over_batch",
        function="rnn_cell_backward",
        description="dba averaged over the batch (np.mean) instead of summed",
        hint="Your dba is too small by a factor of the batch size. The loss adds up the "
        "examples' contributions: does its gradient average them?",
        edits=(
            ("dba = np.sum(dz, axis=1, keepdims=True)", "dba = np.mean(dz, axis=1, keepdims=True)"),
        ),
        patterns=("constant_factor",),
    ),
    Mutant(
        name="waa_not_transposed",
        function="rnn_cell_backward",
        description="da_prev computed with Waa instead of Waaᵀ",
        hint="Look at da_prev. In the forward pass Waa multiplies a_prev; going backwards, the "
        "gradient travels through the same matrix the other way. Which orientation is that?",
        edits=(("da_prev = Waa.T @ dz", "da_prev = Waa @ dz"),),
        patterns=("gradient_not_carried_back",),
    ),
    # --- rnn_backward --------------------------------------------------------------------------
    Mutant(
        name="recurrent_term_dropped",
        function="rnn_backward",
        description="the gradient from step t+1 (da_prev) is not added to da[:, :, t]",
        hint="Your gradients are right for the last step but not for earlier ones. The hidden "
        "state of step t also fed step t+1: does its gradient include what step t+1 sends back?",
        edits=(
            (
                'grads = rnn_cell_backward(da[:, :, t] + da_prevt, cell_caches[t])',
                'grads = rnn_cell_backward(da[:, :, t], cell_caches[t])',
            ),
        ),
        patterns=("gradient_not_carried_back",),
    ),
    Mutant(
        name="weight_grads_overwritten",
        function="rnn_backward",
        description="dWax, dWaa, dba overwritten at every step instead of summed over time",
        hint="The weights are shared by all time steps. Check that dWax, dWaa and dba collect "
        "the contribution of every step rather than keeping only one of them.",
        edits=(
            ('dWax += grads["dWax"]', 'dWax = grads["dWax"]'),
            ('dWaa += grads["dWaa"]', 'dWaa = grads["dWaa"]'),
            ('dba += grads["dba"]', 'dba = grads["dba"]'),
        ),
        patterns=("all_zeros", "not_carried_across_time",),
    ),
    Mutant(
        name="time_loop_forward",
        function="rnn_backward",
        description="the backward loop runs t = 0 .. T−1 instead of backwards in time",
        hint="Backpropagation through time starts at the last step: the gradient that step t "
        "needs from step t+1 must already be known when you process step t. Check your loop's "
        "direction.",
        edits=(("for t in reversed(range(T_x)):", "for t in range(T_x):"),),
        patterns=("gradient_not_carried_back", "not_carried_across_time",),
    ),
    # --- clip ----------------------------------------------------------------------------------
    Mutant(
        name="clip_by_global_norm_instead",
        function="clip",
        description="clip rescales by the global norm instead of clipping element-wise",
        hint="clip asks for element-wise clipping: each entry is limited to "
        "[−maxValue, maxValue] on its own, and entries inside the interval do not change.",
        edits=(
            (
                "return {name: np.clip(g, -maxValue, maxValue) for name, g in gradients.items()}",
                "norm = np.sqrt(sum(np.sum(g ** 2) for g in gradients.values()))\n"
                "    return {name: g * min(1.0, maxValue / (norm + 1e-12)) "
                "for name, g in gradients.items()}",
            ),
        ),
    ),
    Mutant(
        name="clip_upper_bound_only",
        function="clip",
        description="only the upper bound applied: large negative entries stay unclipped",
        hint="Entries far below zero must be clipped too: the interval is [−maxValue, maxValue].",
        edits=(("np.clip(g, -maxValue, maxValue)", "np.minimum(g, maxValue)"),),
    ),
    # --- clip_by_global_norm -------------------------------------------------------------------
    Mutant(
        name="global_norm_clips_elementwise",
        function="clip_by_global_norm",
        description="clip_by_global_norm clips each entry to [−max_norm, max_norm] instead of "
        "rescaling",
        hint="clip_by_global_norm must keep the direction of the whole gradient: every array is "
        "multiplied by one common factor, computed from the norm of all entries together.",
        edits=(
            (
                "clipped = {name: g * scale for name, g in grads.items()}",
                "clipped = {name: np.clip(g, -max_norm, max_norm) for name, g in grads.items()}",
            ),
        ),
    ),
    Mutant(
        name="global_norm_per_array",
        function="clip_by_global_norm",
        description="each array rescaled by its own norm instead of the norm of all arrays",
        hint="The norm is taken over all entries of all arrays together, and the same factor "
        "scales every array.",
        edits=(
            (
                "clipped = {name: g * scale for name, g in grads.items()}",
                "clipped = {name: g * min(1.0, max_norm / (np.linalg.norm(g) + 1e-12)) "
                "for name, g in grads.items()}",
            ),
        ),
        patterns=("constant_factor",),
    ),
    Mutant(
        name="global_norm_always_rescaled",
        function="clip_by_global_norm",
        description="gradients rescaled to norm max_norm even when they were already smaller",
        hint="Gradients whose norm is already at most max_norm must come back unchanged: the "
        "factor is never larger than 1.",
        edits=(
            ("scale = min(1.0, max_norm / (norm + 1e-12))", "scale = max_norm / (norm + 1e-12)"),
        ),
        patterns=("constant_factor",),
    ),
    # --- numerical_gradient --------------------------------------------------------------------
    Mutant(
        name="one_sided_difference",
        function="numerical_gradient",
        description="forward difference (f(x+ε) − f(x)) / ε instead of the central difference",
        hint="Use the central difference: evaluate f on both sides of x[i] and divide by the "
        "distance between the two points. A one-sided difference is only accurate to about ε.",
        edits=(
            ("x[index] = old - eps", "x[index] = old"),
            ("(f_plus - f_minus) / (2 * eps)", "(f_plus - f_minus) / eps"),
        ),
    ),
    Mutant(
        name="x_left_perturbed",
        function="numerical_gradient",
        description="the entry is not restored after the two evaluations (x left at x[i] − ε)",
        hint="After evaluating f around x[i], put the original value back exactly; otherwise "
        "later entries are differentiated at the wrong point and the caller's array is changed.",
        edits=(("        x[index] = old\n", ""),),
    ),
    Mutant(
        name="central_difference_not_halved",
        function="numerical_gradient",
        description="central difference divided by ε instead of 2ε (gradient doubled)",
        hint="Your estimates are about twice too large. How far apart are the two points at "
        "which you evaluate f?",
        edits=(("(f_plus - f_minus) / (2 * eps)", "(f_plus - f_minus) / eps"),),
        patterns=("constant_factor",),
    ),
    # --- relative_error ------------------------------------------------------------------------
    Mutant(
        name="relative_error_nan_on_zeros",
        function="relative_error",
        description="no floor in the denominator: two zero entries give 0 / 0 = NaN",
        hint="Try two arrays that are both zero somewhere: the error there must be 0, not NaN. "
        "Keep the denominator away from zero.",
        edits=(("    scale = np.maximum(scale, 1e-12)\n", ""),),
        patterns=("nan_or_inf",),
    ),
    Mutant(
        name="relative_error_of_norms",
        function="relative_error",
        description="‖a − b‖ / (‖a‖ + ‖b‖) over whole arrays instead of the entry-wise maximum",
        hint="relative_error is entry-wise: compute |a − b| / max(|a|, |b|, 1e-12) for every "
        "entry and return the largest; a norm over the whole array hides one bad entry.",
        edits=(
            (
                "return float(np.max(np.abs(a - b) / scale))",
                "return float(np.linalg.norm(a - b) "
                "/ max(np.linalg.norm(a) + np.linalg.norm(b), 1e-12))",
            ),
        ),
    ),
    # --- char_rnn_loss_and_grads ---------------------------------------------------------------
    Mutant(
        name="char_rnn_recurrent_term_dropped",
        function="char_rnn_loss_and_grads",
        description="dh_t misses the gradient W_hhᵀ·δ_{t+1} coming back from step t+1",
        hint="The gradients of W_hh, W_xh and b_h only see one step. h_t also feeds step t+1: "
        "add the gradient that flows back from there when you compute dh at step t.",
        edits=(("dh = W_hy.T @ dlogits + dh_next", "dh = W_hy.T @ dlogits"),),
        patterns=("not_carried_across_time", "recurrent_term",),
    ),
    Mutant(
        name="char_rnn_tanh_derivative_at_h_prev",
        function="char_rnn_loss_and_grads",
        description="tanh' taken at h_{t−1} instead of h_t",
        hint="Check where you evaluate the derivative of tanh: it belongs to h_t = tanh(z_t), "
        "the state this step produced.",
        edits=(("dz = (1 - hs[t + 1] ** 2) * dh", "dz = (1 - hs[t] ** 2) * dh"),),
    ),
    Mutant(
        name="loss_summed_not_averaged",
        function="char_rnn_loss_and_grads",
        description="loss and gradients summed over the B·T positions instead of averaged",
        hint="Your loss and all your gradients are too large by the same factor, the number of "
        "positions in the batch. The loss is a mean.",
        edits=(("scale = 1.0 / (B * T)", "scale = 1.0"),),
        patterns=("constant_factor",),
    ),
    Mutant(
        name="duplicate_characters_lost",
        function="char_rnn_loss_and_grads",
        description="W_xh gradient updated with fancy-index += (duplicates in one step are lost)",
        hint="When two streams read the same character at the same step, the W_xh column of "
        "that character must receive both gradients. Does your update add up repeated indices?",
        edits=(
            (
                'np.add.at(grads["W_xh"], (slice(None), X[:, t]), dz)',
                'grads["W_xh"][:, X[:, t]] += dz',
            ),
        ),
    ),
    # --- mistakes seen in real classic submissions ---------------------------------------------
    Mutant(
        name="da_prev_not_updated",
        function="rnn_backward",
        description="da_prevt never updated inside the loop: every step adds the zeros it "
        "started with",
        hint="You add da_prevt to da[:, :, t], but is it ever given the da_prev that the step "
        "you just processed returned? Check what happens to it inside the loop.",
        edits=(('        da_prevt = grads["da_prev"]\n    return {"dx": dx, "da0": da_prevt',
                '    return {"dx": dx, "da0": da_prevt'),),
        patterns=("gradient_not_carried_back",),
    ),
    Mutant(
        name="clip_result_discarded",
        function="clip",
        description="np.clip's result is thrown away: the gradients come back unclipped",
        hint="np.clip returns a new array unless you give it out=; assigning its result to the "
        "loop variable changes nothing in your dictionary. Check that the clipped values are "
        "what you return.",
        edits=(("return {name: np.clip(g, -maxValue, maxValue) for name, g in gradients.items()}",
                "return {name: g for name, g in gradients.items()}"),),
    ),
    Mutant(
        name="da0_left_at_zeros",
        function="rnn_backward",
        description="da0 returned as the zeros it was initialised with (the gradient carried "
        "back through every step never reaches it)",
        hint="da0 is the gradient your loop carries back past the first step. Check that the "
        "value you return under \"da0\" is that one, not the array you initialised.",
        edits=(('return {"dx": dx, "da0": da_prevt,',
                'return {"dx": dx, "da0": np.zeros_like(da_prevt),'),),
        patterns=("all_zeros",),
    ),
]
