"""``negcse analysis-sentences``: the STS sentences of the similarity distributions (SNCSE Fig. 4)."""

from __future__ import annotations

import argparse
import logging

from negcse.analysis.pairs import sample_sentences, sts_sentences
from negcse.data.sts import PROTOCOLS
from negcse.finite import seed_number
from negcse.io_utils import write_lines

NAME = "analysis-sentences"
HELP = "sample N distinct sentences of the seven STS test sets, one per line"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, help="text file to write")
    p.add_argument("--n", type=int, default=5000, help="sentences (SNCSE: 5000)")
    p.add_argument("--seed", type=seed_number, default=0, help="seed of the sample")
    p.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="senteval",
        help="STS files: SentEval's processed ones or MTEB's raw text",
    )
    p.add_argument("--mirror", default=None, help="mirror folder (default: $NEGCSE_MIRROR)")


def run(args: argparse.Namespace) -> int:
    pool = sts_sentences(protocol=args.protocol, mirror=args.mirror)
    sample = sample_sentences(pool, args.n, args.seed)
    write_lines(args.out, sample)
    logger.info("%d of %d distinct STS sentences -> %s", len(sample), len(pool), args.out)
    return 0
