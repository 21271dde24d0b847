"""``negcse probe``: OssCSE's Appendix B probe, anchor vs paraphrases and vs negations."""

from __future__ import annotations

import argparse
import logging

from negcse.io_utils import write_json
from negcse.model_cli import add_model_arguments, header, load_encoder
from negcse.probe import load_probe, run_probe

NAME = "probe"
HELP = "mean cosine of OssCSE's Appendix B sentence to its 8 paraphrases and 8 negations"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p)
    p.add_argument(
        "--probe",
        default=None,
        help="a JSON probe (anchor, paraphrases, negations); default: the built-in one",
    )


def run(args: argparse.Namespace) -> int:
    encoder = load_encoder(args)
    result = run_probe(load_probe(args.probe), lambda s: encoder.encode(s, args.batch_size))
    write_json(args.out, {**header(args), **result})
    summary = f"paraphrase={result['paraphrase']:.4f} negation={result['negation']:.4f}"
    logger.info("%s", summary)
    print(summary)
    return 0
