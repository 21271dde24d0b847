"""``negcse table-sts``: the STS table (LaTeX, CSV, Markdown) beside the papers' averages."""

from __future__ import annotations

import argparse
import logging

from negcse.published import TASKS, published_avg
from negcse.tables import collect, summarize, write_metrics, write_table

NAME = "table-sts"
HELP = "build results/tables/sts.{tex,csv,md} from STS evaluation JSON files"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--evals", nargs="+", required=True, help="evaluate-sts outputs")
    p.add_argument("--tex")
    p.add_argument("--csv")
    p.add_argument("--md")
    p.add_argument("--metrics", help="DVC metrics JSON: the average per method/backbone")


def run(args: argparse.Namespace) -> int:
    keys = [*TASKS, "avg"]
    summary = summarize(collect(args.evals, keys), keys, paper_value=published_avg)
    caption = (
        "STS test sets, Spearman $\\times$100 of cosine similarity (SentEval ``all'' setting), "
        "mean $\\pm$ std over seeds; Paper: the published 7-task average; "
        "$\\Delta$ = ours $-$ paper; best mean per column in bold."
    )
    write_table(summary, keys, args.tex, args.csv, args.md, caption, "tab:sts")
    if args.metrics:
        write_metrics(summary, "avg", args.metrics)
    logger.info("STS table: %d rows", len(summary))
    return 0
