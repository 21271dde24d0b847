"""Paired bootstrap of the transfer average (mean of the task accuracies x100).

``negcse evaluate`` records, per transfer task, whether each tested example was classified
right, and for a cross-validated task (MR, CR, SUBJ, MPQA) the outer fold that tested it
(``details.<task>.test``, :func:`negcse.evaluation.transfer.record_tested`). A task's accuracy is
the mean of its folds' accuracies (one fold: the test split of SST2, TREC, MRPC), so a resample
redraws each fold's examples from that fold with replacement (keeping its size), and both models
of a comparison are scored on the *same* resampled examples (paired, as
:mod:`negcse.analysis.bootstrap` does for the STS pairs); the variance over the resamples of
two models' seed-mean difference (:func:`negcse.analysis.bootstrap.resampled_variance`) is the
test set's share of a verdict's interval (:mod:`negcse.analysis.verdict_rules`). The tasks are
different datasets, so no example is shared between them (no clusters). The folds are fixed by SentEval's
order of the rows and its fold seed, not by the model, so every model of a protocol has the same
ones; the resample does not refit the classifiers (the interval is over the test examples).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from negcse.analysis.bootstrap import RESAMPLES, SEED, counts_of, draw_within

#: the characters of ``details.<task>.test`` (see negcse.evaluation.transfer.FOLD_DIGITS)
BITS = {"0": False, "1": True}


@dataclass(frozen=True)
class FoldedExamples:
    """One task's tested examples: the fold of each (all 0 for a test split), in example order."""

    fold: np.ndarray  # (n,) int

    @property
    def order(self) -> np.ndarray:
        """Example indices grouped by fold (stable): the layout of a resample."""
        return np.argsort(self.fold, kind="stable")

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(int(c) for c in np.bincount(self.fold))

    def weights(self) -> np.ndarray:
        """(n,) in fold order: 100 / (folds x the example's fold size), so that the weighted
        sum of correct examples is the mean of the folds' accuracies x100."""
        sizes = np.asarray(self.sizes, dtype=np.float64)
        return np.repeat(100.0 / (len(sizes) * sizes), self.sizes)


def read_record(record: Mapping[str, str]) -> tuple[np.ndarray, FoldedExamples]:
    """``details.<task>.test`` -> (each example's correctness, its folds); ValueError on a
    malformed record."""
    correct, fold = record["correct"], record.get("fold")
    if not correct or set(correct) - set(BITS):
        raise ValueError("'correct' must be a non-empty string of 0 and 1")
    if fold is None:
        folds = np.zeros(len(correct), dtype=np.int64)
    else:
        if len(fold) != len(correct):
            raise ValueError(f"{len(fold)} folds for {len(correct)} examples")
        try:
            folds = np.array([int(f, 36) for f in fold], dtype=np.int64)
        except ValueError:
            raise ValueError("'fold' must be digits 0-9a-z") from None
        if (np.bincount(folds) == 0).any():
            raise ValueError(f"'fold' skips a fold number (folds 0..{folds.max()} expected)")
    return np.frombuffer(correct.encode("ascii"), np.uint8) == ord("1"), FoldedExamples(folds)


def task_accuracy(correct: np.ndarray, tested: FoldedExamples) -> float:
    """The full-test-set accuracy x100: the mean of the folds' accuracies (unrounded)."""
    return float(tested.weights() @ correct[tested.order])


@dataclass(frozen=True)
class TransferDraws:
    """The shared resample of the tested examples: per task, (n, B) counts in fold order."""

    tested: dict[str, FoldedExamples]
    counts: dict[str, np.ndarray]  # float32: a matrix-vector product per model and task

    @classmethod
    def from_indices(
        cls, tested: Mapping[str, FoldedExamples], indices: Mapping[str, np.ndarray]
    ) -> TransferDraws:
        """``indices``: per task, (B, n) drawn positions in fold order (one resample a row)."""
        counts = {
            t: counts_of(indices[t], len(ex.fold)).astype(np.float32) for t, ex in tested.items()
        }
        return cls(dict(tested), counts)

    @classmethod
    def draw(
        cls, tested: Mapping[str, FoldedExamples], resamples: int = RESAMPLES, seed: int = SEED
    ) -> TransferDraws:
        rng = np.random.default_rng(seed)
        return cls.from_indices(
            tested, {t: draw_within(ex.sizes, resamples, rng) for t, ex in tested.items()}
        )

    @property
    def resamples(self) -> int:
        return next(iter(self.counts.values())).shape[1]


def resampled_accuracy(correct: np.ndarray, draws: TransferDraws, task: str) -> np.ndarray:
    """(B,) the task's accuracy x100 (mean over its folds) on each resample."""
    tested = draws.tested[task]
    weights = (tested.weights() * correct[tested.order]).astype(np.float32)
    return (weights @ draws.counts[task]).astype(np.float64)


def resampled_average(correct: Mapping[str, np.ndarray], draws: TransferDraws) -> np.ndarray:
    """(B,) one model's transfer average (mean of the task accuracies) on each resample."""
    missing = [t for t in draws.counts if t not in correct]
    if missing:
        raise KeyError(f"no tested examples for task(s) {', '.join(missing)}")
    return np.mean([resampled_accuracy(correct[t], draws, t) for t in draws.counts], axis=0)
