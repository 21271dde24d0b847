"""``negcse mix-corpus``: one corpus of the config's ``corpora`` (config/defaults.yaml; GCSE's
domain setting: domain sentences plus three general ones per domain line), from registered data
files."""

from __future__ import annotations

import argparse
import json
import logging

from negcse.data import domain_mix
from negcse.data.sources import resolve_data
from negcse.errors import UserError
from negcse.io_utils import write_json, write_lines
from negcse.workflow.config import check_corpus_entry

NAME = "mix-corpus"
HELP = "build a mixed corpus (domain + general sentences) from its config/defaults.yaml corpora entry"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--spec", required=True, help="the corpora.<name> entry as JSON")
    p.add_argument("--out", required=True, help="the mixed corpus, one sentence per line")
    p.add_argument("--stats", required=True, help="JSON: sizes per source, skipped sources")
    p.add_argument("--mirror", default=None)


def run(args: argparse.Namespace) -> int:
    try:
        spec = json.loads(args.spec)
    except json.JSONDecodeError as exc:
        raise UserError(f"--spec: invalid JSON ({exc})") from None
    check_corpus_entry(spec, "--spec")
    lines, stats = domain_mix.build(spec, lambda name: resolve_data(name, args.mirror))
    write_lines(args.out, lines)
    write_json(args.stats, stats)
    logger.info(
        "%s: %d lines (%d domain, %d general); skipped: %s",
        args.out,
        stats["lines"],
        stats["domain_lines"],
        stats["general_lines"],
        ", ".join(f for s in stats["skipped"] for f in s["files"]) or "none",
    )
    return 0
