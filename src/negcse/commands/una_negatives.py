"""``negcse una-negatives``: one UNA hard negative per corpus line, aligned line by line."""

from __future__ import annotations

import argparse
import logging
import time

from negcse.generators.tfidf import iter_corpus_lines
from negcse.generators.una import (
    DEFAULT_CHUNK,
    REPLACE_MODES,
    SCORE_MODES,
    SELECT_MODES,
    UnaGenerator,
    UnaParams,
    UnaStats,
)
from negcse.io_utils import atomic_open

NAME = "una-negatives"
HELP = "UNA TF-IDF hard negatives for a corpus (lowercased, tokenized, one per line)"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", required=True, help="one sentence per line")
    p.add_argument("--tfidf", required=True, help="table from `negcse tfidf`")
    p.add_argument("--output", required=True, help="negatives, aligned with --corpus")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--beta", type=float, default=0.5, help="augmentation magnitude (mean p)")
    p.add_argument("--window", type=int, default=4000, help="rank radius r of the replacement")
    p.add_argument("--select", choices=SELECT_MODES, default="tfidf", help="random: ablation")
    p.add_argument("--replace", choices=REPLACE_MODES, default="window", help="random: ablation")
    p.add_argument(
        "--scores",
        choices=SCORE_MODES,
        default="sentence",
        help="z_i: the sentence's TF-IDF (paper, released code) or the global max TF-IDF",
    )
    p.add_argument(
        "--chunk-size",
        type=int,
        default=DEFAULT_CHUNK,
        help="sentences per random stream; part of what fixes the output",
    )


def run(args: argparse.Namespace) -> int:
    params = UnaParams(
        beta=args.beta,
        window=args.window,
        select=args.select,
        replace=args.replace,
        scores=args.scores,
    )
    start = time.perf_counter()
    generator = UnaGenerator.from_table(args.tfidf)
    logger.info("loaded %d terms in %.1f s", len(generator.table), time.perf_counter() - start)
    stats = UnaStats()
    lines = iter_corpus_lines(args.corpus)
    with atomic_open(args.output) as fh:
        for negative in generator.iter_generate(
            lines, args.seed, params, chunk_size=args.chunk_size, stats=stats, progress=True
        ):
            fh.write(negative + "\n")
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
