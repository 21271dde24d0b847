"""``negcse plot-seeds``: each model's per-seed scores from a table's CSV, as a strip plot."""

from __future__ import annotations

import argparse
import math
import os
import re
from typing import TYPE_CHECKING

from negcse.errors import UserError
from negcse.io_utils import check_writable
from negcse.runtime.lazy import LazyModule
from negcse.tables.eval_files import read_csv
from negcse.text.display import backbone_name, method_name

if TYPE_CHECKING:
    import pandas as pd

    from negcse.analysis import figures
else:  # matplotlib: imported when the command runs, not for --help
    figures = LazyModule("negcse.analysis.figures")

NAME = "plot-seeds"
HELP = "a strip plot of every model's per-seed scores (a table CSV's <key>_seed<n> columns)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--table", required=True, help="a table's CSV (e.g. results/tables/sts.csv)")
    p.add_argument("--key", default="avg", help="the score whose seeds to plot (default: avg)")
    p.add_argument("--out", required=True, help="the plot (.png; a .pdf twin beside it)")
    p.add_argument("--min-seeds", type=int, default=2, help="rows with fewer seeds are left out")
    p.add_argument("--title", default="", help="the figure's title (default: none)")
    p.add_argument("--scale-note", default="", help="a reduced-scale grid's first line")


def seed_rows(frame: pd.DataFrame, key: str, min_seeds: int) -> tuple[list[str], list[list[float]]]:
    """(label, the row's seed scores) of each row with at least ``min_seeds`` of them."""
    pattern = re.compile(rf"^{re.escape(key)}_seed(.+)$")
    columns = [c for c in frame.columns if pattern.match(c)]
    labels, values = [], []
    for row in frame.to_dict("records"):
        scores = [float(row[c]) for c in columns if not math.isnan(float(row[c]))]
        if len(scores) >= min_seeds:
            labels.append(f"{method_name(row['method'])}, {backbone_name(row['backbone'])}")
            values.append(scores)
    return labels, values


def run(args: argparse.Namespace) -> int:
    if not args.out.endswith(".png"):
        raise UserError(f"--out {args.out!r}: the plot is a .png (its .pdf goes beside)")
    check_writable(args.out)
    frame = read_csv(args.table, ("method", "backbone"))
    numeric = [c for c in frame.columns if c.startswith(f"{args.key}_seed")]
    frame = read_csv(args.table, ("method", "backbone"), numeric)
    if not numeric:
        raise UserError(f"{args.table}: no {args.key}_seed<n> column (per-seed scores)")
    labels, values = seed_rows(frame, args.key, args.min_seeds)
    title = args.title or f"{args.key}: each seed (grey) and the mean (black)"
    fig = figures.seed_strip_figure(
        labels, values, f"{args.key} (score ×100)",
        f"{args.scale_note}\n{title}" if args.scale_note else title,
    )  # fmt: skip
    for suffix in (".png", ".pdf"):
        figures.save_figure(fig, os.path.splitext(args.out)[0] + suffix)
    return 0
