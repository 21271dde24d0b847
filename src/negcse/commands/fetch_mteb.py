"""``negcse fetch-mteb``: download one group's MTEB datasets into the Hugging Face cache
($HF_HOME) and list their ids and revisions; needs network. ``negcse evaluate --only mteb``
then reads them from that cache only."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from negcse.data.mteb_tasks import GROUPS
from negcse.io_utils import write_json
from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    from negcse.evaluation import mteb_runner
else:  # mteb and datasets: imported when the command runs, not for --help
    mteb_runner = LazyModule("negcse.evaluation.mteb_runner")

NAME = "fetch-mteb"
HELP = "download one group's MTEB datasets (networked machine) and write their manifest"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--group", required=True, choices=tuple(GROUPS), help="the MTEB task group to download"
    )
    p.add_argument("--tasks", nargs="+", default=None, help="a subset of the group's tasks")
    p.add_argument("--out", required=True, help="manifest JSON file to write")


def run(args: argparse.Namespace) -> int:
    rows = mteb_runner.prefetch(args.group, args.tasks)
    write_json(
        args.out, {"group": args.group, "mteb_version": mteb_runner.MTEB_VERSION, "tasks": rows}
    )
    return 0
