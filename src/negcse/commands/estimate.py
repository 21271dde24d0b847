"""``negcse estimate``: the estimated GPU hours of a grid, before anything runs."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from negcse.errors import UserError
from negcse.workflow.gpu_estimate import COSTS_FILE, grid_table, load_costs
from negcse.workflow.plan import Plan
from negcse.workflow.plan.load import profile_configfiles, workflow_config
from negcse.workflow.seed_costs import seed_report

NAME = "estimate"
HELP = (
    "estimated GPU hours of the grid (per method, GPU generator and evaluation kind) from the "
    "unit costs in benchmarks/gpu_costs.csv; a dry run of the workflow prints the same table"
)
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--params",
        default="params.yaml",
        help="the run settings, merged over config/defaults.yaml (default: params.yaml)",
    )
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
    p.add_argument(
        "--costs",
        nargs="+",
        default=[COSTS_FILE],
        metavar="CSV",
        help=f"unit costs (default: {COSTS_FILE}); several files: a later one's rows replace an "
        "earlier one's, e.g. the shipped costs then a GPU run's measured gpu_costs.csv",
    )
    p.add_argument(
        "--jobs-per-gpu",
        type=int,
        default=1,
        metavar="K",
        help="price eager training at K jobs per GPU (NEGCSE_JOBS_PER_GPU=K) from the measured "
        "aggregate rate (jobs_per_gpu rows)",
    )


def run(args: argparse.Namespace) -> int:
    overlays = args.configfile or (profile_configfiles(args.profile) if args.profile else [])
    for path in args.costs:
        if not Path(path).is_file():
            raise UserError(f"{path}: no unit costs (benchmarks/gpu.py writes them)")
    plan = Plan(workflow_config(".", overlays, params=args.params), log=logger.info)
    try:
        print(grid_table(plan, args.costs, " + ".join(args.costs), args.jobs_per_gpu))
        print(seed_report(plan, load_costs(*args.costs)))
    except ValueError as err:  # a bad row, or no jobs_per_gpu rows for K
        raise UserError(str(err)) from None
    return 0
