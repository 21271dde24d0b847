"""The paired bootstrap of the STS average (negcse.analysis.bootstrap): a hand-computed toy, scipy
on materialised resamples, and the known cases (identical models, a clearly better model,
paired vs unpaired, the seed level)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from negcse.analysis.bootstrap import (
    Draws,
    TaskPairs,
    against_constant,
    draw_indices,
    over_seeds,
    paired_difference,
    resampled_average,
    resampled_spearman,
)


def _resampled(preds: list[dict[str, np.ndarray]], draws: Draws) -> np.ndarray:
    return np.stack([resampled_average(p, draws) for p in preds])


def test_toy_by_hand() -> None:
    """Two resamples of four pairs, given explicitly; every value written out by hand.

    Resample [0, 0, 1, 3]: gold 1 1 2 4 -> ranks 1.5 1.5 3 4; A .1 .1 .4 .3 -> 1.5 1.5 4 3;
    centred (mean 2.5) -1 -1 .5 1.5 and -1 -1 1.5 .5: cov 3.5, both sums of squares 4.5,
    rho = 7/9. Resample [1, 2, 2, 3]: gold 2 3 3 4 -> 1 2.5 2.5 4; A .4 .2 .2 .3 -> 4 1.5 1.5 3;
    cov -2.25 + .75 = -1.5, sums of squares 4.5: rho = -1/3. B orders the pairs as gold does:
    100 on both. B - A = 100 - 700/9 = 200/9 and 100 + 100/3 = 400/3.
    """
    gold = np.array([1.0, 2.0, 3.0, 4.0])
    tasks = {"t": TaskPairs(gold, (4,))}
    draws = Draws.from_indices(tasks, {"t": np.array([[0, 0, 1, 3], [1, 2, 2, 3]])})
    a = {"t": np.array([0.1, 0.4, 0.2, 0.3])}
    b = {"t": gold / 10}
    assert resampled_spearman(a["t"], draws, "t") == pytest.approx([700 / 9, -100 / 3])
    assert resampled_spearman(b["t"], draws, "t") == pytest.approx([100.0, 100.0])
    # full data: A's ranks 1 4 2 3 vs 1 2 3 4: 1 - 6 * (0 + 4 + 1 + 1) / (4 * 15) = 0.4
    interval = paired_difference(
        _resampled([b], draws), _resampled([a], draws), [100.0], [40.0], paired_seeds=False
    )
    low, high = 200 / 9, 400 / 3  # numpy's linear quantiles of two values
    assert interval.estimate == pytest.approx(60.0)
    assert interval.low == pytest.approx(low + 0.025 * (high - low))
    assert interval.high == pytest.approx(low + 0.975 * (high - low))


def test_average_over_tasks_and_subsets_matches_scipy() -> None:
    """Each resample's average equals scipy's Spearman on the materialised resampled vectors
    (ties in gold, repeats from the draw), averaged over tasks; draws stay in their subset."""
    rng = np.random.default_rng(3)
    tasks, preds = {}, {}
    for name, sizes in {"a": (30, 20), "b": (45,)}.items():
        gold = np.round(rng.uniform(0, 5, sum(sizes)), 0)  # many ties
        tasks[name] = TaskPairs(gold, sizes)
        preds[name] = np.round(gold + rng.normal(0, 1.5, len(gold)), 1)  # ties too
    indices = draw_indices(tasks, 40, rng)
    assert (indices["a"][:, :30] < 30).all() and (indices["a"][:, 30:] >= 30).all()
    draws = Draws.from_indices(tasks, indices)
    expected = np.mean(
        [
            [100 * spearmanr(preds[t][i], tasks[t].gold[i]).statistic for i in indices[t]]
            for t in tasks
        ],
        axis=0,
    )
    assert resampled_average(preds, draws) == pytest.approx(expected, abs=1e-9)


def _noisy(gold: np.ndarray, scale: float, seed: int) -> np.ndarray:
    return gold + np.random.default_rng(seed).normal(0, scale, len(gold))


@pytest.fixture
def toy() -> tuple[dict[str, TaskPairs], Draws]:
    gold = np.random.default_rng(0).uniform(0, 5, 400)
    tasks = {"t": TaskPairs(gold, (150, 250))}
    return tasks, Draws.draw(tasks, resamples=500, seed=1)


def test_identical_models_give_exactly_zero(toy) -> None:
    tasks, draws = toy
    gold = tasks["t"].gold
    seeds = [{"t": _noisy(gold, 1.0, 1)}, {"t": _noisy(gold, 2.0, 2)}]
    a = _resampled(seeds, draws)
    interval = paired_difference(a, a.copy(), [1.0, 2.0], [1.0, 2.0], paired_seeds=True)
    assert (interval.estimate, interval.low, interval.high) == (0.0, 0.0, 0.0)
    assert not interval.excludes_zero()


def test_clearly_better_model_excludes_zero(toy) -> None:
    tasks, draws = toy
    gold = tasks["t"].gold
    a = _resampled([{"t": _noisy(gold, 0.3, 1)}], draws)
    b = _resampled([{"t": _noisy(gold, 3.0, 2)}], draws)
    interval = paired_difference(a, b, [0.0], [0.0], paired_seeds=False)
    assert interval.low > 10  # ~0.97 vs ~0.43 Spearman
    assert interval.excludes_zero()


def test_paired_interval_excludes_zero_where_unpaired_does_not() -> None:
    """A makes B's errors 10% smaller on every pair: paired, the gain is certain; drawn
    independently for each model, the test-set noise of each average swamps it."""
    gold = np.random.default_rng(0).uniform(0, 5, 300)
    tasks = {"t": TaskPairs(gold, (300,))}
    error = np.random.default_rng(1).normal(0, 2.5, 300)
    a, b = {"t": gold + 0.9 * error}, {"t": gold + error}
    draws = Draws.draw(tasks, resamples=1000, seed=2)
    ra, rb = _resampled([a], draws), _resampled([b], draws)
    paired = paired_difference(ra, rb, [0.0], [0.0], paired_seeds=False)
    assert paired.low > 0
    other = Draws.draw(tasks, resamples=1000, seed=3)  # B on its own resamples
    unpaired = np.quantile(ra[0] - _resampled([b], other)[0], [0.025, 0.975])
    assert unpaired[0] < 0 < unpaired[1]


def test_seed_level_widens_the_interval_with_two_seeds() -> None:
    """A's two seeds straddle B (one far better, one worse): resampling the seeds gives
    intervals that contain 0; resampling only the pairs (the seeds' mean fixed) would not."""
    gold = np.random.default_rng(0).uniform(0, 5, 2000)
    tasks = {"t": TaskPairs(gold, (2000,))}
    draws = Draws.draw(tasks, resamples=1000, seed=4)
    a = _resampled([{"t": _noisy(gold, 0.5, 1)}, {"t": _noisy(gold, 2.5, 2)}], draws)
    b = _resampled([{"t": _noisy(gold, 1.7, 3)}], draws)
    with_seeds = paired_difference(a, b, [0.0, 0.0], [0.0], paired_seeds=False)
    assert with_seeds.low < 0 < with_seeds.high
    both = np.tile([0, 1], (draws.resamples, 1))  # every resample takes both seeds once
    pairs_only = np.quantile(over_seeds(a, both) - b[0], [0.025, 0.975])
    assert pairs_only[0] > 0


def test_against_a_published_number(toy) -> None:
    tasks, draws = toy
    a = _resampled([{"t": _noisy(tasks["t"].gold, 1.0, 1)}], draws)
    observed = float(np.mean(a))
    interval = against_constant(a, [observed], observed - 50.0)
    assert interval.estimate == pytest.approx(50.0)
    assert interval.low < 50.0 < interval.high and interval.excludes_zero()
