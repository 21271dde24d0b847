"""Power and GPU hours of the seed designs of the paper grid (benchmarks/sequential_seeds.md,
docs/statistics.md "Seeds").

Three Markdown tables:

1. ``designs``: one claim's decision rates, simulated with negcse.analysis.sequential.simulate
   (the verdict interval, the seeds' sd estimated at each look): the share decided at a true
   difference of 0 (either way: a false decision) and the power and mean seeds at true
   differences of 1.0, 1.4, 2.0 and 2.72 points, for fixed 3, 5 and 10 seeds and the two-stage
   designs (3 seeds, then 10 for the undecided; O'Brien-Fleming and Pocock spending).
2. ``grid``: the paper grid (params.yaml) with its claim rows at fixed 3, 5 or 10 seeds, at
   their planned seeds, and under the two-stage designs: the mean power of "reproduced" (the
   verdict rule in each claim's family) at the papers' differences over the claim rows above
   the test sets' floor that have a variance prior (simulated for the two-stage designs, a
   claim stopped at stage 1 read at its 3 seeds; analytic for the fixed), how many reach 0.8, and the grid's GPU hours (``negcse
   estimate``'s unit costs; for a two-stage design the expectation when the papers' differences
   hold, and when every difference is 0). Every other row runs seed_plan.other_seeds.
3. ``final look``: the false-decision rate of a claim with no true difference when stage 2 is
   read at its spent level, and when it is read at 0.05 (as the verdicts table reads every
   row), 3 seeds then 4, 6 or 10.

    OMP_NUM_THREADS=1 python benchmarks/sequential_seeds.py [--reps 20000] [--heavy]

``--heavy``: each seed's own noise is t with 3 degrees of freedom (an occasional bad seed),
scaled to the same sd.
"""

from __future__ import annotations

import argparse
import copy
import statistics
from typing import Any

import numpy as np

from negcse.analysis.seed_power import VarianceModel
from negcse.analysis.sequential import (
    SPENDING,
    TwoStage,
    decided,
    nominal_levels,
    reproduced_now,
    simulate,
    stage_rule,
)
from negcse.analysis.verdict_rules import Rule
from negcse.workflow import seed_plan
from negcse.workflow.gpu_estimate import COSTS_FILE, load_costs
from negcse.workflow.plan import Plan
from negcse.workflow.plan.load import workflow_config
from negcse.workflow.seed_costs import grid_hours, sequential_saving

TRUTHS = (1.0, 1.4, 2.0, 2.72)
FIXED = (3, 5, 10)
SEQUENTIAL = (("obrien-fleming", 3, 10), ("pocock", 3, 10))


def designs(model: VarianceModel, reps: int, heavy: bool) -> str:
    lines = [
        "| design | decided at truth 0 | "
        + " | ".join(f"power at {t:g} | seeds at {t:g}" for t in TRUTHS)
        + " |",
        "|---|---:|" + "---:|---:|" * len(TRUTHS),
    ]
    named: list[tuple[str, TwoStage | int]] = [(f"fixed {n}", n) for n in FIXED]
    named += [(f"{s}: {a} then {b}", TwoStage(a, b, s)) for s, a, b in SEQUENTIAL]
    for name, design in named:
        rng = np.random.default_rng(0)
        null = simulate(0.0, model, design, reps, rng, heavy)
        cells = [f"{null.positive + null.negative:.3f}"]
        for truth in TRUTHS:
            r = simulate(truth, model, design, reps, rng, heavy)
            cells += [f"{r.positive:.3f}", f"{r.seeds:.2f}"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def at_seeds(config: dict[str, Any], n: int | None, spending: str | None = None) -> dict[str, Any]:
    """``config`` with every claim row at ``n`` seeds (None: planned); ``spending``: the
    two-stage design from 3 seeds."""
    out = copy.deepcopy(config)
    plan = dict(out.get("seed_plan") or {})
    if n is not None:
        plan["max_seeds"] = n
        out["verdicts"] = {**(out.get("verdicts") or {}), "min_seeds": n}
    if spending:
        plan["sequential"] = {"first": 3, "spending": spending}
    out["seed_plan"] = plan
    return out


def sequential_power(plans: list[seed_plan.ClaimPlan], spending: str, reps: int, rule: Rule
                     ) -> list[float]:  # fmt: skip
    """Each claim's power of "reproduced" under the two-stage design: a claim the rule calls
    "reproduced" at stage 1's level stops there, the others are read at their planned seeds,
    each in its family."""
    out = []
    rng = np.random.default_rng(1)
    for p in plans:
        assert p.model is not None and p.claim.delta is not None
        d = p.claim.delta + rng.normal(0, p.model.test_sd, (reps, 1)) + rng.normal(
            0, p.model.seed_sd, (reps, p.seeds)
        )
        if p.seeds <= 3:
            out.append(float(reproduced_now(d, p.model, p.claim.delta, p.rows, rule).mean()))
            continue
        early = stage_rule(TwoStage(3, p.seeds, spending), p.model, rule)
        stop = reproduced_now(d[:, :3], p.model, p.claim.delta, p.rows, early)
        late = reproduced_now(d, p.model, p.claim.delta, p.rows, rule)
        out.append(float((stop | late).mean()))
    return out


def grid(config: dict[str, Any], reps: int) -> str:
    costs = load_costs(COSTS_FILE)
    lines = [
        "| design | claim rows' seeds | mean power at the papers' Δ | rows with power >= 0.8 | "
        "GPU h (papers' Δ true) | GPU h (no difference) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    rows: list[tuple[str, str, dict[str, Any], str | None]] = [
        (f"fixed {n}", str(n), at_seeds(config, n), None) for n in FIXED
    ]
    rows.append(("planned", "3-10 (80% power)", at_seeds(config, None), None))
    for spending in ("obrien-fleming", "pocock"):
        rows.append((f"{spending}: 3, then 10", "3 + 7", at_seeds(config, 10, spending), spending))
        rows.append((f"{spending}: 3, then planned", "3 + planned", at_seeds(config, None, spending),
                     spending))  # fmt: skip
    for name, seeds, cfg, spending in rows:
        plans = [
            p
            for p in seed_plan.claim_plans(cfg)
            if p.model is not None and p.claim.delta is not None and abs(p.claim.delta) > p.floor
        ]
        rule = seed_plan.rule(cfg)
        powers = (
            sequential_power(plans, spending, reps, rule) if spending else [p.power for p in plans]
        )
        total = grid_hours(Plan(cfg), costs)
        if spending:
            everything = seed_plan.claim_plans(cfg)
            true = total - sequential_saving(cfg, costs, everything, 1.0)
            null = total - sequential_saving(cfg, costs, everything, 0.0)
        else:
            true = null = total
        lines.append(
            f"| {name} | {seeds} | {statistics.mean(powers):.3f} | "
            f"{sum(x >= 0.8 for x in powers)} of {len(powers)} | {true:.1f} | {null:.1f} |"
        )
    return "\n".join(lines)


def final_look(model: VarianceModel, reps: int) -> str:
    lines = [
        "| spending | seeds | stage 1 level | stage 2 level | false decisions, stage 2 at its "
        "level | false decisions, stage 2 at 0.05 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    rng = np.random.default_rng(5)
    for spending in SPENDING:
        for total in (4, 6, 10):
            a1, a2 = nominal_levels(TwoStage(3, total, spending), model)
            d = rng.normal(0, model.test_sd, (reps, 1)) + rng.normal(
                0, model.seed_sd, (reps, total)
            )
            first = decided(d[:, :3], model.test_sd, a1)[1]
            spent = np.mean(first | decided(d, model.test_sd, a2)[1])
            table = np.mean(first | decided(d, model.test_sd, 0.05)[1])
            lines.append(f"| {spending} | 3 then {total} | {a1:.4f} | {a2:.4f} | {spent:.4f} | "
                         f"{table:.4f} |")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20000)
    parser.add_argument("--heavy", action="store_true")
    args = parser.parse_args()
    config = workflow_config(".", [], params="params.yaml")
    model = seed_plan.prior(config, "sts")
    print(f"One claim (seed sd {model.seed_sd}, test-set sd {model.test_sd}, "
          f"{'t(3)' if args.heavy else 'normal'} seeds, {args.reps} claims a cell):\n")  # fmt: skip
    print(designs(model, args.reps, args.heavy))
    print("\nThe paper grid (params.yaml, benchmarks/gpu_costs.csv):\n")
    print(grid(config, max(args.reps // 5, 1000)))
    print(f"\nThe final look ({args.reps * 10} claims with no true difference a row):\n")
    print(final_look(model, args.reps * 10))


if __name__ == "__main__":
    main()
