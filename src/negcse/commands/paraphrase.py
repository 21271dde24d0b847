"""``negcse paraphrase``: one paraphrase per corpus line (UNA's positives), cached."""

from __future__ import annotations

import argparse
import logging
import time
from typing import TYPE_CHECKING

from negcse.data.sources import resolve_model
from negcse.generators.settings import add_options
from negcse.generators.specs.paraphrase import ParaphraseSettings
from negcse.io_utils import read_lines, write_lines
from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    import negcse.encoders.pretrained as pretrained
    import negcse.generators.paraphrase as paraphrase
    import negcse.training.model as model_lib
else:  # imported when run() uses them, not for --help (negcse.runtime.lazy)
    paraphrase = LazyModule("negcse.generators.paraphrase")
    pretrained = LazyModule("negcse.encoders.pretrained")
    model_lib = LazyModule("negcse.training.model")

NAME = "paraphrase"
HELP = "paraphrase every corpus line with a seq2seq model (PEGASUS), reusing a cache"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", required=True, help="one sentence per line")
    p.add_argument(
        "--out", "--output", dest="output", required=True, help="paraphrases, aligned with --corpus"
    )
    p.add_argument("--cache", required=True, help="SQLite file of earlier paraphrases")
    add_options(p, ParaphraseSettings)  # --model, --num-beams, --max-length, ...
    p.add_argument("--mirror", default=None)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    model_lib.torch_threads(args.threads)
    start = time.perf_counter()
    settings = paraphrase.GenerationSettings(
        model=args.model,
        num_beams=args.num_beams,
        max_length=args.max_length,
        precision=args.precision,
    )
    sentences = read_lines(args.corpus, nonempty=True)
    with paraphrase.open_cache(args.cache, settings) as cache:
        result, stats = paraphrase.paraphrase_corpus(
            sentences,
            cache,
            lambda: paraphrase.Paraphraser.load(
                resolve_model(args.model, args.mirror), settings, pretrained.default_device()
            ),
            args.batch_size,
            progress=not args.no_progress,
        )
    write_lines(args.output, result)
    logger.info(
        "wrote %s: %d lines (%d from the cache, %d generated, %d empty outputs) in %.1f s",
        args.output,
        stats.sentences,
        stats.cached,
        stats.generated,
        stats.empty_outputs,
        time.perf_counter() - start,
    )
    return 0
