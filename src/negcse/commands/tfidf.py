"""``negcse tfidf``: UNA's TF-IDF table (df, idf, max TF-IDF and rank of every term)."""

from __future__ import annotations

import argparse
import logging
import time
from typing import TYPE_CHECKING

from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    import negcse.generators.tfidf as tfidf
else:  # imported when run() uses them, not for --help (negcse.runtime.lazy)
    tfidf = LazyModule("negcse.generators.tfidf")

NAME = "tfidf"
HELP = "fit UNA's TF-IDF table on one or more corpora (one sentence per line) and write a TSV"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--input",
        required=True,
        nargs="+",
        help="corpus file(s), one sentence per line; several files form one corpus",
    )
    p.add_argument("--out", "--output", dest="output", required=True, help="TSV table to write")
    p.add_argument("--chunk-size", type=int, default=50_000, help="lines per sparse count matrix")


def run(args: argparse.Namespace) -> int:
    if args.chunk_size < 1:
        raise ValueError(f"--chunk-size must be >= 1, got {args.chunk_size}")
    start = time.perf_counter()
    table = tfidf.fit_tfidf_files(args.input, chunk_size=args.chunk_size, progress=True)
    tfidf.write_tfidf_table(table, args.output)
    logger.info(
        "wrote %s: %d terms in %.1f s", args.output, len(table), time.perf_counter() - start
    )
    return 0
