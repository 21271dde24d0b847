"""Sequential seeds: a two-stage group-sequential design for one claim, and its simulation.

Stage 1 runs ``first`` paired seeds; a claim that the verdict rule already calls "reproduced"
at the stage's nominal level (in its family) stops; the others run on to ``total`` seeds. The
boundaries are checked (:func:`simulate`) on the interval past 0 either way, the rule's
harder test stopping no more often. The two levels spend the overall ``alpha`` with a Lan-DeMets function
(O'Brien-Fleming- or Pocock-like) at the information fraction ``se(total)^2 / se(first)^2``,
the two looks' z statistics correlated as the square root of that fraction. The simulation
(:func:`simulate`) checks the error rate the boundaries promise on the verdict interval itself
(t blend, the seeds' sd estimated at each look).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from negcse.analysis import verdict_rules
from negcse.analysis.seed_power import DEFAULT_RULE, VarianceModel, power
from negcse.analysis.verdict_rules import Rule
from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    from scipy import optimize, stats
else:  # the Snakefile's parse imports this module (the seed plan): scipy on use
    optimize = LazyModule("scipy.optimize")
    stats = LazyModule("scipy.stats")

SPENDING = ("obrien-fleming", "pocock")


@dataclass(frozen=True)
class TwoStage:
    first: int  # seeds of stage 1 (every claim)
    total: int  # seeds of a claim still undecided after stage 1
    spending: str = "obrien-fleming"
    alpha: float = 0.05

    def __post_init__(self) -> None:
        if not 2 <= self.first < self.total:
            raise ValueError(f"two stages need 2 <= first < total, got {self.first}, {self.total}")
        if self.spending not in SPENDING:
            raise ValueError(f"spending {self.spending!r} is not one of {SPENDING}")


def spent(fraction: float, alpha: float, kind: str) -> float:
    """Lan-DeMets alpha spent by information ``fraction``, two-sided and symmetric: each side
    spends ``alpha / 2`` by the one-sided function (as R's ldbounds and gsDesign do)."""
    if kind == "pocock":
        return alpha * math.log(1 + (math.e - 1) * fraction)
    z = stats.norm.ppf(1 - alpha / 4)
    return float(4 * (1 - stats.norm.cdf(z / math.sqrt(fraction))))


def _inside(c1: float, c2: float, rho: float) -> float:
    """P(|Z1| < c1, |Z2| < c2) for standard normals with correlation ``rho``."""
    mvn = stats.multivariate_normal(mean=[0, 0], cov=[[1, rho], [rho, 1]])
    return float(mvn.cdf([c1, c2]) - mvn.cdf([-c1, c2]) - mvn.cdf([c1, -c2]) + mvn.cdf([-c1, -c2]))


def nominal_levels(design: TwoStage, model: VarianceModel) -> tuple[float, float]:
    """The two-sided levels of the two looks' intervals."""
    fraction = model.se(design.total) ** 2 / model.se(design.first) ** 2
    a1 = spent(fraction, design.alpha, design.spending)
    c1 = stats.norm.ppf(1 - a1 / 2)
    rho = math.sqrt(fraction)
    stay = 1 - a1  # P(|Z1| < c1)

    def excess(c2: float) -> float:  # alpha spent at look 2, minus what is left to spend
        return (stay - _inside(c1, c2, rho)) - (design.alpha - a1)

    c2 = optimize.brentq(excess, 0.5, 10.0, xtol=1e-7)
    return a1, float(2 * (1 - stats.norm.cdf(c2)))


def stage_rule(design: TwoStage, model: VarianceModel, rule: Rule = DEFAULT_RULE) -> Rule:
    """The verdict rule at stage 1's nominal level: a claim it calls "reproduced" (in its
    family) stops; every other claim runs on to its planned seeds."""
    return replace(rule, alpha=nominal_levels(design, model)[0])


def stop_probability(delta: float, design: TwoStage, model: VarianceModel, rows: int = 1,
                     rule: Rule = DEFAULT_RULE, truth: float | None = None) -> float:  # fmt: skip
    """Probability that a claim of the paper's ``delta`` (true difference ``truth``, default
    ``delta``) is "reproduced" already at stage 1, in a family of ``rows``."""
    return power(delta, design.first, model, rows, stage_rule(design, model, rule), truth=truth)


def expected_seeds(delta: float, design: TwoStage, model: VarianceModel, rows: int = 1) -> float:
    stop = stop_probability(delta, design, model, rows)
    return design.first + (1 - stop) * (design.total - design.first)


def reproduced_now(d: np.ndarray, model: VarianceModel, delta: float, rows: int, rule: Rule
                   ) -> np.ndarray:  # fmt: skip
    """Whether the verdict rule calls each row of paired differences ``d`` (rows: claims,
    columns: seeds; the test set's sd the model's) "reproduced" in a family of ``rows``."""
    n = d.shape[1]
    p = verdict_rules.hypothesis_p(d.mean(axis=1), d.var(axis=1, ddof=1) / n, model.test_sd**2,
                                   n - 1.0, delta, np.sign(delta), True, rule)  # fmt: skip
    return p[:, 0] < rule.alpha / rows


def decided(d: np.ndarray, test_sd: float, level: float) -> tuple[np.ndarray, np.ndarray]:
    """(estimate, whether the verdict interval at two-sided ``level`` excludes 0) per row of
    paired differences ``d`` (rows: claims, columns: seeds)."""
    n = d.shape[1]
    est = d.mean(axis=1)
    seed = d.var(axis=1, ddof=1) / n
    test = test_sd**2
    t, z = stats.t.ppf(1 - level / 2, n - 1), stats.norm.ppf(1 - level / 2)
    c = (t * seed + z * test) / (seed + test)
    return est, np.abs(est) > c * np.sqrt(seed + test)


@dataclass(frozen=True)
class Rates:
    positive: float  # share decided past 0 on the positive side
    negative: float  # share decided past 0 on the negative side
    seeds: float  # mean seeds run


def simulate(
    delta: float,
    model: VarianceModel,
    design: TwoStage | int,
    reps: int = 20000,
    rng: np.random.Generator | None = None,
    heavy: bool = False,
) -> Rates:
    """Decision rates of ``design`` (a :class:`TwoStage`, or a fixed seed count read at 0.05)
    when each seed's paired difference is ``delta`` + the test set's deviation (one per
    claim) + the seed's own (normal; ``heavy``: t with 3 degrees of freedom scaled to the same
    sd, an occasional bad seed)."""
    rng = rng or np.random.default_rng(0)
    total = design if isinstance(design, int) else design.total
    if heavy:
        noise = rng.standard_t(3, size=(reps, total)) * model.seed_sd / math.sqrt(3)
    else:
        noise = rng.normal(0, model.seed_sd, size=(reps, total))
    d = delta + rng.normal(0, model.test_sd, size=(reps, 1)) + noise
    if isinstance(design, int):
        est, hit = decided(d, model.test_sd, 0.05)
        seeds = np.full(reps, float(total))
    else:
        a1, a2 = nominal_levels(design, model)
        est1, hit1 = decided(d[:, : design.first], model.test_sd, a1)
        est2, hit2 = decided(d, model.test_sd, a2)
        est = np.where(hit1, est1, est2)
        hit = hit1 | hit2
        seeds = np.where(hit1, design.first, design.total).astype(float)
    return Rates(
        positive=float(np.mean(hit & (est > 0))),
        negative=float(np.mean(hit & (est < 0))),
        seeds=float(seeds.mean()),
    )
