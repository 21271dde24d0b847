"""Smooth densities of similarity values (Gaussian KDE) and their peaks, as the figures show them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    import scipy.stats as stats
else:
    # imported on first use (the workflow's parse reads this module)
    stats = LazyModule("scipy.stats")

GRID = np.linspace(-1.0, 1.0, 2001)  # cosine similarity axis, step 0.001


def density(values: np.ndarray, grid: np.ndarray = GRID) -> np.ndarray:
    """Gaussian KDE (Scott's bandwidth) of ``values`` on ``grid``; a spike if they are constant."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return np.zeros_like(grid)
    if values.size < 2 or np.ptp(values) < 1e-9:
        out = np.zeros_like(grid)
        out[int(np.argmin(np.abs(grid - values.mean())))] = 1.0 / (grid[1] - grid[0])
        return out
    return stats.gaussian_kde(values)(grid)


def peak(values: np.ndarray, grid: np.ndarray = GRID) -> float:
    """Where the density is highest (the "similarity peak" SNCSE Section 4.3 reports)."""
    if np.asarray(values).size == 0:
        return float("nan")
    return float(grid[int(np.argmax(density(values, grid)))])
