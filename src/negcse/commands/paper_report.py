"""``negcse paper-report``: one paper's page (its verdicts, STS rows, released checkpoints and
figures), or one page of a method of no paper (``--method``: its verdicts against its baseline,
its STS rows and its rows among the published rows of its backbones), from the built tables'
CSV twins."""

from __future__ import annotations

import argparse
import logging
import os

from negcse.commands.table import parse_baselines
from negcse.errors import UserError
from negcse.io_utils import atomic_open, check_writable
from negcse.tables.html import markdown_html
from negcse.tables.published import PAPERS
from negcse.tables.reports import method_page, paper_page

NAME = "paper-report"
HELP = "a paper's page (its claims' verdicts, STS rows, checkpoints, figures) or a method's"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    page = p.add_mutually_exclusive_group(required=True)
    page.add_argument("--paper", help="sncse, una, san-hince, gcse or osscse")
    page.add_argument("--method", help="a method of no paper (its own page)")
    p.add_argument("--methods", nargs="+", required=True, help="the grid's methods, in order")
    p.add_argument("--baselines", nargs="*", default=[], metavar="METHOD=BASELINE")
    p.add_argument(
        "--papers", nargs="*", default=[], metavar="METHOD=PAPER", help="each method's paper"
    )
    p.add_argument("--published", help="the published table's CSV (a method's page)")
    p.add_argument("--sts", required=True, help="the STS table's CSV")
    p.add_argument("--verdicts", required=True, help="the verdicts table's CSV")
    p.add_argument("--transfer-verdicts", help="the transfer verdicts table's CSV")
    p.add_argument("--checkpoints", required=True, help="the checkpoints table's CSV")
    p.add_argument("--figures", nargs="*", default=[], help="figure files to link")
    p.add_argument("--out", required=True, help="the page (Markdown)")
    p.add_argument("--html", help="its HTML twin (for the Snakemake report)")


def _csv(path: str, needed: tuple[str, ...]):
    import pandas as pd

    try:
        frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
    except (OSError, pd.errors.ParserError) as exc:
        raise UserError(f"{path}: {exc}") from None
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise UserError(f"{path}: no column {', '.join(missing)}")
    text = frame.select_dtypes(exclude="number").columns
    return frame.fillna({c: "" for c in text})  # an empty text cell, as the table wrote it


def run(args: argparse.Namespace) -> int:
    if args.paper is not None and args.paper not in PAPERS:
        raise UserError(f"--paper {args.paper!r}: known papers {', '.join(PAPERS)}")
    if args.method is not None and not args.published:
        raise UserError("--method needs --published (the published table's CSV)")
    check_writable(args.out, args.html)
    sts = _csv(args.sts, ("method", "backbone", "seeds", "avg_mean", "avg_std"))
    verdicts = _csv(args.verdicts, ("method", "verdict", "vs_baseline_ci"))
    checkpoints = _csv(args.checkpoints, ("method", "eval_gap", "training_gap"))
    transfer = None
    if args.transfer_verdicts:
        transfer = _csv(args.transfer_verdicts, ("method", "verdict", "vs_baseline_ci"))
    out_dir = os.path.dirname(os.path.abspath(args.out))
    baselines = parse_baselines(args.baselines)
    if args.method is not None:
        published = _csv(args.published, ("method", "backbone", "source", "avg_mean"))
        page = method_page(
            args.method, args.methods, baselines, sts, verdicts, published, args.figures,
            out_dir, transfer,
        )  # fmt: skip
    else:
        page = paper_page(
            args.paper, args.methods, baselines, parse_baselines(args.papers), sts, verdicts,
            checkpoints, args.figures, out_dir, transfer,
        )  # fmt: skip
    with atomic_open(args.out) as fh:
        fh.write(page)
    if args.html:
        with atomic_open(args.html) as fh:
            fh.write(markdown_html("#" + page, args.paper or args.method))  # title as "## "
    logger.info("%s page: %s", args.paper or args.method, args.out)
    return 0
