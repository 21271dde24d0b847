"""``negcse una-negatives``: one UNA hard negative per corpus line, aligned line by line."""

from __future__ import annotations

import argparse
import logging
import time

from negcse.errors import UserError
from negcse.finite import seed_number
from negcse.generators.settings import add_options, from_args
from negcse.generators.specs.una import UnaSettings
from negcse.generators.tfidf import iter_corpus_lines
from negcse.generators.una import UnaGenerator, UnaStats
from negcse.io_utils import atomic_open

NAME = "una-negatives"
HELP = "UNA TF-IDF hard negatives for a corpus (lowercased, tokenized, one per line)"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", required=True, help="one sentence per line")
    p.add_argument("--tfidf", required=True, help="table from `negcse tfidf`")
    p.add_argument(
        "--out", "--output", dest="output", required=True, help="negatives, aligned with --corpus"
    )
    p.add_argument("--seed", type=seed_number, required=True, help="seed of the random choices")
    add_options(p, UnaSettings)  # --beta, --window, --select, --replace, --scores, --chunk-size


def run(args: argparse.Namespace) -> int:
    params = from_args(args, UnaSettings)
    start = time.perf_counter()
    generator = UnaGenerator.from_table(args.tfidf)
    logger.info("loaded %d terms in %.1f s", len(generator.table), time.perf_counter() - start)
    stats = UnaStats()
    lines = iter_corpus_lines(args.corpus)
    with atomic_open(args.output) as fh:
        for negative in generator.iter_generate(
            lines, args.seed, params, stats=stats, progress=True
        ):
            fh.write(negative + "\n")
        if not stats.sentences:  # inside the write: nothing is left behind
            raise UserError(f"{args.corpus}: empty file (one sentence per line expected)")
    logger.info(
        "wrote %s: %d negatives (%d empty lines, %d without known terms), %d of %d tokens "
        "replaced, %d unknown, %.1f s",
        args.output,
        stats.sentences,
        stats.empty,
        stats.unchanged,
        stats.replaced,
        stats.tokens,
        stats.unknown_tokens,
        time.perf_counter() - start,
    )
    if stats.unknown_tokens:
        logger.warning(
            "%d tokens are not in %s (was it fit on this corpus?); they were kept as they are",
            stats.unknown_tokens,
            args.tfidf,
        )
    return 0
