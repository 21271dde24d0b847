"""``negcse prepare-corpus``: the training corpus, screened for bad lines."""

from __future__ import annotations

import argparse
import logging

from negcse.data.corpus import read_corpus
from negcse.data.sources import resolve_data
from negcse.io_utils import write_json, write_lines

NAME = "prepare-corpus"
HELP = "screen a one-sentence-per-line corpus (registered file or path) and write the kept lines"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--source", help="registered data file (resources/datasets.tsv)")
    src.add_argument("--input", help="any local file")
    p.add_argument("--out", required=True, help="the kept lines, one sentence per line")
    p.add_argument("--stats", help="JSON with counts of kept and skipped lines")
    p.add_argument("--max-sentences", type=int, default=0, help="keep at most N (0: all)")
    p.add_argument("--max-chars", type=int, default=2000, help="a longer line is bad")
    p.add_argument(
        "--on-bad-line",
        choices=("skip", "fail"),
        default="skip",
        help="skip: drop bad lines (empty, not UTF-8, too long) and count them; fail: stop at one",
    )
    p.add_argument("--mirror", default=None)


def run(args: argparse.Namespace) -> int:
    path = resolve_data(args.source, args.mirror) if args.source else args.input
    sentences, stats = read_corpus(path, args.max_sentences or None, args.max_chars, args.on_bad_line)
    write_lines(args.out, sentences)
    if args.stats:
        write_json(args.stats, {"source": str(path), **stats.to_dict()})
    logger.info("%s: kept %d of %d lines", path, stats.kept, stats.lines_read)
    return 0
