"""Known mistakes of lab7 (the linear recurrent unit), as edits of solutions/lab7/lru.py."""

from rnngrade.suite import Mutant

MUTANTS = [
    # --- lru_lambda / lru_gamma ------------------------------------------------------------------
    Mutant(
        name="lambda_without_inner_exp",
        function="lru_lambda",
        description="|λ| = exp(−nu_log) instead of exp(−exp(nu_log))",
        hint="The modulus of your λ is wrong, and for negative nu_log it is even above 1. How "
        "many exponentials does the parametrisation of |λ| contain?",
        edits=(("    log_modulus = -torch.exp(nu_log)\n", "    log_modulus = -nu_log\n"),),
        patterns=("nan_or_inf", "not_carried_across_time",),
    ),
    Mutant(
        name="lambda_phase_without_exp",
        function="lru_lambda",
        description="phase of λ taken as theta_log instead of exp(theta_log)",
        hint="The modulus of your λ is right but its angle is not. Check how the phase is "
        "obtained from theta_log.",
        edits=(("    phase = torch.exp(theta_log)\n", "    phase = theta_log\n"),),
        patterns=("not_carried_across_time",),
    ),
    Mutant(
        name="gamma_from_modulus_not_square",
        function="lru_gamma",
        description="γ = sqrt(1 − |λ|) instead of sqrt(1 − |λ|²)",
        hint="Your γ is too large. Check whether you use |λ| or its square under the root.",
        edits=(
            (
                "    log_modulus_sq = -2.0 * torch.exp(nu_log)\n",
                "    log_modulus_sq = -torch.exp(nu_log)\n",
            ),
        ),
    ),
    # --- init_lru --------------------------------------------------------------------------------
    Mutant(
        name="init_modulus_uniform_not_squared",
        function="init_lru",
        description="|λ| drawn uniform on [r_min, r_max] instead of |λ|² uniform on "
        "[r_min², r_max²]",
        hint="Your eigenvalues are not spread uniformly over the ring's area. Which quantity "
        "should be uniform: the modulus or its square?",
        edits=(
            (
                "    modulus_sq = r_min**2 + u1 * (r_max**2 - r_min**2)\n",
                "    modulus_sq = (r_min + u1 * (r_max - r_min)) ** 2\n",
            ),
        ),
    ),
    Mutant(
        name="init_variance_used_as_std",
        function="init_lru",
        description="normal draws scaled by the variance instead of its square root",
        hint="The spread of your B, C and D entries is off. randn has variance 1: by what do you "
        "multiply it to get a given variance?",
        edits=(
            (
                "generator=generator, dtype=wide) * math.sqrt(variance)",
                "generator=generator, dtype=wide) * variance",
            ),
        ),
    ),
    # --- lru_forward_loop ------------------------------------------------------------------------
    Mutant(
        name="gamma_missing",
        function="lru_forward_loop",
        description="input not scaled by γ in the loop form",
        hint="Your outputs are too large, more so for |λ| close to 1. Check how the input enters "
        "the state: u_t has a normalisation factor.",
        edits=(
            (
                "        u_t = gamma * (x_c[:, t] @ B.T)  # (B, N)\n",
                "        u_t = x_c[:, t] @ B.T  # (B, N)\n",
            ),
        ),
    ),
    Mutant(
        name="real_part_before_c",
        function="lru_forward_loop",
        description="Re(h) multiplied by C instead of Re(C h): the imaginary parts are lost too "
        "early",
        hint="Your output ignores part of the state. The real part is taken once, at the very "
        "end: of what product?",
        edits=(
            (
                "        y_t = (h @ C.T).real + x[:, t] @ D.T  # (B, d_out)\n",
                "        y_t = h.real @ C.real.T + x[:, t] @ D.T  # (B, d_out)\n",
            ),
        ),
        patterns=("all_zeros",),
    ),
    Mutant(
        name="feedthrough_missing",
        function="lru_forward_loop",
        description="the skip term D x_t left out of y_t",
        hint="Your output misses a term that depends on the current input directly (not through "
        "the state).",
        edits=(
            (
                "        y_t = (h @ C.T).real + x[:, t] @ D.T  # (B, d_out)\n",
                "        y_t = (h @ C.T).real  # (B, d_out)\n",
            ),
        ),
        patterns=("all_zeros",),
    ),
    # --- lru_forward_fft -------------------------------------------------------------------------
    Mutant(
        name="fft_without_padding",
        function="lru_forward_fft",
        description="FFTs of length T: a circular convolution whose tail wraps onto the start",
        hint="Your early outputs depend on late inputs, which a causal layer cannot do. A product "
        "of FFTs is a circular convolution: how long must the transforms be to avoid wrap-around?",
        edits=(("    n = 2 * T\n", "    n = T\n"),),
    ),
    Mutant(
        name="fft_wrong_half",
        function="lru_forward_fft",
        description="the second half of the inverse FFT kept instead of the first T entries",
        hint="Your output has the right shape but the wrong values. After the padded inverse "
        "FFT, which T entries hold the causal convolution?",
        edits=(("n=n, dim=1)[:, :T]", "n=n, dim=1)[:, T:]"),),
    ),
    Mutant(
        name="fft_kernel_off_by_one",
        function="lru_forward_fft",
        description="kernel λ^1 … λ^T instead of λ^0 … λ^(T−1)",
        hint="Your convolution kernel is shifted by one power. What is the kernel's first entry, "
        "the weight of the current input u_t in h_t?",
        edits=(
            (
                "    powers = torch.arange(T, device=x.device, dtype=x.dtype)",
                "    powers = torch.arange(1, T + 1, device=x.device, dtype=x.dtype)",
            ),
        ),
    ),
    Mutant(
        name="gamma_missing_fft",
        function="lru_forward_fft",
        description="input not scaled by γ in the FFT form",
        hint="Your outputs are too large, more so for |λ| close to 1. Check how the input enters "
        "the state: u_t has a normalisation factor.",
        edits=(
            (
                "    u = gamma * (x.to(lam.dtype) @ B.T)  # (B, T, N)\n",
                "    u = x.to(lam.dtype) @ B.T  # (B, T, N)\n",
            ),
        ),
    ),
    # --- linear_scan -----------------------------------------------------------------------------
    Mutant(
        name="scan_operator_swapped",
        function="linear_scan",
        description="the associative operator applied with its arguments swapped "
        "(later step composed before the earlier one)",
        hint="The order of composition matters: (a₁, b₁) ∘ (a₂, b₂) means step 1 then step 2. "
        "Check which pair is the earlier one when you combine positions t − offset and t.",
        edits=(
            (
                "        h_new = a_cur * h_prev + h_cur\n",
                "        h_new = a_prev * h_cur + h_prev\n",
            ),
        ),
    ),
    Mutant(
        name="scan_coefficients_not_composed",
        function="linear_scan",
        description="the a-part of each pair never updated, so later rounds use a_t instead of "
        "the product of the combined coefficients",
        hint="Your scan is right for the first two steps and wrong later. Combining two pairs "
        "updates both of their parts.",
        edits=(("        a = torch.cat([a[:, :offset], a_new], dim=1)\n", ""),),
    ),
    # --- lru_forward_scan ------------------------------------------------------------------------
    Mutant(
        name="gamma_missing_scan",
        function="lru_forward_scan",
        description="input not scaled by γ in the scan form",
        hint="Your outputs are too large, more so for |λ| close to 1. Check how the input enters "
        "the state: u_t has a normalisation factor.",
        edits=(
            (
                "linear_scan(lam, gamma * (x.to(lam.dtype) @ B.T))",
                "linear_scan(lam, x.to(lam.dtype) @ B.T)",
            ),
        ),
    ),
]
