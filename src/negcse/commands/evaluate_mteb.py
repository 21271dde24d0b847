"""``negcse evaluate-mteb``: MTEB reranking (MAP, MRR@10) or classification (accuracy) x100.

Evaluation reads the MTEB datasets from the local Hugging Face cache only (never the network);
``--prefetch`` fills that cache on a networked machine and writes a manifest instead.
"""

from __future__ import annotations

import argparse
import logging
import os

from negcse.poolers import POOLERS

NAME = "evaluate-mteb"
HELP = (
    "MTEB reranking (MAP, MRR@10) or classification (accuracy) x100 for a model, through the "
    "mteb library; --prefetch downloads the datasets (networked machine)"
)
GROUPS = ("reranking", "classification")
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help="trained folder, mirror name or hub id (not with --prefetch)")
    p.add_argument(
        "--pooler",
        default="auto",
        help=f"one of {sorted(POOLERS)}, or auto: the one saved in negcse.json "
        "(cls_before_pooler when there is none)",
    )
    p.add_argument("--group", required=True, choices=GROUPS)
    p.add_argument("--tasks", nargs="+", default=None, help="a subset of the group's tasks")
    p.add_argument("--out", required=True, help="JSON file to write")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--mirror", default=None, help="mirror folder (default: $NEGCSE_MIRROR)")
    p.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="recorded in the output (e.g. method, backbone, seed)",
    )
    p.add_argument("--threads", type=int, default=None)
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
        from negcse.commands.evaluate_sts import saved_pooler
        from negcse.model import torch_threads

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
