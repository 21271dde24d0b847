"""``negcse evaluate-sts``: STS12-16, STS-B and SICK-R for any model and pooler."""

from __future__ import annotations

import argparse
import logging

from negcse.evaluate_sts import evaluate_sts
from negcse.io_utils import write_json
from negcse.model_cli import add_model_arguments, header, load_encoder
from negcse.sts_data import PROTOCOLS, STS_TASKS

NAME = "evaluate-sts"
HELP = "Spearman x100 on STS12-16, STS-B test and SICK-R test for a model (path or hub id)"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p)
    p.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="senteval",
        help="senteval: SimCSE's processed files (default); mteb: raw text as MTEB",
    )
    p.add_argument("--tasks", nargs="+", default=list(STS_TASKS), choices=STS_TASKS)


def run(args: argparse.Namespace) -> int:
    encoder = load_encoder(args)
    result = evaluate_sts(
        lambda s: encoder.encode(s, args.batch_size, progress=True),
        tasks=args.tasks,
        protocol=args.protocol,
        mirror=args.mirror,
    )
    result = {**header(args), **result}
    write_json(args.out, result)
    summary = "  ".join(f"{t}={result[t]:.2f}" for t in [*args.tasks, "avg"])
    logger.info("%s", summary)
    print(summary)
    return 0
