"""The power of a claim's verdict at n paired seeds under a variance model, and the seeds it
needs: the arithmetic of :mod:`negcse.analysis.verdict_rules` (the rule the verdicts table
applies) evaluated at planned variances.

"Reproduced" rejects "the effect is at most ``fraction`` x the paper's difference", one-sided at
``alpha`` / 2 / k in a family of k verdict rows (Bonferroni, :func:`verdict_rules.family_verdicts`).
Its power at the paper's difference D is :func:`verdict_rules.rejection_probability` of the shift
(1 - fraction) x D with the seeds' variance s^2 / n (n - 1 degrees of freedom) and the test set's
v: without a test-set share exactly the one-sided paired t-test's power (statsmodels'
``TTestPower``); tests/workflow/test_seed_plan.py checks it against both and against a
simulation of the rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from negcse.analysis import verdict_rules
from negcse.analysis.verdict_rules import Rule
from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    from scipy import stats
else:  # the Snakefile's parse imports this module (the seed plan): scipy on use
    stats = LazyModule("scipy.stats")

#: the verdicts table's rule at its defaults (config/defaults.yaml verdicts)
DEFAULT_RULE = Rule()


@dataclass(frozen=True)
class VarianceModel:
    """What one claim's seeds and test set vary by (in the measure's own unit)."""

    seed_sd: float  # sd of one seed's paired difference (method - baseline, same seed)
    test_sd: float  # sd of the difference from the test set (the same for every seed)
    source: str  # where the numbers come from, for the plan's table

    def se(self, n: int) -> float:
        return math.sqrt(self.seed_sd**2 / n + self.test_sd**2)


def _tail(rows: int, rule: Rule) -> float:
    return rule.alpha / 2.0 / max(rows, 1)


def power(delta: float, n: int, model: VarianceModel, rows: int = 1, rule: Rule = DEFAULT_RULE,
          sized: bool = True, truth: float | None = None) -> float:  # fmt: skip
    """Probability that n paired seeds give "reproduced" (after the family's correction over
    ``rows`` verdict rows) when the true difference is the paper's ``delta`` (``truth``: another
    true difference); a direction only (not ``sized``): the test of "at most 0". 0 below 2
    seeds (no interval, no verdict)."""
    if n < 2:
        return 0.0
    x = abs(delta) if truth is None else math.copysign(1.0, delta) * truth  # claim's direction
    shift = x - rule.fraction * abs(delta) if sized else x
    return verdict_rules.rejection_probability(
        shift, model.seed_sd**2 / n, model.test_sd**2, n - 1.0, _tail(rows, rule)
    )


def reach(delta: float, model: VarianceModel, rows: int = 1, rule: Rule = DEFAULT_RULE) -> float:
    """The power of "reproduced" at the paper's ``delta`` with unlimited seeds: the test set's
    share alone."""
    shift = (1.0 - rule.fraction) * abs(delta)
    if model.test_sd <= 0:
        return 1.0 if shift > 0 else 0.0
    return float(stats.norm.sf(stats.norm.isf(_tail(rows, rule)) - shift / model.test_sd))


def floor(model: VarianceModel, rule: Rule = DEFAULT_RULE) -> float:
    """The test set's floor (:func:`verdict_rules.detection_floor`): a sized claim below it is
    "untestable on these test sets" in the verdicts table, outside its family."""
    return verdict_rules.detection_floor(model.test_sd**2, rule)


def min_detectable(n: int, model: VarianceModel, rows: int = 1, rule: Rule = DEFAULT_RULE,
                   sized: bool = True) -> float:  # fmt: skip
    """The smallest paper's difference that n seeds call "reproduced" with ``rule.power`` in a
    family of ``rows`` (:func:`verdict_rules.planned_mde`; inf below 2 seeds)."""
    return verdict_rules.planned_mde(model.seed_sd, n, model.test_sd, rows, rule, sized)


def seeds_needed(delta: float, model: VarianceModel, rows: int = 1, rule: Rule = DEFAULT_RULE,
                 low: int = 2, cap: int = 10) -> int | None:  # fmt: skip
    """The fewest seeds (from ``low``, at most ``cap``) whose :func:`power` at ``delta`` reaches
    ``rule.power``; None when ``cap`` seeds do not."""
    for n in range(max(low, 2), cap + 1):
        if power(delta, n, model, rows, rule) >= rule.power:
            return n
    return None
