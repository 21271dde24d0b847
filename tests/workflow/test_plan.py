"""The workflow plan (negcse.workflow.plan) without Snakemake: the smoke grid's jobs (params.yaml
with tests/smoke/config.yaml) against paths and arguments written out from the specs and the
config by hand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from negcse.cli import main
from negcse.methods.san import SAN_COLUMN
from negcse.workflow.config import method_seeds
from negcse.workflow.plan import SUBJECTS, Plan, expand
from negcse.workflow.plan.load import profile_configfiles, workflow_config

REPO = Path(__file__).resolve().parents[2]
TRAINED, UNTRAINED, RELEASED = SUBJECTS
#: the smoke config's evaluation settings (tests/smoke/config.yaml), as options
TRANSFER = "--transfer-tasks CR TREC --transfer-kfold 5 --transfer-classifier sentevalish"
SPLITS = (
    "--splits-protocol senteval --splits-datasets STS16-answer-answer STS16-headlines "
    "STS16-plagiarism STS16-postediting STS16-question-question STSB-test"
)


@pytest.fixture(scope="module")
def plan() -> Plan:
    config = workflow_config(REPO, [REPO / "tests/smoke/config.yaml"])
    return Plan(config, log=lambda message: None)


def test_a_training_reads_its_generators_column_files(plan: Plan) -> None:
    """UNA reads the TF-IDF negatives of its settings (smoke: window TF-IDF, beta 0.5, 4000
    replacements, sentence level, 10000 candidates) for its seed; SNCSE the negated corpus;
    RankCSE no column but its two teachers' folders (seed-matched)."""
    corpus = "results/data/corpus/wiki-smoke.txt"
    una = "results/negatives/una/wiki-smoke/tfidf-window_b0.5_r4000_sentence_c10000/seed1.txt"
    assert plan.train_inputs("una", "splade-tiny", "1") == {"corpus": corpus, "una_negative": una}
    assert plan.column_args("una", {"una_negative": una}) == f"--column una_negative={una}"
    negation = "results/negatives/negation/wiki-smoke/sncse.txt"
    assert plan.train_inputs("sncse", "splade-tiny", "1")["negation_sncse"] == negation
    assert plan.train_inputs("rankcse", "splade-tiny", "1") == {
        "corpus": corpus,
        "guide_teacher1": "results/models/simcse/splade-tiny/seed1",
        "guide_teacher2": "results/models/simcse_dropout15/splade-tiny/seed1",
    }
    guides = plan.guide_args("rankcse", "splade-tiny", "1").split()
    assert "teacher1=results/models/simcse/splade-tiny/seed1" in guides


def test_a_column_no_generator_makes_is_named(plan: Plan) -> None:
    with pytest.raises(KeyError, match=r"no_such_column.*\(method una\)"):
        plan.column_input("no_such_column", "una", "splade-tiny", "1")


def test_a_released_checkpoint_is_evaluated_with_its_own_pooler_and_no_analysis(
    plan: Plan,
) -> None:
    wildcards = {"released": "gcse_checkpoint", "backbone": "bert-base-uncased"}
    outputs = {
        name: path.format(**wildcards)
        for name, (path, _) in plan.evaluation_outputs(RELEASED).items()
    }
    assert outputs == {
        kind: f"results/eval/{kind}/released/gcse_checkpoint/bert-base-uncased.json"
        for kind in ("sts", "transfer", "splits", "probe")
    }
    inputs = plan.evaluation_inputs(RELEASED)
    assert inputs == {
        "sts": "results/data/sts_manifest.tsv",
        "transfer": "results/data/transfer_manifest.tsv",
    }
    args = plan.evaluation_args(wildcards, inputs, outputs, 2)
    out = "released/gcse_checkpoint/bert-base-uncased.json"
    assert args == (
        # found nowhere when the job runs: written as unavailable (planning asks no network)
        "--only sts,transfer,splits,probe --unavailable-ok --model aleversn/GCSE-BERT-base "
        "--pooler cls_before_pooler --batch-size 128 --threads 2  "  # no mirror in the config
        "--tag method=gcse_checkpoint --tag backbone=bert-base-uncased --tag seed=0 "
        f"--sts-protocol senteval --sts-pairs --sts-out results/eval/sts/{out} "
        f"{TRANSFER} --transfer-out results/eval/transfer/{out} "
        f"{SPLITS} --splits-out results/eval/splits/{out} "
        f"--probe-out results/eval/probe/{out}"
    )


def test_a_trained_model_adds_the_analyses_and_an_untrained_one_the_baseline_pooler(
    plan: Plan,
) -> None:
    wildcards = {"method": "sncse", "backbone": "splade-tiny", "seed": "1"}
    patterns = plan.evaluation_outputs(TRAINED)
    outputs = {name: path.format(**wildcards) for name, (path, _) in patterns.items()}
    folder = "results/analysis/sncse/splade-tiny/seed1"
    assert list(outputs) == ["sts", "transfer", "splits", "probe", "analysis", "rank", "case"]
    assert outputs["analysis"] == f"{folder}/analysis.json"
    # the per-model tables are DVC outputs: not in the report, which lists what git holds
    assert patterns["rank"][1] is None and patterns["case"][1] is None
    inputs = {k: v.format(**wildcards) for k, v in plan.evaluation_inputs(TRAINED).items()}
    args = plan.evaluation_args(wildcards, inputs, outputs, 1)
    assert args.startswith(
        "--only sts,transfer,splits,probe,analysis --model results/models/sncse/splade-tiny/seed1 "
        "--pooler auto "
    )
    assert args.endswith(
        "--analysis-partner-seed 0 --analysis-sentences results/analysis/sts_sentences.txt "
        "--analysis-negations results/analysis/sts_sentences.negation.txt "
        f"--analysis-out {folder}/analysis.json --analysis-rank-tex {folder}/rank_errors.tex "
        f"--analysis-case-tex {folder}/case_study.tex"
    )
    untrained = {
        name: path.format(backbone="splade-tiny")
        for name, (path, _) in plan.evaluation_outputs(UNTRAINED).items()
    }
    args = plan.evaluation_args({"backbone": "splade-tiny"}, {}, untrained, 1)
    assert "--model splade-tiny --pooler cls_before_pooler " in args
    assert "--tag method=untrained --tag backbone=splade-tiny --sts-protocol" in args
    assert "--probe-out results/eval/probe/untrained/splade-tiny.json" in args


def test_targets_tables_and_figures(plan: Plan) -> None:
    targets = plan.all_targets()
    assert "results/tables/sts.tex" in targets and "results/metrics/verdicts.json" in targets
    assert not [t for t in targets if "mteb" in t]  # evaluation.mteb is off in the smoke grid
    assert "results/analysis/gcse/splade-tiny/seed1/case_study.tex" in targets
    assert "results/analysis/gcse/splade-tiny/seed2/case_study.tex" not in targets  # one seed
    assert plan.table_inputs("sts")[-1] == "results/eval/sts/untrained/splade-tiny.json"
    assert plan.released == []  # no released checkpoint of splade-tiny


def test_expand_is_snakemakes() -> None:
    assert expand("{a}-{b}", a=[1, 2], b=["x", "y"]) == ["1-x", "1-y", "2-x", "2-y"]
    assert expand(["{a}.tex", "{a}.csv"], a=["t"]) == ["t.tex", "t.csv"]


def test_the_plan_imports_no_snakemake() -> None:
    code = "import sys, negcse.workflow.plan; print(sorted(m for m in sys.modules if 'snakemake' in m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_negcse_estimate_prints_the_grids_gpu_hours(capsys: pytest.CaptureFixture[str]) -> None:
    """The smoke grid: each of simcse's three seeds is a training and an evaluation job."""
    assert profile_configfiles(REPO / "profiles/smoke") == ["tests/smoke/config.yaml"]
    costs = str(REPO / "benchmarks/gpu_costs.csv")
    params = str(REPO / "params.yaml")
    overlay = str(REPO / "tests/smoke/config.yaml")
    assert main(["estimate", "--params", params, "--configfile", overlay, "--costs", costs]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("Estimated GPU hours on one ")
    assert "corpus 3,200 sentences" in table[0]
    simcse = next(line.split() for line in table if line.startswith("simcse "))
    assert simcse[1] == "6"
    # simcse and sncse at three seeds and the 17 other methods at one (a training and an
    # evaluation each), the untrained backbone, SAN's sample file of seed 1 and GCSE's
    # synthesis and denoising
    total = next(line.split() for line in table if line.startswith("total "))
    assert int(total[1]) == 2 * 3 * 2 + 17 * 2 + 1 + 1 + 1 + 1 == 50


def test_negcse_estimate_without_costs_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "--costs", "no/such/costs.csv"]) == 2
    assert capsys.readouterr().err.strip() == (
        "negcse estimate: error: no/such/costs.csv: no unit costs (benchmarks/gpu.py writes them)"
    )


def test_students_sharing_a_guide_read_one_cache() -> None:
    """The smoke grid with guide caches: RankCSE and RankCSE+SAN share teacher1's cache
    (SimCSE seed 1 on the smoke corpus), which encodes the union of their texts (the sentence;
    the SAN samples), and RLRD reads the same model as its teacher2: the same folder."""
    config = workflow_config(REPO, [REPO / "tests/smoke/config.yaml"])
    config["guide_cache"] = True
    plan = Plan(config, log=lambda message: None)
    rank = plan.train_inputs("rankcse", "splade-tiny", "1")
    san = plan.train_inputs("rankcse_san", "splade-tiny", "1")
    assert rank["guide_cache_teacher1"] == san["guide_cache_teacher1"]
    assert rank["guide_cache_teacher1"] != rank["guide_cache_teacher2"]
    rlrd = plan.train_inputs("rlrd", "splade-tiny", "1")
    assert rlrd["guide_cache_teacher2"] == rank["guide_cache_teacher1"]
    assert rlrd["guide_cache_teacher1"] != rank["guide_cache_teacher1"]  # SNCSE's
    key = rank["guide_cache_teacher1"].removeprefix("results/guides/")
    inputs = plan.guide_cache_inputs(key)
    assert inputs["corpus"] == "results/data/corpus/wiki-smoke.txt"
    assert inputs["guide_model"] == "results/models/simcse/splade-tiny/seed1"
    assert inputs[SAN_COLUMN] == san[SAN_COLUMN]
    args = plan.guide_cache_args(key)
    # rankcse's texts, rankcse_san's (+ SAN) and RLRD's (prompt-wrapped, + SAN for rlrd_san)
    assert args.count("--student ") == 4
    assert "--model results/models/simcse/splade-tiny/seed1" in args
    words = plan.guide_args("rankcse", "splade-tiny", "1").split()
    assert f"teacher1=results/guides/{key}" in words
    gcse = plan.train_inputs("gcse", "splade-tiny", "1")
    assert gcse["guide_cache_evaluation"].startswith("results/guides/")
    off = Plan(workflow_config(REPO, [REPO / "tests/smoke/config.yaml"]), log=lambda m: None)
    assert not any(
        k.startswith("guide_cache") for k in off.train_inputs("rankcse", "splade-tiny", "1")
    )


def test_mteb_runs_only_for_the_rows_a_table_shows() -> None:
    """The paper grid's MTEB jobs: reranking for SimCSE and GCSE on the four backbones (GCSE
    Table 6 prints both), classification for the eight BERT-base methods of SAN Table 4 (its
    claims and published rows), each at every seed of its run; no other method or backbone."""
    config = workflow_config(REPO, profile_configfiles(REPO / "profiles/local"))
    plan = Plan(config, log=lambda message: None)
    backbones = ["bert-base-uncased", "bert-large-uncased", "roberta-base", "roberta-large"]
    want = {("reranking", m, b) for m in ("simcse", "gcse") for b in backbones}
    table4 = ["simcse", "simcse_san", "sncse", "sncse_san", "rankcse", "rankcse_san"]
    want |= {("classification", m, "bert-base-uncased") for m in [*table4, "rlrd", "rlrd_san"]}
    files = plan.mteb_files()
    got = {(f.split("/")[3], f.split("/")[4], "/".join(f.split("/")[5:-1])) for f in files}
    assert got == want
    seeds = {(m, b): len(method_seeds(config, m, b)) for _, m, b in want}
    assert len(files) == sum(seeds[(m, b)] for _, m, b in want)
    verdict_mteb = [f for f in plan.table_inputs("verdicts") if "/mteb/" in f]
    assert set(verdict_mteb) == set(files)


def test_a_guide_reading_a_column_rewritten_every_epoch_gets_no_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Were GCSE stage 2 to rewrite its sentences every epoch (as stage 1 does), its frozen
    guide's encodings would change each epoch: no cache is planned for it (the trainer would
    refuse one), RankCSE's teachers keep theirs."""
    from negcse.methods.gcse import GCSE

    monkeypatch.setattr(GCSE, "augmentations", lambda self: {"sentence": lambda t, r: t})
    config = workflow_config(REPO, [REPO / "tests/smoke/config.yaml"])
    config["guide_cache"] = True
    plan = Plan(config, log=lambda message: None)
    assert not any(
        k.startswith("guide_cache") for k in plan.train_inputs("gcse", "splade-tiny", "1")
    )
    assert "guide_cache_teacher1" in plan.train_inputs("rankcse", "splade-tiny", "1")


def test_table_jobs_get_the_verdict_rule(plan: Plan) -> None:
    """verdicts.min_seeds, fraction, equivalence and power (config/defaults.yaml) reach every
    table job as the table command's options."""
    options = plan.table_options()
    assert "--min-seeds 3 --fraction 0.5 --equivalence 0.5 --power 0.8 --papers " in options
