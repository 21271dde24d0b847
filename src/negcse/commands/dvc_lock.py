"""``negcse dvc-lock``: record a finished run in dvc.lock, checked as a fresh clone sees it."""

from __future__ import annotations

import argparse
from pathlib import Path

from negcse.workflow.dvc_lock import record

NAME = "dvc-lock"
HELP = "after a run (make smoke): write dvc.lock, check a clone's dvc status, git add it"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", type=Path, default=Path("."), help="the repository (default: .)")


def run(args: argparse.Namespace) -> int:
    for line in record(args.root.resolve()):
        print(line)
    return 0
