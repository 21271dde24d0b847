"""The dry run's GPU-hours estimate (negcse.workflow.gpu_estimate) against a hand computation, and the
shipped grid configs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from negcse.workflow.config import project_config, resolve_method
from negcse.workflow.gpu_estimate import (
    AUTO_OPTIONS,
    LARGE_FACTOR,
    corpus_size,
    estimate,
    format_table,
    gpu_generators,
    load_costs,
    mteb_jobs,
    run_options,
)
from negcse.workflow.plan import Plan

REPO = Path(__file__).resolve().parents[2]

COSTS = """kind,name,precision,batch_size,options,seconds,device,source
train_step,simcse,fp16,64,,0.02,Test GPU
train_step,simcse,fp16,64,compile+static_padding,0.01,Test GPU
train_step,simcse,fp32,64,,0.05,Test GPU
train_step,simcse_san,fp16,64,,0.03,Test GPU
train_step,sncse,fp32,256,,0.3,Test GPU
dev_eval,stsb_dev,fp16,128,,0.1,Test GPU
dev_eval,stsb_dev,fp32,128,,0.3,Test GPU
eval_job,evaluate_model,fp16,128,,60,Test GPU
mteb_job,reranking,fp32,,,100,Test GPU,derived from dev_eval
mteb_job,classification,fp32,,,200,Test GPU,derived from dev_eval
generator_sentence,san_negatives,,,,0.001,Test GPU
generator_sentence,gcse_synthesis,bf16,,,2.0,Test GPU,derived from paraphrase
generator_sentence,gcse_synthesis_vllm,bf16,,,0.5,Test GPU,derived from a published rate
train_step,sncse,tf32,256,,0.1,Test GPU
train_step,sncse,bf16,256,,0.12,Test GPU
"""


@pytest.fixture
def costs(tmp_path: Path):
    path = tmp_path / "costs.csv"
    path.write_text(COSTS)
    return load_costs(path)


def _config(methods: list[str], sentences: int = 6400) -> dict:
    config = project_config(REPO)
    config["grid"] = {
        "methods": methods,
        "backbones": ["bert-base-uncased", "bert-large-uncased"],
        "seeds": [1, 2],
    }
    config["corpus"]["max_sentences"] = sentences
    config["evaluation"]["released"] = False
    return config


def test_estimate_matches_a_hand_computation(costs) -> None:
    mteb = [("reranking", "bert-base-uncased"), ("classification", "bert-large-uncased")]
    rows = estimate(_config(["simcse", "sncse"]), costs, {"san_negatives": 3}, mteb)
    by = {r.name: r for r in rows}
    # simcse: 100 steps of batch 64 (fp16: the eager row, not the compiled one), eval every 125
    # steps -> 1 dev evaluation (the final one); BERT-large costs LARGE_FACTOR times as much
    per_run = 100 * 0.02 + 1 * 0.1
    assert by["simcse"].train_h == pytest.approx(2 * per_run * (1 + LARGE_FACTOR) / 3600)
    assert by["simcse"].eval_h == pytest.approx(2 * 60 * (1 + LARGE_FACTOR) / 3600)
    assert by["simcse"].jobs == 8  # 2 backbones x 2 seeds x (train + evaluation)
    # sncse base: batch 256 tf32 (its tf32 row), 25 steps; large: batch 128 (params.yaml) -> half
    # the step; its dev evaluations at the fp32 rate (no tf32 dev_eval row)
    base, large = 25 * 0.1 + 0.3, 50 * 0.05 + 0.3
    assert by["sncse"].train_h == pytest.approx(2 * (base + large * LARGE_FACTOR) / 3600)
    assert by["untrained baselines"].eval_h == pytest.approx(60 * (1 + LARGE_FACTOR) / 3600)
    assert by["generator: san_negatives"].train_h == pytest.approx(0.001 * 6400 * 3 / 3600)
    # MTEB: one reranking job on base (100 s), one classification job on large (200 s x L)
    assert by["MTEB evaluations"].jobs == 2
    assert by["MTEB evaluations"].eval_h == pytest.approx((100 + 200 * LARGE_FACTOR) / 3600)
    table = format_table(rows, costs, 6400, "costs.csv")
    assert "not counted" not in table and "mteb_job reranking: derived from dev_eval" in table
    total_line = next(line for line in table.splitlines() if line.startswith("total"))
    assert "Test GPU" in table
    assert f"{sum(r.total_h for r in rows):.1f}" in total_line


def test_unmeasured_precision_is_priced_by_simcse_ratio_and_unmeasured_method_flagged(
    costs,
) -> None:
    # simcse_san on bert-large runs fp32 (params.yaml); only fp16 was measured for it
    assert costs.step_seconds("simcse_san", "fp32", 64) == pytest.approx(0.03 * 0.05 / 0.02)
    assert costs.step_seconds("simcse_san", "fp16", 128) == pytest.approx(0.06)
    assert costs.step_seconds("osscse", "fp16", 64) is None
    # SNCSE's ablations keep its prompt views: priced as sncse
    assert costs.step_seconds("sncse_nl", "fp32", 256) == pytest.approx(0.3)
    rows = estimate(_config(["osscse"]), costs, {})
    assert rows[0].unpriced and "not counted" in format_table(rows, costs, 6400, "x")


def _one_run(methods: list[str]) -> dict:
    config = _config(methods)
    config["grid"]["backbones"], config["grid"]["seeds"] = ["bert-base-uncased"], [1]
    return config


def test_a_tf32_run_is_priced_from_the_tf32_row(costs) -> None:
    """SNCSE at tf32 on BERT-base: 6,400 / 256 = 25 steps at the tf32 row's 0.1 s (not the
    fp32 row's 0.3 s), one dev evaluation at the fp32 rate (no tf32 dev_eval row: 0.3 s)."""
    config = _one_run(["sncse"])
    config["methods"]["sncse"]["train"] = {
        **config["methods"]["sncse"]["train"],
        "precision": "tf32",
    }
    rows = estimate(config, costs, {})
    assert rows[0].train_h == pytest.approx((25 * 0.1 + 0.3) / 3600)
    assert rows[0].derived == set()


def test_a_16_bit_step_is_priced_from_the_same_implementations_other_16_bit_row(costs) -> None:
    """RLRD (fp16 autocast, SNCSE's three views, priced as sncse) from sncse's own bf16 row
    (0.12 s at 256): batch 128 -> 0.06 s, 4 epochs of 50 steps, 200 // 125 + 1 = 2 fp16 dev
    evaluations (0.1 s); the teachers read from their cache; the row says it is derived."""
    assert costs.step_rate("rlrd", "fp16", 256) == (pytest.approx(0.12), "sncse's bf16 step")
    rows = {r.name: r for r in estimate(_one_run(["rlrd"]), costs, {})}
    assert rows["rlrd"].train_h == pytest.approx((200 * 0.06 + 2 * 0.1) / 3600)
    assert rows["rlrd"].derived == {"sncse's bf16 step; guides read from their cache"}
    table = format_table(list(rows.values()), costs, 6400, "x")
    assert "(derived from sncse's bf16 step; guides read from their cache)" in table


RATIOS = """kind,name,precision,batch_size,options,seconds,device,source
train_step,simcse,fp16,64,,0.02,Test GPU
train_step,simcse,fp32,32,,0.025,Test GPU
train_step,sncse,bf16,256,,0.1,Test GPU
train_step,sncse,fp32,256,,0.3,Test GPU
train_step,sncse_san,fp32,256,,0.4,Test GPU
dev_eval,stsb_dev,fp16,128,,0.1,Test GPU
"""


def test_a_missing_precision_takes_the_ratio_of_the_closest_measured_load(tmp_path: Path) -> None:
    """SNCSE+SAN measured at fp32 only (0.4 s at 256, four views). The fp16 / fp32 ratio per
    sample: SimCSE's 0.02 / 64 over 0.025 / 32 = 0.4 (load 64 x 2 = 128), SNCSE's bf16 / fp32
    0.1 / 0.3 (load 256 x 3 = 768). At batch 256 (load 1,024) SNCSE's is closer: 0.4 / 3; at
    batch 16 (load 64) SimCSE's: 0.4 x 0.4 x 16 / 256 = 0.01."""
    path = tmp_path / "costs.csv"
    path.write_text(RATIOS)
    costs = load_costs(path)
    by_sncse = "sncse_san's fp32 step x sncse's bf16/fp32"
    assert costs.step_rate("sncse_san", "fp16", 256) == (pytest.approx(0.4 / 3), by_sncse)
    by_simcse = "sncse_san's fp32 step x simcse's fp16/fp32"
    assert costs.step_rate("sncse_san", "fp16", 16) == (pytest.approx(0.01), by_simcse)
    # RLRD+SAN (fp16, batch 128, priced as sncse_san: load 512, SNCSE's 768 the closer)
    rows = {r.name: r for r in estimate(_one_run(["rlrd_san"]), costs, {})}
    assert rows["rlrd_san"].train_h == pytest.approx((200 * 0.4 / 3 / 2 + 2 * 0.1) / 3600)
    assert rows["rlrd_san"].derived == {f"{by_sncse}; guides read from their cache"}


def test_bad_cost_row_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "costs.csv"
    path.write_text(COSTS.replace("0.3,Test GPU\ndev_eval", "fast,Test GPU\ndev_eval"))
    with pytest.raises(ValueError, match=r"costs.csv, line 6: bad cost row"):
        load_costs(path)


def test_generator_outputs_are_counted_once_per_distinct_file() -> None:
    config = {"generators": {"osscse_paraphrase": {"source": "backtranslation"}}}
    paths = [("san", "a"), ("san", "a"), ("san", "b"), ("paraphrase_osscse", "c"), ("x", "d")]
    assert gpu_generators(config, paths) == {"san_negatives": 2, "back_translation": 1}
    config = {"generators": {"osscse_paraphrase": {"source": "surface_edits"}}}
    assert gpu_generators(config, paths) == {"san_negatives": 2}


def test_default_grid_is_every_configured_method_and_configfiles_select() -> None:
    config = project_config(REPO)
    grid = config["grid"]["methods"]
    # every configured method is in the grid, but a stage-1 run that is only another's guide
    # and SAN's hyperparameter grids, which config/san-grids.yaml runs (no claim reads them)
    guided = {
        g["method"]
        for m in grid
        for g in (config["methods"][m].get("guides") or {}).values()
        if "method" in g
    }
    san_grids = {m for m in config["methods"] if "_tau" in m or "_lambda" in m}
    assert len(san_grids) == 18 + 3
    assert grid == [
        m for m in config["methods"] if (m in grid or m not in guided) and m not in san_grids
    ]
    assert (
        set(config["methods"]) - set(grid)
        == {
            "gcse_stage1",
            "gcse_stage1_wo_general",
            "gcse_stage1_wo_domain",
        }
        | san_grids
    )
    overlay = project_config(REPO, REPO / "config" / "san-grids.yaml")
    assert san_grids < set(overlay["grid"]["methods"])
    assert len(config["grid"]["backbones"]) == 4
    for name in ("simcse-only", "main-methods", "san-grids"):
        small = project_config(REPO, REPO / "config" / f"{name}.yaml")
        assert set(small["grid"]["methods"]) < set(config["methods"])


def test_unmeasured_evaluation_job_is_said(tmp_path: Path) -> None:
    path = tmp_path / "costs.csv"
    path.write_text("\n".join(line for line in COSTS.splitlines() if "eval_job" not in line))
    costs = load_costs(path)
    rows = estimate(_config(["simcse"]), costs, {})
    assert rows[0].eval_h == 0.0
    by = {r.name: r for r in rows}
    assert by["untrained baselines"].unpriced
    assert "untrained baselines" in format_table(rows, costs, 6400, "x").split("not counted")[0]


def test_teachers_forward_passes_are_added_to_the_students_step(costs) -> None:
    """RankCSE on BERT-base (params.yaml): SimCSE's two trained views at batch 128, fp16, plus
    two frozen teachers that each encode the sentence once (forward only: a third of a trained
    view): DiffCSE-BERT-base (size 1) and SimCSE-BERT-large (size LARGE_FACTOR)."""
    config = _config(["rankcse"])
    config["guide_cache"] = False  # each step runs the teachers
    config["grid"]["backbones"], config["grid"]["seeds"] = ["bert-base-uncased"], [1]
    train = config["methods"]["rankcse"]["train"]
    assert (train["batch_size"], train.get("epochs", 1)) == (128, 1)
    student = 0.02 * 128 / 64  # simcse fp16 at batch 64 -> 128
    per_view = student / 2
    step = student + per_view / 3 * (1 + LARGE_FACTOR)
    steps = 6400 // 128  # 50; dev evaluation at the end only (every 125 steps)
    rows = estimate(config, costs, {})
    assert rows[0].train_h == pytest.approx((steps * step + 0.1) / 3600)
    assert rows[0].derived == {"simcse's step + guide forwards"}
    assert "guide encodings" not in {r.name for r in rows}


def test_cached_teachers_are_encoded_once_and_the_students_step_has_no_forwards(costs) -> None:
    """The same RankCSE runs with guide caches (the default), at two seeds, beside RankCSE+SAN:
    each student's step is SimCSE's (SimCSE+SAN's) alone; the caches are DiffCSE's (released:
    the sentence and the SAN samples; one per seed, as each seed has its own SAN samples) and
    each seed's SimCSE-BERT-large and SimCSE+SAN-BERT-large teacher (the sentence; + the SAN
    samples for the latter): 6 jobs of 6,400 rows per text at the fp16 dev evaluation's
    per-sentence rate (0.1 s / 3,000)."""
    config = _config(["rankcse", "rankcse_san"])
    config["grid"]["backbones"] = ["bert-base-uncased"]
    plan = Plan(config, log=lambda note: None)
    jobs = list(plan.guide_caches[0].values())
    rows = {r.name: r for r in estimate(config, costs, {}, guide_caches=jobs)}
    steps = 6400 // 128
    assert rows["rankcse"].train_h == pytest.approx(2 * (steps * 0.02 * 2 + 0.1) / 3600)
    assert rows["rankcse"].derived == {"simcse's step; guides read from their cache"}
    large = "results/models/{}/bert-large-uncased/seed{}"
    assert sorted((j.model, len(j.texts)) for j in jobs) == [
        (large.format("simcse", 1), 1),
        (large.format("simcse", 2), 1),
        (large.format("simcse_san", 1), 2),
        (large.format("simcse_san", 2), 2),
        ("voidism/diffcse-bert-base-uncased-sts", 2),
        ("voidism/diffcse-bert-base-uncased-sts", 2),
    ]
    # a measured step of RankCSE compiled as compile: auto runs it, its teachers cached
    # (benchmarks/gpu.py's guide_cache cases), prices it: measured, not derived from SimCSE's
    measured = costs.compiled | {("rankcse", "fp16", f"{AUTO_OPTIONS}+guide_cache"): (0.03, 64)}
    rows2 = estimate(config, replace(costs, compiled=measured), {}, guide_caches=jobs)
    rank = next(r for r in rows2 if r.name == "rankcse")
    assert rank.train_h == pytest.approx(2 * (steps * 0.03 * 2 + 0.1) / 3600)
    assert rank.derived == set() and rank.compiled
    per_text = 0.1 / 3000 * 6400 / 3600
    want = per_text * (2 * 2 + 2 * LARGE_FACTOR + 2 * 2 * LARGE_FACTOR)
    assert rows["guide encodings"].jobs == 6
    assert rows["guide encodings"].train_h == pytest.approx(want)


def test_corpus_sizes_come_from_the_config_and_registered_line_counts() -> None:
    """The mixed corpora before they exist: STS12 train 750 + 750 + 734 pairs, PAWS 3,500
    (max_pairs), SICK train 4,501 lines: 2 sentences per pair = 20,470 domain lines, plus 3
    general lines each (an upper bound: the built mix drops repeats)."""
    config = project_config(REPO)
    domain = 2 * (750 + 750 + 734 + 3500 + 4501)
    assert corpus_size(config, "wiki1m") == 1_000_000
    assert corpus_size(config, "gcse-domain") == domain * 4
    assert corpus_size(config, "gcse-domain-wo-general") == domain
    assert corpus_size(config, "gcse-domain-wo-domain") == domain * 3


def test_gcse_stage2_is_priced_on_its_sources_the_same_before_and_after_corpora_exist(
    costs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GCSE (Table 2 setting) with max_sources 1,000, paper mode: stage 2 trains 2 epochs of 1,000
    triplets at batch 128 (8 steps each: 16), the synthesis runs once (3 prompts per source at
    the derived 2 s), the denoising once per stage-1 model; files in results/ change nothing."""
    config = _config(["gcse"])
    config["guide_cache"] = False  # the stage-1 guide runs at every step
    config["grid"]["backbones"], config["grid"]["seeds"] = ["bert-base-uncased"], [1]
    config["generators"]["gcse"].update(max_sources=1000, mode="paper", backend="transformers")
    monkeypatch.chdir(tmp_path)
    before = estimate(config, costs, {})
    corpus = tmp_path / "results/data/corpus"
    corpus.mkdir(parents=True)
    (corpus / "wiki1m.txt").write_text("one line\n" * 10)
    after = estimate(config, costs, {})
    assert [(r.name, r.total_h) for r in before] == [(r.name, r.total_h) for r in after]
    by = {r.name: r for r in before}
    train = resolve_method(config, "gcse", "bert-base-uncased")["train"]
    assert (train["batch_size"], train["epochs"], train["precision"]) == (128, 2, "fp32")
    # simcse_san's fp16 step (0.03 at 64) at fp32 by SimCSE's fp32 / fp16 ratio (0.05 / 0.02),
    # at batch 128, its 3 views, plus the stage-1 guide's two texts (anchor, its negative) at a
    # third of a view each; one fp32 dev evaluation (0.3 s) at the end
    student = 0.03 * 0.05 / 0.02 * 2
    step = student + 2 * (student / 3) / 3
    assert by["gcse"].train_h == pytest.approx((16 * step + 0.3) / 3600)
    assert by["generator: gcse_synthesis"].jobs == 1
    assert by["generator: gcse_synthesis"].train_h == pytest.approx(1000 * 2.0 / 3600)
    # the released pipeline: two extraction prompts + 1 + 1 = 4/3 of the row's 3 prompts;
    # "w randomly" (no positive or negative prompt) runs no LLM
    config["generators"]["gcse"]["mode"] = "released"
    released = {r.name: r for r in estimate(config, costs, {})}
    assert released["generator: gcse_synthesis"].train_h == pytest.approx(1000 * 2.0 * 4 / 3 / 3600)
    # vLLM (the default backend): its own row at its own cost (0.5 s per 3 prompts), labelled
    config["generators"]["gcse"]["backend"] = "vllm"
    vllm = {r.name: r for r in estimate(config, costs, {})}
    assert "generator: gcse_synthesis" not in vllm
    assert vllm["generator: gcse_synthesis_vllm"].train_h == pytest.approx(
        1000 * 0.5 * 4 / 3 / 3600
    )
    assert vllm["generator: gcse_synthesis_vllm"].derived == {"a published vLLM tokens/s"}
    config["generators"]["gcse"].update(positives=0, negatives=0)
    names = {r.name for r in estimate(config, costs, {})}
    assert not any(n.startswith("generator: gcse_synthesis") for n in names)
    # denoising: the 1,000 sources and their 2 candidates at the fp32 dev rate (0.3 s / 3,000)
    assert by["generator: gcse_denoise"].train_h == pytest.approx(3000 * 0.3 / 3000 / 3600)


def test_shipped_costs_price_every_job_of_the_default_grid() -> None:
    config = project_config(REPO)
    costs = load_costs(REPO / "benchmarks" / "gpu_costs.csv")
    files = [
        f"results/eval/mteb/{g}/{m}/{b}/seed42.json"
        for g in ("reranking", "classification")
        for m in config["grid"]["methods"][:2]
        for b in config["grid"]["backbones"]
    ]
    jobs = mteb_jobs(files, config["grid"]["backbones"])
    assert jobs[0] == ("reranking", config["grid"]["backbones"][0])
    rows = estimate(config, costs, {"back_translation": 1, "paraphrase": 1}, jobs)
    assert not [r.name for r in rows if r.unpriced]
    assert "not counted" not in format_table(rows, costs, 1_000_000, "gpu_costs.csv")


def test_run_options_name_what_each_compile_setting_runs_on_cuda() -> None:
    assert run_options({"compile": "auto"}) == AUTO_OPTIONS
    assert AUTO_OPTIONS == "compile(reduce-overhead)+static_padding"  # benchmarks/gpu.py's name
    assert run_options({"compile": False, "static_padding": True}) == ""
    assert run_options({"compile": True, "static_padding": True}) == "compile+static_padding"
    assert run_options({"compile": "max-autotune"}) == "compile(max-autotune)"


MEASURED = """kind,name,precision,batch_size,options,seconds,device,source
train_step,simcse,fp16,64,,0.025,Other GPU,measured
train_step,simcse,fp16,64,compile(reduce-overhead)+static_padding,0.008,Other GPU,measured
jobs_per_gpu,simcse,fp16,64,K=1,0.025,Other GPU,measured
jobs_per_gpu,simcse,fp16,64,K=2,0.0125,Other GPU,measured
generator_sentence,gcse_synthesis,bf16,8,,1.5,Other GPU,"measured: GLM-4-9B architecture"
"""


def test_a_measured_csv_reprices_the_grid(tmp_path: Path) -> None:
    """The shipped costs, then a GPU run's measured CSV over them: its rows win (SimCSE's eager
    step, GCSE's synthesis, no longer derived), compile: auto's measured rate prices the steps
    it runs (params.yaml's default), and K jobs per GPU divide eager steps by the measured
    aggregate speed-up."""
    shipped, measured = tmp_path / "costs.csv", tmp_path / "measured.csv"
    shipped.write_text(COSTS)
    measured.write_text(MEASURED)
    costs = load_costs(shipped, measured)
    assert costs.device == "Other GPU"
    assert costs.step[("simcse", "fp16")] == (0.025, 64)
    assert costs.generator["gcse_synthesis"] == 1.5
    assert ("generator_sentence", "gcse_synthesis") not in costs.derived
    assert costs.compiled_seconds("simcse", "fp16", 128, AUTO_OPTIONS) == pytest.approx(0.016)
    assert costs.compiled_seconds("rankcse", "fp16", 64, AUTO_OPTIONS) == pytest.approx(0.008)
    assert costs.jobs_speedup(2) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="no jobs_per_gpu rows for K=1 and K=4"):
        costs.jobs_speedup(4)

    config = _config(["simcse", "simcse_san"])
    config["grid"]["backbones"] = ["bert-base-uncased"]
    assert resolve_method(config, "simcse", "bert-base-uncased")["train"]["compile"] == "auto"
    rows = {r.name: r for r in estimate(config, costs, {})}
    per_run = 100 * 0.008 + 1 * 0.1  # compiled step, one dev evaluation (fp16)
    assert rows["simcse"].compiled and rows["simcse"].train_h == pytest.approx(2 * per_run / 3600)
    assert not rows["simcse_san"].compiled  # only its eager step was measured
    eager = rows["simcse_san"].train_h
    shared = {r.name: r for r in estimate(config, costs, {}, jobs_per_gpu=2)}
    assert shared["simcse_san"].train_h == pytest.approx(eager - 2 * 100 * 0.03 / 2 / 3600)
    assert shared["simcse"].train_h == rows["simcse"].train_h  # compiled: not shared
    table = format_table(list(shared.values()), costs, 6400, "a + b", jobs_per_gpu=2)
    assert "compile: auto = reduce-overhead + static padding) for: simcse;" in table
    assert "Eager training steps at 2 jobs per GPU: the measured aggregate rate, 2.00x" in table


def test_each_jobs_modelled_seconds_are_its_share_of_the_estimate(tmp_path: Path) -> None:
    """What `negcse status` scales: a training is its run's steps and dev evaluations (the
    hand computation above: 100 steps x 0.02 s + one dev evaluation of 0.1 s on BERT-base, times
    LARGE_FACTOR on BERT-large), an evaluation job the eval_job row, a GPU generator output its
    per-sentence cost over the corpus, CPU work nothing."""
    from types import SimpleNamespace

    from negcse.workflow.gpu_estimate import job_seconds
    from negcse.workflow.plan.load import with_defaults

    path = tmp_path / "costs.csv"
    path.write_text(COSTS)
    config = with_defaults(_config(["simcse", "simcse_san"]))
    seconds = job_seconds(config, path)

    def job(rule: str, **wildcards: str) -> SimpleNamespace:
        return SimpleNamespace(rule=rule, wildcards=wildcards)

    base = job("train", method="simcse", backbone="bert-base-uncased", seed="1")
    large = job("train", method="simcse", backbone="bert-large-uncased", seed="2")
    assert seconds(base) == pytest.approx(100 * 0.02 + 0.1)
    assert seconds(large) == pytest.approx((100 * 0.02 + 0.1) * LARGE_FACTOR)
    assert seconds(job("evaluate_model", method="simcse", backbone="bert-base-uncased")) == 60
    assert seconds(job("evaluate_untrained", backbone="bert-large-uncased")) == pytest.approx(
        60 * LARGE_FACTOR
    )
    # SAN's negatives: one file per seed for the grid's 2 seeds, 0.001 s a sentence of 6,400
    assert seconds(job("san_negatives", corpus="wiki")) == pytest.approx(0.001 * 6400)
    assert seconds(job("table", table="sts")) == 0.0


def test_an_encode_guide_job_is_priced_as_its_rows_average(tmp_path: Path) -> None:
    """`negcse status` prices a guide-cache job as the guide-encodings row over its jobs
    (RankCSE on BERT-base at one seed: DiffCSE's and the seed's SimCSE-BERT-large teacher, the
    sentence each: 6,400 x (1 + LARGE_FACTOR) at the fp16 dev evaluation's rate, two jobs)."""
    from types import SimpleNamespace

    from negcse.workflow.gpu_estimate import job_seconds
    from negcse.workflow.plan.load import with_defaults

    path = tmp_path / "costs.csv"
    path.write_text(COSTS)
    config = with_defaults(_config(["rankcse"]))
    config["grid"]["backbones"], config["grid"]["seeds"] = ["bert-base-uncased"], [1]
    seconds = job_seconds(config, path)
    job = SimpleNamespace(rule="encode_guide", wildcards={"key": "any"})
    assert seconds(job) == pytest.approx(0.1 / 3000 * 6400 * (1 + LARGE_FACTOR) / 2)
