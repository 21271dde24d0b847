"""``negcse evaluate-mteb``: MTEB reranking (MAP, MRR@10) or classification (accuracy) x100.

Evaluation reads the MTEB datasets from the local Hugging Face cache only (never the network);
``--prefetch`` fills that cache on a networked machine and writes a manifest instead.
"""

from __future__ import annotations

import argparse
import logging
import os

from negcse.model_cli import add_model_arguments

NAME = "evaluate-mteb"
HELP = (
    "MTEB reranking (MAP, MRR@10) or classification (accuracy) x100 for a model, through the "
    "mteb library; --prefetch downloads the datasets (networked machine)"
)
GROUPS = ("reranking", "classification")
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p, model_required=False)  # --model: not with --prefetch
    p.add_argument("--group", required=True, choices=GROUPS)
    p.add_argument("--tasks", nargs="+", default=None, help="a subset of the group's tasks")
    p.add_argument(
        "--prefetch",
        action="store_true",
        help="download the group's datasets into the Hugging Face cache ($HF_HOME) and write "
        "a manifest to --out; needs network, no model",
    )


def run(args: argparse.Namespace) -> int:
    if not args.prefetch:
        # Evaluation never downloads data (set before `datasets` is imported).
        os.environ["HF_DATASETS_OFFLINE"] = "1"
    from negcse.io_utils import write_json
    from negcse.mteb_eval import MTEB_VERSION, MtebDataMissing, prefetch, run_mteb

    try:
        if args.prefetch:
            rows = prefetch(args.group, args.tasks)
            write_json(args.out, {"group": args.group, "mteb_version": MTEB_VERSION, "tasks": rows})
            return 0
        if not args.model:
            raise SystemExit("error: --model is required (unless --prefetch)")
        from negcse.model import torch_threads
        from negcse.model_cli import saved_pooler

        torch_threads(args.threads)
        if args.pooler == "auto":
            args.pooler = saved_pooler(args.model)
        result = run_mteb(
            args.model,
            args.pooler,
            args.tasks,
            args.out,
            group=args.group,
            batch_size=args.batch_size,
            mirror=args.mirror,
            tags=dict(t.partition("=")[::2] for t in args.tag),
            progress=True,
        )
    except MtebDataMissing as exc:
        raise SystemExit(f"error: {exc}") from exc
    summary = "  ".join(
        f"{task}:" + ",".join(f"{m}={v:.2f}" for m, v in result[task].items())
        for task in [*result["metric_keys"], "avg"]
    )
    logger.info("%s", summary)
    print(summary)
    return 0
