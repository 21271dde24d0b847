"""``negcse table-splits``: Cont./Oppn. Spearman per method x backbone beside OssCSE Table 3."""

from __future__ import annotations

import argparse
import json
import logging

from negcse.evaluation.splits import TABLE2_DATASETS
from negcse.splits_tables import SPLIT_COLUMNS, SPLIT_PAPER, build_summary, write_tables

NAME = "table-splits"
HELP = "build results/tables/splits.{tex,csv,md} from evaluate-splits outputs"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--evals", nargs="+", required=True, help="evaluate-splits outputs")
    p.add_argument("--tex")
    p.add_argument("--csv")
    p.add_argument("--md")


def protocol_note(evals: list[str]) -> str:
    """A caption sentence when the evaluations used fewer datasets than Table 2's."""
    used: set[str] = set()
    for path in evals:
        with open(path, encoding="utf-8") as fh:
            used.update(json.load(fh)["datasets"])
    if used >= set(TABLE2_DATASETS):
        return ""
    names = ", ".join(d for d in TABLE2_DATASETS if d in used)
    return (
        f" REDUCED protocol: only {len(used & set(TABLE2_DATASETS))} of Table 2's 16 datasets "
        f"({names}), so the paper's numbers are not comparable."
    )


def run(args: argparse.Namespace) -> int:
    summary = build_summary(args.evals, SPLIT_COLUMNS, SPLIT_PAPER)
    caption = (
        "OssCSE's Cont./Oppn. splits: Spearman $\\times$100 of cosine similarity, "
        "split-size-weighted average over the 16 datasets of OssCSE Table 2 (Cont., Oppn.) and "
        "over every dataset whose median gold score is in [2, 3.5] (rule); mean $\\pm$ std over "
        "seeds. Paper: OssCSE Table 3 (simcse = SimCSE's released unsupervised BERT-base, "
        "simcse\\_sup = supervised); best of our means in bold." + protocol_note(args.evals)
    )
    write_tables(
        summary,
        SPLIT_COLUMNS,
        SPLIT_PAPER,
        "{:.2f}",
        args.tex,
        args.csv,
        args.md,
        caption,
        "tab:splits",
    )
    logger.info("splits table: %d rows", len(summary))
    return 0
