"""The seed-level interval, Holm's correction and the verdict rule (negcse.analysis.verdict_rules):
hand computations, the decision table, and simulated grids of known truths whose verdict rates
must stay at or below their nominal levels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from negcse.analysis.verdict_rules import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    REPRODUCED,
    REVERSED,
    SMALLER,
    decide,
    holm,
    holm_columns,
    one_run_interval,
    seed_interval,
    simulate,
)

ALPHA = 0.05


def test_interval_by_hand() -> None:
    """Paired differences 1, 1.5, 1.5: mean 4/3, sample variance 1/12, so the seed mean's
    variance is 1/36 on 2 degrees of freedom; the test set adds 0.1. Half-width = the blend
    (t_2 * 1/36 + z * 0.1) / (1/36 + 0.1) times sqrt(1/36 + 0.1)."""
    interval = seed_interval([1.0, 2.0, 3.0], [0.0, 0.5, 1.5], paired=True, test_var=0.1)
    assert interval is not None
    t2, z = stats.t.ppf(0.975, 2), stats.norm.ppf(0.975)
    seed_var = 1 / 36
    half = (t2 * seed_var + z * 0.1) / (seed_var + 0.1) * math.sqrt(seed_var + 0.1)
    assert interval.estimate == pytest.approx(4 / 3)
    assert (interval.low, interval.high) == pytest.approx((4 / 3 - half, 4 / 3 + half))
    assert interval.p_value(interval.low) == pytest.approx(0.05, abs=1e-6)
    assert interval.p_value(4 / 3) == pytest.approx(1.0)
    # without the test set it is Student's t on the paired differences (scipy's)
    alone = seed_interval([1.0, 2.0, 3.0], [0.0, 0.5, 1.5], paired=True)
    assert alone is not None
    expected = stats.ttest_1samp([1.0, 1.5, 1.5], 0.0)
    assert alone.p_value(0.0) == pytest.approx(expected.pvalue, rel=1e-6)
    # unpaired: Welch (scipy's) on each side's seeds
    welch = seed_interval([1.0, 2.0, 3.0, 2.5], [0.0, 0.5, 1.5], paired=False)
    assert welch is not None
    assert welch.p_value(0.0) == pytest.approx(
        stats.ttest_ind([1.0, 2.0, 3.0, 2.5], [0.0, 0.5, 1.5], equal_var=False).pvalue, rel=1e-6
    )
    assert seed_interval([1.0], [0.0], paired=True) is None  # one seed: no interval


def test_one_run_interval_by_hand() -> None:
    """Seeds 1, 2, 3 against a published 0: mean 2, variance 1 * (1 + 1/3), t on 2 df."""
    pi = one_run_interval([1.0, 2.0, 3.0], 0.0)
    assert pi is not None
    half = stats.t.ppf(0.975, 2) * math.sqrt(4 / 3)
    assert (pi.estimate, pi.low, pi.high) == pytest.approx((2.0, 2 - half, 2 + half))
    assert one_run_interval([1.0], 0.0) is None


def test_holm_by_hand() -> None:
    p = np.array([0.01, 0.04, 0.03, np.nan])
    assert holm(p)[:3] == pytest.approx([0.03, 0.06, 0.06]) and np.isnan(holm(p)[3])
    rows = np.array([[0.01, 0.04, 0.03], [0.5, 0.001, 0.2]])
    assert holm_columns(rows) == pytest.approx(np.stack([holm(r) for r in rows]))


@pytest.mark.parametrize(
    ("zero", "claim", "direction", "sized", "expected"),
    [
        (1, 0, 1, True, REPRODUCED),  # past 0, holding the paper's difference
        (1, 1, 1, True, REPRODUCED),  # past the paper's difference too: a larger effect
        (1, -1, 1, True, SMALLER),  # past 0, short of the paper's difference
        (0, -1, 1, True, NOT_REPRODUCED),  # holding 0, excluding the paper's difference
        (0, 0, 1, True, INCONCLUSIVE),  # holding both
        (-1, -1, 1, True, REVERSED),
        (-1, 0, -1, True, REPRODUCED),  # a claimed loss, found
        (-1, 1, -1, True, SMALLER),  # a smaller loss than claimed
        (1, 1, -1, True, REVERSED),
        (0, 1, -1, True, NOT_REPRODUCED),
        (1, -1, 1, False, REPRODUCED),  # a direction only: no size to fall short of
        (0, -1, 1, False, INCONCLUSIVE),
    ],
)
def test_decision_table(zero: int, claim: int, direction: int, sized: bool, expected: int) -> None:
    assert int(decide(np.array(zero), np.array(claim), direction, sized)) == expected


# Known truths, simulated: a grid of 16 comparisons, the paper claiming +2 (test-set sd 1, seed
# sd 2: the spread ratio the issue measured), 1,000 grids per case.
CLAIMED, RATIO, GRIDS, COMPARISONS = 2.0, 2.0, 1000, 16
TRUTHS = {"identical": 0.0, "smaller": 1.0, "as claimed": 2.0, "reversed": -2.0}
#: the verdicts each truth makes false, and their nominal rate (two-sided 5%: each side 2.5%)
FALSE = {
    "identical": ((REPRODUCED, SMALLER, REVERSED), ALPHA),
    "smaller": ((REVERSED,), ALPHA / 2),
    "as claimed": ((REVERSED, SMALLER, NOT_REPRODUCED), ALPHA),
    "reversed": ((REPRODUCED, SMALLER), ALPHA / 2),
}


@pytest.fixture(scope="module")
def grids() -> dict[tuple[str, int], dict[str, np.ndarray]]:
    return {
        (name, seeds): simulate(
            seeds, truth, CLAIMED, RATIO, COMPARISONS, GRIDS, rng=np.random.default_rng([seeds, i])
        )
        for i, (name, truth) in enumerate(TRUTHS.items())
        for seeds in (1, 3, 5)
    }


@pytest.mark.parametrize("truth", list(TRUTHS))
@pytest.mark.parametrize("seeds", [1, 3, 5])
def test_false_verdicts_stay_at_their_nominal_rate(grids, truth: str, seeds: int) -> None:
    """Per comparison, a verdict the truth makes false is at most its nominal rate (plus three
    binomial standard errors); after Holm over the grid, at most 5% of grids hold any false
    verdict at all. One seed gives no verdict."""
    run = grids[(truth, seeds)]
    wrong, nominal = FALSE[truth]
    raw = np.isin(run["verdict"], wrong)
    corrected = np.isin(run["holm"], wrong)
    n = raw.size
    assert raw.mean() <= nominal + 3 * math.sqrt(nominal * (1 - nominal) / n)
    assert corrected.mean() <= raw.mean()
    family = corrected.any(axis=1).mean()
    assert family <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / GRIDS)
    if seeds == 1:
        assert (run["verdict"] == INCONCLUSIVE).all() and (run["holm"] == INCONCLUSIVE).all()


def test_coverage_and_power(grids) -> None:
    """The interval holds the truth at least 95% of the time from 3 seeds (the test-set-only
    interval of one seed: far less), and a real gain is found: the rule is not mute."""
    se = 3 * math.sqrt(0.05 * 0.95 / (GRIDS * COMPARISONS))
    for truth in TRUTHS:
        assert grids[(truth, 1)]["covered"].mean() < 0.8
        for seeds in (3, 5):
            assert grids[(truth, seeds)]["covered"].mean() >= 0.95 - se
    found = {s: (grids[("as claimed", s)]["verdict"] == REPRODUCED).mean() for s in (3, 5)}
    assert found[5] > found[3] > 0.1
