"""``negcse table-sts``: the STS table (LaTeX, CSV, Markdown) beside the papers' averages."""

from __future__ import annotations

import argparse
import logging

from negcse.published import TASKS, published_avg
from negcse.tables import add_baseline_delta, collect, summarize, write_metrics, write_table

NAME = "table-sts"
HELP = "build results/tables/sts.{tex,csv,md} from STS evaluation JSON files"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--evals", nargs="+", required=True, help="evaluate-sts outputs")
    p.add_argument("--tex")
    p.add_argument("--csv")
    p.add_argument("--md")
    p.add_argument("--metrics", help="DVC metrics JSON: the average per method/backbone")
    p.add_argument(
        "--baselines",
        nargs="*",
        default=[],
        metavar="METHOD=BASELINE",
        help="the method each one's paper compared it with (params.yaml methods.<m>.baseline)",
    )


def parse_baselines(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        method, sep, base = item.partition("=")
        if not sep or not method or not base:
            raise ValueError(f"--baselines: expected METHOD=BASELINE, got {item!r}")
        out[method] = base
    return out


def run(args: argparse.Namespace) -> int:
    keys = [*TASKS, "avg"]
    summary = summarize(collect(args.evals, keys), keys, paper_value=published_avg)
    summary = add_baseline_delta(summary, "avg", parse_baselines(args.baselines))
    caption = (
        "STS test sets, Spearman $\\times$100 of cosine similarity (SentEval ``all'' setting), "
        "mean $\\pm$ std over seeds; Paper: the published 7-task average; "
        "$\\Delta$ = ours $-$ paper; Baseline: the method the paper compared with "
        "(params.yaml), $\\Delta_{\\mathrm{base}}$ = our average $-$ its average on the same "
        "backbone (-- when it is not in the grid); best mean per column in bold."
    )
    write_table(summary, keys, args.tex, args.csv, args.md, caption, "tab:sts")
    if args.metrics:
        write_metrics(summary, "avg", args.metrics)
    logger.info("STS table: %d rows", len(summary))
    return 0
