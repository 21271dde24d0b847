"""``python -m negcse <command>``: thin entry points that Snakemake rules call.

Each module in ``negcse.commands`` is one command: it defines ``NAME``, ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``; this file discovers them.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys
from collections.abc import Sequence

import negcse.commands as commands_pkg


def _commands() -> dict[str, object]:
    found = {}
    for info in sorted(pkgutil.iter_modules(commands_pkg.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"negcse.commands.{info.name}")
        if hasattr(module, "NAME"):
            found[module.NAME] = module
    return found


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, object]]:
    parser = argparse.ArgumentParser(prog="negcse", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)
    modules = _commands()
    for name, module in modules.items():
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)  # type: ignore[attr-defined]
        module.add_arguments(p)  # type: ignore[attr-defined]
    return parser, modules


def main(argv: Sequence[str] | None = None) -> int:
    parser, modules = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    for noisy in ("urllib3", "filelock", "httpx", "huggingface_hub"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return int(modules[args.command].run(args) or 0)  # type: ignore[attr-defined]
