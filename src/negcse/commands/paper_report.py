"""``negcse paper-report``: one paper's page (its verdicts, STS rows, released checkpoints and
figures) from the built tables' CSV twins."""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Sequence

from negcse.commands.table import parse_baselines
from negcse.errors import UserError
from negcse.io_utils import check_writable, write_texts
from negcse.tables.eval_files import read_csv
from negcse.tables.html import markdown_html
from negcse.tables.published import PAPERS
from negcse.tables.render import Column
from negcse.tables.reports import CLAIM_COLUMNS, STS_COLUMNS, paper_page
from negcse.tables.verdicts import CHECKPOINT_COLUMNS

NAME = "paper-report"
HELP = "one paper's page: its claims' verdicts, STS rows, released checkpoints, figures"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--paper", required=True, help="sncse, una, san-hince, gcse or osscse")
    p.add_argument("--methods", nargs="+", required=True, help="the grid's methods, in order")
    p.add_argument("--baselines", nargs="*", default=[], metavar="METHOD=BASELINE")
    p.add_argument("--sts", required=True, help="the STS table's CSV")
    p.add_argument("--verdicts", required=True, help="the verdicts table's CSV")
    p.add_argument("--transfer-verdicts", help="the transfer verdicts table's CSV")
    p.add_argument("--checkpoints", required=True, help="the checkpoints table's CSV")
    p.add_argument("--figures", nargs="*", default=[], help="figure files to link")
    p.add_argument("--out", required=True, help="the page (Markdown)")
    p.add_argument("--html", help="its HTML twin (for the Snakemake report)")


def _csv(path: str, needed: tuple[str, ...], columns: Sequence[Column] = ()):
    """A table's CSV twin with the ``needed`` columns and those the page prints (``columns``),
    checked (:func:`negcse.tables.eval_files.read_csv`): those printed as numbers must be."""
    keys, numeric = list(needed), []
    for column in columns:
        names = [f"{column.key}_mean", f"{column.key}_std"] if column.kind == "mean" else [column.key]
        keys += names
        numeric += names if column.kind != "text" else []
    frame = read_csv(path, list(dict.fromkeys(keys)), numeric)
    text = frame.select_dtypes(exclude="number").columns
    return frame.fillna({c: "" for c in text})  # an empty text cell, as the table wrote it


def run(args: argparse.Namespace) -> int:
    if args.paper not in PAPERS:
        raise UserError(f"--paper {args.paper!r}: known papers {', '.join(PAPERS)}")
    check_writable(args.out, args.html)
    sts = _csv(args.sts, ("method", "backbone"), STS_COLUMNS)
    verdicts = _csv(args.verdicts, ("method", "backbone", "verdict"), CLAIM_COLUMNS)
    checkpoints = _csv(args.checkpoints, ("method", "backbone"), CHECKPOINT_COLUMNS)
    transfer = None
    if args.transfer_verdicts:
        transfer = _csv(args.transfer_verdicts, ("method", "backbone", "verdict"), CLAIM_COLUMNS)
    page = paper_page(
        args.paper,
        args.methods,
        parse_baselines(args.baselines),
        sts,
        verdicts,
        checkpoints,
        args.figures,
        os.path.dirname(os.path.abspath(args.out)),
        transfer,
    )
    out = {args.out: page}
    if args.html:
        out[args.html] = markdown_html("#" + page, args.paper)  # the title as a "## " heading
    write_texts(out)  # the page and its twin together
    logger.info("%s page: %s", args.paper, args.out)
    return 0
