"""Figures of the analyses (matplotlib, Agg backend), each written as PNG and PDF.

- :func:`similarity_figure`: density of cosine similarity per method, one panel per pair kind
  (SNCSE Figure 4: soft-negative and random pairs, a dotted line at the positive pairs' 1.0;
  SAN Figure 4: high-gold, low-overlap STS pairs).
- :func:`curves_figure`: STS-B dev Spearman against training steps, mean over seeds with the
  min-max band.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np

from negcse.analysis.curves import Curve
from negcse.analysis.density import GRID, density, peak
from negcse.io_utils import atomic_path

_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "Producer": None}}


def save_figure(fig: plt.Figure, path: str | os.PathLike[str]) -> None:
    """Write ``fig`` atomically; the format comes from the suffix (.png at 150 dpi, .pdf)."""
    dest = Path(path)
    fmt = dest.suffix.lstrip(".").lower()
    if fmt not in _METADATA:
        raise ValueError(f"{dest}: figures are written as .png or .pdf")
    with atomic_path(dest) as tmp:
        fig.savefig(tmp, format=fmt, dpi=150, bbox_inches="tight", metadata=_METADATA[fmt])


def _colors(n: int) -> list[tuple[float, float, float, float]]:
    cmap = plt.get_cmap("tab10" if n <= 10 else "tab20")
    return [cmap(i % cmap.N) for i in range(n)]


def _xlim(groups: Iterable[np.ndarray], up_to_one: bool) -> tuple[float, float]:
    """The range holding 99% of every group (and 1.0 when the positive line is drawn)."""
    values = [np.asarray(v, dtype=np.float64) for v in groups if np.asarray(v).size]
    if not values:
        return -1.0, 1.02
    lo = min(float(np.quantile(v, 0.005)) for v in values)
    hi = max(float(np.quantile(v, 0.995)) for v in values)
    pad = max(0.02, 0.1 * (hi - lo))
    hi = max(hi + pad, 1.02) if up_to_one else hi + pad
    return max(lo - pad, -1.0), min(hi, 1.02)


def similarity_figure(
    panels: Sequence[tuple[str, Mapping[str, np.ndarray]]],
    title: str,
    positive_line: bool = False,
) -> plt.Figure:
    """One panel per (title, {method: cosine values pooled over seeds}); legend gives peaks."""
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 3.8), squeeze=False)
    for ax, (panel_title, groups) in zip(axes[0], panels, strict=True):
        for color, (method, values) in zip(_colors(len(groups)), groups.items(), strict=True):
            values = np.asarray(values, dtype=np.float64)
            ax.plot(
                GRID,
                density(values),
                color=color,
                lw=1.4,
                label=f"{method} (peak {peak(values):.3f}, n={values.size})",
            )
        if positive_line:
            ax.axvline(1.0, color="black", ls=":", lw=1.2, label="positive pairs (1.0)")
        ax.set_xlim(*_xlim(groups.values(), positive_line))
        ax.set_xlabel("cosine similarity")
        ax.set_ylabel("density")
        ax.set_title(panel_title, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(
            fontsize=6.5, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.36), ncol=2
        )
    fig.suptitle(f"{title} (n: pairs pooled over seeds)", fontsize=11)
    fig.tight_layout()
    return fig


def curves_figure(curves: Mapping[str, Sequence[Curve]], title: str) -> plt.Figure:
    """Per method: mean STS-B dev Spearman over seeds at each step, shaded min to max."""
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for color, (method, runs) in zip(_colors(len(curves)), curves.items(), strict=True):
        steps = sorted(set().union(*(r.steps for r in runs)))
        table = np.full((len(runs), len(steps)), np.nan)
        for i, run in enumerate(runs):
            pos = {s: j for j, s in enumerate(steps)}
            for step, value in zip(run.steps, run.stsb_dev, strict=True):
                table[i, pos[step]] = value
        mean = np.nanmean(table, axis=0)
        ax.plot(
            steps,
            mean,
            color=color,
            lw=1.4,
            marker="o",
            ms=2.5,
            label=f"{method} ({len(runs)} seed{'s' if len(runs) > 1 else ''})",
        )
        if len(runs) > 1:
            ax.fill_between(
                steps,
                np.nanmin(table, axis=0),
                np.nanmax(table, axis=0),
                color=color,
                alpha=0.15,
                lw=0,
            )
    ax.set_xlabel("training step")
    ax.set_ylabel("STS-B dev Spearman x100")
    ax.set_title(title, fontsize=11)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2)
    fig.tight_layout()
    return fig
