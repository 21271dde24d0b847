"""The paired bootstrap of the STS average (negcse.analysis.bootstrap): a hand-computed toy, scipy
on materialised resamples, the known cases (identical models, paired vs unpaired), and the
pairs several tasks share drawn together."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from negcse.analysis.bootstrap import (
    Draws,
    TaskPairs,
    clusters,
    draw_indices,
    pair_key,
    resampled_average,
    resampled_spearman,
    resampled_variance,
    split_keys,
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
    # the test set's share of the variance of B - A: that of 200/9 and 400/3 (ddof 1)
    diff = np.array([200 / 9, 400 / 3])
    variance = resampled_variance(_resampled([b], draws), _resampled([a], draws))
    assert variance == pytest.approx(((diff - diff.mean()) ** 2).sum())


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


def test_identical_models_have_no_test_set_variance(toy) -> None:
    tasks, draws = toy
    gold = tasks["t"].gold
    seeds = [{"t": _noisy(gold, 1.0, 1)}, {"t": _noisy(gold, 2.0, 2)}]
    a = _resampled(seeds, draws)
    assert resampled_variance(a, a.copy()) == 0.0
    assert resampled_variance(a) > 0  # one model's average does vary with the test set


def test_paired_resamples_see_a_consistent_gain() -> None:
    """A makes B's errors 10% smaller on every pair: on the same resamples the difference
    barely moves; on resamples of their own, the test-set noise of each average swamps it."""
    gold = np.random.default_rng(0).uniform(0, 5, 300)
    tasks = {"t": TaskPairs(gold, (300,))}
    error = np.random.default_rng(1).normal(0, 2.5, 300)
    a, b = {"t": gold + 0.9 * error}, {"t": gold + error}
    draws = Draws.draw(tasks, resamples=1000, seed=2)
    ra, rb = _resampled([a], draws), _resampled([b], draws)
    paired = resampled_variance(ra, rb)
    other = Draws.draw(tasks, resamples=1000, seed=3)  # B on its own resamples
    unpaired = resampled_variance(ra, _resampled([b], other))
    assert paired < unpaired / 10
    diff = (ra - rb)[0]
    assert np.quantile(diff, 0.025) > 0 > np.quantile(ra[0] - _resampled([b], other)[0], 0.025)


def test_pair_keys_are_the_pair_whatever_its_order_case_or_spacing() -> None:
    key = pair_key("A man plays.", "A  woman sings.")
    assert key == pair_key("a woman sings.", "A man  plays.") and len(key) == 10
    assert key != pair_key("A man plays.", "A woman sings!")
    assert split_keys(key + key) == [key, key]
    with pytest.raises(ValueError, match="not 10 hex digits per pair"):
        split_keys(key + "abc")


def test_without_keys_every_subset_keeps_its_size() -> None:
    tasks = {"a": TaskPairs(np.arange(50.0), (30, 20)), "b": TaskPairs(np.arange(25.0), (25,))}
    draws = Draws.draw(tasks, resamples=200, seed=0)
    assert (draws.counts["a"][:30].sum(axis=0) == 30).all()
    assert (draws.counts["a"][30:].sum(axis=0) == 20).all()
    assert (draws.counts["b"].sum(axis=0) == 25).all()


def test_a_pair_several_tasks_hold_is_drawn_once_for_all() -> None:
    """Task b holds a's first 20 pairs and 10 of its own: each shared pair counts as often in b
    as in a in every resample; the clusters first seen in a's subsets are drawn there (a keeps
    its sizes), b's own 10 within b."""
    keys = [f"{i:010x}" for i in range(40)]
    tasks = {
        "a": TaskPairs(np.arange(30.0), (15, 15), tuple(keys[:30])),
        "b": TaskPairs(np.arange(30.0), (30,), tuple(keys[:20] + keys[30:40])),
    }
    cluster, strata = clusters(tasks)
    assert strata == [15, 15, 10] and (cluster["b"][:20] == cluster["a"][:20]).all()
    draws = Draws.draw(tasks, resamples=300, seed=1)
    assert (draws.counts["b"][:20] == draws.counts["a"][:20]).all()
    assert (draws.counts["a"].sum(axis=0) == 30).all()
    assert (draws.counts["b"][20:].sum(axis=0) == 10).all()


def test_shared_pairs_widen_the_interval_of_the_average() -> None:
    """Two tasks holding the same 400 pairs: drawn together their Spearmans move as one, so the
    average varies as one task does; drawn apart (no keys) it would vary about half as much."""
    gold = np.random.default_rng(0).uniform(0, 5, 400)
    pred = _noisy(gold, 2.0, 1)
    keys = tuple(f"{i:010x}" for i in range(400))
    shared = {t: TaskPairs(gold, (400,), keys) for t in ("a", "b")}
    apart = {t: TaskPairs(gold, (400,)) for t in ("a", "b")}
    preds = [{"a": pred, "b": pred}]
    together = resampled_variance(_resampled(preds, Draws.draw(shared, 2000, seed=2)))
    separate = resampled_variance(_resampled(preds, Draws.draw(apart, 2000, seed=2)))
    assert 1.6 < together / separate < 2.5


def test_clustered_resamples_match_scipy_with_ties_and_keys() -> None:
    """With keys, a resample of task b holds as many pairs as its clusters drew (its size
    varies); its Spearman, ties and repeats included, is scipy's on the materialised vectors."""
    rng = np.random.default_rng(3)
    keys = [f"{i:010x}" for i in range(70)]
    gold_a = rng.integers(0, 6, 40).astype(float)  # few distinct values: many ties
    gold_b = np.r_[gold_a[:25], rng.integers(0, 6, 20).astype(float)]
    tasks = {
        "a": TaskPairs(gold_a, (20, 20), tuple(keys[:40])),
        "b": TaskPairs(gold_b, (45,), tuple(keys[:25] + keys[40:60])),
    }
    pred_a = np.round(gold_a + rng.normal(0, 1.5, 40), 1)  # rounded: ties among predictions
    preds = {
        "a": pred_a,
        "b": np.r_[pred_a[:25], np.round(gold_b[25:] + rng.normal(0, 1.5, 20), 1)],
    }
    draws = Draws.draw(tasks, resamples=50, seed=4)
    sizes = draws.counts["b"].sum(axis=0)
    assert len(set(sizes.tolist())) > 1  # b's size varies with how often its shared pairs came up
    for task in tasks:
        got = resampled_spearman(preds[task], draws, task)
        for j in range(draws.resamples):
            drawn = np.repeat(np.arange(len(preds[task])), draws.counts[task][:, j].astype(int))
            want = 100 * spearmanr(preds[task][drawn], tasks[task].gold[drawn]).statistic
            assert got[j] == pytest.approx(want, abs=1e-9)
