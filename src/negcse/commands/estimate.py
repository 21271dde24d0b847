"""``negcse estimate``: the estimated GPU hours of a grid, before anything runs."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from negcse.errors import UserError
from negcse.workflow.gpu_estimate import COSTS_FILE, grid_table
from negcse.workflow.plan import Plan
from negcse.workflow.plan.load import profile_configfiles, workflow_config

NAME = "estimate"
HELP = (
    "estimated GPU hours of the grid (per method, GPU generator and evaluation kind) from the "
    "unit costs in benchmarks/gpu_costs.csv; a dry run of the workflow prints the same table"
)
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml", help="the config (default: params.yaml)")
    p.add_argument(
        "--configfile",
        nargs="+",
        default=[],
        metavar="FILE",
        help="configs merged over it, as snakemake's --configfile (replaces the profile's)",
    )
    p.add_argument(
        "--profile",
        metavar="DIR",
        help="a Snakemake profile whose configfile entries to merge (e.g. profiles/smoke)",
    )
    p.add_argument("--costs", default=COSTS_FILE, help=f"unit costs (default: {COSTS_FILE})")


def run(args: argparse.Namespace) -> int:
    overlays = args.configfile or (profile_configfiles(args.profile) if args.profile else [])
    if not Path(args.costs).is_file():
        raise UserError(f"{args.costs}: no unit costs (benchmarks/gpu.py writes them)")
    plan = Plan(workflow_config(args.params, overlays), log=logger.info)
    print(grid_table(plan, args.costs, args.costs))
    return 0
