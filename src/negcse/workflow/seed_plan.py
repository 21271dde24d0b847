"""Seeds where they answer a claim (``seed_plan`` in config/defaults.yaml; docs/statistics.md,
"Seeds").

A claim row is a claim of ``resources/claims.csv`` that the grid runs as the paper ran it (both
methods in the grid, the claim's backbone in the grid, the run's LLM the claim's where it names
one): what the verdicts table judges. Each gets the fewest seeds (from ``verdicts.min_seeds``,
at most ``seed_plan.max_seeds``) whose verdict interval has ``seed_plan.power`` at the paper's
difference under the variance model (``seed_plan.seed_sd``, ``seed_plan.test_sd`` per measure).
A claim whose difference is below the test sets' floor, a direction check (another backbone or
LLM), a control and an unclaimed variant run ``seed_plan.other_seeds``. A method and backbone
runs the most seeds any of its claim rows asks for (both sides of a claim are paired).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from negcse.analysis.seed_power import (
    VarianceModel,
    floor,
    min_detectable,
    power,
    seeds_needed,
)
from negcse.analysis.sequential import TwoStage, decided, nominal_levels, stop_probability
from negcse.errors import UserError
from negcse.generators.registry import settings as generator_settings
from negcse.tables.claims import Claim, load_claims, paper_llm
from negcse.tables.eval_files import number, read_result

#: the defaults of ``seed_plan`` (config/defaults.yaml states them; the schema checks them)
DEFAULTS: dict[str, Any] = {
    "mode": "planned",
    "power": 0.8,
    "alpha": 0.05,
    "max_seeds": 10,
    "other_seeds": 1,
    "seed_sd": 0.67,
    "test_sd": {"sts": 0.3, "transfer": 0.3},
    "sequential": {"first": 3, "spending": "obrien-fleming"},
    "stage": None,
    "results": "results",
}
PRIOR_SOURCE = "prior (seed_plan)"
#: the measures whose per-seed files record a full-test-set ``avg`` (results/eval/<measure>/)
OWN_MEASURES = ("sts", "transfer")


def plan_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    return {**DEFAULTS, **(config.get("seed_plan") or {})}


def prior(config: Mapping[str, Any], measure: str) -> VarianceModel:
    """The stated variance model of ``measure``: a measure without a ``test_sd`` has an interval
    of the seeds only (the OssCSE splits, MTEB), so no test-set share."""
    s = plan_settings(config)
    return VarianceModel(
        float(s["seed_sd"]), float((s["test_sd"] or {}).get(measure, 0.0)), PRIOR_SOURCE
    )


def min_seeds(config: Mapping[str, Any]) -> int:
    return int((config.get("verdicts") or {}).get("min_seeds", 3))


def run_llm(config: Mapping[str, Any], method: str) -> str:
    """The paper's name of the LLM a GCSE method's data comes from ('' for other methods)."""
    if config["methods"][method].get("implementation") != "gcse":
        return ""
    return paper_llm(str(generator_settings(config, "gcse", method)["model"])) or ""


def claim_rows(config: Mapping[str, Any]) -> list[Claim]:
    """The claims the grid runs as the paper ran them (its verdict rows, not direction checks)."""
    grid = config["grid"]
    methods, backbones = set(grid["methods"]), set(grid["backbones"])
    rows = []
    for claim in _claims():
        if {claim.method, claim.baseline} - methods or claim.backbone not in backbones:
            continue
        llm = run_llm(config, claim.method) or run_llm(config, claim.baseline)
        if claim.llm and claim.llm != llm:
            continue
        rows.append(claim)
    return rows


@lru_cache(maxsize=1)
def _claims() -> tuple[Claim, ...]:
    return tuple(load_claims())


@dataclass(frozen=True)
class ClaimPlan:
    claim: Claim
    model: VarianceModel
    seeds: int  # planned seeds a side
    power: float  # at the paper's difference, at ``seeds``
    mde: float  # smallest difference ``seeds`` detect at the target power
    floor: float  # smallest difference any seed count detects at the target power
    why: str  # "" when the plan reaches the target power, else why not


@lru_cache(maxsize=4096)
def _size(
    delta: float, model: VarianceModel, target: float, alpha: float, low: int, cap: int, other: int
) -> tuple[int, str]:
    """(seeds, why not the target power) of a sized claim."""
    lowest = floor(model, target, alpha)
    if abs(delta) <= lowest:
        return other, f"untestable on these test sets (floor {lowest:.2f})"
    needed = seeds_needed(delta, model, target, alpha, low, cap)
    if needed is None:
        return cap, f"power {power(delta, cap, model, alpha):.2f} at the cap of {cap} seeds"
    return needed, ""


def plan_claim(config: Mapping[str, Any], claim: Claim, model: VarianceModel) -> ClaimPlan:
    s = plan_settings(config)
    target, alpha = float(s["power"]), float(s["alpha"])
    lowest = floor(model, target, alpha)
    if claim.delta is None:  # a direction only: the fewest seeds of a verdict
        n, why = min_seeds(config), "a direction only: no size to power"
    else:
        low, cap, other = min_seeds(config), int(s["max_seeds"]), int(s["other_seeds"])
        n, why = _size(claim.delta, model, target, alpha, low, cap, other)
    return ClaimPlan(
        claim=claim,
        model=model,
        seeds=n,
        power=power(claim.delta, n, model, alpha) if claim.delta is not None else math.nan,
        mde=min_detectable(n, model, target, alpha),
        floor=lowest,
        why=why,
    )


def paired_differences(claim: Claim, results: str | Path = "results") -> dict[str, float]:
    """Seed (``seed<n>``) -> the claim's method minus its baseline on ``avg``, for each seed
    evaluated on both sides (``<results>/eval/<measure>/<method>/<backbone>/seed<n>.json``)."""
    scores = []
    for method in (claim.method, claim.baseline):
        folder = Path(results) / "eval" / claim.measure / method / claim.backbone
        files = {p.stem: p for p in folder.glob("seed*.json")}
        scores.append({seed: number(read_result(p), "avg", p) for seed, p in files.items()})
    return {seed: scores[0][seed] - scores[1][seed] for seed in set(scores[0]) & set(scores[1])}


def own_models(
    config: Mapping[str, Any], results: str | Path = "results"
) -> dict[tuple[str, str, str, str], VarianceModel]:
    """The run's own variance model of each claim row that has ``verdicts.min_seeds`` paired
    seeds evaluated (:func:`paired_differences`): the sd of the paired differences of ``avg``;
    the test set's sd stays the prior's."""
    out = {}
    for claim in claim_rows(config):
        if claim.measure not in OWN_MEASURES:
            continue
        d = paired_differences(claim, results)
        if len(d) < min_seeds(config):
            continue
        test = prior(config, claim.measure).test_sd
        key = (claim.measure, claim.method, claim.baseline, claim.backbone)
        out[key] = VarianceModel(
            statistics.stdev(d.values()), test, f"own {len(d)} seeds, prior test sd"
        )
    return out


def claim_plans(
    config: Mapping[str, Any], own: Mapping[tuple[str, str, str, str], VarianceModel] | None = None
) -> list[ClaimPlan]:
    """The plan of every claim row; ``own``: the run's own variance model of a claim, keyed by
    (measure, method, baseline, backbone), over the prior."""
    own = own or {}
    return [
        plan_claim(
            config,
            claim,
            own.get((claim.measure, claim.method, claim.baseline, claim.backbone))
            or prior(config, claim.measure),
        )
        for claim in claim_rows(config)
    ]


def unplanned_because(config: Mapping[str, Any]) -> str:
    """Why the grid's seeds do not follow the plan ("" when they do): ``seed_plan.mode: fixed``,
    or a reduced-scale grid (it judges no paper: every row at its fixed seeds)."""
    if plan_settings(config)["mode"] != "planned":
        return "seed_plan.mode: fixed"
    capped = (config.get("corpus") or {}).get("max_sentences") is not None
    if config.get("train_overrides") or capped:
        return "a reduced-scale grid judges no paper"
    return ""


def planned(config: Mapping[str, Any]) -> bool:
    """Whether the grid's seeds follow the plan (:func:`unplanned_because`)."""
    return not unplanned_because(config)


def planned_counts(config: Mapping[str, Any]) -> dict[tuple[str, str], int]:
    """(method, backbone) -> the most seeds a claim row of it asks for: its planned seeds; at
    ``seed_plan.stage`` 1 of the sequential design at most the first stage's; at stage 2 the
    planned seeds of a claim still undecided after stage 1 (:func:`decided_at_stage_1`), the
    first stage's of one decided."""
    s = plan_settings(config)
    stage, first = s.get("stage"), int(s["sequential"]["first"])
    plans = claim_plans(config)
    decided = decided_at_stage_1(config, plans) if stage == 2 else set()
    counts: dict[tuple[str, str], int] = {}
    for plan in plans:
        c = plan.claim
        n = plan.seeds
        if stage == 1 or (stage == 2 and (c.measure, c.method, c.baseline, c.backbone) in decided):
            n = min(n, first)
        for key in ((c.method, c.backbone), (c.baseline, c.backbone)):
            counts[key] = max(counts.get(key, 0), n)
    return counts


def decided_at_stage_1(
    config: Mapping[str, Any], plans: Sequence[ClaimPlan]
) -> set[tuple[str, str, str, str]]:
    """(measure, method, baseline, backbone) of each claim row that stage 1 decided: its first
    ``seed_plan.sequential.first`` paired seeds' interval (the seeds' sd, the prior's test-set
    sd) at stage 1's nominal level excludes 0. A claim row planned at no more seeds than the
    first stage needs no decision; one of a measure without per-seed ``avg`` files (the split
    and MTEB averages) runs on. A stage-1 seed not evaluated yet is an error naming it."""
    s = plan_settings(config)
    first, results = int(s["sequential"]["first"]), s.get("results", "results")
    wanted = [f"seed{seed}" for seed in seed_values(config, first)]
    out = set()
    for plan in plans:
        c = plan.claim
        if plan.seeds <= first or c.delta is None or c.measure not in OWN_MEASURES:
            continue
        d = paired_differences(c, results)
        missing = [seed for seed in wanted if seed not in d]
        if missing:
            raise UserError(
                f"seed_plan.stage 2: {results}/eval/{c.measure}/{{{c.method},{c.baseline}}}/"
                f"{c.backbone}/{missing[0]}.json: not evaluated yet (run stage 1 first)"
            )
        design = TwoStage(first, plan.seeds, s["sequential"]["spending"], float(s["alpha"]))
        level = nominal_levels(design, plan.model)[0]
        values = np.array([[d[seed] for seed in wanted]])
        if bool(decided(values, plan.model.test_sd, level)[1][0]):
            out.add((c.measure, c.method, c.baseline, c.backbone))
    return out


_COUNTS: dict[str, dict[tuple[str, str], int]] = {}


def cached_counts(config: Mapping[str, Any]) -> dict[tuple[str, str], int]:
    """:func:`planned_counts`, computed once per grid and plan settings (the workflow asks for
    it once per method, backbone and rule)."""
    gcse = {m: e.get("generators") for m, e in config["methods"].items() if "gcse" in str(e)}
    key = repr(
        (config["grid"], config.get("seed_plan"), config.get("verdicts"),
         (config.get("generators") or {}).get("gcse"), gcse)
    )  # fmt: skip
    if key not in _COUNTS:
        _COUNTS[key] = planned_counts(config)
    return _COUNTS[key]


def seed_values(config: Mapping[str, Any], n: int) -> list[int]:
    """The first ``n`` seeds: ``grid.seeds`` in order, continued one by one after its largest."""
    given = list(config["grid"]["seeds"])
    return given[:n] + list(range(max(given) + 1, max(given) + 1 + n - len(given)))


def continue_probability(
    config: Mapping[str, Any], plans: Sequence[ClaimPlan], truth: float = 1.0
) -> dict[tuple[str, str], float]:
    """(method, backbone) -> the probability that a claim row of it is still undecided after
    the sequential design's first stage, when the true difference is ``truth`` x the paper's
    (claims taken as independent); only claim rows whose plan runs more seeds than the first
    stage."""
    seq = plan_settings(config)["sequential"]
    first, alpha = int(seq["first"]), float(plan_settings(config)["alpha"])
    decided: dict[tuple[str, str], float] = {}
    for plan in plans:
        if plan.seeds <= first or plan.claim.delta is None:
            continue
        design = TwoStage(first, plan.seeds, seq["spending"], alpha)
        stop = stop_probability(truth * plan.claim.delta, design, plan.model)
        c = plan.claim
        for key in ((c.method, c.backbone), (c.baseline, c.backbone)):
            decided[key] = decided.get(key, 1.0) * stop
    return {key: 1 - p for key, p in decided.items()}
