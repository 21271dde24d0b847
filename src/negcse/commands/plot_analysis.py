"""``negcse plot-analysis``: one analysis figure over many models, as PNG and PDF."""

from __future__ import annotations

import argparse
import logging
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from negcse.analysis.curves import read_curve
from negcse.errors import UserError
from negcse.finite import finite_array
from negcse.io_utils import read_json
from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    from negcse.analysis import figures
else:  # matplotlib: imported when the command runs, not for --help
    figures = LazyModule("negcse.analysis.figures")

NAME = "plot-analysis"
HELP = "similarity distributions (SNCSE / SAN Figure 4) or training curves, per method"
logger = logging.getLogger(__name__)
KINDS = ("soft_negatives", "hard_positives", "training_curves")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kind", choices=KINDS, required=True, help="which figure to draw")
    p.add_argument(
        "--inputs",
        nargs="+",
        required=True,
        help="analyze-model JSON files (training_curves: trained model folders)",
    )
    p.add_argument("--png", required=True, help="the figure as PNG (for pages)")
    p.add_argument("--pdf", required=True, help="the figure as PDF (for papers)")
    p.add_argument("--title", default="", help="the figure's title")
    p.add_argument(
        "--baseline",
        help="the method the others were compared with: drawn as a solid black line",
    )


#: the similarity lists of each figure kind
LISTS = {"soft_negatives": ("soft_negative", "random"), "hard_positives": ("hard_positive",)}


def _load(path: str, kind: str) -> dict[str, Any]:
    """An analysis file with its method and the kind's similarity lists (finite numbers)."""
    result = read_json(path)
    for key in ("method", "similarity"):
        if key not in result:
            raise UserError(f"{path}: '{key}' missing (an analyze-model output with --tag method=?)")
    similarity = result["similarity"]
    if not isinstance(similarity, dict):
        raise UserError(f"{path}: similarity: expected an object, got {similarity!r:.40}")
    for key in LISTS[kind]:
        values = similarity.get(key)
        if not isinstance(values, list):
            raise UserError(f"{path}: similarity.{key}: expected a list of numbers")
        finite_array(values, f"{path}: similarity.{key}")
    return result


def _pooled(results: list[dict[str, Any]], key: str) -> dict[str, Any]:
    import numpy as np

    groups: dict[str, list[float]] = defaultdict(list)
    for r in results:
        groups[r["method"]].extend(r["similarity"][key])
    return {m: np.asarray(v) for m, v in groups.items()}


def run(args: argparse.Namespace) -> int:
    import matplotlib.pyplot as plt

    if args.kind == "training_curves":
        curves: dict[str, list[Any]] = defaultdict(list)
        for folder in args.inputs:
            curve = read_curve(folder)
            curves[curve.method].append(curve)
        fig = figures.curves_figure(curves, args.title, args.baseline)
    else:
        results = [_load(p, args.kind) for p in args.inputs]
        n = results[0]["similarity"]["n_sentences"]
        if args.kind == "soft_negatives":
            panels = [
                (
                    f"(a) sentence vs. its negation ({n} STS sentences)",
                    _pooled(results, "soft_negative"),
                ),
                (
                    "(b) sentence vs. a random other sentence",
                    _pooled(results, "random"),
                ),
            ]
            fig = figures.similarity_figure(panels, args.title, True, args.baseline)
        else:
            s = results[0]["settings"]
            panels = [
                (
                    f"STS pairs, gold ≥ {s['min_gold']:g}, {s['overlap']} overlap "
                    f"< {s['max_overlap']:g}",
                    _pooled(results, "hard_positive"),
                ),
            ]
            fig = figures.similarity_figure(panels, args.title, baseline=args.baseline)
    figures.save_figure(fig, args.png)
    figures.save_figure(fig, args.pdf)
    plt.close(fig)
    logger.info("%s -> %s, %s", args.kind, args.png, args.pdf)
    return 0
