"""``negcse negate``: one sentence per line in, its negation on the same line out."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from negcse.errors import UserError
from negcse.generators.settings import add_options
from negcse.generators.specs.negation import NegationSettings
from negcse.io_utils import read_lines, write_lines
from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    from negcse.generators import negation
else:  # spaCy: imported when the command runs, not for --help
    negation = LazyModule("negcse.generators.negation")

NAME = "negate"
HELP = "negate each line of a text file (SNCSE rules or OssCSE root insertion), line for line"
logger = logging.getLogger(__name__)
STYLES = ("sncse", "osscse")  # mirrors negcse.generators.negation.STYLES (spaCy imported lazily)


class InputError(UserError, ValueError):
    """An input file that cannot be read as UTF-8 text, with the file (and line) named."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--input", required=True, type=Path, help="UTF-8 text, one sentence per line")
    p.add_argument(
        "--out",
        "--output",
        dest="output",
        required=True,
        type=Path,
        help="file to write (atomically)",
    )
    p.add_argument(
        "--style", choices=STYLES, default="sncse", help="negation rules (default sncse)"
    )
    p.add_argument("--n-process", type=int, default=1, help="spaCy worker processes (default 1)")
    add_options(p, NegationSettings)  # --reference-quirks, --batch-size
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def read_sentences(path: Path) -> list[str]:
    """Lines of ``path`` (:func:`negcse.io_utils.read_lines`: UTF-8, split on ``\\n`` only);
    a file that cannot be read, is not UTF-8 or has no line raises :class:`InputError`
    naming it (and the line)."""
    try:
        return read_lines(path, nonempty=True)
    except UserError as err:
        raise InputError(str(err)) from None
    except OSError as err:
        raise InputError(f"{path}: cannot read input ({err.strerror or err})") from err


def run(args: argparse.Namespace) -> int:
    if args.reference_quirks and args.style != "sncse":
        logger.error("--reference-quirks applies to --style sncse only")
        return 2
    try:
        sentences = read_sentences(args.input)
    except InputError as err:
        logger.error("%s", err)
        return 2
    negations = negation.negate(
        sentences,
        style=args.style,
        reference_quirks=args.reference_quirks,
        n_process=args.n_process,
        batch_size=args.batch_size,
        progress=not args.no_progress,
    )
    write_lines(args.output, negations)
    logger.info(
        "negated %d lines (%s%s) -> %s",
        len(negations),
        args.style,
        ", reference quirks" if args.reference_quirks else "",
        args.output,
    )
    return 0
