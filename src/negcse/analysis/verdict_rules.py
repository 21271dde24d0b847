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

:func:`decide` reads a verdict off where the interval lies relative to 0 and to the paper's
difference (never off the estimate's sign alone); :func:`holm` adjusts a grid's p-values so
that every verdict that asserts something (a direction, a smaller effect than claimed) is false
with probability at most ``alpha`` across the whole grid. Everything is vectorised over numpy
arrays, so :func:`simulate` checks the coverage and the verdict rates of the same code on
thousands of synthetic grids at once (tests/tables/test_verdict_rules.py,
benchmarks/verdict_coverage.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from negcse.lazy import LazyModule

if TYPE_CHECKING:
    from scipy import special
else:  # the table specs (read when the workflow is parsed) import this module: scipy on use
    special = LazyModule("scipy.special")

#: the interval's level; a verdict's hypotheses are tested at 1 - LEVEL
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
    lo = np.full(ratio.shape, np.log(1e-12))  # log p: critical(lo) >= ratio ... or p below it
    hi = np.zeros(ratio.shape)
    for _ in range(40):
        mid = (lo + hi) / 2
        inside = critical(np.exp(mid), seed_var, test_var, seed_df) >= ratio
        lo, hi = np.where(inside, mid, lo), np.where(inside, hi, mid)
    return np.where(ratio >= critical(1e-12, seed_var, test_var, seed_df), 0.0, np.exp(hi))


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


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values over the last axis (NaN: not in the family)."""
    p = np.asarray(p, dtype=np.float64)
    out = np.full_like(p, np.nan)
    flat_p, flat_out = p.reshape(-1, p.shape[-1]), out.reshape(-1, p.shape[-1])
    for row, dest in zip(flat_p, flat_out, strict=True):
        keep = np.flatnonzero(~np.isnan(row))
        m = len(keep)
        if not m:
            continue
        order = keep[np.argsort(row[keep], kind="stable")]
        scaled = np.maximum.accumulate((m - np.arange(m)) * row[order])
        dest[order] = np.minimum(scaled, 1.0)
    return out


def holm_columns(p: np.ndarray) -> np.ndarray:
    """:func:`holm` over axis 1 of a (replicates, hypotheses) array (fast path for
    :func:`simulate`: every row has the same hypotheses, none NaN)."""
    m = p.shape[1]
    order = np.argsort(p, axis=1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=1) * (m - np.arange(m))
    adjusted = np.minimum(np.maximum.accumulate(ranked, axis=1), 1.0)
    out = np.empty_like(p)
    np.put_along_axis(out, order, adjusted, axis=1)
    return out


def decide(zero_side: np.ndarray, claim_side: np.ndarray, direction: np.ndarray,
           sized: np.ndarray | bool = True) -> np.ndarray:  # fmt: skip
    """Verdict codes from where the interval lies: ``zero_side`` relative to 0 and
    ``claim_side`` relative to the paper's difference (+1 above it, -1 below, 0 holding it),
    ``direction`` the sign of the paper's difference; ``sized`` False for a claim of a
    direction only (no printed size). In the claim's direction:

    - above 0, the paper's difference inside or below the interval: reproduced;
    - above 0, the paper's difference above the interval: smaller than claimed;
    - holding 0, the paper's difference above the interval: not reproduced;
    - below 0: reversed; holding both 0 and the paper's difference: inconclusive.
    """
    z = np.asarray(zero_side) * direction
    c = np.where(sized, np.asarray(claim_side) * direction, 0)
    return np.select(
        [z > 0, z < 0, c < 0],
        [np.where(c < 0, SMALLER, REPRODUCED), REVERSED, NOT_REPRODUCED],
        INCONCLUSIVE,
    )


def sides(estimate: np.ndarray, p: np.ndarray, alpha: float, value: float | np.ndarray = 0.0
          ) -> np.ndarray:  # fmt: skip
    """+1/-1 where the hypothesis "the difference is ``value``" is rejected at ``alpha`` (the
    interval at that level lies above/below ``value``), else 0: the interval read off its test,
    so adjusted p-values give the adjusted verdict."""
    return np.where(p < alpha, np.sign(np.asarray(estimate) - value), 0).astype(np.int64)


# Coverage and verdict rates by simulation.


def simulate(
    seeds: int,
    truth: float,
    claimed: float,
    ratio: float,
    comparisons: int = 16,
    replicates: int = 4000,
    level: float = LEVEL,
    rng: np.random.Generator | None = None,
    test_var_df: int = 999,
) -> dict[str, np.ndarray]:
    """``replicates`` grids of ``comparisons`` paired comparisons, ``seeds`` seeds a side, true
    difference ``truth``, paper's ``claimed``. Per seed: the difference is truth + seed noise
    (sd ``ratio``) + the test set's share (sd 1, common to all seeds of a comparison: one test
    set); the bootstrap's test-set variance is 1 with its own noise (chi-square, ``test_var_df``
    degrees of freedom: the resamples). Returns per comparison: ``covered`` (the interval holds
    ``truth``), raw ``verdict`` codes and ``holm`` codes (Holm over the grid's zero and claim
    tests), each (replicates, comparisons); with 1 seed no interval exists: ``covered`` then
    holds the test-set-only interval's coverage and every verdict is INCONCLUSIVE (no verdict)."""
    rng = rng or np.random.default_rng(0)
    shape = (replicates, comparisons)
    test = rng.normal(0.0, 1.0, shape)
    per_seed = truth + test[..., None] + rng.normal(0.0, ratio, (*shape, seeds))
    test_var = rng.chisquare(test_var_df, shape) / test_var_df
    mean = per_seed.mean(axis=-1)
    alpha = 1.0 - level
    if seeds < 2:  # what a one-seed interval would be: test-set sampling only
        half = special.ndtri(0.5 + level / 2) * np.sqrt(test_var)
        none = np.full(shape, INCONCLUSIVE)
        return {"covered": np.abs(mean - truth) <= half, "verdict": none, "holm": none}
    seed_var, df = welch(per_seed.var(axis=-1, ddof=1), seeds)
    half = critical(alpha, seed_var, test_var, df) * np.sqrt(seed_var + test_var)
    covered = np.abs(mean - truth) <= half
    p0 = p_values(mean, seed_var, test_var, df, 0.0)
    pc = p_values(mean, seed_var, test_var, df, claimed)
    direction = np.sign(claimed)
    raw = decide(sides(mean, p0, alpha), sides(mean, pc, alpha, claimed), direction)
    adjusted = holm_columns(np.concatenate([p0, pc], axis=1))
    p0_adj, pc_adj = adjusted[:, :comparisons], adjusted[:, comparisons:]
    corrected = decide(sides(mean, p0_adj, alpha), sides(mean, pc_adj, alpha, claimed), direction)
    return {"covered": covered, "verdict": raw, "holm": corrected}
