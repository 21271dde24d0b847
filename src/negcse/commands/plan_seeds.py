"""``negcse plan-seeds``: each claim row's seeds, power, minimum detectable effect and GPU hours."""

from __future__ import annotations

import argparse
from pathlib import Path

from negcse.commands import estimate
from negcse.errors import UserError
from negcse.workflow import seed_plan
from negcse.workflow.gpu_estimate import load_costs
from negcse.workflow.plan.load import profile_configfiles, workflow_config
from negcse.workflow.seed_costs import claim_table

NAME = "plan-seeds"
HELP = (
    "the seed plan of the grid's claims: the seeds for power 0.8 at the paper's difference, the "
    "minimum detectable effect and GPU hours, from the run's own seeds where evaluated, else "
    "the stated prior (docs/statistics.md, Seeds)"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    estimate.add_arguments(p)
    p.add_argument(
        "--results",
        default="results",
        metavar="DIR",
        help="where the run's evaluations are (<DIR>/eval/<measure>/<method>/<backbone>/"
        "seed<n>.json); a claim with verdicts.min_seeds paired seeds there uses their sd",
    )


def run(args: argparse.Namespace) -> int:
    overlays = args.configfile or (profile_configfiles(args.profile) if args.profile else [])
    for path in args.costs:
        if not Path(path).is_file():
            raise UserError(f"{path}: no unit costs (benchmarks/gpu.py writes them)")
    config = workflow_config(".", overlays, params=args.params)
    try:
        costs = load_costs(*args.costs)
    except ValueError as err:
        raise UserError(str(err)) from None
    plans = seed_plan.claim_plans(config, seed_plan.own_models(config, args.results))
    print(claim_table(config, costs, plans))
    return 0
