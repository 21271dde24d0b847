"""``negcse plots-template``: the offline page template of ``dvc plots show``."""

from __future__ import annotations

import argparse
import logging

from negcse.dvc_plots import DEFAULT_PATH, write_template

NAME = "plots-template"
HELP = "write the page template of `dvc plots show` with Vega inlined (no CDN: works offline)"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--out",
        default=DEFAULT_PATH,
        help=f"template file (default: {DEFAULT_PATH}, which .dvc/config names)",
    )


def run(args: argparse.Namespace) -> int:
    logger.info("dvc plots page template: %s", write_template(args.out))
    return 0
