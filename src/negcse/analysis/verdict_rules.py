"""Whether a paper's claim holds: the seed as the unit, an interval, a verdict, a correction.

A claim is "method A beats baseline B by the paper's difference". The unit of a claim about a
training method is a training run (a seed): each seed of A and of B is scored on the same test
set, and the difference of their seed means varies with the seeds (training noise) and with the
test set (which pairs happened to be in it). :func:`seed_interval` combines the two into a
Welch-Satterthwaite t-interval (docs/statistics.md has the model):

- seeds: the sample variance of the per-seed differences (same seeds on both sides: paired, the
  seed fixes the data order) or of each side's per-seed values (different seeds: Welch);
- test set: ``test_var``, the bootstrap variance of the seed-mean difference over resamples of
  the test items (:mod:`negcse.analysis.bootstrap`, :mod:`negcse.analysis.transfer_bootstrap`),
  treated as known (1,000 resamples), so it adds to the standard error but not to the
  uncertainty of the degrees of freedom.

:func:`hypothesis_p` tests the four statements a verdict can make (at least ``fraction`` of
the paper's difference; between 0 and the paper's; within ``equivalence`` of 0, TOST; the
other way), each read off the interval; :func:`verdict_of` names the verdict from the
rejections alone (never off the estimate's sign); :func:`family_verdicts` corrects one
family's rows (a paper's verdicts on one measure) so that any false verdict in the family has
probability at most ``alpha``; :func:`min_detectable` and :func:`detection_floor` give each
row's power. Everything is vectorised over numpy arrays, so :func:`simulate` checks the
coverage and the verdict rates of the same code on thousands of synthetic families at once
(tests/tables/test_verdict_rules.py, benchmarks/verdict_coverage.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    from scipy import special
else:  # the table specs (read when the workflow is parsed) import this module: scipy on use
    special = LazyModule("scipy.special")

#: the interval's level; a verdict's one-sided tests run at (1 - LEVEL) / 2 each
LEVEL = 0.95
#: the fewest seeds per side that give a verdict (params.yaml verdicts.min_seeds overrides it)
MIN_SEEDS = 3

# Verdict codes (arrays of them in :func:`simulate`) and their words.
REPRODUCED, SMALLER, NOT_REPRODUCED, REVERSED, INCONCLUSIVE = range(5)
WORDS = ("reproduced", "smaller than claimed", "not reproduced", "reversed", "inconclusive")
#: a comparison the paper did not make (another backbone, LLM, protocol or scale) only says
#: whether the direction holds
CHECK_WORDS = {
    REPRODUCED: "direction check: as claimed",
    REVERSED: "direction check: opposite",
    INCONCLUSIVE: "direction check: inconclusive",
}


@dataclass(frozen=True)
class SeedInterval:
    """A difference (mean over seeds) and what its interval is made of: ``seed_var`` (the
    variance of the seed mean(s), estimated with ``seed_df`` degrees of freedom) and
    ``test_var`` (the test set's share, taken as known)."""

    estimate: float
    seed_var: float
    test_var: float
    seed_df: float
    level: float = LEVEL

    @property
    def se(self) -> float:
        return float(np.sqrt(self.seed_var + self.test_var))

    @property
    def half_width(self) -> float:
        crit = critical(1.0 - self.level, self.seed_var, self.test_var, self.seed_df)
        return float(crit * self.se)

    @property
    def low(self) -> float:
        return self.estimate - self.half_width

    @property
    def high(self) -> float:
        return self.estimate + self.half_width

    def side(self, value: float) -> int:
        """+1 when the interval lies above ``value``, -1 below it, 0 when it holds it."""
        return 1 if self.low > value else -1 if self.high < value else 0

    def p_value(self, value: float = 0.0) -> float:
        """Two-sided p-value of "the difference is ``value``": the 1 - level at which the
        interval's end reaches ``value``."""
        return float(p_values(np.float64(self.estimate), np.float64(self.seed_var),
                              np.float64(self.test_var), np.float64(self.seed_df), value))  # fmt: skip


def critical(tail: float | np.ndarray, seed_var: np.ndarray, test_var: np.ndarray,
             seed_df: np.ndarray) -> np.ndarray:  # fmt: skip
    """The interval's half-width in standard errors at two-sided ``tail`` (0.05: 95%): the
    t quantile of the seed part and the normal quantile of the test-set part, weighted by their
    variances (Cochran and Cox's blend: never below the nominal level in the simulations of
    docs/statistics.md, where the Welch-Satterthwaite t is, at 3 seeds, down to 0.92)."""
    q = 1.0 - np.asarray(tail, dtype=np.float64) / 2.0
    total = np.asarray(seed_var + test_var, dtype=np.float64)
    t = special.stdtrit(np.maximum(seed_df, 1e-9), q)
    z = special.ndtri(q)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, (t * seed_var + z * test_var) / np.where(total > 0, total, 1), z)


def p_values(estimate: np.ndarray, seed_var: np.ndarray, test_var: np.ndarray,
             seed_df: np.ndarray, value: float | np.ndarray = 0.0) -> np.ndarray:  # fmt: skip
    """Two-sided p-values of "the difference is ``value``", elementwise: the tail at which the
    :func:`critical` interval's end reaches ``value`` (bisection on log p; 1e-12 at most
    extreme). No variance at all: 0 unless exactly equal."""
    se = np.sqrt(np.asarray(seed_var + test_var, dtype=np.float64))
    gap = np.abs(np.asarray(estimate, dtype=np.float64) - value)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(se > 0, gap / np.where(se > 0, se, 1.0), np.where(gap > 0, np.inf, 0.0))
    df = np.asarray(seed_df, dtype=np.float64)
    if ratio.size >= 1024 and df.size and np.all(df == df.flat[0]):  # many: one quantile grid
        return _p_on_grid(ratio, np.asarray(seed_var + 0.0 * ratio), np.asarray(test_var + 0.0 * ratio),
                          float(df.flat[0]))  # fmt: skip
    lo = np.full(ratio.shape, np.log(1e-12))  # log p: critical(lo) >= ratio ... or p below it
    hi = np.zeros(ratio.shape)
    for _ in range(40):
        mid = (lo + hi) / 2
        inside = critical(np.exp(mid), seed_var, test_var, seed_df) >= ratio
        lo, hi = np.where(inside, mid, lo), np.where(inside, hi, mid)
    return np.where(ratio >= critical(1e-12, seed_var, test_var, seed_df), 0.0, np.exp(hi))


def _p_on_grid(ratio: np.ndarray, seed_var: np.ndarray, test_var: np.ndarray, df: float,
               points: int = 4097) -> np.ndarray:  # fmt: skip
    """:func:`p_values` for many elements of one degrees of freedom (the simulations): the
    quantiles on a grid of log p once, each element's blend bisected over the grid's nodes and
    interpolated between them (log p within about 1e-6 of the exact bisection)."""
    log_p = np.linspace(np.log(1e-12), 0.0, points)
    q = 1.0 - np.exp(log_p) / 2.0
    t, z = special.stdtrit(max(df, 1e-9), q), special.ndtri(q)
    total = seed_var + test_var
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(total > 0, seed_var / np.where(total > 0, total, 1.0), 0.0)
    lo = np.zeros(ratio.shape, dtype=np.int64)  # crit[lo] >= ratio > crit[hi] (decreasing)
    hi = np.full(ratio.shape, points - 1)
    for _ in range(int(np.ceil(np.log2(points)))):
        mid = (lo + hi) // 2
        inside = w * t[mid] + (1 - w) * z[mid] >= ratio
        lo, hi = np.where(inside, mid, lo), np.where(inside, hi, mid)
    c_lo, c_hi = w * t[lo] + (1 - w) * z[lo], w * t[hi] + (1 - w) * z[hi]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.clip(np.where(c_lo > c_hi, (c_lo - ratio) / (c_lo - c_hi), 1.0), 0.0, 1.0)
    p = np.exp(log_p[lo] + frac * (log_p[hi] - log_p[lo]))
    p = np.where(ratio >= w * t[0] + (1 - w) * z[0], 0.0, p)
    return np.where(ratio <= w * t[-1] + (1 - w) * z[-1], 1.0, p)


def welch(
    var_a: np.ndarray, n_a: np.ndarray, var_b: np.ndarray | None = None,
    n_b: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(variance, Welch-Satterthwaite degrees of freedom) of a difference of seed means from
    the per-seed sample variances; ``var_b`` None: one sample (paired differences, or one model
    against a constant)."""
    parts = [np.asarray(var_a, dtype=np.float64) / n_a]
    dfs = [np.asarray(n_a, dtype=np.float64) - 1]
    if var_b is not None and n_b is not None:
        parts.append(np.asarray(var_b, dtype=np.float64) / n_b)
        dfs.append(np.asarray(n_b, dtype=np.float64) - 1)
    total = sum(parts)
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = sum(p**2 / d for p, d in zip(parts, dfs, strict=True))
        df = np.where(denom > 0, total**2 / np.where(denom > 0, denom, 1.0), dfs[0])
    return np.asarray(total), np.asarray(df)


def seed_interval(
    a: Sequence[float],
    b: Sequence[float] | None = None,
    paired: bool = False,
    test_var: float = 0.0,
    level: float = LEVEL,
) -> SeedInterval | None:
    """A - B from per-seed values (``b`` None: A's mean); None with fewer than 2 seeds a side.
    ``paired``: the same seeds in the same order on both sides."""
    a_ = np.asarray(a, dtype=np.float64)
    if b is None or paired:
        d = a_ if b is None else a_ - np.asarray(b, dtype=np.float64)
        if len(d) < 2:
            return None
        var, df = welch(d.var(ddof=1), len(d))
        return SeedInterval(float(d.mean()), float(var), float(test_var), float(df), level)
    b_ = np.asarray(b, dtype=np.float64)
    if len(a_) < 2 or len(b_) < 2:
        return None
    var, df = welch(a_.var(ddof=1), len(a_), b_.var(ddof=1), len(b_))
    return SeedInterval(float(a_.mean() - b_.mean()), float(var), float(test_var), float(df),
                        level)  # fmt: skip


def one_run_interval(values: Sequence[float], value: float, level: float = LEVEL
                     ) -> SeedInterval | None:  # fmt: skip
    """Our mean over seeds minus one published run's ``value``, with the interval of that
    difference if the published run were one more seed of ours: variance s^2 (1 + 1/n), n - 1
    degrees of freedom (a prediction interval; the test set is the same on both sides, so it
    adds nothing). None with fewer than 2 seeds."""
    v = np.asarray(values, dtype=np.float64)
    if len(v) < 2:
        return None
    var = float(v.var(ddof=1) * (1.0 + 1.0 / len(v)))
    return SeedInterval(float(v.mean() - value), var, 0.0, float(len(v) - 1), level)


# The decision rule (docs/statistics.md): four hypotheses a row, each rejected or not; the
# verdict is read off the rejections alone, so a correction that only raises p-values can only
# take evidence away (never "reproduced" unless the raw verdict is).


@dataclass(frozen=True)
class Rule:
    """The decision rule's settings (config/defaults.yaml ``verdicts``): "reproduced" needs the
    effect to be at least ``fraction`` of the paper's difference; "not reproduced" needs it to be
    within ``equivalence`` x the paper's difference of 0 (TOST); ``alpha`` is the family-wise
    level of the two-sided 95% interval every verdict is read from (each one-sided test at
    ``alpha`` / 2); ``power`` is the power of the minimum detectable effect."""

    fraction: float = 0.5
    equivalence: float = 0.5
    alpha: float = 1.0 - LEVEL
    power: float = 0.8

    def __post_init__(self) -> None:
        for name in ("fraction", "equivalence", "alpha", "power"):
            value = getattr(self, name)
            if not 0.0 < value < 1.0:
                raise ValueError(f"verdicts.{name}: {value!r} is not between 0 and 1")


#: the hypotheses of a row, columns of :func:`hypothesis_p`; rejecting one supports the verdict
#: of the same code (REPRODUCED, SMALLER, NOT_REPRODUCED, REVERSED)
HYPOTHESES = (
    "effect at most fraction x the paper's",
    "effect at most 0, or at least the paper's",
    "effect at least equivalence x the paper's, either way",
    "effect at least 0",
)
#: which rejection decides first: a verdict of a larger effect before one of a smaller
PRIORITY = (REPRODUCED, REVERSED, SMALLER, NOT_REPRODUCED)


def one_sided(estimate: np.ndarray, seed_var: np.ndarray, test_var: np.ndarray,
              seed_df: np.ndarray, value: float | np.ndarray, above: bool) -> np.ndarray:  # fmt: skip
    """p of "the difference is at most ``value``" (``above``: evidence that it is above) or
    "at least ``value``" (not ``above``): half the :func:`p_values` of the interval on the side
    the estimate lies, else 1 minus that."""
    half = p_values(estimate, seed_var, test_var, seed_df, value) / 2.0
    side = np.asarray(estimate, dtype=np.float64) > value
    return np.where(side == above, half, 1.0 - half)


def hypothesis_p(estimate: np.ndarray, seed_var: np.ndarray, test_var: np.ndarray,
                 seed_df: np.ndarray, delta: np.ndarray, direction: np.ndarray,
                 sized: np.ndarray | bool, rule: Rule = Rule()) -> np.ndarray:  # fmt: skip
    """(..., 4) p-values of :data:`HYPOTHESES` in the claim's direction (x = direction x the
    difference, D = |delta|), doubled so that p < ``rule.alpha`` exactly where the two-sided
    (1 - alpha) interval says so (each test one-sided at alpha / 2):

    - reproduced: rejects x <= fraction x D (a direction only: x <= 0);
    - smaller than claimed: rejects x <= 0 or x >= D (intersection-union: both one-sided);
    - not reproduced: rejects |x| >= equivalence x D (TOST: both one-sided);
    - reversed: rejects x >= 0.

    NaN where a hypothesis is not tested (no size: smaller and not reproduced)."""
    x = np.asarray(direction, dtype=np.float64) * np.asarray(estimate, dtype=np.float64)
    sized = np.asarray(sized, dtype=bool)
    size = np.where(sized, np.abs(np.nan_to_num(np.asarray(delta, dtype=np.float64))), 0.0)
    args = (seed_var, test_var, seed_df)
    margin = rule.equivalence * size
    rep = one_sided(x, *args, rule.fraction * size, above=True)
    small = np.maximum(one_sided(x, *args, 0.0, above=True),
                       one_sided(x, *args, size, above=False))  # fmt: skip
    equal = np.maximum(one_sided(x, *args, -margin, above=True),
                       one_sided(x, *args, margin, above=False))  # fmt: skip
    rev = one_sided(x, *args, 0.0, above=False)
    p = np.minimum(2.0 * np.stack([rep, small, equal, rev], axis=-1), 1.0)
    p[..., 1:3] = np.where(sized[..., None], p[..., 1:3], np.nan)
    return p


def verdict_of(rejected: np.ndarray) -> np.ndarray:
    """Verdict codes from (..., 4) rejections of :data:`HYPOTHESES`: the first rejected in
    :data:`PRIORITY`, else INCONCLUSIVE. A subset of the rejections never gives "reproduced"
    unless the whole set does, nor "smaller than claimed" unless the whole set gives it or
    "reproduced"."""
    rejected = np.asarray(rejected, dtype=bool)
    return np.select([rejected[..., k] for k in PRIORITY], list(PRIORITY), INCONCLUSIVE)


def family_verdicts(p: np.ndarray, alpha: float = 1.0 - LEVEL
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """One family's (rows, 4) :func:`hypothesis_p` (a row all NaN: not judged) -> the raw
    verdicts, the Bonferroni-adjusted p-values (x k, the family's judged rows) and the corrected
    verdicts: each row read off its (1 - alpha / k) interval. Every verdict says the truth lies
    in a region the interval lies within, so a false one needs its row's interval to miss the
    truth: at most alpha / k a row, alpha a family, whatever the rows' dependence. Leading
    axes: independent families (the simulation's replicates)."""
    p = np.asarray(p, dtype=np.float64)
    k = family_size(p)
    adjusted = np.minimum(p * np.asarray(k, dtype=np.float64)[..., None, None], 1.0)
    with np.errstate(invalid="ignore"):
        raw = verdict_of(p < alpha)
        corrected = verdict_of(adjusted < alpha)
    return raw, adjusted, corrected


def family_size(p: np.ndarray) -> np.ndarray:
    """The number of rows a family's (..., rows, 4) p-values judge (a row not all NaN)."""
    return np.count_nonzero(~np.isnan(np.asarray(p, dtype=np.float64)).all(axis=-1), axis=-1)


# Power: the minimum detectable effect and the test set's floor.


#: Gauss-Laguerre nodes over the seeds' chi-square in :func:`rejection_probability`
_NODES = 96


@lru_cache(maxsize=4096)  # pure in its numbers; a dry run plans the same claims three times
def rejection_probability(shift: float, seed_var: float, test_var: float, seed_df: float,
                          tail: float) -> float:  # fmt: skip
    """The power of the interval's one-sided test at level ``tail`` when the truth lies
    ``shift`` beyond the tested value (negative: on the other side), the variances taken as
    the true ones: the estimate is normal (sd sqrt(seed_var + test_var)), the seeds' variance
    estimate independent of it and chi-square on ``seed_df`` degrees of freedom, and the test
    rejects where the estimate clears the blended critical value x the estimated standard
    error. Integrated over that chi-square (generalised Gauss-Laguerre): without a test-set
    share exactly Student's power (statsmodels' TTestPower)."""
    from scipy import stats

    total = seed_var + test_var
    if not total > 0:
        return 1.0 if shift > 0 else 0.0
    if seed_var <= 0 or seed_df > 300:  # the variance as good as known
        crit = float(critical(2.0 * tail, np.float64(seed_var), np.float64(test_var),
                              np.float64(seed_df)))  # fmt: skip
        return float(stats.norm.sf(crit - shift / math.sqrt(total)))
    half = seed_df / 2.0

    def rejected(estimated: np.ndarray) -> np.ndarray:  # at a seeds' variance estimate
        crit = critical(2.0 * tail, estimated, np.float64(test_var), np.float64(seed_df))
        return special.ndtr((shift - crit * np.sqrt(estimated + test_var)) / math.sqrt(total))

    if seed_df < 3:  # a chi-square peaked at 0, too sharp for the nodes: adaptive quadrature
        from scipy import integrate

        def integrand(x: float) -> float:
            return float(stats.chi2.pdf(x, seed_df) * rejected(np.float64(seed_var * x / seed_df)))

        return float(integrate.quad(integrand, 0.0, np.inf, limit=200)[0])
    nodes, weights = special.roots_genlaguerre(_NODES, half - 1.0)
    estimated = seed_var * nodes / half  # the seeds' variance estimate at each node
    return float(np.sum(weights * rejected(estimated)) / np.sum(weights))


@lru_cache(maxsize=4096)
def detectable(seed_var: float, test_var: float, seed_df: float, tail: float,
               power: float = 0.8) -> float:  # fmt: skip
    """The smallest true distance from a tested value that a one-sided test at level ``tail``
    (the interval's blended critical value) rejects with probability ``power``: the inverse of
    :func:`rejection_probability` in the shift. inf without any variance estimate."""
    from scipy import optimize

    total = seed_var + test_var
    if not total > 0:
        return 0.0 if total == 0 else math.inf
    se = math.sqrt(total)

    def gap(shift: float) -> float:
        return rejection_probability(shift * se, seed_var, test_var, seed_df, tail) - power

    hi = 1.0
    while gap(hi) < 0:
        hi *= 2.0
    return float(optimize.brentq(gap, 0.0, hi, xtol=1e-10)) * se


def min_detectable(seed_var: float, test_var: float, seed_df: float, rows: int,
                   rule: Rule = Rule(), sized: bool = True) -> float:  # fmt: skip
    """The minimum detectable effect (MDE) of a claim: the smallest true effect that the rule
    calls "reproduced" with probability ``rule.power`` at these variances, in a family of
    ``rows`` (:func:`family_verdicts`: one-sided at alpha / 2 / rows): the detectable distance
    above ``fraction`` x the effect, i.e. that distance / (1 - fraction) (a direction only:
    the distance above 0)."""
    tail = rule.alpha / 2.0 / max(rows, 1)
    shift = detectable(seed_var, test_var, seed_df, tail, rule.power)
    return shift / (1.0 - rule.fraction) if sized else shift


def planned_mde(seed_sd: float, seeds: int, test_sd: float, rows: int,
                rule: Rule = Rule(), sized: bool = True) -> float:  # fmt: skip
    """:func:`min_detectable` from a variance model (for planning seeds): paired seeds whose
    differences spread ``seed_sd``, ``seeds`` of them, and the test set's sd ``test_sd`` of
    the difference of the seed means."""
    if seeds < 2:
        return math.inf
    return min_detectable(seed_sd**2 / seeds, test_sd**2, seeds - 1.0, rows, rule, sized)


def detection_floor(test_var: float, rule: Rule = Rule()) -> float:
    """The test set's floor: the smallest difference from 0 that any number of seeds detects
    with ``rule.power`` (two-sided ``rule.alpha``, no multiplicity correction), the seeds' share
    gone and the test set's share ``test_var`` left. A claim below it cannot be told from 0 on
    these test sets."""
    z = float(special.ndtri(1.0 - rule.alpha / 2.0)) + float(special.ndtri(rule.power))
    return z * math.sqrt(max(test_var, 0.0))


# Coverage and verdict rates by simulation.

#: the seeds' noise in :func:`simulate`: normal; Student's t on 3 degrees of freedom (scaled to
#: the same sd); normal with one bad seed a comparison (a run off by 4 sds, either way)
NOISES = ("normal", "t3", "bad seed")


def seed_noise(rng: np.random.Generator, shape: tuple[int, ...], sd: float, kind: str
               ) -> np.ndarray:  # fmt: skip
    """(..., seeds) seed deviations of sd ``sd`` of one of :data:`NOISES`."""
    if kind == "normal":
        return rng.normal(0.0, sd, shape)
    if kind == "t3":
        return rng.standard_t(3, shape) * sd / math.sqrt(3.0)
    if kind == "bad seed":
        out = rng.normal(0.0, sd, shape)
        out[..., 0] += 4.0 * sd * rng.choice([-1.0, 1.0], shape[:-1])
        return out
    raise ValueError(f"seed noise {kind!r}: one of {', '.join(NOISES)}")


def simulate(
    seeds: int,
    truth: float | np.ndarray,
    claimed: float | np.ndarray,
    ratio: float,
    comparisons: int = 16,
    replicates: int = 4000,
    level: float = LEVEL,
    rng: np.random.Generator | None = None,
    test_var_df: int = 999,
    rule: Rule | None = None,
    noise: str = "normal",
    test_sd: float = 1.0,
    sized: np.ndarray | bool = True,
    mde_samples: int = 0,
) -> dict[str, np.ndarray]:
    """``replicates`` families of paired comparisons, ``seeds`` seeds a side, true difference
    ``truth`` and paper's ``claimed`` (scalars, or one per comparison: then their length is the
    family's). Per seed: the difference is truth + seed noise (sd ``ratio``, :data:`NOISES`) +
    the test set's share (sd ``test_sd``, common to all seeds of a comparison: one test set);
    the bootstrap's test-set variance is test_sd^2 with its own noise (chi-square,
    ``test_var_df`` degrees of freedom: the resamples). A comparison whose |claimed| is below
    the :func:`detection_floor` of its estimated test-set variance is untestable: out of the family,
    every verdict INCONCLUSIVE. Returns, each (replicates, comparisons): ``covered`` (the
    interval holds ``truth``), raw ``verdict`` codes, ``corrected`` codes
    (:func:`family_verdicts` over the replicate's family), ``untestable`` and ``mde``
    (:func:`min_detectable` at the replicate's family size; in the first ``mde_samples`` replicates, NaN in the others); with 1 seed no interval exists: ``covered`` then holds the
    test-set-only interval's coverage and every verdict is INCONCLUSIVE (no verdict)."""
    rng = rng or np.random.default_rng(0)
    rule = rule or Rule(alpha=1.0 - level)
    truth_, claimed_ = np.broadcast_arrays(np.asarray(truth, dtype=np.float64),
                                           np.asarray(claimed, dtype=np.float64))  # fmt: skip
    if truth_.ndim:
        comparisons = len(truth_)
    sized_ = np.broadcast_to(np.asarray(sized, dtype=bool), (comparisons,))
    shape = (replicates, comparisons)
    test = rng.normal(0.0, test_sd, shape)
    per_seed = (truth_ + test)[..., None] + seed_noise(rng, (*shape, seeds), ratio, noise)
    test_var = test_sd**2 * rng.chisquare(test_var_df, shape) / test_var_df
    mean = per_seed.mean(axis=-1)
    none = np.full(shape, INCONCLUSIVE)
    if seeds < 2:  # what a one-seed interval would be: test-set sampling only
        half = special.ndtri(0.5 + level / 2) * np.sqrt(test_var)
        covered = np.abs(mean - truth_) <= half
        return {"covered": covered, "verdict": none, "corrected": none,
                "untestable": np.zeros(shape, bool), "mde": np.full(shape, np.inf)}  # fmt: skip
    seed_var, df = welch(per_seed.var(axis=-1, ddof=1), seeds)
    half = critical(1.0 - level, seed_var, test_var, df) * np.sqrt(seed_var + test_var)
    covered = np.abs(mean - truth_) <= half
    floor = detection_floor(1.0, rule) * np.sqrt(test_var)
    untestable = sized_ & (np.abs(claimed_) < floor)
    p = hypothesis_p(mean, seed_var, test_var, df, claimed_, np.sign(claimed_), sized_, rule)
    p[untestable] = np.nan
    raw, _, corrected = family_verdicts(p, rule.alpha)
    raw = np.where(untestable, INCONCLUSIVE, raw)
    corrected = np.where(untestable, INCONCLUSIVE, corrected)
    m = family_size(p)
    mde = np.full(shape, np.nan)
    for i in range(min(replicates, mde_samples)):  # a root-find each
        for j in range(comparisons):
            mde[i, j] = min_detectable(float(seed_var[i, j]), float(test_var[i, j]),
                                       float(df[i, j]), int(m[i]), rule, bool(sized_[j]))  # fmt: skip
    return {"covered": covered, "verdict": raw, "corrected": corrected, "untestable": untestable,
            "mde": mde}  # fmt: skip
