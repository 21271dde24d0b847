"""Seeds where they answer a claim (``seed_plan`` in config/defaults.yaml; docs/statistics.md,
"Seeds").

A claim row is a claim of ``resources/claims.csv`` that the grid runs as the paper ran it (both
methods in the grid, the claim's backbone in the grid, the run's LLM the claim's where it names
one): what the verdicts table judges. Each gets the fewest seeds (from ``verdicts.min_seeds``,
at most ``seed_plan.max_seeds``) at which the verdict rule (``verdicts.fraction``; the family's
Bonferroni correction over its k verdict rows, :func:`family_rows`) calls the paper's difference
"reproduced" with ``seed_plan.power``, under the measure's variance model (``seed_plan.seed_sd``
and ``seed_plan.test_sd`` per measure, or the run's own first seeds). A claim whose difference
is below the test sets' floor, a direction check (another backbone or LLM), a control and an
unclaimed variant run ``seed_plan.other_seeds``; a claim that the cap leaves below the target
runs the cap where the cap gives it ``seed_plan.worth_capping`` power, else ``verdicts.min_seeds``
(ten seeds buying it little); a claim of a measure with no variance prior (and
no seeds of its own yet), and a direction-only claim, run ``verdicts.min_seeds``. A method and
backbone runs the most seeds any of its claim rows asks for (both sides of a claim are paired).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
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
from negcse.analysis.sequential import TwoStage, reproduced_now, stage_rule, stop_probability
from negcse.analysis.verdict_rules import Rule
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
    "worth_capping": 0.5,
    "seed_sd": {"sts": 0.67},
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


NO_PRIOR = "no variance prior for this measure"


def prior(config: Mapping[str, Any], measure: str) -> VarianceModel | None:
    """The stated variance model of ``measure`` (in its own unit), None without a
    ``seed_sd`` for it; a measure without a ``test_sd`` has an interval of the seeds only (the
    OssCSE splits, MTEB, the probe), so no test-set share."""
    s = plan_settings(config)
    seed_sd = (s["seed_sd"] or {}).get(measure)
    if seed_sd is None:
        return None
    test_sd = float((s["test_sd"] or {}).get(measure, 0.0))
    return VarianceModel(float(seed_sd), test_sd, PRIOR_SOURCE)


def rule(config: Mapping[str, Any]) -> Rule:
    """The verdict rule the plan powers: ``verdicts.fraction`` and ``equivalence``, at
    ``seed_plan.alpha`` and ``seed_plan.power``."""
    s, v = plan_settings(config), config.get("verdicts") or {}
    return Rule(
        fraction=float(v.get("fraction", Rule.fraction)),
        equivalence=float(v.get("equivalence", Rule.equivalence)),
        alpha=float(s["alpha"]),
        power=float(s["power"]),
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
    model: VarianceModel | None  # None: no variance prior for the measure
    rows: int  # verdict rows of its family (the Bonferroni k)
    seeds: int  # planned seeds a side
    power: float  # of "reproduced" at the paper's difference, at ``seeds`` (NaN: not sized)
    mde: float  # smallest paper's difference ``seeds`` call "reproduced" at the target power
    floor: float  # the test sets' floor: a sized claim below it is untestable
    why: str  # "" when the plan reaches the target power, else why not


def below_floor(claim: Claim, model: VarianceModel | None, rule_: Rule) -> bool:
    """Whether a sized claim is below the test sets' floor (untestable, outside its family)."""
    return model is not None and claim.delta is not None and abs(claim.delta) < floor(model, rule_)


def family_rows(
    config: Mapping[str, Any], models: Mapping[Claim, VarianceModel | None]
) -> dict[tuple[str, str], int]:
    """(paper, measure) -> its verdict rows in this grid: the claim rows the verdicts table
    corrects together (:func:`negcse.tables.verdicts.adjust`: an untestable claim is outside)."""
    rule_, out = rule(config), {}
    for claim, model in models.items():
        if not below_floor(claim, model, rule_):
            key = (claim.paper, claim.measure)
            out[key] = out.get(key, 0) + 1
    return out


@lru_cache(maxsize=4096)
def _size(delta: float, model: VarianceModel, rows: int, rule_: Rule, low: int, cap: int,
          worth: float) -> tuple[int, str]:  # fmt: skip
    """(seeds, why not the target power) of a sized claim above the floor: the fewest seeds
    with the target power; else the cap where the cap has at least ``worth`` power, the fewest
    seeds of a verdict where it does not (seeds that buy little power)."""
    needed = seeds_needed(delta, model, rows, rule_, low, cap)
    if needed is not None:
        return needed, ""
    p = power(delta, cap, model, rows, rule_)
    if p >= worth:
        return cap, f"power {p:.2f} at the cap of {cap} seeds"
    return low, f"power {p:.2f} at the cap of {cap} seeds, below {worth:.2f}: runs {low}"


def own_seeds(config: Mapping[str, Any], method: str, backbone: str) -> list[int]:
    """A method's own seeds on ``backbone`` (``methods.<m>.backbones.<b>.seeds``, else
    ``methods.<m>.seeds``; [] without), which come before any plan."""
    entry = config["methods"][method]
    own = ((entry.get("backbones") or {}).get(backbone) or {}).get("seeds")
    return list(own or entry.get("seeds") or [])


def shared_own_seeds(config: Mapping[str, Any], claim: Claim) -> int:
    """How many seeds of their own both sides of ``claim`` share (0: the plan sets them)."""
    sides = [set(own_seeds(config, m, claim.backbone)) for m in (claim.method, claim.baseline)]
    return len(sides[0] & sides[1])


def plan_claim(config: Mapping[str, Any], claim: Claim, model: VarianceModel | None,
               rows: int) -> ClaimPlan:  # fmt: skip
    """The claim's plan; where both sides run seeds of their own (UNA's Table D7), at their
    shared seeds, its power there."""
    plan = _plan_claim(config, claim, model, rows)
    shared = shared_own_seeds(config, claim)
    if not shared or model is None:
        return plan
    rule_, sized = rule(config), claim.delta is not None
    p = power(claim.delta, shared, model, rows, rule_) if sized else math.nan
    why = f"the paper's own {shared} seeds (methods.<m>.seeds)"
    return replace(
        plan,
        seeds=shared,
        power=p,
        mde=min_detectable(shared, model, rows, rule_, sized),
        why=f"power {p:.2f} at {why}" if p < rule_.power else "",
    )


def _plan_claim(config: Mapping[str, Any], claim: Claim, model: VarianceModel | None,
                rows: int) -> ClaimPlan:  # fmt: skip
    s, rule_ = plan_settings(config), rule(config)
    low = min_seeds(config)
    if model is None:
        return ClaimPlan(claim, None, rows, low, math.nan, math.nan, math.nan, NO_PRIOR)
    lowest = floor(model, rule_)
    sized = claim.delta is not None
    if claim.delta is None:  # a direction only: the fewest seeds of a verdict
        n, why = low, "a direction only: no size to power"
    elif below_floor(claim, model, rule_):
        n, why = int(s["other_seeds"]), f"untestable on these test sets (floor {lowest:.2f})"
    else:
        cap, worth = int(s["max_seeds"]), float(s["worth_capping"])
        n, why = _size(claim.delta, model, rows, rule_, low, cap, worth)
    return ClaimPlan(
        claim=claim,
        model=model,
        rows=rows,
        seeds=n,
        power=power(claim.delta, n, model, rows, rule_) if sized else math.nan,
        mde=min_detectable(n, model, rows, rule_, sized),
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
        stated = prior(config, claim.measure)
        test = stated.test_sd if stated else float(
            (plan_settings(config)["test_sd"] or {}).get(claim.measure, 0.0)
        )
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
    models = {
        claim: own.get((claim.measure, claim.method, claim.baseline, claim.backbone))
        or prior(config, claim.measure)
        for claim in claim_rows(config)
    }
    rows = family_rows(config, models)
    return [
        plan_claim(config, claim, model, rows.get((claim.paper, claim.measure), 1))
        for claim, model in models.items()
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
    """(measure, method, baseline, backbone) of each claim row that stage 1 decided: the verdict
    rule calls its first ``seed_plan.sequential.first`` paired seeds (the seeds' sd, the prior's
    test-set sd) "reproduced" at stage 1's nominal level, in its family. A claim row planned at no more seeds than the
    first stage needs no decision; one of a measure without per-seed ``avg`` files (the split
    and MTEB averages) runs on. A stage-1 seed not evaluated yet is an error naming it."""
    s = plan_settings(config)
    first, results = int(s["sequential"]["first"]), s.get("results", "results")
    wanted = [f"seed{seed}" for seed in seed_values(config, first)]
    out = set()
    for plan in plans:
        c = plan.claim
        if plan.seeds <= first or c.delta is None or plan.model is None or (
            c.measure not in OWN_MEASURES or shared_own_seeds(config, c)
        ):
            continue
        d = paired_differences(c, results)
        missing = [seed for seed in wanted if seed not in d]
        if missing:
            raise UserError(
                f"seed_plan.stage 2: {results}/eval/{c.measure}/{{{c.method},{c.baseline}}}/"
                f"{c.backbone}/{missing[0]}.json: not evaluated yet (run stage 1 first)"
            )
        design = TwoStage(first, plan.seeds, s["sequential"]["spending"], float(s["alpha"]))
        early = stage_rule(design, plan.model, rule(config))
        values = np.array([[d[seed] for seed in wanted]])
        if bool(reproduced_now(values, plan.model, float(c.delta), plan.rows, early)[0]):
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
    """(method, backbone) -> the probability that a claim row of it is still undecided (not yet
    "reproduced") after the sequential design's first stage, when the true difference is ``truth`` x the paper's
    (claims taken as independent); only claim rows whose plan runs more seeds than the first
    stage."""
    seq = plan_settings(config)["sequential"]
    first, alpha = int(seq["first"]), float(plan_settings(config)["alpha"])
    decided: dict[tuple[str, str], float] = {}
    for plan in plans:
        if plan.seeds <= first or plan.claim.delta is None or plan.model is None or (
            shared_own_seeds(config, plan.claim)
        ):
            continue
        design = TwoStage(first, plan.seeds, seq["spending"], alpha)
        stop = stop_probability(plan.claim.delta, design, plan.model, plan.rows, rule(config),
                                truth * plan.claim.delta)  # fmt: skip
        c = plan.claim
        for key in ((c.method, c.backbone), (c.baseline, c.backbone)):
            decided[key] = decided.get(key, 1.0) * stop
    return {key: 1 - p for key, p in decided.items()}
