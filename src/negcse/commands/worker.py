"""``negcse worker --socket PATH``: a warm worker that runs ``python -m negcse`` commands.

It imports torch, transformers, pandas, matplotlib, scikit-learn, scipy and the workflow's
command modules once, then forks a child per command a client sends (``python -m negcse ...``
with ``$NEGCSE_WORKER=PATH``), so a job pays no import time; ``negcse.runtime.worker`` has the
protocol. The smoke profile starts one for its run (``runtime.worker`` in
``tests/smoke/config.yaml``; the Snakefile's ``onstart``).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from negcse.errors import UserError
from negcse.runtime import worker

NAME = "worker"
HELP = "serve python -m negcse commands from one warm process (the smoke profile starts it)"

#: what the workflow's commands import, in order (no torch op runs: the children fork safely)
PRELOAD = (
    "numpy",
    "pandas",
    "scipy.stats",
    "sklearn.linear_model",
    "sklearn.model_selection",
    "torch",
    "torch.utils.serialization",
    "transformers",
    "transformers.models.auto.modeling_auto",
    "transformers.models.auto.tokenization_auto",
    "transformers.models.bert.modeling_bert",
    "transformers.models.bert.tokenization_bert_fast",
    "safetensors.torch",
    "matplotlib",
    "matplotlib.pyplot",
    "negcse.cli",
    "negcse.commands.train",
    "negcse.commands.evaluate",
    "negcse.commands.table",
    "negcse.training.trainer",
    *(
        f"negcse.methods.{m}"
        for m in ("simcse", "sncse", "una", "osscse", "san", "rankcse", "gcse")
    ),
    *(f"negcse.losses.{m}" for m in ("gcse", "rank_distillation", "ranking")),
    *(
        f"negcse.generators.specs.{m}"
        for m in ("gcse", "negation", "osscse_paraphrase", "paraphrase", "san", "una")
    ),
    *(
        f"negcse.evaluation.{m}"
        for m in (
            "sts",
            "splits",
            "probe",
            "transfer",
            "transfer_classifier",
            "embedder",
            "analysis",
        )
    ),
    "negcse.analysis.run",
    "negcse.text.mer",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--socket", required=True, help="the Unix socket to listen on")


#: the longest path a Unix socket may have on Linux (sun_path: 108 bytes, the last one NUL)
MAX_SOCKET_BYTES = 107


def run(args: argparse.Namespace) -> int:
    folder = Path(args.socket).parent
    if not folder.is_dir():
        raise UserError(f"--socket {args.socket}: its folder {folder} does not exist")
    if len(os.fsencode(args.socket)) > MAX_SOCKET_BYTES:
        raise UserError(
            f"--socket {args.socket}: a Unix socket's path is at most {MAX_SOCKET_BYTES} bytes"
        )
    return worker.serve(args.socket, "negcse", PRELOAD)
