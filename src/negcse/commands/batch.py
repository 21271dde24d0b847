"""``negcse batch``: several commands in one process, separated by ``::``.

    python -m negcse batch evaluate-sts --model M --out a.json :: evaluate-splits --model M ...

Each part is an ordinary command line, run in order. They share one process, so torch and
transformers are imported once, each model is loaded once and each sentence is encoded once
(``negcse.encoder.shared_encoders``): the evaluations of one trained model cost one model load
and one pass over the STS sentences instead of one per evaluation. The first failing part stops
the batch with its exit status; Snakemake then removes every output of the job.
"""

from __future__ import annotations

import argparse
import logging

NAME = "batch"
HELP = "run several commands (separated by '::') in one process, sharing loaded models"
SEPARATOR = "::"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "parts",
        nargs=argparse.REMAINDER,
        metavar="COMMAND ...",
        help=f"command lines separated by '{SEPARATOR}'",
    )


def split_parts(words: list[str]) -> list[list[str]]:
    """``a x :: b y`` -> ``[[a, x], [b, y]]``; an empty part or a nested batch is an error."""
    parts: list[list[str]] = [[]]
    for word in words:
        if word == SEPARATOR:
            parts.append([])
        else:
            parts[-1].append(word)
    for i, part in enumerate(parts, 1):
        if not part:
            raise SystemExit(f"negcse batch: part {i} is empty (two '{SEPARATOR}' in a row?)")
        if part[0] == NAME:
            raise SystemExit("negcse batch: a batch cannot contain another batch")
    return parts


def run(args: argparse.Namespace) -> int:
    from negcse.cli import check_outputs, main, parse
    from negcse.encoder import shared_encoders

    parts = split_parts(list(args.parts))
    for part in parts:  # every part's arguments and outputs, before the first part runs
        check_outputs(parse(part)[0])
    with shared_encoders():
        for i, part in enumerate(parts, 1):
            logger.info("batch part %d/%d: %s", i, len(parts), part[0])
            status = main(part)
            if status:
                logger.error("batch part %d (%s) exited with %d", i, part[0], status)
                return status
    return 0
