"""The GPU hours of the seed plan: each claim row's, and the grid's under the fixed and the
sequential designs (``negcse estimate``, ``negcse plan-seeds``)."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from typing import Any

from negcse.workflow import seed_plan
from negcse.workflow.gpu_estimate import (
    Costs,
    Row,
    backbone_factor,
    estimate,
    gpu_generators,
    mteb_jobs,
    run_seconds,
)
from negcse.workflow.plan import Plan
from negcse.workflow.seed_plan import ClaimPlan


def seed_hours(config: Mapping[str, Any], costs: Costs, method: str, backbone: str) -> float:
    """GPU hours of one seed of ``method`` on ``backbone``: its training and its evaluation."""
    per_run = run_seconds(config, costs, method, backbone, Row(method))
    return (per_run + (costs.eval_job or 0.0)) * backbone_factor(backbone) / 3600


def grid_hours(plan: Plan, costs: Costs) -> float:
    """The grid's total, as ``negcse estimate`` prices it."""
    rows = estimate(
        plan.config,
        costs,
        gpu_generators(plan.config, plan.column_paths()),
        mteb_jobs(plan.mteb_files(), plan.backbones),
    )
    return sum(r.total_h for r in rows)


def _planned_keys(config: Mapping[str, Any]) -> set[tuple[str, str]]:
    """(method, backbone) whose seeds the plan sets (no seeds of its own)."""
    out = set()
    for method, backbone in seed_plan.cached_counts(config):
        entry = config["methods"][method]
        own = ((entry.get("backbones") or {}).get(backbone) or {}).get("seeds")
        if not own and not entry.get("seeds"):
            out.add((method, backbone))
    return out


def sequential_saving(
    config: Mapping[str, Any], costs: Costs, plans: Sequence[ClaimPlan], truth: float = 1.0
) -> float:
    """Expected GPU hours the sequential design saves on the planned grid when the true
    differences are ``truth`` x the papers': a planned run beyond the first stage runs only
    while a claim row of it is undecided."""
    first = int(seed_plan.plan_settings(config)["sequential"]["first"])
    going_on = seed_plan.continue_probability(config, plans, truth)
    counts = seed_plan.cached_counts(config)
    saved = 0.0
    for key in _planned_keys(config) & set(going_on):
        beyond = counts[key] - first
        saved += seed_hours(config, costs, *key) * beyond * (1 - going_on[key])
    return saved


def fixed_config(config: Mapping[str, Any], seeds: int | None) -> dict[str, Any]:
    """``config`` with every row at the first ``seeds`` of ``grid.seeds`` (None: all of them),
    a method's own seeds kept (``seed_plan.mode: fixed``)."""
    out = copy.deepcopy(dict(config))
    out["seed_plan"] = {**(out.get("seed_plan") or {}), "mode": "fixed"}
    if seeds is not None:
        out["grid"]["seeds"] = seed_plan.seed_values(out, seeds)
    return out


def _number(x: float, digits: int = 2) -> str:
    return "-" if math.isnan(x) else "inf" if math.isinf(x) else f"{x:.{digits}f}"


def claim_table(config: Mapping[str, Any], costs: Costs, plans: Sequence[ClaimPlan]) -> str:
    """One line per claim row: its seeds, power and minimum detectable effect at them, and
    the GPU hours of its two sides at those seeds."""
    s, rule = seed_plan.plan_settings(config), seed_plan.rule(config)
    lines = [
        f'Seed plan (docs/statistics.md, "Seeds"): each claim row at the seeds for '
        f"{s['power']:.0%} power of \"reproduced\" (the effect at least {rule.fraction:g} x the "
        f"paper's, one-sided at {rule.alpha:g}/2/k in its family of k rows) at the paper's "
        f"difference (at most {s['max_seeds']}); other rows at {s['other_seeds']}",
        f"{'claim':<44} {'backbone':<19} {'Δ paper':>7} {'seeds':>5} {'power':>5} "
        f"{'MDE':>5} {'GPU h':>6}  variance model (seed sd/test sd); why not {s['power']:.0%}",
    ]
    for p in plans:
        c = p.claim
        name = f"{c.method} vs {c.baseline} ({c.measure}{', ' + c.llm if c.llm else ''})"
        hours = p.seeds * sum(seed_hours(config, costs, m, c.backbone) for m in c.pair[1:])
        model = (
            f"sd {p.model.seed_sd:.3g}/{p.model.test_sd:.3g} {p.model.source}, k={p.rows}"
            if p.model
            else f"k={p.rows}"
        )
        delta = "dir." if c.delta is None else f"{c.delta:+.2f}"
        lines.append(
            f"{name:<44} {c.backbone:<19} {delta:>7} {p.seeds:>5} {_number(p.power):>5} "
            f"{_number(p.mde):>5} {hours:>6.1f}  {model}{'; ' + p.why if p.why else ''}"
        )
    lines.append(
        "(GPU h: both sides' training and evaluation at the planned seeds; a side shared by "
        "several claims counts in each; MDE: the smallest paper's difference those seeds call "
        "reproduced at the target power)"
    )
    return "\n".join(lines)


def unstaged(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with the fixed planned design (no ``seed_plan.stage``)."""
    out = copy.deepcopy(dict(config))
    out["seed_plan"] = {**(out.get("seed_plan") or {}), "stage": None}
    return out


def design_lines(plan: Plan, costs: Costs) -> str:
    """The grid's GPU hours under the planned fixed design, the sequential one (expected), the
    sequential stage this grid runs (``seed_plan.stage``) and every row at grid.seeds."""
    config = plan.config
    s = seed_plan.plan_settings(config)
    seq, stage = s["sequential"], s.get("stage")
    lines = ["Seed designs of this grid (GPU hours on one " + costs.device + "):"]
    if seed_plan.planned(config):
        fixed = unstaged(config)
        planned = grid_hours(Plan(fixed) if stage else plan, costs)
        saved = sequential_saving(fixed, costs, seed_plan.claim_plans(fixed))
        lines += [
            f"  planned seeds, fixed: {planned:.1f}",
            f"  planned seeds, sequential (stage 1 at {seq['first']} seeds, {seq['spending']} "
            f"spending; expected when the papers' differences hold): {planned - saved:.1f}",
        ]
        if stage:
            lines.append(f"  this grid: stage {stage} of the sequential design (seed_plan.stage): "
                         f"{grid_hours(plan, costs):.1f}")  # fmt: skip
    every = Plan(fixed_config(config, None))
    n = len(config["grid"]["seeds"])
    lines.append(f"  every row at grid.seeds ({n} seed{'s' if n > 1 else ''}, a method's own "
                 f"kept; seed_plan.mode: fixed): {grid_hours(every, costs):.1f}")  # fmt: skip
    return "\n".join(lines)


def seed_report(plan: Plan, costs: Costs) -> str:
    """What ``negcse estimate`` and the dry run print after the grid's table: the designs'
    hours and the per-claim plan."""
    why = seed_plan.unplanned_because(plan.config)
    if why:
        return f"{design_lines(plan, costs)}\n(no seed plan: {why}; `negcse plan-seeds` prints it)"
    plans = seed_plan.claim_plans(plan.config)
    return design_lines(plan, costs) + "\n" + claim_table(plan.config, costs, plans)
