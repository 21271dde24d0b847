"""The power of a claim's verdict interval at n paired seeds, and the seeds it needs.

The verdict interval (docs/statistics.md) is ``d +- c * sqrt(s^2 / n + v)``: s the paired
seeds' sd, v the test set's variance, c Cochran and Cox's blend of t(n - 1) and z. "Reproduced"
or "reversed" needs it past 0. Its power at a true difference ``delta`` is read as a noncentral
t on the seeds' n - 1 degrees of freedom with noncentrality ``delta / sqrt(s^2 / n + v)``
exceeding c in either direction: with v = 0 it is exactly the paired t-test's power (what
``statsmodels.stats.power.TTestPower`` gives), with v > 0 an approximation that
``tests/analysis/test_seed_power.py`` checks by simulating the interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import optimize, stats


@dataclass(frozen=True)
class VarianceModel:
    """What one claim's seeds and test set vary by (points of the measure)."""

    seed_sd: float  # sd of one seed's paired difference (method - baseline, same seed)
    test_sd: float  # sd of the difference from the test set (the same for every seed)
    source: str  # where the numbers come from, for the plan's table

    def se(self, n: int) -> float:
        return math.sqrt(self.seed_sd**2 / n + self.test_sd**2)


def blend_quantile(n: int, model: VarianceModel, level: float) -> float:
    """Cochran and Cox's quantile at ``level``: t(n - 1) and z weighted by the seeds' and the
    test set's shares of the variance (the verdict interval's c)."""
    seed, test = model.seed_sd**2 / n, model.test_sd**2
    t, z = stats.t.ppf(level, n - 1), stats.norm.ppf(level)
    if seed + test == 0:
        return float(z)
    return float((t * seed + z * test) / (seed + test))


def power(delta: float, n: int, model: VarianceModel, alpha: float = 0.05) -> float:
    """Probability that the two-sided ``1 - alpha`` interval of n paired seeds excludes 0 when
    the true difference is ``delta``; 0 below 2 seeds (no interval, no verdict)."""
    if n < 2:
        return 0.0
    c = blend_quantile(n, model, 1 - alpha / 2)
    ncp = abs(delta) / model.se(n)
    nct = stats.nct(n - 1, ncp)
    far = nct.cdf(-c)  # the wrong side's tail: NaN where it underflows
    return float(nct.sf(c) + (0.0 if math.isnan(far) else far))


def floor(model: VarianceModel, target: float = 0.8, alpha: float = 0.05) -> float:
    """The smallest difference any number of seeds detects with power ``target``: the test
    set's share alone, ``(z_{1-alpha/2} + z_target) * test_sd``."""
    return float((stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(target)) * model.test_sd)


def min_detectable(n: int, model: VarianceModel, target: float = 0.8, alpha: float = 0.05) -> float:
    """The smallest true difference n seeds detect with power ``target`` (inf below 2)."""
    if n < 2:
        return math.inf
    hi = 1.0
    while power(hi, n, model, alpha) < target:
        hi *= 2
    return float(optimize.brentq(lambda d: power(d, n, model, alpha) - target, 0.0, hi, xtol=1e-6))


def seeds_needed(
    delta: float,
    model: VarianceModel,
    target: float = 0.8,
    alpha: float = 0.05,
    low: int = 2,
    cap: int = 10,
) -> int | None:
    """The fewest seeds (from ``low``, at most ``cap``) whose power at ``delta`` reaches
    ``target``; None when ``cap`` seeds do not."""
    for n in range(max(low, 2), cap + 1):
        if power(delta, n, model, alpha) >= target:
            return n
    return None
