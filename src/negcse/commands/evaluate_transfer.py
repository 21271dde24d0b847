"""``negcse evaluate-transfer``: SentEval transfer tasks (MR ... MRPC) for any model and pooler."""

from __future__ import annotations

import argparse
import logging

from negcse.commands.evaluate_sts import saved_pooler
from negcse.encoder import Encoder
from negcse.evaluate_transfer import CLASSIFIERS, evaluate_transfer
from negcse.io_utils import write_json
from negcse.model import torch_threads
from negcse.poolers import POOLERS
from negcse.transfer_data import TRANSFER_TASKS

NAME = "evaluate-transfer"
HELP = "SentEval transfer accuracy x100 (MR, CR, SUBJ, MPQA, SST2, TREC, MRPC) for a model"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, help="trained folder, mirror name or hub id")
    p.add_argument(
        "--pooler",
        default="cls_before_pooler",
        help=f"one of {sorted(POOLERS)}, or auto: the one saved in negcse.json "
        "(cls_before_pooler when there is none)",
    )
    p.add_argument("--out", required=True, help="JSON file to write")
    p.add_argument("--tasks", nargs="+", default=list(TRANSFER_TASKS), choices=TRANSFER_TASKS)
    p.add_argument("--batch-size", type=int, default=128, help="encoding batch size")
    p.add_argument("--mirror", default=None, help="mirror folder (default: $NEGCSE_MIRROR)")
    p.add_argument(
        "--classifier",
        choices=CLASSIFIERS,
        default="sentevalish",
        help="sentevalish: SentEval's PyTorch logistic regression, reproduced (default); "
        "sklearn: SentEval's scikit-learn branch",
    )
    p.add_argument("--seed", type=int, default=1111, help="SentEval's seed (default 1111)")
    p.add_argument("--kfold", type=int, default=10, help="folds (SimCSE's test mode: 10)")
    p.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="recorded in the output (e.g. method, backbone, seed)",
    )
    p.add_argument("--threads", type=int, default=None)


def run(args: argparse.Namespace) -> int:
    torch_threads(args.threads)
    if args.pooler == "auto":
        args.pooler = saved_pooler(args.model)
    encoder = Encoder.load(args.model, args.pooler, mirror=args.mirror)
    result = evaluate_transfer(
        lambda s: encoder.encode(s, args.batch_size, progress=True),
        tasks=args.tasks,
        mirror=args.mirror,
        seed=args.seed,
        classifier=args.classifier,
        kfold=args.kfold,
    )
    tags = dict(t.partition("=")[::2] for t in args.tag)
    result["senteval_seed"] = result.pop("seed")  # "seed" is the training run's (a --tag)
    result = {**tags, "model": args.model, "pooler": args.pooler, **result}
    write_json(args.out, result)
    keys = [*args.tasks, *(["MRPC_f1"] if "MRPC" in args.tasks else []), "avg"]
    summary = "  ".join(f"{k}={result[k]:.2f}" for k in keys)
    logger.info("%s", summary)
    print(summary)
    return 0
