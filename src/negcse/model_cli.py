"""Command-line options every model evaluation shares (``evaluate-sts``, ``evaluate-transfer``,
``evaluate-splits``, ``probe``, ``analyze-model``) and what they resolve to."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from negcse.poolers import POOLERS

if TYPE_CHECKING:
    from negcse.encoder import Encoder


def add_model_arguments(
    p: argparse.ArgumentParser, pooler: str = "auto", model_required: bool = True
) -> None:
    """--model, --pooler, --out, --batch-size, --mirror, --tag (repeatable), --threads."""
    p.add_argument(
        "--model", required=model_required, help="trained folder, mirror name or hub id"
    )
    p.add_argument(
        "--pooler",
        default=pooler,
        help=f"one of {sorted(POOLERS)}, or auto: the one saved in negcse.json "
        f"(cls_before_pooler when there is none); default: {pooler}",
    )
    p.add_argument("--out", required=True, help="JSON file to write")
    p.add_argument("--batch-size", type=int, default=128, help="encoding batch size")
    p.add_argument("--mirror", default=None, help="mirror folder (default: $NEGCSE_MIRROR)")
    p.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="recorded in the output (e.g. method, backbone, seed)",
    )
    p.add_argument("--threads", type=int, default=None, help="torch threads")


def saved_pooler(model: str) -> str:
    """The evaluation pooler a trained folder saved (negcse.json); cls_before_pooler otherwise."""
    meta = Path(model) / "negcse.json"
    if meta.is_file():
        return str(json.loads(meta.read_text())["eval_pooler"])
    return "cls_before_pooler"


def load_encoder(args: argparse.Namespace) -> Encoder:
    """Set the thread count, resolve ``--pooler auto`` (in ``args``) and load the model."""
    from negcse.encoder import Encoder
    from negcse.model import torch_threads

    torch_threads(args.threads)
    if args.pooler == "auto":
        args.pooler = saved_pooler(args.model)
    return Encoder.load(args.model, args.pooler, mirror=args.mirror)


def tags(args: argparse.Namespace) -> dict[str, str]:
    return dict(t.partition("=")[::2] for t in args.tag)


def header(args: argparse.Namespace) -> dict[str, str]:
    """What every evaluation JSON starts with: the tags, the model and the pooler used."""
    return {**tags(args), "model": args.model, "pooler": args.pooler}
