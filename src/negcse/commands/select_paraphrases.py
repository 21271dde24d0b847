"""``negcse select-paraphrases``: one paraphrase per line, a candidate whose MER is in a band."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from negcse.errors import UserError
from negcse.generators.settings import add_options
from negcse.generators.specs.osscse_paraphrase import OssCseParaphraseSettings
from negcse.io_utils import read_lines, write_json, write_lines
from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    import negcse.generators.backtranslation as backtranslation
else:  # imported when run() uses them, not for --help (negcse.runtime.lazy)
    backtranslation = LazyModule("negcse.generators.backtranslation")

NAME = "select-paraphrases"
HELP = "keep, per corpus line, a candidate with word MER in [--mer-min, --mer-max] (OssCSE)"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", required=True, help="one sentence per line")
    p.add_argument(
        "--candidates",
        nargs="+",
        required=True,
        metavar="[NAME=]FILE",
        help="candidate files aligned with --corpus (e.g. de=bt_de.txt ru=bt_ru.txt)",
    )
    p.add_argument(
        "--out", "--output", dest="output", required=True, help="paraphrases, aligned with --corpus"
    )
    p.add_argument("--stats", help="JSON file for the counts")
    add_options(p, OssCseParaphraseSettings, only=("mer_min", "mer_max", "seed"))
    p.add_argument("--case-sensitive", action="store_true", help="MER on words as written")
    p.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    sentences = read_lines(args.corpus, nonempty=True)
    candidates = {}
    for item in args.candidates:
        name, sep, path = item.partition("=")
        if not sep:
            name, path = Path(item).stem, item
        if name in candidates:
            logger.error("candidate name '%s' given twice", name)
            return 2
        candidates[name] = read_lines(path)
        if len(candidates[name]) != len(sentences):
            raise UserError(
                f"{path} (candidates '{name}') has {len(candidates[name])} lines but the corpus "
                f"{args.corpus} has {len(sentences)}; candidates must be aligned line by line"
            )
    try:
        chosen, stats = backtranslation.select_paraphrases(
            sentences,
            candidates,
            args.mer_min,
            args.mer_max,
            seed=args.seed,
            lowercase=not args.case_sensitive,
            progress=not args.no_progress,
        )
    except ValueError as err:
        logger.error("%s", err)
        return 2
    write_lines(args.output, chosen)
    if args.stats:
        write_json(
            args.stats, {**stats.to_dict(), "mer_min": args.mer_min, "mer_max": args.mer_max}
        )
    return 0
