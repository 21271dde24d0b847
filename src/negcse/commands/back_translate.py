"""``negcse back-translate``: each corpus line through a pivot language and back (OssCSE)."""

from __future__ import annotations

import argparse
import functools
import logging
import time
from typing import TYPE_CHECKING

from negcse.generators.settings import add_options
from negcse.generators.specs.osscse_paraphrase import WMT19_PIVOTS, OssCseParaphraseSettings
from negcse.io_utils import read_lines, write_json, write_lines
from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    import negcse.generators.backtranslation as backtranslation
    import negcse.training.model as model_lib
else:  # imported when run() uses them, not for --help (negcse.runtime.lazy)
    backtranslation = LazyModule("negcse.generators.backtranslation")
    model_lib = LazyModule("negcse.training.model")

NAME = "back-translate"
HELP = "round-trip translation of every line (en -> pivot -> en, facebook/wmt19-*), cached"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", required=True, help="one sentence per line")
    p.add_argument(
        "--out", "--output", dest="output", required=True, help="round trips, aligned with --corpus"
    )
    p.add_argument("--cache", required=True, help="SQLite file of earlier translations")
    p.add_argument("--pivot", choices=sorted(WMT19_PIVOTS), help="the paper's wmt19 model pair")
    p.add_argument("--forward", help="en -> pivot model (hub id or folder); overrides --pivot")
    p.add_argument("--backward", help="pivot -> en model (hub id or folder); overrides --pivot")
    add_options(
        p, OssCseParaphraseSettings, only=("num_beams", "max_length", "batch_size", "precision")
    )
    p.add_argument("--stats", help="JSON file for the counts")
    p.add_argument("--mirror", default=None)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    model_lib.torch_threads(args.threads)
    forward, backward = WMT19_PIVOTS.get(args.pivot, (None, None))
    forward, backward = args.forward or forward, args.backward or backward
    if not forward or not backward:
        logger.error("give --pivot, or both --forward and --backward")
        return 2
    start = time.perf_counter()
    sentences = read_lines(args.corpus, nonempty=True)
    result, stats = backtranslation.back_translate(
        sentences,
        forward,
        backward,
        args.cache,
        num_beams=args.num_beams,
        max_length=args.max_length,
        precision=args.precision,
        batch_size=args.batch_size,
        load=functools.partial(backtranslation.load_translator, mirror=args.mirror),
        progress=not args.no_progress,
    )
    write_lines(args.output, result)
    if args.stats:
        write_json(args.stats, {**stats.__dict__, "forward": forward, "backward": backward})
    logger.info(
        "wrote %s: %d lines (%d + %d translated, the rest cached; %d empty) in %.1f s",
        args.output,
        stats.sentences,
        stats.forward_generated,
        stats.backward_generated,
        stats.empty_outputs,
        time.perf_counter() - start,
    )
    return 0
