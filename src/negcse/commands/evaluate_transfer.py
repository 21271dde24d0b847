"""``negcse evaluate-transfer``: SentEval transfer tasks (MR ... MRPC) for any model and pooler."""

from __future__ import annotations

import argparse
import logging

from negcse.evaluate_transfer import CLASSIFIERS, evaluate_transfer
from negcse.io_utils import write_json
from negcse.model_cli import add_model_arguments, at_least, header, load_encoder
from negcse.transfer_data import TRANSFER_TASKS

NAME = "evaluate-transfer"
HELP = "SentEval transfer accuracy x100 (MR, CR, SUBJ, MPQA, SST2, TREC, MRPC) for a model"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p, pooler="cls_before_pooler")
    p.add_argument("--tasks", nargs="+", default=list(TRANSFER_TASKS), choices=TRANSFER_TASKS)
    p.add_argument(
        "--classifier",
        choices=CLASSIFIERS,
        default="sentevalish",
        help="sentevalish: SentEval's PyTorch logistic regression, reproduced (default); "
        "sklearn: SentEval's scikit-learn branch",
    )
    p.add_argument("--seed", type=int, default=1111, help="SentEval's seed (default 1111)")
    p.add_argument("--kfold", type=at_least(2), default=10, help="folds (SimCSE's test mode: 10)")


def run(args: argparse.Namespace) -> int:
    encoder = load_encoder(args)
    result = evaluate_transfer(
        lambda s: encoder.encode(s, args.batch_size, progress=True),
        tasks=args.tasks,
        mirror=args.mirror,
        seed=args.seed,
        classifier=args.classifier,
        kfold=args.kfold,
    )
    result["senteval_seed"] = result.pop("seed")  # "seed" is the training run's (a --tag)
    result = {**header(args), **result}
    write_json(args.out, result)
    keys = [*args.tasks, *(["MRPC_f1"] if "MRPC" in args.tasks else []), "avg"]
    summary = "  ".join(f"{k}={result[k]:.2f}" for k in keys)
    logger.info("%s", summary)
    print(summary)
    return 0
