"""``negcse san-negatives``: one SAN sample per corpus line (POS-weighted MLM mask-predict)."""

from __future__ import annotations

import argparse
import logging
import time
from typing import TYPE_CHECKING

from negcse.finite import seed_number
from negcse.generators.pos_lexicon import PosLexicon
from negcse.generators.settings import add_options
from negcse.generators.specs.san import SanSettings
from negcse.io_utils import atomic_open, read_lines, write_json
from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    from negcse.generators import san
    from negcse.runtime import device as device_policy
    from negcse.training import model
else:  # torch and transformers: imported when the command runs, not for --help
    device_policy = LazyModule("negcse.runtime.device")
    san = LazyModule("negcse.generators.san")
    model = LazyModule("negcse.training.model")

NAME = "san-negatives"
HELP = "SAN negatives: iterated POS-weighted mask-predict with an MLM, aligned with the corpus"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", required=True, help="one sentence per line")
    p.add_argument("--lexicon", required=True, help="table from `negcse pos-lexicon` (same MLM)")
    p.add_argument(
        "--out", "--output", dest="output", required=True, help="samples, aligned with --corpus"
    )
    p.add_argument("--seed", type=seed_number, required=True, help="seed of the sampling")
    add_options(p, SanSettings)  # --mlm, --scale, ..., --reference-quirks, --no-fallback
    p.add_argument(
        "--device", default=None, help="auto, cpu or cuda (default: $NEGCSE_DEVICE, else auto)"
    )
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    p.add_argument("--stats", default=None, help="optional JSON of counts")
    p.add_argument("--mirror", default=None)
    p.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:

    model.torch_threads(args.threads)
    start = time.perf_counter()
    params = san.SanParams(
        iterations=args.iterations,
        scale=args.scale,
        reference_quirks=args.reference_quirks,
        max_tokens=args.max_tokens,
        batch_size=args.batch_size,
    )
    lexicon = PosLexicon.read_tsv(args.lexicon)
    sentences = read_lines(args.corpus, nonempty=True)  # the trainer's reader: same line count
    device = device_policy.resolve_device(args.device)
    predictor = san.MaskPredictor.load(args.mlm, lexicon, params.scale, args.mirror, device)
    logger.info(
        "%d lines, MLM %s on %s, %s",
        len(sentences),
        args.mlm,
        predictor.device,
        params,
    )
    stats = san.SanStats()
    generator = san.SanGenerator(predictor, params)
    with atomic_open(args.output) as fh:
        for sample in generator.iter_generate(
            sentences,
            args.seed,
            chunk_size=args.chunk_size,
            fallback=args.fallback,
            stats=stats,
            progress=not args.no_progress,
            total=len(sentences),
        ):
            fh.write(" ".join(sample.splitlines()) + "\n")
    elapsed = time.perf_counter() - start
    changes = (
        "token changes not tracked (reference quirks)"
        if params.reference_quirks
        else f"{stats.changed_tokens} of {stats.tokens} tokens changed, "
        f"{stats.unchanged_sentences} sentences unchanged"
    )
    logger.info(
        "wrote %s: %d samples in %.1f s (%.1f/s); %d mask draws; %s; %d truncated; "
        "%d degenerate samples, %d replaced by the SNCSE negation",
        args.output,
        stats.sentences,
        elapsed,
        stats.sentences / max(elapsed, 1e-9),
        stats.masked,
        changes,
        stats.truncated,
        stats.degenerate,
        stats.fallbacks,
    )
    if args.stats:
        write_json(
            args.stats,
            {
                **stats.__dict__,
                "changed_by_score": {str(k): v for k, v in stats.changed_by_score.items()},
                "seconds": elapsed,
                "params": params.__dict__,
                "mlm": args.mlm,
                "seed": args.seed,
            },
        )
    return 0
