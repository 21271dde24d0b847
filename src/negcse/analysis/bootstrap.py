"""Paired bootstrap of the 7-task STS average: the test set's share of a difference's variance.

The test pairs are resampled with replacement, within each SentEval subset (so a resample keeps
the subsets' sizes, and its Spearman is over the concatenated subsets: the ``all`` aggregate of
:mod:`negcse.evaluation.sts`); both models of a comparison are scored on the *same* resampled
pairs (paired: Koehn 2004, Berg-Kirkpatrick et al. 2012). A sentence pair that several tasks
hold (60.8% of STS-B test is in STS12-16, 6-16% of each STS12-16 task in another;
``pairs.key`` of the evaluation files) is one *cluster*: it is drawn once per resample and
counts in every task that holds it, so the tasks' shared pairs move together (a stratified
cluster bootstrap; a cluster is drawn within the subset where it first appears). The seeds are
not resampled here: :func:`test_variance` gives the variance over the resamples of the
difference of the two models' seed means, which :mod:`negcse.analysis.verdict_rules` adds to
the seeds' own variance. ``docs/statistics.md`` states the procedure.

Every resample is a column of an (n, B) matrix of *counts* (how often each pair was drawn), and
a pair's rank inside the resample is the average rank of its value among the drawn values (ties,
including a pair drawn twice, share their mean rank, as ``scipy.stats.spearmanr``): sorted once,
that is a cumulative sum of the counts, so no resample is sorted. Spearman is then the
count-weighted Pearson correlation of the ranks.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

#: resamples per interval, and the seed of the resampling
RESAMPLES = 1000
SEED = 0


#: hex digits of a pair's key (``pairs.key`` of an evaluation file: 40 bits of BLAKE2b; about
#: 1e-4 chance of one false match among the ~17,500 distinct STS test pairs)
KEY_DIGITS = 10


def pair_key(sent1: str, sent2: str) -> str:
    """A sentence pair's key, the same whichever task holds it: BLAKE2b of the two sentences,
    lower-cased, whitespace collapsed, in sorted order (a similarity is symmetric)."""
    a, b = sorted(" ".join(s.lower().split()) for s in (sent1, sent2))
    return hashlib.blake2b(f"{a}\t{b}".encode(), digest_size=8).hexdigest()[:KEY_DIGITS]


def split_keys(keys: str) -> list[str]:
    """``pairs.key`` (every pair's :func:`pair_key`, concatenated) -> one key per pair."""
    if len(keys) % KEY_DIGITS:
        raise ValueError(f"a length of {len(keys)} is not {KEY_DIGITS} hex digits per pair")
    return [keys[i : i + KEY_DIGITS] for i in range(0, len(keys), KEY_DIGITS)]


@dataclass(frozen=True)
class TaskPairs:
    """One STS task's gold scores, the sizes of its subsets (in order; they sum to n) and each
    pair's key (:func:`pair_key`; empty: unknown, the pair is a cluster of its own)."""

    gold: np.ndarray
    subset_sizes: tuple[int, ...]
    keys: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if sum(self.subset_sizes) != len(self.gold):
            raise ValueError(f"subset sizes {self.subset_sizes} do not sum to {len(self.gold)}")
        if self.keys and len(self.keys) != len(self.gold):
            raise ValueError(f"{len(self.keys)} pair keys for {len(self.gold)} pairs")


def clusters(tasks: Mapping[str, TaskPairs]) -> tuple[dict[str, np.ndarray], list[int]]:
    """Per task, each pair's cluster (pairs with one key share one, across tasks), numbered in
    order of first appearance (task, then subset, then pair order); and how many clusters first
    appear in each subset, in that order (the strata of the draw)."""
    ids: dict[str, int] = {}
    out: dict[str, np.ndarray] = {}
    strata: list[int] = []
    for name, task in tasks.items():
        keys = task.keys or tuple(f"{name}#{i}" for i in range(len(task.gold)))
        cluster = np.empty(len(keys), dtype=np.int64)
        start = 0
        for size in task.subset_sizes:
            before = len(ids)
            for i in range(start, start + size):
                cluster[i] = ids.setdefault(keys[i], len(ids))
            strata.append(len(ids) - before)
            start += size
        out[name] = cluster
    return out, strata


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


def mean_rank(counts: np.ndarray) -> np.ndarray:
    """(B,) the mean rank (m + 1) / 2 of each resample of m drawn values: a clustered resample's
    size m varies (a drawn cluster counts in every task that holds it)."""
    return (counts.sum(axis=0, dtype=np.float64) + 1.0) / 2.0


def _weighted(weights: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(B,) sum over the pairs of weights * x * y, all (n, B)."""
    return np.einsum("ij,ij,ij->j", weights, x, y)


@dataclass(frozen=True)
class Draws:
    """The shared resample of the test pairs: per task, (n, B) counts and the gold scores'
    centred ranks."""

    counts: dict[str, np.ndarray]  # (n, B) small unsigned ints (memory: 2 bytes a cell)
    gold_centred: dict[str, np.ndarray]  # ranks minus their mean (m + 1) / 2, m drawn
    gold_norm: dict[str, np.ndarray]  # (B,) sqrt of the count-weighted sum of squares

    def _add(self, name: str, task: TaskPairs, counts: np.ndarray) -> None:
        g = resample_ranks(task.gold, counts) - mean_rank(counts)
        self.counts[name], self.gold_centred[name] = counts, g
        self.gold_norm[name] = np.sqrt(_weighted(counts.astype(np.float64), g, g))

    @classmethod
    def from_indices(
        cls, tasks: Mapping[str, TaskPairs], indices: Mapping[str, np.ndarray]
    ) -> Draws:
        """``indices``: per task, (B, n) indices of the drawn pairs (one resample a row)."""
        draws = cls({}, {}, {})
        for name, task in tasks.items():
            draws._add(name, task, counts_of(indices[name], len(task.gold)))
        return draws

    @classmethod
    def draw(
        cls, tasks: Mapping[str, TaskPairs], resamples: int = RESAMPLES, seed: int = SEED
    ) -> Draws:
        """The stratified cluster draw: each subset redraws, with replacement, as many clusters
        as first appear in it (:func:`clusters`); a pair counts as often as its cluster was
        drawn. Pairs without keys are clusters of one: then every subset keeps its size."""
        rng = np.random.default_rng(seed)
        cluster_of, strata = clusters(tasks)
        dtype = np.uint32 if max(strata, default=0) >= 2**16 else np.uint16
        drawn = np.zeros((sum(strata), resamples), dtype=dtype)
        start = 0
        for size in strata:
            if size:
                picks = rng.integers(0, size, size=(resamples, size))
                drawn[start : start + size] = counts_of(picks, size)
            start += size
        draws = cls({}, {}, {})
        for name, task in tasks.items():
            draws._add(name, task, drawn[cluster_of[name]])
        return draws

    @property
    def resamples(self) -> int:
        return next(iter(self.counts.values())).shape[1]


def resampled_spearman(pred: np.ndarray, draws: Draws, task: str) -> np.ndarray:
    """(B,) Spearman x100 of ``pred`` against gold on each resample of ``task``'s pairs."""
    c = draws.counts[task]
    r = resample_ranks(pred, c) - mean_rank(c)
    c = c.astype(np.float64)
    cov = _weighted(c, r, draws.gold_centred[task])
    return 100.0 * cov / (np.sqrt(_weighted(c, r, r)) * draws.gold_norm[task])


def resampled_average(preds: Mapping[str, np.ndarray], draws: Draws) -> np.ndarray:
    """(B,) the average over the tasks of ``draws`` of one model's resampled Spearman."""
    missing = [t for t in draws.counts if t not in preds]
    if missing:
        raise KeyError(f"no pairs for task(s) {', '.join(missing)}")
    return np.mean([resampled_spearman(preds[t], draws, t) for t in draws.counts], axis=0)


def resampled_variance(a: np.ndarray, b: np.ndarray | None = None) -> float:
    """The variance over the resamples of A's seed mean minus B's: ``a``, ``b`` are (seeds, B)
    resampled values per seed on the same resamples (``b`` None: A's seed mean alone). The seeds
    are fixed here; their own variation is :mod:`negcse.analysis.verdict_rules`'."""
    diff = np.asarray(a).mean(axis=0) - (0.0 if b is None else np.asarray(b).mean(axis=0))
    return float(np.var(diff, ddof=1))


def observed_average(preds: Mapping[str, np.ndarray], tasks: Mapping[str, TaskPairs]) -> float:
    """The full-test-set average Spearman x100 (what the STS table shows)."""
    from scipy.stats import spearmanr

    return float(np.mean([100.0 * spearmanr(preds[t], tasks[t].gold).statistic for t in tasks]))
