"""``negcse evaluate-sts``: STS12-16, STS-B and SICK-R for any model and pooler."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from negcse.encoder import Encoder
from negcse.evaluate_sts import evaluate_sts
from negcse.io_utils import write_json
from negcse.model import torch_threads
from negcse.poolers import POOLERS
from negcse.sts_data import PROTOCOLS, STS_TASKS

NAME = "evaluate-sts"
HELP = "Spearman x100 on STS12-16, STS-B test and SICK-R test for a model (path or hub id)"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, help="trained folder, mirror name or hub id")
    p.add_argument(
        "--pooler",
        default="auto",
        help=f"one of {sorted(POOLERS)}, or auto: the one saved in negcse.json "
        "(cls_before_pooler when there is none)",
    )
    p.add_argument("--out", required=True, help="JSON file to write")
    p.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="senteval",
        help="senteval: SimCSE's processed files (default); mteb: raw text as MTEB",
    )
    p.add_argument("--tasks", nargs="+", default=list(STS_TASKS), choices=STS_TASKS)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--mirror", default=None, help="mirror folder (default: $NEGCSE_MIRROR)")
    p.add_argument("--tag", action="append", default=[], metavar="KEY=VALUE",
                   help="recorded in the output (e.g. method, backbone, seed)")
    p.add_argument("--threads", type=int, default=None)


def saved_pooler(model: str) -> str:
    meta = Path(model) / "negcse.json"
    if meta.is_file():
        return str(json.loads(meta.read_text())["eval_pooler"])
    return "cls_before_pooler"


def run(args: argparse.Namespace) -> int:
    torch_threads(args.threads)
    if args.pooler == "auto":
        args.pooler = saved_pooler(args.model)
    encoder = Encoder.load(args.model, args.pooler, mirror=args.mirror)
    result = evaluate_sts(
        lambda s: encoder.encode(s, args.batch_size, progress=True),
        tasks=args.tasks,
        protocol=args.protocol,
        mirror=args.mirror,
    )
    tags = dict(t.partition("=")[::2] for t in args.tag)
    result = {**tags, "model": args.model, "pooler": args.pooler, **result}
    write_json(args.out, result)
    summary = "  ".join(f"{t}={result[t]:.2f}" for t in [*args.tasks, "avg"])
    logger.info("%s", summary)
    print(summary)
    return 0
