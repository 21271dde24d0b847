"""``negcse table NAME``: one results table (LaTeX, CSV, Markdown, DVC metrics) from its spec."""

from __future__ import annotations

import argparse
import logging
from dataclasses import replace

from negcse.analysis.verdict_rules import MIN_SEEDS, Rule
from negcse.errors import UserError
from negcse.io_utils import check_writable, json_text, write_texts
from negcse.model_cli import unavailable
from negcse.tables.build import Options
from negcse.tables.render import to_csv
from negcse.tables.specs import table_spec
from negcse.text.latex import latex_escape
from negcse.text.names import check_name

NAME = "table"
HELP = "build one results table (negcse.tables.specs.TABLES) from evaluation JSON files"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", help="the table's spec (sts, transfer, mteb, analysis, ...)")
    p.add_argument("--evals", nargs="+", required=True, help="the evaluation files it reads")
    p.add_argument("--tex", help="the table as LaTeX (booktabs) to write")
    p.add_argument("--csv", help="every column as CSV to write")
    p.add_argument("--md", help="the table and its caption as Markdown to write")
    p.add_argument("--html", help="the Markdown and caption as an HTML page (for the report)")
    p.add_argument("--metrics", help="DVC metrics JSON: the spec's metric per method/backbone")
    p.add_argument(
        "--baselines",
        nargs="*",
        default=[],
        metavar="METHOD=BASELINE",
        help="the method each one's paper compared it with (config/defaults.yaml methods.<m>.baseline)",
    )
    p.add_argument(
        "--papers",
        nargs="*",
        default=[],
        metavar="METHOD=PAPER",
        help="each method's paper (config methods.<m>.paper): verdicts compare a method of "
        "no paper with its declared baseline",
    )
    p.add_argument(
        "--released",
        nargs="*",
        default=[],
        metavar="NAME",
        help="rows of released checkpoints (config/defaults.yaml released): shown, never in bold",
    )
    p.add_argument(
        "--min-seeds",
        type=int,
        default=MIN_SEEDS,
        help=f"verdicts: the fewest seeds a side for a verdict (default {MIN_SEEDS})",
    )
    for name, help_text in (
        ("fraction", "'reproduced': the effect at least this fraction of the paper's"),
        ("equivalence", "'not reproduced': within this fraction of the paper's of 0 (TOST)"),
        ("power", "the power of each row's minimum detectable effect"),
    ):
        default = getattr(Rule(), name)
        p.add_argument(f"--{name}", type=float, default=default,
                       help=f"verdicts: {help_text} (default {default})")  # fmt: skip
    p.add_argument(
        "--scale-note",
        default="",
        help="a reduced-scale grid's sentence, the first line of the table (the workflow's)",
    )


def parse_baselines(items: list[str], option: str = "--baselines") -> dict[str, str]:
    """``METHOD=VALUE`` items as a mapping (``option`` names the flag in the error): both names
    (:mod:`negcse.text.names`), each method once, and no method its own baseline (its row would
    compare it with itself: 0.00 [+0.00, +0.00])."""
    out: dict[str, str] = {}
    for item in items:
        method, sep, base = item.partition("=")
        if not sep or not method or not base:
            raise UserError(f"{option}: expected METHOD={option[2:-1].upper()}, got {item!r}")
        for name in (method, base):
            check_name(name, f"{option} {item!r}")
        if method in out:
            raise UserError(f"{option}: {method} given twice ({method}={out[method]}, {item})")
        if option == "--baselines" and base == method:
            raise UserError(
                f"{option} {item}: a method is compared with another (its paper's baseline), "
                "not itself"
            )
        out[method] = base
    return out


def available(paths: list[str]) -> list[str]:
    """``paths`` without the evaluations of released checkpoints that were unavailable when
    their job ran (``negcse evaluate --unavailable-ok``), each left out with a logged line."""
    kept = []
    for path in paths:
        released = "/released/" in path.replace("\\", "/") and path.endswith(".json")
        reason = unavailable(path) if released else None
        if reason is None:
            kept.append(path)
        else:
            logger.warning("released checkpoint unavailable, its row left out: %s", reason)
    return kept


def run(args: argparse.Namespace) -> int:
    try:
        spec = table_spec(args.name)
    except KeyError as exc:
        raise UserError(exc.args[0]) from None
    check_writable(args.tex, args.csv, args.md, args.html, args.metrics)
    if args.min_seeds < 2:
        raise UserError(f"--min-seeds {args.min_seeds}: an interval over seeds needs 2 or more")
    try:
        rule = Rule(fraction=args.fraction, equivalence=args.equivalence, power=args.power)
    except ValueError as exc:
        raise UserError(str(exc).replace("verdicts.", "--")) from None
    options = Options(
        parse_baselines(args.baselines),
        tuple(args.released),
        args.min_seeds,
        args.scale_note,
        parse_baselines(args.papers, "--papers"),
        rule,
    )
    note = args.scale_note.strip()
    if note:  # the first line of every twin, and of the caption
        spec = replace(spec, caption=f"{latex_escape(note)} {spec.caption}")
    evals = available(args.evals)
    table = spec.build(spec, evals, options)
    if note:
        table = replace(
            table,
            tex=f"% {note}\n{table.tex}",
            md=None if table.md is None else f"**{note}**\n\n{table.md}",
        )
    texts = {
        "--tex": (args.tex, table.tex),
        "--csv": (args.csv, None if table.frame is None else to_csv(table.frame)),
        "--md": (args.md, table.md),
        "--html": (args.html, table.html),
    }
    for option, (path, text) in texts.items():
        if path and text is None:
            raise UserError(f"table {spec.name!r} has no {option[2:]} twin")
    if args.metrics and table.metrics is None:
        raise UserError(f"table {spec.name!r} has no metrics (spec.metric is None)")
    out = {path: text for path, text in texts.values() if path}
    if args.metrics:
        out[args.metrics] = json_text(args.metrics, table.metrics)
    write_texts(out)  # the formats of one build together: all of them or none
    logger.info("%s table from %d file(s)", spec.name, len(evals))
    return 0
