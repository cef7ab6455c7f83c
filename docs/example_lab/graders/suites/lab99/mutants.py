"""Known mistakes of the example lab, as edits of the reference (see docs/AUTHORING.md)."""

from rnngrade.suite import Mutant

MUTANTS = [
    Mutant(
        name="half_life_as_time_constant",
        function="smoothing_factor",
        description="alpha = 1 / half_life: the weights fall by 1/e every half-life, not by half",
        hint="After half_life steps an old value's weight (1 - alpha) ** half_life should be "
        "exactly one half. Solve that equation for alpha.",
        edits=(("return 1.0 - 0.5 ** (1.0 / half_life)", "return 1.0 / half_life"),),
    ),
    Mutant(
        name="weights_swapped",
        function="ema",
        description="alpha weighs the previous average and 1 - alpha the new value",
        hint="alpha is the weight of the newest value x[..., t]; the running average keeps "
        "1 - alpha. Check which term each multiplies.",
        edits=(("        s[..., t] = alpha * x[..., t] + (1 - alpha) * s[..., t - 1]\n",
                "        s[..., t] = (1 - alpha) * x[..., t] + alpha * s[..., t - 1]\n"),),
    ),
]
