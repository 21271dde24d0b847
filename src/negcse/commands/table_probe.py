"""``negcse table-probe``: Appendix B probe means per method x backbone beside OssCSE's."""

from __future__ import annotations

import argparse
import logging

from negcse.splits_tables import PROBE_COLUMNS, PROBE_PAPER, build_summary, write_tables

NAME = "table-probe"
HELP = "build results/tables/probe.{tex,csv,md} from probe outputs"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--evals", nargs="+", required=True, help="probe outputs")
    p.add_argument("--tex")
    p.add_argument("--csv")
    p.add_argument("--md")


def run(args: argparse.Namespace) -> int:
    summary = build_summary(args.evals, PROBE_COLUMNS, PROBE_PAPER)
    caption = (
        "OssCSE's Appendix B probe: mean cosine similarity of the sentence to its eight "
        "paraphrases and to its eight negations, Gap = paraphrase $-$ negation (positive: "
        "paraphrases closer), mean $\\pm$ std over seeds. Paper: OssCSE Section 5.2 "
        "(BERT-base). Bold: highest paraphrase and gap, lowest negation among our rows."
    )
    write_tables(
        summary,
        PROBE_COLUMNS,
        PROBE_PAPER,
        "{:.3f}",
        args.tex,
        args.csv,
        args.md,
        caption,
        "tab:probe",
    )
    logger.info("probe table: %d rows", len(summary))
    return 0
