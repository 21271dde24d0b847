"""The seed plan: the power of the verdict rule's "reproduced" (against the one-sided paired
t-test of statsmodels, and a simulation of the rule over a family), published group-sequential
boundaries, each claim's planned seeds, and the grid's seeds that follow from them."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from negcse.analysis import verdict_rules
from negcse.analysis.seed_power import (
    VarianceModel,
    floor,
    min_detectable,
    power,
    reach,
    seeds_needed,
)
from negcse.analysis.sequential import TwoStage, nominal_levels, simulate
from negcse.analysis.verdict_rules import Rule
from negcse.workflow import seed_plan
from negcse.workflow.config import grid_runs, method_seeds, project_config

REPO = Path(__file__).resolve().parents[2]
UNA_D7 = 0.67  # UNA Table D7's paired seed sd (STS average)
UNA_D7_SEEDS = [42, 0, 1, 11, 15, 48, 111, 421, 456, 3407]  # printed in UNA Appendix D


@pytest.mark.parametrize("rows", [1, 8])
def test_power_without_a_test_set_is_the_one_sided_t_tests(rows: int) -> None:
    """With no test-set share "reproduced" is the one-sided paired t-test of "the effect is at
    most half the paper's" at 0.025 / rows: its power by the noncentral t written out here, and
    by statsmodels' TTestPower."""
    smp = pytest.importorskip("statsmodels.stats.power")
    model = VarianceModel(UNA_D7, 0.0, "test")
    for n, delta in ((3, 3.0), (5, 2.0), (10, 1.4)):
        df, ncp = n - 1, 0.5 * delta / UNA_D7 * math.sqrt(n)
        by_hand = stats.nct.sf(stats.t.isf(0.025 / rows, df), df, ncp)
        assert power(delta, n, model, rows) == pytest.approx(by_hand, abs=1e-6)
        theirs = smp.TTestPower().power(effect_size=0.5 * delta / UNA_D7, nobs=n,
                                        alpha=0.025 / rows, alternative="larger")  # fmt: skip
        assert power(delta, n, model, rows) == pytest.approx(theirs, abs=1e-6)
    # a direction only: the test of "at most 0", the whole difference
    assert power(1.4, 10, model, rows, sized=False) == pytest.approx(
        smp.TTestPower().power(effect_size=1.4 / UNA_D7, nobs=10, alpha=0.025 / rows,
                               alternative="larger"), abs=1e-6)  # fmt: skip


@pytest.mark.parametrize("rows", [1, 4])
def test_power_agrees_with_a_simulation_of_the_rule(rows: int) -> None:
    """The analytic power against the share of simulated families (``rows`` claims of the
    paper's size, seeds' sd estimated, the test set's share drawn per claim) in which the
    corrected verdict is "reproduced"; its inverse is the verdicts table's MDE."""
    model = VarianceModel(UNA_D7, 0.3, "test")
    for n, delta in ((3, 4.5), (5, 3.0), (10, 2.2)):
        sim = verdict_rules.simulate(n, np.full(rows, delta), delta, UNA_D7, test_sd=0.3,
                                     replicates=6000, rng=np.random.default_rng(n))  # fmt: skip
        rate = float(np.mean(sim["corrected"] == verdict_rules.REPRODUCED))
        assert rate == pytest.approx(power(delta, n, model, rows), abs=0.03)
        mde = min_detectable(n, model, rows)
        assert mde == pytest.approx(verdict_rules.planned_mde(UNA_D7, n, 0.3, rows))
        assert power(mde, n, model, rows) == pytest.approx(0.8, abs=1e-4)


def test_floor_and_reach_bound_what_seeds_can_do() -> None:
    """The floor is the verdicts table's (2.80 x the test set's sd); no seed count gives more
    power than the test set alone allows (:func:`reach`)."""
    model = VarianceModel(UNA_D7, 0.3, "test")
    assert floor(model) == pytest.approx(2.8016 * 0.3, abs=1e-3)
    assert floor(model) == verdict_rules.detection_floor(0.09)
    for delta in (1.5, 2.7):
        assert power(delta, 10, model, 8) < power(delta, 200, model, 8) < reach(delta, model, 8)
        assert power(delta, 20000, model, 8) == pytest.approx(reach(delta, model, 8), abs=2e-3)
    # another truth than the paper's: at half the paper's, "reproduced" is a false verdict,
    # at most the test's level (one-sided 0.025 / k) whatever the seeds
    for n in (3, 10, 40):
        assert power(2.7, n, model, 8, truth=1.35) <= 0.025 / 8 + 1e-9
    assert power(2.7, 10, model, 8, truth=2.7) == power(2.7, 10, model, 8)


def test_seeds_needed_is_the_first_count_with_the_power() -> None:
    model = VarianceModel(UNA_D7, 0.3, "test")
    n = seeds_needed(4.6, model, 8)
    assert n == 5 and power(4.6, 4, model, 8) < 0.8 <= power(4.6, 5, model, 8)
    assert seeds_needed(2.72, model, 8) is None  # SNCSE's +2.72 in its family of 8: 0.75 at 10
    assert seeds_needed(2.72, model, 1) is not None
    assert seeds_needed(9.0, model, 1, Rule(), low=3) == 3


def test_obrien_fleming_spending_at_half_the_information_matches_published_bounds() -> None:
    """Lan-DeMets O'Brien-Fleming-type spending, two looks at information 0.5 and 1, two-sided
    0.05: z bounds 2.963 and 1.969 (Jennison and Turnbull; R's ldbounds); Pocock-type: 2.157
    and 2.201."""
    model = VarianceModel(UNA_D7, 0.0, "test")  # information grows with the seeds: 5 of 10
    a1, a2 = nominal_levels(TwoStage(5, 10, "obrien-fleming"), model)
    assert stats.norm.isf(a1 / 2) == pytest.approx(2.963, abs=2e-3)
    assert stats.norm.isf(a2 / 2) == pytest.approx(1.969, abs=2e-3)
    a1, a2 = nominal_levels(TwoStage(5, 10, "pocock"), model)
    assert stats.norm.isf(a1 / 2) == pytest.approx(2.157, abs=3e-3)
    assert stats.norm.isf(a2 / 2) == pytest.approx(2.201, abs=3e-3)


@pytest.mark.parametrize("spending", ["obrien-fleming", "pocock"])
@pytest.mark.parametrize("heavy", [False, True])
def test_sequential_design_keeps_its_error_rate_and_saves_seeds(heavy: bool, spending: str) -> None:
    """No true difference: the two-stage design (3 seeds, then 10) decides (either way) at most
    5% of claims, normal seeds or t(3) seeds; a true difference of 2: it runs fewer seeds than
    the fixed ten-seed design, its power within a few points of that design's."""
    model = VarianceModel(UNA_D7, 0.3, "test")
    design = TwoStage(3, 10, spending)
    null = simulate(0.0, model, design, reps=20000, rng=np.random.default_rng(1), heavy=heavy)
    assert null.positive + null.negative <= 0.05
    true = simulate(2.0, model, design, reps=20000, rng=np.random.default_rng(2), heavy=heavy)
    fixed = simulate(2.0, model, 10, reps=20000, rng=np.random.default_rng(2), heavy=heavy)
    assert true.seeds < {"obrien-fleming": 9.5, "pocock": 7}[spending]
    assert true.positive >= fixed.positive - 0.05


@pytest.fixture(scope="module")
def config() -> dict:
    return project_config(REPO)


def test_claim_rows_get_their_planned_seeds_and_other_rows_one(config: dict) -> None:
    plans = {
        (p.claim.measure, p.claim.method, p.claim.baseline, p.claim.backbone): p
        for p in seed_plan.claim_plans(config)
    }
    # SNCSE's STS family: 10 claim rows, 2 below the floor, so a Bonferroni k of 8
    sncse = plans[("sts", "sncse", "simcse", "roberta-large")]  # +2.87
    assert sncse.rows == 8 and sncse.seeds == 10 and sncse.why == ""
    assert power(2.87, 9, sncse.model, 8) < 0.8 <= sncse.power
    nl = plans[("sts", "sncse_nl", "sncse", "bert-base-uncased")]  # -4.60
    assert nl.seeds == 5 and nl.power >= 0.8
    capped = plans[("sts", "sncse", "simcse", "bert-base-uncased")]  # +2.72: 0.75 at 10
    assert capped.seeds == 10 and capped.why == "power 0.75 at the cap of 10 seeds"
    d7 = plans[("sts", "una_both", "una_baseline", "bert-base-uncased")]  # +1.82, Table D7's
    assert d7.seeds == 10 and d7.why == "power 0.31 at the paper's own 10 seeds (methods.<m>.seeds)"
    assert d7.power == pytest.approx(power(1.82, 10, d7.model, 8))
    weak = plans[("sts", "una_both", "una_paraphrase", "bert-base-uncased")]  # +0.96
    assert weak.seeds == 3 and weak.why.startswith("power 0.05 at the cap of 10 seeds, below 0.50")
    san = plans[("sts", "rankcse_san", "rankcse", "roberta-base")]  # +0.12, floor 0.84
    assert san.seeds == 1 and san.why == "untestable on these test sets (floor 0.84)"
    # no published seed sd for the probe's cosines or MTEB: no prior, the fewest seeds
    probe = plans[("probe_paraphrase", "osscse", "simcse", "bert-base-uncased")]
    assert probe.model is None and probe.seeds == 3 and probe.why == seed_plan.NO_PRIOR
    assert math.isnan(probe.power)
    # GCSE's Table 4 ablations name ChatGLM3-6B, the grid's LLM is GLM4-9B-Chat: no claim row
    assert not [k for k in plans if k[1] == "gcse_wo_decay"]
    assert ("sts", "gcse", "simcse", "bert-base-uncased") in plans
    # a method and backbone runs the most seeds its claim rows ask for
    assert method_seeds(config, "sncse", "bert-large-uncased") == [42, 43, 44]
    assert method_seeds(config, "simcse", "bert-base-uncased") == list(range(42, 52))
    assert method_seeds(config, "simcse_dropout15", "roberta-base") == [42]  # a control
    assert method_seeds(config, "una_random_both", "roberta-base") == [42]  # direction check
    assert method_seeds(config, "una_both", "bert-base-uncased") == UNA_D7_SEEDS  # D7's own


def test_planning_again_integrates_no_power_twice(config: dict) -> None:
    """A dry run plans the claims three times (the grid's seeds, the designs' hours, the claim
    table): the second plan reads every power and MDE from the cache and equals the first, which
    equals one computed without it."""
    cached = (verdict_rules.rejection_probability, verdict_rules.detectable)
    for f in cached:
        f.cache_clear()
    first = seed_plan.claim_plans(config)
    misses = [f.cache_info().misses for f in cached]
    assert misses[1] > 0
    again = seed_plan.claim_plans(config)
    assert [f.cache_info().misses for f in cached] == misses
    assert again == first
    plan = next(p for p in first if p.claim.delta is not None and p.model is not None)
    m, rows, rule = plan.model, plan.rows, verdict_rules.Rule()
    tail = rule.alpha / 2.0 / rows
    by_hand = verdict_rules.detectable.__wrapped__(
        m.seed_sd**2 / plan.seeds, m.test_sd**2, plan.seeds - 1.0, tail, rule.power
    )
    assert plan.mde == pytest.approx(by_hand / (1.0 - rule.fraction), rel=1e-12)


def test_reduced_scale_and_fixed_grids_keep_grid_seeds(config: dict) -> None:
    reduced = {**config, "train_overrides": {"max_steps": 40}}
    assert method_seeds(reduced, "simcse_dropout15", "roberta-base") == [42, 43, 44]
    fixed = {**config, "seed_plan": {"mode": "fixed"}}
    assert method_seeds(fixed, "sncse", "bert-large-uncased") == [42, 43, 44]
    assert len(grid_runs(fixed)) > len(grid_runs(config))


def test_the_runs_own_seeds_replace_the_prior_where_evaluated(config: dict, tmp_path: Path) -> None:
    """Three paired seeds of sncse and simcse on BERT-base: their differences' sd (by hand:
    differences 2, 3, 4 -> sd 1) replaces the prior's 0.67; two seeds are too few."""
    for method, values in (("sncse", (78.0, 79.5, 80.0)), ("simcse", (76.0, 76.5, 76.0))):
        folder = tmp_path / "eval" / "sts" / method / "bert-base-uncased"
        folder.mkdir(parents=True)
        for seed, value in zip((42, 43, 44), values, strict=True):
            (folder / f"seed{seed}.json").write_text(json.dumps({"avg": value}))
    own = seed_plan.own_models(config, tmp_path)
    model = own[("sts", "sncse", "simcse", "bert-base-uncased")]
    assert model.seed_sd == pytest.approx(1.0) and model.test_sd == 0.3
    assert list(own) == [("sts", "sncse", "simcse", "bert-base-uncased")]
    plan = next(
        p for p in seed_plan.claim_plans(config, own)
        if p.claim.pair == ("sts", "sncse", "simcse") and p.claim.backbone == "bert-base-uncased"
    )  # fmt: skip
    assert plan.model.source == "own 3 seeds, prior test sd"
    needed = seeds_needed(2.72, model, plan.rows, seed_plan.rule(config), low=3)
    assert plan.rows == 8 and needed is None  # sd 1: 10 seeds fall short of 80% ...
    assert plan.seeds == (10 if power(2.72, 10, model, 8) >= 0.5 else 3)  # ... worth them?
    (tmp_path / "eval" / "sts" / "simcse" / "bert-base-uncased" / "seed44.json").unlink()
    assert seed_plan.own_models(config, tmp_path) == {}


def _stage_config(config: dict, stage: int, results: Path) -> dict:
    """SNCSE vs SimCSE on two backbones (a family of 2): BERT-base planned at 7 seeds,
    BERT-large at the cap of 10 (power 0.52)."""
    out = {**config, "grid": {**config["grid"], "methods": ["simcse", "sncse"],
                              "backbones": ["bert-base-uncased", "bert-large-uncased"]}}  # fmt: skip
    out["seed_plan"] = {**config["seed_plan"], "stage": stage, "results": str(results)}
    return out


def _evaluate(results: Path, method: str, values: tuple[float, ...]) -> None:
    for backbone in ("bert-base-uncased", "bert-large-uncased"):  # both planned beyond 3
        folder = results / "eval" / "sts" / method / backbone
        folder.mkdir(parents=True, exist_ok=True)
        for seed, value in zip((42, 43, 44), values, strict=True):
            (folder / f"seed{seed}.json").write_text(json.dumps({"avg": value}))


def test_sequential_stages_add_seeds_only_to_undecided_claims(config: dict, tmp_path: Path) -> None:
    """Stage 1: every claim row at its first 3 seeds. Stage 2: a claim whose 3 paired seeds
    are decided at stage 1's level (a steady +3: past 0 by far) keeps 3; an undecided one (+3,
    -1, +0.5) runs on to its planned 10; a stage-1 seed not evaluated is a user error."""
    from negcse.errors import UserError

    one = _stage_config(config, 1, tmp_path)
    assert method_seeds(one, "sncse", "bert-large-uncased") == [42, 43, 44]
    fixed = _stage_config(config, 1, tmp_path) | {"seed_plan": {**config["seed_plan"]}}
    assert method_seeds(fixed, "sncse", "bert-large-uncased") == list(range(42, 52))
    _evaluate(tmp_path, "simcse", (77.0, 77.1, 76.9))
    _evaluate(tmp_path, "sncse", (80.0, 80.1, 79.9))
    two = _stage_config(config, 2, tmp_path)
    assert seed_plan.planned_counts(two)[("sncse", "bert-large-uncased")] == 3
    _evaluate(tmp_path, "sncse", (80.0, 76.1, 77.4))
    assert seed_plan.planned_counts(two)[("sncse", "bert-large-uncased")] == 10
    (tmp_path / "eval" / "sts" / "sncse" / "bert-large-uncased" / "seed44.json").unlink()
    with pytest.raises(UserError, match=r"seed44\.json: not evaluated yet \(run stage 1 first\)"):
        seed_plan.planned_counts(two)


def test_a_claims_hours_price_each_seed_as_the_grid_estimate_does(config: dict) -> None:
    """seed_hours (the plan's unit) times the seeds equals the grid estimate's row of the same
    runs; the sequential design's expected saving lies between nothing and the runs beyond its
    first stage."""
    from negcse.workflow.gpu_estimate import COSTS_FILE, estimate, load_costs
    from negcse.workflow.seed_costs import seed_hours, sequential_saving

    costs = load_costs(REPO / COSTS_FILE)
    grid = {**config["grid"], "methods": ["sncse"], "backbones": ["bert-large-uncased"]}
    fixed = {**config, "grid": {**grid, "seeds": [1, 2, 3, 4]}, "seed_plan": {"mode": "fixed"}}
    row = estimate(fixed, costs, {})[0]
    assert row.name == "sncse" and row.jobs == 8
    assert row.total_h == pytest.approx(4 * seed_hours(fixed, costs, "sncse", "bert-large-uncased"))
    plans = seed_plan.claim_plans(config)
    saved = sequential_saving(config, costs, plans)
    counts = seed_plan.planned_counts(config)
    beyond = sum(
        seed_hours(config, costs, m, b) * (n - 3)
        for (m, b), n in counts.items()
        if n > 3 and not config["methods"][m].get("seeds")
        and not (config["methods"][m].get("backbones") or {}).get(b, {}).get("seeds")
    )  # fmt: skip
    assert 0 < saved < beyond
    assert sequential_saving(config, costs, plans, truth=0.0) < saved  # nothing true: few stop
