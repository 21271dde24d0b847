"""``negcse table-mteb``: the MTEB tables (LaTeX, CSV, Markdown) beside the papers' averages."""

from __future__ import annotations

import argparse
import logging

from negcse.mteb_table import build_mteb_tables

NAME = "table-mteb"
HELP = "build results/tables/mteb.{tex,csv,md} from evaluate-mteb JSON files (both groups)"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--evals", nargs="+", required=True, help="evaluate-mteb outputs")
    p.add_argument("--tex")
    p.add_argument("--csv")
    p.add_argument("--md")


def run(args: argparse.Namespace) -> int:
    summaries = build_mteb_tables(args.evals, args.tex, args.csv, args.md)
    for group, summary in summaries.items():
        logger.info("MTEB %s table: %d rows", group, len(summary))
    return 0
