"""Paired bootstrap of the 7-task STS average: how sure is a difference between two models?

The test pairs of each task are resampled with replacement (within each SentEval subset, so a
resample keeps the subsets' sizes, and its Spearman is over the concatenated subsets: the
``all`` aggregate of :mod:`negcse.evaluation.sts`); both models are scored on the *same*
resampled pairs (paired: Koehn 2004, Berg-Kirkpatrick et al. 2012). With two or more seeds
the seeds are resampled first (an outer level), then the pairs; the percentile interval of the
resampled differences (Efron & Tibshirani 1993, ch. 13) is reported. ``docs/statistics.md``
states the procedure.

Every resample is a row of a (B, n) matrix. A resample is held as *counts* (how often each
pair was drawn), and a pair's rank inside the resample is the average rank of its value among
the drawn values (ties, including a pair drawn twice, share their mean rank, as
``scipy.stats.spearmanr``): sorted once, that is a cumulative sum of the counts, so no
resample is sorted. Spearman is then the count-weighted Pearson correlation of the ranks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

#: resamples per interval, and the seed of the resampling
RESAMPLES = 1000
SEED = 0


@dataclass(frozen=True)
class TaskPairs:
    """One STS task's gold scores and the sizes of its subsets (in order; they sum to n)."""

    gold: np.ndarray
    subset_sizes: tuple[int, ...]

    def __post_init__(self) -> None:
        if sum(self.subset_sizes) != len(self.gold):
            raise ValueError(f"subset sizes {self.subset_sizes} do not sum to {len(self.gold)}")


@dataclass(frozen=True)
class Interval:
    """A difference (``estimate``, on the full test sets) and its percentile interval."""

    estimate: float
    low: float
    high: float

    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


def draw_indices(
    tasks: Mapping[str, TaskPairs], resamples: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Per task, (resamples, n) pair indices, drawn with replacement within each subset."""
    return {name: draw_within(task.subset_sizes, resamples, rng) for name, task in tasks.items()}


def draw_within(sizes: Sequence[int], resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(resamples, sum(sizes)) indices: each block of consecutive ``sizes`` redrawn from itself
    with replacement (a stratified resample that keeps the blocks' sizes)."""
    blocks, start = [], 0
    for size in sizes:
        blocks.append(rng.integers(start, start + size, size=(resamples, size)))
        start += size
    return np.concatenate(blocks, axis=1)


def counts_of(indices: np.ndarray, n: int) -> np.ndarray:
    """(B, k) drawn indices into range(n) -> (n, B) counts: how often each pair is in each
    resample (pairs as rows, so a reordering of the pairs moves whole rows)."""
    rows = indices.shape[0]
    flat = (indices + np.arange(rows)[:, None] * n).ravel()
    counts = np.bincount(flat, minlength=rows * n).reshape(rows, n)
    return np.ascontiguousarray(counts.T.astype(np.uint32 if n >= 2**16 else np.uint16))


def resample_ranks(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(n, B) rank of each value within each resample (average rank among ties and repeats)
    for ``values`` drawn ``counts`` (n, B) times; an undrawn value gets the rank it would
    have, and weight 0 in every sum below."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    tied = ordered[1:] == ordered[:-1]
    drawn = np.take(counts, order, axis=0)
    if tied.any():  # one row per group of equal values
        starts = np.flatnonzero(np.r_[True, ~tied])
        group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(values)]))
        drawn = np.add.reduceat(drawn, starts, axis=0, dtype=np.float64)
    mean_rank = np.cumsum(drawn, axis=0, dtype=np.float64)
    mean_rank -= (drawn - 1.0) / 2.0  # before + (drawn + 1) / 2 (as floats: counts are uint)
    ranks = np.empty(counts.shape, dtype=np.float64)
    ranks[order] = mean_rank[group] if tied.any() else mean_rank
    return ranks


def _weighted(weights: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(B,) sum over the pairs of weights * x * y, all (n, B)."""
    return np.einsum("ij,ij,ij->j", weights, x, y)


@dataclass(frozen=True)
class Draws:
    """The shared resample of the test pairs: per task, (n, B) counts and the gold scores'
    centred ranks."""

    counts: dict[str, np.ndarray]  # (n, B) small unsigned ints (memory: 2 bytes a cell)
    gold_centred: dict[str, np.ndarray]  # ranks minus their mean (n + 1) / 2
    gold_norm: dict[str, np.ndarray]  # (B,) sqrt of the count-weighted sum of squares

    @classmethod
    def from_indices(
        cls, tasks: Mapping[str, TaskPairs], indices: Mapping[str, np.ndarray]
    ) -> Draws:
        """``indices``: per task, (B, n) indices of the drawn pairs (one resample a row)."""
        draws = cls({}, {}, {})
        for name, task in tasks.items():
            n = len(task.gold)
            c = counts_of(indices[name], n)
            g = resample_ranks(task.gold, c) - (n + 1) / 2.0
            draws.counts[name], draws.gold_centred[name] = c, g
            draws.gold_norm[name] = np.sqrt(_weighted(c.astype(np.float64), g, g))
        return draws

    @classmethod
    def draw(
        cls, tasks: Mapping[str, TaskPairs], resamples: int = RESAMPLES, seed: int = SEED
    ) -> Draws:
        """:func:`draw_indices`' draws, one task's indices in memory at a time."""
        rng = np.random.default_rng(seed)
        draws = cls({}, {}, {})
        for name, task in tasks.items():
            one = cls.from_indices({name: task}, draw_indices({name: task}, resamples, rng))
            draws.counts.update(one.counts)
            draws.gold_centred.update(one.gold_centred)
            draws.gold_norm.update(one.gold_norm)
        return draws

    @property
    def resamples(self) -> int:
        return next(iter(self.counts.values())).shape[1]


def resampled_spearman(pred: np.ndarray, draws: Draws, task: str) -> np.ndarray:
    """(B,) Spearman x100 of ``pred`` against gold on each resample of ``task``'s pairs."""
    c = draws.counts[task]
    r = resample_ranks(pred, c)
    c = c.astype(np.float64)
    r -= (len(pred) + 1) / 2.0
    cov = _weighted(c, r, draws.gold_centred[task])
    return 100.0 * cov / (np.sqrt(_weighted(c, r, r)) * draws.gold_norm[task])


def resampled_average(preds: Mapping[str, np.ndarray], draws: Draws) -> np.ndarray:
    """(B,) the average over the tasks of ``draws`` of one model's resampled Spearman."""
    missing = [t for t in draws.counts if t not in preds]
    if missing:
        raise KeyError(f"no pairs for task(s) {', '.join(missing)}")
    return np.mean([resampled_spearman(preds[t], draws, t) for t in draws.counts], axis=0)


def seed_indices(seeds: int, resamples: int, stream: int, seed: int = SEED) -> np.ndarray:
    """(B, seeds) seeds drawn with replacement per resample; one seed: always itself."""
    if seeds == 1:
        return np.zeros((resamples, 1), dtype=np.int64)
    rng = np.random.default_rng([seed, stream, seeds])
    return rng.integers(0, seeds, size=(resamples, seeds))


def over_seeds(per_seed: np.ndarray, picks: np.ndarray) -> np.ndarray:
    """(seeds, B) resampled statistic per seed, (B, k) seed picks -> (B,) mean of the picks."""
    return per_seed[picks, np.arange(per_seed.shape[1])[:, None]].mean(axis=1)


def percentile_interval(estimate: float, resampled: np.ndarray, level: float = 0.95) -> Interval:
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(resampled, [tail, 1.0 - tail])
    return Interval(float(estimate), float(low), float(high))


def paired_difference(
    a: np.ndarray,
    b: np.ndarray,
    a_observed: Sequence[float],
    b_observed: Sequence[float],
    paired_seeds: bool,
    level: float = 0.95,
) -> Interval:
    """Model A minus model B: ``a``/``b`` are (seeds, B) resampled averages per seed, all on
    the same pair resamples; ``*_observed`` the full-test-set average per seed. Seeds are
    resampled when there are two or more: with ``paired_seeds`` (the same seed values in both,
    in the same order) one draw serves both models, else each model draws its own."""
    if paired_seeds and a.shape[0] != b.shape[0]:
        raise ValueError(f"paired seeds need as many seeds in both: {a.shape[0]} vs {b.shape[0]}")
    resamples = a.shape[1]
    picks_a = seed_indices(a.shape[0], resamples, stream=1)
    picks_b = picks_a if paired_seeds else seed_indices(b.shape[0], resamples, stream=2)
    diff = over_seeds(a, picks_a) - over_seeds(b, picks_b)
    estimate = float(np.mean(a_observed) - np.mean(b_observed))
    return percentile_interval(estimate, diff, level)


def against_constant(
    a: np.ndarray, a_observed: Sequence[float], value: float, level: float = 0.95
) -> Interval:
    """Model A's average minus a fixed number (a paper's), seeds resampled as above."""
    resampled = over_seeds(a, seed_indices(a.shape[0], a.shape[1], stream=1)) - value
    return percentile_interval(float(np.mean(a_observed)) - value, resampled, level)


def observed_average(preds: Mapping[str, np.ndarray], tasks: Mapping[str, TaskPairs]) -> float:
    """The full-test-set average Spearman x100 (what the STS table shows)."""
    from scipy.stats import spearmanr

    return float(np.mean([100.0 * spearmanr(preds[t], tasks[t].gold).statistic for t in tasks]))
