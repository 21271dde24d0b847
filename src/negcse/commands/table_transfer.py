"""``negcse table-transfer``: the transfer table (LaTeX, CSV, Markdown) beside the papers'."""

from __future__ import annotations

import argparse
import json
import logging

from negcse.published_transfer import TRANSFER_TASKS, published_transfer
from negcse.tables import collect, summarize, write_metrics, write_table

NAME = "table-transfer"
HELP = "build results/tables/transfer.{tex,csv,md} from evaluate-transfer JSON files"
logger = logging.getLogger(__name__)
F1_COLUMN = "MRPC-F1"  # the JSON's MRPC_f1, renamed: table headers are printed as they are


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--evals", nargs="+", required=True, help="evaluate-transfer outputs")
    p.add_argument("--tex")
    p.add_argument("--csv")
    p.add_argument("--md")
    p.add_argument("--metrics", help="DVC metrics JSON: the average per method/backbone")


def protocol_of(paths: list[str]) -> tuple[list[str], set[int]]:
    """Tasks evaluated (in SentEval's order; every file must have them) and the fold counts."""
    tasks: list[str] | None = None
    folds: set[int] = set()
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            result = json.load(fh)
        found = [t for t in TRANSFER_TASKS if t in result]
        if tasks is None:
            tasks = found
        elif found != tasks:
            raise SystemExit(f"{path}: tasks {found} differ from {tasks} of {paths[0]}")
        folds |= {d["kfold"] for d in result.get("details", {}).values() if d.get("kfold")}
    if not tasks:
        raise SystemExit(f"{paths[0]}: no transfer task scores (keys {', '.join(TRANSFER_TASKS)})")
    return tasks, folds


def run(args: argparse.Namespace) -> int:
    tasks, folds = protocol_of(args.evals)
    keys = [*tasks, *(["MRPC_f1"] if "MRPC" in tasks else []), "avg"]
    long = collect(args.evals, keys)
    long["metric"] = long["metric"].replace({"MRPC_f1": F1_COLUMN})
    keys = [F1_COLUMN if k == "MRPC_f1" else k for k in keys]
    summary = summarize(long, keys, paper_value=lambda m, b: published_transfer(m, b, tasks))
    full = sorted(tasks) == sorted(TRANSFER_TASKS) and folds <= {10}
    if full:
        protocol = "SentEval test mode (10-fold CV where a task has no split)"
    else:
        protocol = (
            f"REDUCED protocol (evaluation.transfer): tasks {', '.join(tasks)} only, "
            f"{'/'.join(str(k) for k in sorted(folds)) or '--'}-fold CV"
        )
        logger.warning("transfer table from a reduced protocol: %s", protocol)
    caption = (
        f"Transfer tasks, accuracy $\\times$100 of logistic regression on frozen embeddings "
        f"(MRPC also F1), {protocol}; mean $\\pm$ std over seeds. Avg.: mean accuracy over the "
        "tasks shown. Paper: the published average over the same tasks (GCSE Table 7, first LLM; "
        "OssCSE Table 5; GCSE Table 7's SimCSE/DiffCSE/PCL/RankCSE rows are STS numbers and are "
        "not used); $\\Delta$ = ours $-$ paper; best mean per column in bold."
    )
    write_table(summary, keys, args.tex, args.csv, args.md, caption, "tab:transfer")
    if args.metrics:
        write_metrics(summary, "avg", args.metrics)
    logger.info("transfer table: %d rows", len(summary))
    return 0
