"""``negcse pos-lexicon``: SAN's POS lexicon (token_id, token, pos, score) of an MLM vocabulary."""

from __future__ import annotations

import argparse
import logging
import time

from negcse.data.sources import resolve_data, resolve_model
from negcse.generators.pos_lexicon import build_lexicon, log_distribution, read_released_table
from negcse.generators.specs.san import RELEASED_TABLE
from negcse.io_utils import write_json

NAME = "pos-lexicon"
HELP = (
    "SAN's POS lexicon of an MLM vocabulary: the released table (pinned data file) or every "
    "entry tagged with spaCy, scored by SAN Table 2"
)
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mlm", required=True, help="model name or folder whose tokenizer is tagged")
    p.add_argument(
        "--out", "--output", dest="output", required=True, help="TSV table to write (atomically)"
    )
    p.add_argument("--stats", default=None, help="optional JSON: tokens and share per tag")
    p.add_argument(
        "--scale", type=float, default=20.0, help="scale of the logged mean mask probability"
    )
    p.add_argument(
        "--source",
        choices=("spacy", "released"),
        default="spacy",
        help="released: SAN's vocab_pos_end.txt (registered data file; BERT-uncased vocabulary "
        "only), an error naming every place tried when it cannot be found (the workflow plans "
        "the spaCy lexicon instead where the table is in no mirror or cache and the network is "
        "off or unreachable)",
    )
    p.add_argument("--mirror", default=None)
    p.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    from transformers import AutoTokenizer

    start = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(resolve_model(args.mlm, args.mirror))
    if args.source == "released":  # never a substitute under this name (ResolveError: places)
        lexicon = read_released_table(resolve_data(RELEASED_TABLE, args.mirror), tokenizer)
    else:
        lexicon = build_lexicon(tokenizer, progress=not args.no_progress)
    lexicon.write_tsv(args.output)
    log_distribution(lexicon, args.scale)
    if args.stats:
        write_json(
            args.stats,
            {
                "mlm": args.mlm,
                "source": args.source,
                "vocabulary": len(lexicon),
                "distribution": lexicon.distribution(),
                "mean_mask_probability": {
                    str(s): lexicon.mean_mask_probability(s) for s in (10, 20, 30, 40)
                },
            },
        )
    logger.info(
        "wrote %s (%d tokens) in %.1f s", args.output, len(lexicon), time.perf_counter() - start
    )
    return 0
