"""Figures of the analyses (matplotlib, Agg backend), each written as PNG and PDF.

- :func:`similarity_figure`: density of cosine similarity per method, one panel per pair kind
  (SNCSE Figure 4: soft-negative and random pairs, a dotted line at the positive pairs' 1.0;
  SAN Figure 4: high-gold, low-overlap STS pairs).
- :func:`curves_figure`: STS-B dev Spearman against training steps, mean over seeds with the
  min-max band, and below it the training loss and each part the methods log.
- :func:`forest_figure`: a paper's claims, our difference with its interval beside the
  paper's, coloured by the verdict (the paper pages, ``negcse paper-report``; the text width of a paper).

The first two are one column of a two-column paper wide (:data:`WIDTH`), for one group of at
most ~8 methods (:mod:`negcse.analysis.groups`), named as the tables name them
(:func:`negcse.text.display.method_name`): the group's baseline a solid black line, each other method
in its family's hue (:data:`negcse.text.display.FAMILIES`; a shade per method of the family), with a
line style and a marker of its own, so lines that overlap stay apart, in print and in grey; the
legend under the axes. PDFs embed their fonts as TrueType (Type 42), as camera-ready checks ask.
"""

from __future__ import annotations

import io
import logging
import os
import textwrap
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import to_hex, to_rgb
from PIL import Image

from negcse.analysis.curves import Curve
from negcse.analysis.density import GRID, density
from negcse.io_utils import atomic_path
from negcse.text.display import backbone_name, family, method_name

# fontTools logs every font subset it makes for a Type 42 PDF at INFO
logging.getLogger("fontTools").setLevel(logging.WARNING)

_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "Producer": None}}
#: TrueType (Type 42) fonts in PDF and PS: camera-ready checkers reject Type 3
FONT_TYPES = {"pdf.fonttype": 42, "ps.fonttype": 42}


#: colours of a PNG's palette: a third of the bytes of full colour, no visible loss at 150 dpi
PNG_COLORS = 128


def save_figure(fig: plt.Figure, path: str | os.PathLike[str]) -> None:
    """Write ``fig`` atomically; the format comes from the suffix (.png at 150 dpi with a
    :data:`PNG_COLORS` palette, small enough for git; .pdf with Type 42 fonts)."""
    dest = Path(path)
    fmt = dest.suffix.lstrip(".").lower()
    if fmt not in _METADATA:
        raise ValueError(f"{dest}: figures are written as .png or .pdf")
    with atomic_path(dest) as tmp, plt.rc_context(FONT_TYPES):
        if fmt == "pdf":
            fig.savefig(tmp, format=fmt, bbox_inches="tight", metadata=_METADATA[fmt])
            return
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, dpi=150, bbox_inches="tight", metadata=_METADATA[fmt])
        image = Image.open(buffer).convert("RGB")
        palette = image.quantize(PNG_COLORS, Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        palette.save(tmp, format="png", optimize=True, dpi=(150, 150))


#: Within a family: the hue darker (< 0, towards black) or lighter (> 0, towards white), per
#: method in drawing order; line styles and markers set each line apart too.
SHADES = (0.0, -0.35, 0.4, -0.6, 0.6, -0.15, 0.2, -0.75)
LINESTYLES = ("-", "--", "-.", (0, (1, 1)))
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: One column of a two-column paper (inches), the fonts sized for it.
WIDTH = 3.0
#: The text width of a two-column paper (inches): the forest plots span it. What is saved stays
#: within :data:`MAX_WIDTH_PT` (a column) or :data:`MAX_TEXT_WIDTH_PT` (the text) points, and
#: no taller than :data:`MAX_HEIGHT` inches with its legend, so that a float of it and its
#: caption fits a page at its natural size (ACL's: 7.7 cm columns, 16 cm by 23 cm of text).
TEXT_WIDTH = 6.2
MAX_WIDTH_PT = 219.0
MAX_TEXT_WIDTH_PT = 455.0
MAX_HEIGHT = 7.4
FONT = {"font.size": 7.5, "axes.titlesize": 7.5, "axes.labelsize": 7.5, "legend.fontsize": 7,
        "xtick.labelsize": 6.5, "ytick.labelsize": 6.5, **FONT_TYPES}  # fmt: skip
#: The longest legend label two legend columns hold within :data:`WIDTH` at that font size.
LABEL_CHARS = 20


def shade(color: str, amount: float) -> str:
    """``color`` mixed with white (``amount`` > 0) or black (< 0)."""
    rgb = np.asarray(to_rgb(color))
    target = 1.0 if amount > 0 else 0.0
    return to_hex(rgb + (target - rgb) * abs(amount))


def line_styles(methods: Sequence[str], baseline: str | None = None) -> dict[str, dict[str, Any]]:
    """Per method: colour (its family's hue, a shade per method of the family), line style and
    marker; the baseline a solid black line."""
    styles: dict[str, dict[str, Any]] = {}
    if baseline in methods:
        styles[baseline] = {"color": "black", "ls": "-", "lw": 1.6, "marker": "o"}
    in_family: dict[str, int] = defaultdict(int)
    for i, method in enumerate(m for m in methods if m != baseline):
        fam = family(method)
        k = in_family[fam.key]
        in_family[fam.key] += 1
        styles[method] = {
            "color": shade(fam.color, SHADES[k % len(SHADES)]),
            "ls": LINESTYLES[k % len(LINESTYLES)],
            "lw": 1.2,
            "marker": MARKERS[(i + 1) % len(MARKERS)],
        }
    return {m: styles[m] for m in methods}


def _legend_below(fig: plt.Figure, ax: plt.Axes, baseline: str | None) -> None:
    """One legend for the figure, under its lowest x-label (outside every axes)."""
    handles, labels = ax.get_legend_handles_labels()
    if baseline is not None:
        base = method_name(baseline)
        labels = [f"{label} (baseline)" if label == base else label for label in labels]
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
            for i, (method, values) in enumerate(groups.items()):
                # a marker every tenth of the axes, each method's offset: apart when lines overlap
                ax.plot(GRID, density(np.asarray(values, dtype=np.float64)),
                        label=method_name(method), markevery=(0.0125 * (i % 8), 0.1), ms=2.6,
                        **styles[method])  # fmt: skip
            if positive_line:
                ax.axvline(1.0, color="grey", ls=":", lw=1.0)
            ax.set_xlim(*_xlim(groups.values(), positive_line))
            ax.set_xlabel("cosine similarity")
            ax.set_ylabel("density")
            ax.set_title(panel_title, loc="left")
            ax.grid(alpha=0.3)
        if title:
            fig.suptitle(backbone_name(title), fontsize=8)
        fig.tight_layout(h_pad=0.6)
        _legend_below(fig, axes[-1, 0], baseline)
    return fig


def _mean_band(
    points: Sequence[Sequence[tuple[int, float]]],
) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray]:
    """Steps, and per step the mean, min and max over the runs (NaN where a run has none)."""
    steps = sorted({s for run in points for s, _ in run})
    pos = {s: j for j, s in enumerate(steps)}
    table = np.full((len(points), len(steps)), np.nan)
    for i, run in enumerate(points):
        for step, value in run:
            table[i, pos[step]] = value
    return steps, np.nanmean(table, axis=0), np.nanmin(table, axis=0), np.nanmax(table, axis=0)


#: panel titles of the quantities a training logs (others: the part's own name)
QUANTITIES = {"stsb_dev": "STS-B dev Spearman ×100", "loss": "training loss"}


def loss_panels(curves: Mapping[str, Sequence[Curve]]) -> list[str]:
    """The loss, then each logged part, in the order first logged; left out: a part that is the
    whole loss of every run logging it (SimCSE's InfoNCE) and one that never changes (a count
    such as UNA's rows; the run's log and the training_loss CSV keep both)."""
    names: dict[str, None] = {}
    values: dict[str, set[float]] = defaultdict(set)
    for runs in curves.values():
        for run in runs:
            total = run.losses.get("loss", [])
            for name, points in run.losses.items():
                values[name].update(v for _, v in points)
                if name == "loss" or points != total:
                    names.setdefault(name, None)
    return [n for n in names if n == "loss" or len(values[n]) > 1]


def _legend_height(labels: Sequence[str]) -> float:
    """Inches the legend of :func:`_legend_below` takes under the axes."""
    ncol = 2 if max(map(len, labels), default=0) <= LABEL_CHARS else 1
    return 0.25 + 0.16 * -(-len(labels) // ncol)


def panel_heights(n_panels: int, labels: Sequence[str]) -> list[float]:
    """Heights (inches) of the curves figure's panels: the dev curve 1.7, each loss panel 1.0,
    scaled down together where the figure with its legend would pass :data:`MAX_HEIGHT`."""
    heights = [1.7] + [1.0] * (n_panels - 1)
    room = MAX_HEIGHT - 0.6 - _legend_height(labels)
    scale = min(1.0, room / sum(heights))
    return [h * scale for h in heights]


def curves_figure(
    curves: Mapping[str, Sequence[Curve]], title: str, baseline: str | None = None
) -> plt.Figure:
    """Per method, stacked over one step axis: STS-B dev Spearman (mean over seeds, shaded
    min to max), the training loss and each logged part (:func:`loss_panels`); one column wide
    and at most :data:`MAX_HEIGHT` tall with its legend (:func:`panel_heights`)."""
    styles = line_styles(list(curves), baseline)
    panels = ["stsb_dev", *loss_panels(curves)]
    heights = panel_heights(len(panels), [method_name(m) for m in curves])
    with plt.rc_context(FONT):
        fig, axes = plt.subplots(
            len(panels), 1, figsize=(WIDTH, 0.6 + sum(heights)), sharex=True, squeeze=False,
            gridspec_kw={"height_ratios": heights},
        )  # fmt: skip
        for ax, panel in zip(axes[:, 0], panels, strict=True):
            for method, runs in curves.items():
                if panel == "stsb_dev":
                    points = [list(zip(r.steps, r.stsb_dev, strict=True)) for r in runs]
                else:
                    points = [r.losses[panel] for r in runs if panel in r.losses]
                if not points:
                    continue
                steps, mean, low, high = _mean_band(points)
                style = styles[method]
                ax.plot(steps, mean, ms=2.6, label=method_name(method), **style)
                if len(points) > 1:
                    ax.fill_between(steps, low, high, color=style["color"], alpha=0.12, lw=0)
            ax.set_ylabel(QUANTITIES.get(panel, panel), fontsize=6.5)
            ax.grid(alpha=0.3)
        axes[-1, 0].set_xlabel("training step")
        if title:
            axes[0, 0].set_title(backbone_name(title))
        fig.tight_layout(h_pad=0.4)
        fig.align_ylabels(axes[:, 0])
        _legend_below(fig, axes[0, 0], baseline)
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


#: characters of a forest plot's row label and title line (7.5 pt type within TEXT_WIDTH)
LABEL_WRAP = 42
TITLE_WRAP = 100


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
    verdict; a dotted line at 0. The text width of a paper wide (:data:`TEXT_WIDTH`): long
    labels and the title are wrapped to stay within it."""
    n = len(labels)
    borrowed = list(borrowed) if borrowed is not None else [False] * n
    labels = [textwrap.fill(label, LABEL_WRAP) for label in labels]
    title = "\n".join(textwrap.fill(line, TITLE_WRAP) for line in title.splitlines())
    with plt.rc_context(FONT):
        fig, ax = plt.subplots(figsize=(TEXT_WIDTH, 0.9 + 0.24 * max(n, 1)))
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
        ax.set_xlabel("difference to the baseline (score ×100)")
        ax.grid(axis="x", alpha=0.3)
        if title:
            fig.suptitle(title, x=0.01, ha="left", fontsize=FONT["axes.titlesize"])
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


def seed_strip_figure(
    labels: Sequence[str], values: Sequence[Sequence[float]], xlabel: str, title: str = ""
) -> plt.Figure:
    """One row per model, top to bottom: each seed's score (a grey point) and their mean (a
    black tick), so the spread behind a table's mean ± std is visible. Two columns wide."""
    n = len(labels)
    with plt.rc_context(FONT):
        fig, ax = plt.subplots(figsize=(2 * WIDTH, 0.7 + 0.2 * max(n, 1)))
        y = np.arange(n)[::-1]
        for row, scores in zip(y, values, strict=True):
            points = np.asarray(scores, dtype=float)
            ax.plot(points, np.full(len(points), row), "o", color="#777777", ms=3.2, alpha=0.8,
                    mec="none")  # fmt: skip
            ax.plot([points.mean()] * 2, [row - 0.3, row + 0.3], color="black", lw=1.4)
        ax.set_yticks(y, labels)
        ax.set_ylim(-0.7, n - 0.3)
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", alpha=0.3)
        if title:
            ax.set_title(title, loc="left")
        fig.tight_layout()
    return fig
