"""``negcse fidelity``: each hyperparameter of every configured run beside the released
script's value and the paper's, with the reason where they differ (negcse.workflow.fidelity)."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from negcse.errors import UserError
from negcse.io_utils import atomic_open, read_text
from negcse.workflow.config import KNOWN_BACKBONES
from negcse.workflow.fidelity import (
    fill_pages,
    fmt,
    load_reference,
    render,
    rows,
    undeclared,
    unreferenced,
)
from negcse.workflow.plan.load import workflow_config

NAME = "fidelity"
HELP = (
    "the fidelity table: every hyperparameter of each configured method and backbone beside "
    "the released script's value and the paper's (src/negcse/resources/fidelity.yaml), with "
    "the reason where they differ"
)
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--params",
        default="params.yaml",
        help="the run settings, merged over config/defaults.yaml (default: params.yaml)",
    )
    p.add_argument(
        "--configfile", nargs="+", default=[], metavar="FILE", help="configs merged over it"
    )
    p.add_argument("--reference", default=None, help="the declared values (default: packaged)")
    p.add_argument("--method", nargs="+", default=None, help="only these methods")
    p.add_argument("--backbone", nargs="+", default=None, help="only these backbones")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--out", type=Path, default=None, help="write the markdown page here")
    out.add_argument(
        "--check",
        type=Path,
        default=None,
        metavar="PAGE",
        help="exit 1 if PAGE is not the page the config gives, a deviation has no reason, or a "
        "setting has no released or paper value (nor a source stating it gives none)",
    )
    p.add_argument(
        "--pages",
        nargs="+",
        type=Path,
        default=[],
        metavar="PAGE",
        help="prose pages whose marked blocks (<!-- fidelity-table: METHOD ... --> ... "
        "<!-- /fidelity-table -->) hold these tables: filled with --out, compared with --check",
    )
    p.add_argument("--deviations", action="store_true", help="print only the settings that differ")


def run(args: argparse.Namespace) -> int:
    config = workflow_config(".", args.configfile, params=args.params)
    ref = load_reference(args.reference)
    unknown = sorted(set(args.method or ()) - set(config["methods"]))
    if unknown:
        logger.error("--method: %s not configured in %s", ", ".join(unknown), args.params)
        return 2
    known = list(dict.fromkeys([*KNOWN_BACKBONES, *config["grid"]["backbones"]]))
    strange = [b for b in args.backbone or () if b not in known]
    if strange:  # its settings would be the defaults, compared as if configured
        raise UserError(
            f"--backbone: unknown backbone(s) {', '.join(strange)}; known: {', '.join(known)}"
        )
    found = rows(config, ref, args.method, args.backbone)
    blind = unreferenced(found)
    for r in blind:
        logger.error(
            "methods.%s (%s) %s: %s, and no released or paper value (nor a source's 'none') in %s",
            r.method,
            r.backbone,
            r.key,
            fmt(r.ours),
            ref["where"],
        )
    missing = undeclared(found) + blind
    for r in undeclared(found):
        target = r.target
        assert target is not None
        logger.error(
            "methods.%s (%s) %s: %s, declared %s [%s], and no reason in %s",
            r.method,
            r.backbone,
            r.key,
            fmt(r.ours),
            fmt(target.value),
            target.source,
            ref["where"],
        )
    page = render(config, ref, found)
    prose = {}
    for path in args.pages:
        if not path.is_file():
            raise UserError(f"--pages: {path}: no such file")
        text = read_text(path)
        prose[path] = (text, fill_pages(text, config, ref, found, str(path)))
    if args.check is not None:
        current = read_text(args.check) if args.check.is_file() else ""
        stale = [str(p) for p, (text, filled) in prose.items() if text != filled]
        if current != page:
            stale.insert(0, str(args.check))
        if stale:
            logger.error(
                "%s: not the tables the config gives: run negcse fidelity --out %s --pages ...",
                ", ".join(stale),
                args.check,
            )
            return 1
        return 1 if missing else 0
    if args.out is not None:
        with atomic_open(args.out) as fh:
            fh.write(page)
        for path, (text, filled) in prose.items():
            if filled != text:
                with atomic_open(path) as fh:
                    fh.write(filled)
        logger.info("wrote %s (%d settings, %d differ)", args.out, len(found), _differ(found))
    elif args.deviations:
        for r in found:
            if r.deviates or r.planned:
                target = r.target
                said = "—" if target is None else f"{fmt(target.value)} [{target.source}]"
                why = r.planned or r.reason or "NO REASON DECLARED"
                print(f"{r.method}\t{r.backbone}\t{r.key}\t{fmt(r.ours)}\t{said}\t{why}")
    else:
        sys.stdout.write(page)
    return 1 if missing else 0


def _differ(found: list) -> int:
    return sum(r.deviates for r in found)
