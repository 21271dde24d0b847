"""Figures of the analyses (matplotlib, Agg backend), each written as PNG and PDF.

- :func:`similarity_figure`: density of cosine similarity per method, one panel per pair kind
  (SNCSE Figure 4: soft-negative and random pairs, a dotted line at the positive pairs' 1.0;
  SAN Figure 4: high-gold, low-overlap STS pairs).
- :func:`curves_figure`: STS-B dev Spearman against training steps, mean over seeds with the
  min-max band.
- :func:`forest_figure`: a paper's claims, our difference with its interval beside the
  paper's, coloured by the verdict (the paper pages, ``negcse paper-report``).

Both are one column of a two-column paper wide (:data:`WIDTH`), for one group of at most ~8
methods (:mod:`negcse.analysis.groups`): the group's baseline a solid black line, the others
told apart by colour and line style, the legend under the axes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np

from negcse.analysis.curves import Curve
from negcse.analysis.density import GRID, density
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


#: Colour-blind-safe colours (Okabe and Ito, yellow swapped for brown) and line styles: a
#: group's lines differ in both, so they stay apart in print and in grey; the baseline is black.
COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#8C510A")
LINESTYLES = ("-", "--", "-.", (0, (1, 1)))
#: One column of a two-column paper (inches), the fonts sized for it.
WIDTH = 3.3
FONT = {"font.size": 7.5, "axes.titlesize": 7.5, "axes.labelsize": 7.5, "legend.fontsize": 7,
        "xtick.labelsize": 6.5, "ytick.labelsize": 6.5}  # fmt: skip
#: The longest legend label two legend columns hold within :data:`WIDTH` at that font size.
LABEL_CHARS = 22


def line_styles(methods: Sequence[str], baseline: str | None = None) -> dict[str, dict[str, Any]]:
    """Per method: colour and line style (a solid black line for ``baseline``)."""
    styles: dict[str, dict[str, Any]] = {}
    others = [m for m in methods if m != baseline]
    if baseline in methods:
        styles[baseline] = {"color": "black", "ls": "-", "lw": 1.6}
    for i, method in enumerate(others):
        styles[method] = {
            "color": COLORS[i % len(COLORS)],
            "ls": LINESTYLES[i % len(LINESTYLES)],
            "lw": 1.2,
        }
    return {m: styles[m] for m in methods}


def _legend_below(fig: plt.Figure, ax: plt.Axes, baseline: str | None) -> None:
    """One legend for the figure, under its lowest x-label (outside every axes)."""
    handles, labels = ax.get_legend_handles_labels()
    if baseline is not None:
        labels = [f"{label} (baseline)" if label == baseline else label for label in labels]
    # two columns where the labels leave room for them within the figure's width
    ncol = 2 if max(map(len, labels), default=0) <= LABEL_CHARS else 1
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=ncol,
               frameon=False, handlelength=2.6, columnspacing=1.2)  # fmt: skip


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
    baseline: str | None = None,
) -> plt.Figure:
    """One panel per (title, {method: cosine values pooled over seeds}), stacked, one column
    wide; the legend (the same methods in every panel) below the last."""
    methods = list(dict.fromkeys(m for _, groups in panels for m in groups))
    styles = line_styles(methods, baseline)
    with plt.rc_context(FONT):
        fig, axes = plt.subplots(
            len(panels), 1, figsize=(WIDTH, 0.4 + 1.75 * len(panels)), squeeze=False
        )
        for ax, (panel_title, groups) in zip(axes[:, 0], panels, strict=True):
            for method, values in groups.items():
                ax.plot(GRID, density(np.asarray(values, dtype=np.float64)), label=method,
                        **styles[method])  # fmt: skip
            if positive_line:
                ax.axvline(1.0, color="grey", ls=":", lw=1.0)
            ax.set_xlim(*_xlim(groups.values(), positive_line))
            ax.set_xlabel("cosine similarity")
            ax.set_ylabel("density")
            ax.set_title(panel_title, loc="left")
            ax.grid(alpha=0.3)
        if title:
            fig.suptitle(title, fontsize=8)
        fig.tight_layout(h_pad=0.6)
        _legend_below(fig, axes[-1, 0], baseline)
    return fig


def curves_figure(
    curves: Mapping[str, Sequence[Curve]], title: str, baseline: str | None = None
) -> plt.Figure:
    """Per method: mean STS-B dev Spearman over seeds at each step, shaded min to max."""
    styles = line_styles(list(curves), baseline)
    with plt.rc_context(FONT):
        fig, ax = plt.subplots(figsize=(WIDTH, 2.3))
        for method, runs in curves.items():
            steps = sorted(set().union(*(r.steps for r in runs)))
            table = np.full((len(runs), len(steps)), np.nan)
            pos = {s: j for j, s in enumerate(steps)}
            for i, run in enumerate(runs):
                for step, value in zip(run.steps, run.stsb_dev, strict=True):
                    table[i, pos[step]] = value
            style = styles[method]
            ax.plot(steps, np.nanmean(table, axis=0), marker="o", ms=2.2, label=method, **style)
            if len(runs) > 1:
                ax.fill_between(steps, np.nanmin(table, axis=0), np.nanmax(table, axis=0),
                                color=style["color"], alpha=0.12, lw=0)  # fmt: skip
        ax.set_xlabel("training step")
        ax.set_ylabel("STS-B dev Spearman x100")
        if title:
            ax.set_title(title)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        _legend_below(fig, ax, baseline)
    return fig


#: a verdict's colour in a forest plot (Okabe and Ito); a direction check is sky blue, a row
#: without a verdict (too few seeds) a hollow grey point
VERDICT_COLORS = {
    "reproduced": "#009E73",
    "smaller than claimed": "#E69F00",
    "not reproduced": "#CC79A7",
    "reversed": "#D55E00",
    "inconclusive": "#999999",
}
CHECK_COLOR = "#56B4E9"


def _legend_key(verdict: str) -> str | None:
    """The legend entry of a verdict: itself, "direction check", or None (no verdict)."""
    if verdict.startswith("direction check"):
        return "direction check"
    return verdict if verdict in VERDICT_COLORS else None


def _verdict_color(verdict: str) -> str:
    key = _legend_key(verdict)
    return CHECK_COLOR if key == "direction check" else VERDICT_COLORS.get(key or "", "#999999")


def forest_figure(
    labels: Sequence[str],
    estimates: Sequence[float],
    lows: Sequence[float],
    highs: Sequence[float],
    claimed: Sequence[float],
    verdicts: Sequence[str],
    title: str = "",
    borrowed: Sequence[bool] | None = None,
) -> plt.Figure:
    """One row per claim, top to bottom: our difference (a point) with its 95% interval (a
    line; none without a verdict: a hollow point), the paper's difference (an open diamond;
    grey where ``borrowed``: a direction check, not the paper's comparison), coloured by the
    verdict; a dotted line at 0. Two columns of a paper wide."""
    n = len(labels)
    borrowed = list(borrowed) if borrowed is not None else [False] * n
    with plt.rc_context(FONT):
        fig, ax = plt.subplots(figsize=(2 * WIDTH, 0.9 + 0.24 * max(n, 1)))
        y = np.arange(n)[::-1]
        for i in range(n):
            color = _verdict_color(verdicts[i])
            if np.isfinite(lows[i]) and np.isfinite(highs[i]):
                ax.plot([lows[i], highs[i]], [y[i], y[i]], color=color, lw=1.6,
                        solid_capstyle="butt")  # fmt: skip
                ax.plot(estimates[i], y[i], "o", color=color, ms=4)
            else:
                ax.plot(estimates[i], y[i], "o", mfc="white", mec="#777777", ms=4)
            if np.isfinite(claimed[i]):
                edge = "#999999" if borrowed[i] else "black"
                ax.plot(claimed[i], y[i], "D", mfc="none", mec=edge, ms=4, mew=0.9)
        ax.axvline(0.0, color="grey", ls=":", lw=1.0)
        ax.set_yticks(y, labels)
        ax.set_ylim(-0.7, n - 0.3)
        ax.set_xlabel("difference to the baseline (score x100)")
        ax.grid(axis="x", alpha=0.3)
        if title:
            ax.set_title(title, loc="left")
        present = {_legend_key(v) for v in verdicts}
        handles = [
            plt.Line2D([], [], color=c, marker="o", lw=1.6, label=v)
            for v, c in [*VERDICT_COLORS.items(), ("direction check", CHECK_COLOR)]
            if v in present
        ]
        if not all(borrowed):
            handles.append(plt.Line2D([], [], color="black", marker="D", mfc="none", lw=0,
                                      label="paper's difference"))  # fmt: skip
        if any(borrowed):
            handles.append(plt.Line2D([], [], color="#999999", marker="D", mfc="none", lw=0,
                                      label="paper's (direction check)"))  # fmt: skip
        if None in present:
            handles.append(plt.Line2D([], [], color="#777777", marker="o", mfc="white", lw=0,
                                      label="no verdict (too few seeds)"))  # fmt: skip
        fig.tight_layout()
        fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3,
                   frameon=False)  # fmt: skip
    return fig
