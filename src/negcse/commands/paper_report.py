"""``negcse paper-report``: one paper's page (its claims' verdicts and their forest plot, STS
rows, released checkpoints and figures), or one page of a method of no paper (``--method``: its
comparisons with its baseline, its STS rows and its rows among the published rows of its
backbones), from the built tables' CSV twins."""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from negcse.commands.plot_seeds import seed_rows
from negcse.commands.table import parse_baselines
from negcse.errors import UserError
from negcse.io_utils import check_writable, write_texts
from negcse.runtime.lazy import LazyModule
from negcse.tables.eval_files import read_csv
from negcse.tables.html import markdown_html
from negcse.tables.published import PAPERS
from negcse.tables.render import Column
from negcse.tables.reports import (
    CLAIM_COLUMNS,
    STS_COLUMNS,
    TITLES,
    forest_label,
    method_page,
    paper_page,
)
from negcse.tables.verdicts import CHECKPOINT_COLUMNS, paper_rows

if TYPE_CHECKING:
    import pandas as pd

    from negcse.analysis import figures
else:  # matplotlib: only where a forest plot is drawn
    figures = LazyModule("negcse.analysis.figures")

NAME = "paper-report"
HELP = "a paper's page (its claims' verdicts, STS rows, checkpoints, figures) or a method's"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    page = p.add_mutually_exclusive_group(required=True)
    page.add_argument("--paper", help="sncse, una, san-hince, gcse or osscse")
    page.add_argument("--method", help="a method of no paper (its own page)")
    p.add_argument("--methods", nargs="+", required=True, help="the grid's methods, in order")
    p.add_argument(
        "--baselines",
        nargs="*",
        default=[],
        metavar="METHOD=BASELINE",
        help="the method each one's paper compared it with",
    )
    p.add_argument(
        "--papers", nargs="*", default=[], metavar="METHOD=PAPER", help="each method's paper"
    )
    p.add_argument("--published", help="the published table's CSV (a method's page)")
    p.add_argument("--sts", required=True, help="the STS table's CSV")
    p.add_argument("--verdicts", required=True, help="the verdicts table's CSV")
    p.add_argument("--checkpoints", required=True, help="the checkpoints table's CSV")
    p.add_argument("--figures", nargs="*", default=[], help="figure PNGs to show (by kind)")
    p.add_argument("--out", required=True, help="the page (Markdown)")
    p.add_argument("--html", help="its HTML twin (for the Snakemake report)")
    p.add_argument("--forest", help="the claims' forest plot (.png; a .pdf twin beside it)")
    p.add_argument(
        "--seed-strip",
        help="the per-seed STS averages of the paper's methods and their baselines, a strip "
        "plot shown on the page (.png; a .pdf twin beside it)",
    )
    p.add_argument("--scale-note", default="", help="a reduced-scale grid's first line")


def _csv(path: str, needed: tuple[str, ...], columns: Sequence[Column] = ()):
    """A table's CSV twin with the ``needed`` columns, checked
    (:func:`negcse.tables.eval_files.read_csv`): those of ``columns`` (what the page prints)
    that it prints as numbers must be numbers."""
    numeric = []
    for column in columns:
        if column.numeric:
            numeric += [f"{column.key}_mean", f"{column.key}_std"] if column.kind == "mean" else [
                column.key]  # fmt: skip
    frame = read_csv(path, needed, numeric)
    text = frame.select_dtypes(exclude="number").columns
    return frame.fillna({c: "" for c in text})  # an empty text cell, as the table wrote it


def _forest(path: str, claims: pd.DataFrame, paper: str, scale_note: str) -> None:
    title = (
        f"{TITLES.get(paper, paper).split(':')[0]}: our difference (95% interval) and the paper's"
    )
    fig = figures.forest_figure(
        [forest_label(r) for r in claims.to_dict("records")],
        claims["vs_baseline"].to_numpy(float),
        claims["vs_baseline_low"].to_numpy(float),
        claims["vs_baseline_high"].to_numpy(float),
        claims["paper_delta"].to_numpy(float),
        list(claims["verdict_raw"]),
        f"{scale_note}\n{title}" if scale_note else title,
        list(claims["comparison"] != "paper"),
    )
    for suffix in (".png", ".pdf"):
        figures.save_figure(fig, os.path.splitext(path)[0] + suffix)


def _with_seed_strip(
    page: str, args: argparse.Namespace, sts: pd.DataFrame, baselines: dict[str, str], out_dir: str
) -> str:
    """Draw the paper's rows' per-seed STS averages (``avg_seed<n>`` of the STS CSV) and show
    the plot at the end of ``page``."""
    papers = parse_baselines(args.papers, "--papers")
    methods = {m for m in args.methods if papers.get(m) == args.paper}
    methods |= {baselines[m] for m in methods if m in baselines}
    labels, values = seed_rows(sts[sts["method"].isin(methods)], "avg", 1)
    title = "STS average: each seed (grey) and the mean (black)"
    fig = figures.seed_strip_figure(
        labels, values, "STS average (Spearman ×100)",
        f"{args.scale_note}\n{title}" if args.scale_note else title,
    )  # fmt: skip
    for suffix in (".png", ".pdf"):
        figures.save_figure(fig, os.path.splitext(args.seed_strip)[0] + suffix)
    link = os.path.relpath(os.path.abspath(args.seed_strip), out_dir)
    return f"{page.rstrip()}\n\n![Per-seed STS averages]({link})\n"


def run(args: argparse.Namespace) -> int:
    if args.paper is not None and args.paper not in PAPERS:
        raise UserError(f"--paper {args.paper!r}: known papers {', '.join(PAPERS)}")
    if args.method is not None and not args.published:
        raise UserError("--method needs --published (the published table's CSV)")
    if args.forest and not args.forest.endswith(".png"):
        raise UserError(f"--forest {args.forest!r}: the plot is a .png (its .pdf goes beside)")
    if args.forest and args.paper is None:
        raise UserError("--forest: a paper's page only (--paper)")
    check_writable(args.out, args.html, args.forest, args.seed_strip)
    sts = _csv(args.sts, ("method", "backbone", "seeds", "avg_mean", "avg_std"), STS_COLUMNS)
    verdicts = _csv(args.verdicts, ("method", "paper_name", "comparison", "verdict",
                                    "vs_baseline_ci"), CLAIM_COLUMNS)  # fmt: skip
    checkpoints = _csv(args.checkpoints, ("method", "eval_gap", "training_gap"),
                       CHECKPOINT_COLUMNS)  # fmt: skip
    out_dir = os.path.dirname(os.path.abspath(args.out))
    baselines = parse_baselines(args.baselines)
    if args.method is not None:
        published = _csv(args.published, ("method", "backbone", "source", "avg_mean"))
        page = method_page(
            args.method, args.methods, baselines, sts, verdicts, published, args.figures,
            out_dir, args.scale_note,
        )  # fmt: skip
    else:
        claims = paper_rows(verdicts, args.paper)
        if args.forest:
            _forest(args.forest, claims, args.paper, args.scale_note)
        page = paper_page(
            args.paper, args.methods, baselines, parse_baselines(args.papers, "--papers"), sts, verdicts,
            checkpoints, args.figures, out_dir,
            os.path.abspath(args.forest) if args.forest else None, args.scale_note,
        )  # fmt: skip
    if args.seed_strip and args.paper is not None:
        page = _with_seed_strip(page, args, sts, baselines, out_dir)
    out = {args.out: page}
    if args.html:
        out[args.html] = markdown_html(page, args.paper or args.method)
    write_texts(out)  # the page and its twin together
    logger.info("%s page: %s", args.paper or args.method, args.out)
    return 0
