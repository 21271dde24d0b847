"""``negcse surface-edits``: offline stand-in for back-translation candidates (OssCSE)."""

from __future__ import annotations

import argparse
import logging
from typing import TYPE_CHECKING

from negcse.generators.settings import add_options
from negcse.generators.specs.osscse_paraphrase import OssCseParaphraseSettings
from negcse.io_utils import read_lines, write_lines
from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    import negcse.generators.backtranslation as backtranslation
else:  # imported when run() uses them, not for --help (negcse.runtime.lazy)
    backtranslation = LazyModule("negcse.generators.backtranslation")

NAME = "surface-edits"
HELP = "EDA-style random word deletions and swaps per line (offline paraphrase candidates)"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", required=True, help="one sentence per line")
    p.add_argument(
        "--out",
        "--output",
        dest="output",
        required=True,
        help="edited lines, aligned with --corpus",
    )
    add_options(p, OssCseParaphraseSettings, only=("edit_rate", "seed"))  # --rate, --seed


def run(args: argparse.Namespace) -> int:
    sentences = read_lines(args.corpus, nonempty=True)
    write_lines(args.output, backtranslation.surface_edits(sentences, args.edit_rate, args.seed))
    logger.info(
        "wrote %s: %d lines (rate %g, seed %d)",
        args.output,
        len(sentences),
        args.edit_rate,
        args.seed,
    )
    return 0
