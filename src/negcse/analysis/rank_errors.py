"""SNCSE's rank-based error analysis (Section 3.1, Eq. 10-11, Table 4).

For the n pairs of a task, R_G ranks the gold scores and R_E the predicted cosine similarities,
"sorted from low to high" (rank 1 = least similar); the error of a pair is (R_E - R_G)^2 and
Spearman's rho = 1 - sum (R_E - R_G)^2 / ((n^3 - n) / 6) (Eq. 10, exact without ties). A pair
with R_E > R_G is overestimated, R_E < R_G underestimated. Ranks run over the whole task (STS14's
3,750 pairs, SICK-R's 4,927 test pairs), as the paper's printed ranks (up to 3,695 and 4,869) show.

Ties: gold scores tie a lot (STS14 has 60 distinct scores over 3,750 pairs). The paper does not
say how; its printed R_G lie inside the tie ranges (STS14 pair 1, gold 4.8, shares ranks
3,487-3,594 with 107 other pairs; printed 3,564), i.e. ordinal ranks with an unreported order.
Default here: ``average`` ranks (the midrank, what Spearman's rho with ties uses, independent of
file order); ``ordinal`` (file order), ``min`` and ``max`` are available.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    import scipy.stats as stats
else:
    # imported on first use (the workflow's parse reads this module)
    stats = LazyModule("scipy.stats")

TIE_METHODS = ("average", "ordinal", "min", "max")


def ranks(values: np.ndarray, ties: str = "average") -> np.ndarray:
    """1-based ascending ranks (1 = smallest value)."""
    if ties not in TIE_METHODS:
        raise ValueError(f"unknown tie method {ties!r}; known: {', '.join(TIE_METHODS)}")
    return stats.rankdata(np.asarray(values, dtype=np.float64), method=ties).astype(np.float64)


@dataclass(frozen=True)
class RankErrors:
    """Per-pair ranks and errors of one task."""

    r_e: np.ndarray
    r_g: np.ndarray

    @property
    def error(self) -> np.ndarray:
        """Eq. 11: (R_E - R_G)^2."""
        return (self.r_e - self.r_g) ** 2

    def rho(self) -> float:
        """Eq. 10: 1 - sum (R_E - R_G)^2 / ((n^3 - n) / 6)."""
        n = len(self.r_e)
        return float(1.0 - self.error.sum() / ((n**3 - n) / 6.0))

    def top(self, k: int) -> np.ndarray:
        """Indices of the ``k`` largest errors, largest first (ties: lower index first)."""
        return np.argsort(-self.error, kind="stable")[:k]


def rank_errors(pred: np.ndarray, gold: np.ndarray, ties: str = "average") -> RankErrors:
    pred = np.asarray(pred, dtype=np.float64)
    gold = np.asarray(gold, dtype=np.float64)
    if pred.shape != gold.shape or pred.ndim != 1:
        raise ValueError(f"pred {pred.shape} and gold {gold.shape} must be equal 1-d shapes")
    return RankErrors(ranks(pred, ties), ranks(gold, ties))
