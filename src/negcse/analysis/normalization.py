"""GCSE's median-based score normalization (Appendix J) and its false pairs (Figure 1).

Labels on [low, high] are min-max normalized: l' = (l - low) / (high - low). Predicted scores are
aligned per model: C_0 = the predictions of pairs labelled ``low``, C_1 = those labelled ``high``,
min_p = median(C_0), max_p = median(C_1), and s' = clip((s - min_p) / (max_p - min_p), 0, 1)
(Eq. 14). Medians, not extremes, keep outliers from setting the range.

Figure 1 / Table 8: a pair's error is |s' - l'| (the "RMS error" of one pair; Table 8 prints both
scores times 5, the label range of STS-B); it is a false positive when s' - l' > 0.2 and a false
negative when l' - s' > 0.2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Normalized:
    """Normalized predictions and labels of one task, with the model's anchors."""

    pred: np.ndarray
    gold: np.ndarray
    min_p: float
    max_p: float
    low: float
    high: float

    @property
    def error(self) -> np.ndarray:
        """Signed s' - l' (positive: the model overestimates the similarity)."""
        return self.pred - self.gold

    def false_positives(self, threshold: float = 0.2) -> np.ndarray:
        return self.error > threshold

    def false_negatives(self, threshold: float = 0.2) -> np.ndarray:
        return -self.error > threshold


def median_minmax(
    pred: np.ndarray,
    gold: np.ndarray,
    low: float | None = None,
    high: float | None = None,
) -> Normalized:
    """Eq. 14 with labels on [low, high] (default: the smallest and largest label present)."""
    pred = np.asarray(pred, dtype=np.float64)
    gold = np.asarray(gold, dtype=np.float64)
    if pred.shape != gold.shape or pred.ndim != 1:
        raise ValueError(f"pred {pred.shape} and gold {gold.shape} must be equal 1-d shapes")
    low = float(gold.min()) if low is None else float(low)
    high = float(gold.max()) if high is None else float(high)
    if not high > low:
        raise ValueError(f"label range [{low}, {high}] is empty")
    c0, c1 = pred[gold == low], pred[gold == high]
    if c0.size == 0 or c1.size == 0:
        raise ValueError(
            f"median normalization needs pairs labelled {low} and {high}; "
            f"found {c0.size} and {c1.size}"
        )
    min_p, max_p = float(np.median(c0)), float(np.median(c1))
    if not max_p > min_p:
        raise ValueError(
            f"median prediction at label {high} ({max_p:.4f}) is not above that at label "
            f"{low} ({min_p:.4f}): the scores cannot be normalized"
        )
    norm = np.clip((pred - min_p) / (max_p - min_p), 0.0, 1.0)
    return Normalized(norm, (gold - low) / (high - low), min_p, max_p, low, high)
