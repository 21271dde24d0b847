"""The workflow end to end, in a throwaway copy of the repository: the offline smoke grid (CI's
selection, `ci_smoke_grid`) through `dvc repro`, its report, no-op reruns, params-driven reruns,
a DVC round trip to a fresh clone, a killed training job that resumes, a DVC experiment and
GCSE with a real LLM. (The lint and dry runs are in tests/workflow/test_dry_runs.py.)"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from negcse.model_cli import load_embedder
from negcse.workflow.config import deep_merge, method_seeds, project_config
from plugin_venv import load_without_negcse
from workflow_copy import (
    CI_REDUCTIONS,
    SMOKE,
    committed_copy,
    jobs_with_wildcards,
    set_param,
    sh,
)

pytestmark = [pytest.mark.slow, pytest.mark.mirror]
CI_METHODS = ["simcse", "una", "sncse", "osscse", "simcse_san", "sncse_san"]
#: written by ci_smoke_grid: CI's grid plus GCSE, which `make smoke` runs in its grid
CI_GCSE = "ci-gcse.yaml"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh clone's copy, set up for `dvc repro` to run CI's smoke grid (below)."""
    return committed_copy(tmp_path_factory.mktemp("ws"), ci_smoke_grid)


def ci_smoke_grid(ws: Path) -> None:
    """`dvc repro` runs the smoke profile, on CI's grid: the six papers' main methods
    (SimCSE, UNA, SNCSE, OssCSE, SimCSE+SAN, SNCSE+SAN: every generator kind and loss family)
    at one seed, with CI's reductions (tests/smoke/ci.yaml: SAN's masked-only mode, TREC);
    GCSE runs after it (gcse_run, `CI_GCSE`). `make smoke` (docs/smoke.md) runs all 19 smoke methods,
    at seed 1 but one claim pair (simcse and sncse at three seeds); the ablation variants and
    the second and third seeds run no workflow code these do not (their code paths have unit tests), and
    RankCSE/RLRD's teacher chain is checked by
    tests/methods/test_rank_workflow.py. This shortens CI (issues 8 and 15,
    benchmarks/base.md)."""
    assert "  profile: profiles/smoke\n" in (ws / "params.yaml").read_text()  # what dvc repro runs
    smoke = ws / "tests/smoke/config.yaml"
    config = yaml.safe_load(smoke.read_text())
    assert {*CI_METHODS, "gcse"} <= set(config["grid"]["methods"]), f"{smoke} changed"
    config = deep_merge(config, yaml.safe_load((ws / CI_REDUCTIONS).read_text()))
    config["grid"] |= {"methods": CI_METHODS, "seeds": [1]}
    for method in CI_METHODS:  # the smoke's third seeds of one claim pair: not on CI's grid
        (config.get("methods") or {}).get(method, {}).pop("seeds", None)
    smoke.write_text(yaml.safe_dump(config, sort_keys=False))
    # GCSE over CI's grid (a list replaces, it does not merge)
    (ws / CI_GCSE).write_text(yaml.safe_dump({"grid": {"methods": [*CI_METHODS, "gcse"]}}))


@pytest.fixture(scope="module")
def smoke_run(workspace: Path) -> Path:
    """The smoke grid, run the way a collaborator would: `dvc repro`."""
    start = time.perf_counter()
    # a hang guard, not a speed bar: the grid shares CI's 2 cores with the SLURM test and the
    # rest of the suite (.ci/pytest-parallel); 30 min was exceeded under load (benchmarks/base.md)
    sh(["dvc", "repro"], workspace, timeout=5400)
    (workspace / "smoke_seconds.txt").write_text(f"{time.perf_counter() - start:.1f}\n")
    return workspace


def test_smoke_grid_beats_untrained_backbone(smoke_run: Path) -> None:
    ws = smoke_run
    base = json.loads((ws / "results/eval/sts/untrained/splade-tiny.json").read_text())
    runs = [
        json.loads(p.read_text())
        for p in sorted((ws / "results/eval/sts/simcse/splade-tiny").glob("seed*.json"))
    ]
    seeds = yaml.safe_load((ws / "tests/smoke/config.yaml").read_text())["grid"]["seeds"]
    assert len(runs) == len(seeds) >= 1
    mean = lambda key: sum(r[key] for r in runs) / len(runs)  # noqa: E731
    assert mean("stsb_dev") > base["stsb_dev"]
    assert mean("avg") > base["avg"]
    tex = (ws / "results/tables/sts.tex").read_text()
    assert "\\toprule" in tex and "SimCSE" in tex and "Untrained" in tex
    assert (ws / "results/tables/sts.csv").is_file() and (ws / "results/tables/sts.md").is_file()


def test_html_report_holds_every_table_and_figure(smoke_run: Path) -> None:
    report = smoke_run / "report.html"
    sh([*SMOKE, "--report", str(report)], smoke_run)
    html = report.read_text(errors="replace")
    # every table as a rendered HTML page, figures labelled by kind; OssCSE's own category
    for name in (
        "sts.html",
        "transfer.html",
        "splits.html",
        "probe.html",
        "analysis.html",
        "case_study_splade-tiny.html",
        "soft_negatives",
        "training_curves",
        "OssCSE splits and probe",
    ):
        assert name in html, name


def test_smoke_models_load_without_negcse(smoke_run: Path, tmp_path: Path) -> None:
    """A prompt-pooled (SNCSE, OssCSE) and a [CLS] model of the run load in sentence-transformers
    in a venv where negcse is not installed, and encode as `negcse evaluate` does."""
    sentences = ["A man is playing a guitar.", "the cat sat on the mat", "Two dogs run."]
    folders = [
        smoke_run / f"results/models/{m}/splade-tiny/seed1" for m in ("sncse", "osscse", "simcse")
    ]
    got = load_without_negcse(folders, sentences, tmp_path / "venv")
    for folder, embeddings in zip(folders, got, strict=True):
        args = argparse.Namespace(model=str(folder), pooler="auto", mirror=None, threads=None)
        np.testing.assert_allclose(embeddings, load_embedder(args).encode(sentences), atol=1e-5)
        assert (folder / "README.md").is_file()  # its card


def test_second_run_does_nothing(smoke_run: Path) -> None:
    out = sh([*SMOKE, "-n"], smoke_run)
    assert "Nothing to be done" in out.stdout + out.stderr


def test_changing_a_simcse_hyperparameter_reruns_only_simcse(smoke_run: Path) -> None:
    params = smoke_run / "params.yaml"
    assert project_config(smoke_run)["methods"]["simcse"]["params"]["temperature"] != 0.06
    original = set_param(smoke_run, "methods.simcse.params.temperature", 0.06)
    try:
        out = sh([*SMOKE, "-n"], smoke_run).stdout
    finally:
        params.write_text(original)
    jobs = jobs_with_wildcards(out)
    seeds = len(
        yaml.safe_load((smoke_run / "tests/smoke/config.yaml").read_text())["grid"]["seeds"]
    )
    # every per-model job that reruns is SimCSE's ...
    per_model = [(r, w) for r, w in jobs if "method=" in w]
    assert per_model and all(re.search(r"method=simcse(,|$)", w) for _, w in per_model), per_model
    assert sum(r == "train" for r, _ in per_model) == seeds
    assert sum(r == "evaluate_model" for r, _ in per_model) == seeds
    # ... and nothing upstream of training or belonging to the untrained baseline reruns;
    # only the tables, figures and paper pages that aggregate over methods are rebuilt.
    aggregates = [r for r, w in jobs if "method=" not in w]
    aggregate_kinds = ("_table", "_figure", "_data", "_report", "_metrics")
    assert all(r in ("all", "table") or r.endswith(aggregate_kinds) for r in aggregates), aggregates
    assert ("table", "wildcards: table=sts") in jobs


def commit(repo: Path, message: str) -> None:
    sh(["git", "add", "-A"], repo)
    sh(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message], repo)


@pytest.fixture(scope="module")
def shared(smoke_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The smoke results shared as a collaborator would: `dvc push`, then a git commit (dvc.lock
    and the git-tracked tables, metrics and plot data)."""
    ws = smoke_run
    remote = tmp_path_factory.mktemp("remote")
    sh(["dvc", "remote", "add", "-f", "-d", "local", str(remote)], ws)
    sh(["dvc", "push"], ws)
    commit(ws, "results")
    return ws


def test_dvc_round_trip_to_a_fresh_clone(shared: Path, tmp_path: Path) -> None:
    ws = shared
    clone = tmp_path / "clone"
    sh(["git", "clone", "-q", str(ws), str(clone)], tmp_path)
    sh(["dvc", "pull"], clone)
    assert (clone / "results/tables/sts.tex").read_text() == (
        ws / "results/tables/sts.tex"
    ).read_text()
    sh([*SMOKE, "--touch"], clone)
    out = sh([*SMOKE, "-n"], clone)
    assert "Nothing to be done" in out.stdout + out.stderr
    assert "changed" not in sh(["dvc", "status"], clone).stdout


def test_fresh_clone_shows_the_results_and_pulls_one_model_only(
    shared: Path, tmp_path: Path
) -> None:
    ws = shared
    clone = tmp_path / "clone"
    sh(["git", "clone", "-q", str(ws), str(clone)], tmp_path)
    results = clone / "results"
    readable = [
        "README.md",
        "tables/sts.md",
        "tables/sts.tex",
        "tables/transfer.csv",
        "metrics/sts.json",
        "metrics/transfer.json",
        "plots/training_curves.csv",
    ]
    for name in readable:  # in git: no pull needed
        assert (results / name).read_bytes() == (ws / "results" / name).read_bytes(), name
    in_git = ["README.md", "figures", "headline.json", "metrics", "plots", "reports", "tables"]
    assert sorted(p.name for p in results.iterdir()) == in_git

    # the metrics: each method's STS average, the mean of its seeds' evaluations
    sts = json.loads((results / "metrics/sts.json").read_text())
    for method, pattern in (
        ("simcse", "simcse/splade-tiny/seed*.json"),
        ("sncse", "sncse/splade-tiny/seed*.json"),
        ("untrained", "untrained/splade-tiny.json"),
    ):
        avgs = [json.loads(p.read_text())["avg"] for p in (ws / "results/eval/sts").glob(pattern)]
        mean = sum(avgs) / len(avgs)
        assert avgs and sts[method]["splade-tiny"]["avg"] == pytest.approx(mean, abs=1e-4)
    shown = json.loads(sh(["dvc", "metrics", "show", "--json"], clone).stdout)
    assert shown[""]["data"]["results/headline.json"]["data"]["sts"] == sts

    # the plot data: every run's STS-B dev curve, as in its train_log.json
    rows = (results / "plots/training_curves.csv").read_text().splitlines()
    assert rows[0] == "method,name,family,backbone,seed,step,stsb_dev"
    logs = [json.loads(p.read_text())
            for p in sorted((ws / "results/models").glob("*/*/seed*/train_log.json"))]  # fmt: skip
    expected = {
        (log["method"], log["backbone"], str(log["seed"]), str(p["step"]), p["stsb_dev"])
        for log in logs
        for p in log["curve"]
        if "stsb_dev" in p
    }
    cells = list(csv.DictReader(rows))  # display names may hold commas: quoted
    got = {(c["method"], c["backbone"], c["seed"], c["step"], float(c["stsb_dev"])) for c in cells}
    assert len(rows) - 1 == len(expected) and got == expected
    # ... and the loss with each logged part, every log_steps (5) steps of every run
    losses = (results / "plots/training_loss.csv").read_text().splitlines()
    assert losses[0] == "method,name,family,backbone,seed,step,quantity,value"
    logged = {
        (log["method"], str(log["seed"]), str(p["step"]), name, value)
        for log in logs
        for p in log["curve"]
        if "loss" in p
        for name, value in {"loss": p["loss"], **p["parts"]}.items()
    }
    cells = list(csv.DictReader(losses))
    assert {(c["method"], c["seed"], c["step"], c["quantity"], float(c["value"]))
            for c in cells} == logged  # fmt: skip
    assert {c["step"] for c in cells if c["quantity"] == "loss"} == {
        "5", "10", "15", "20", "25", "30", "35", "40"
    }  # fmt: skip
    plots = json.loads(sh(["dvc", "plots", "show", "--json"], clone).stdout)
    (plot,) = plots["data"]["results/plots/training_curves.csv"]
    assert len(plot["content"]["data"]["values"]) == len(expected)
    assert plot["content"]["spec"]["encoding"]["color"]["field"] == "name"  # display names

    model = "results/models/simcse/splade-tiny/seed1"
    sh(["dvc", "pull", model], clone)
    assert sorted(p.name for p in results.iterdir()) == sorted([*in_git, "models"])
    assert [p.relative_to(results) for p in (results / "models").glob("*/*/*")] == [
        Path("models/simcse/splade-tiny/seed1")
    ]

    def files(folder: Path) -> list[Path]:
        return sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())

    assert files(clone / model) == files(ws / model)
    for f in files(ws / model):
        assert (clone / model / f).read_bytes() == (ws / model / f).read_bytes(), f


def test_killed_training_job_resumes_with_identical_metrics(smoke_run: Path) -> None:
    ws = smoke_run
    model = "results/models/simcse/splade-tiny/seed1"
    before_eval = json.loads((ws / "results/eval/sts/simcse/splade-tiny/seed1.json").read_text())
    before_curve = json.loads((ws / model / "train_log.json").read_text())["curve"]
    # as in a first run: the model and what depends on it do not exist yet (Snakemake does not
    # rebuild a missing intermediate file while every table built from it is present)
    shutil.rmtree(ws / model)
    (ws / "results/eval/sts/simcse/splade-tiny/seed1.json").unlink()
    for ext in ("tex", "csv", "md"):
        (ws / f"results/tables/sts.{ext}").unlink()
    proc = subprocess.Popen(
        SMOKE,
        cwd=ws,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    state = ws / "results/checkpoints/simcse/splade-tiny/seed1/last.pt"
    deadline = time.time() + 600
    while not state.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert state.exists(), "the training job wrote no checkpoint"
    found = sh(
        ["pgrep", "-f", "checkpoint-dir results/checkpoints/simcse/splade-tiny/seed1"], ws
    ).stdout.split()
    # this workspace's job only: `make test` runs tests/test_slurm.py (same job, same command
    # line, another directory) beside this one
    pids = [pid for pid in found if Path(f"/proc/{pid}/cwd").resolve() == ws.resolve()]
    assert pids, found
    for pid in pids:
        os.kill(int(pid), signal.SIGKILL)
    assert proc.wait(timeout=120) != 0
    sh(SMOKE, ws)  # the same command again: reruns what failed, resuming the training
    log = (ws / "logs/train/simcse/splade-tiny/seed1.log").read_text()
    assert "resumed from" in log
    after_curve = json.loads((ws / model / "train_log.json").read_text())["curve"]
    assert after_curve[:-1] == before_curve[:-1]
    after_eval = json.loads((ws / "results/eval/sts/simcse/splade-tiny/seed1.json").read_text())
    for key in (
        "STS12",
        "STS13",
        "STS14",
        "STS15",
        "STS16",
        "STSBenchmark",
        "SICKRelatedness",
        "avg",
        "stsb_dev",
    ):
        assert after_eval[key] == before_eval[key], key


def test_dvc_experiment_reruns_simcse_only_and_diffs_its_metrics(smoke_run: Path) -> None:
    """The experiment's results stay in the workspace (only GCSE's overlay runs after it)."""
    ws = smoke_run
    for key, value in (("user.name", "t"), ("user.email", "t@t")):
        sh(["git", "config", key, value], ws)  # dvc exp commits the experiment
    sh(["git", "add", "-A"], ws)
    sh(["git", "commit", "-qm", "baseline", "--allow-empty"], ws)
    baseline = project_config(ws, check=False)
    before = {
        name: json.loads((ws / f"results/metrics/{name}.json").read_text())
        for name in ("sts", "transfer")
    }
    name = "simcse-t0.1"
    # `++`: a key params.yaml does not hold yet (an override of config/defaults.yaml)
    run = sh(["dvc", "exp", "run", "-n", name, "-S", "++methods.simcse.params.temperature=0.1"], ws)

    # Snakemake decided: SimCSE's training and evaluation jobs, and the aggregates, reran
    jobs = jobs_with_wildcards(run.stdout + run.stderr)
    per_model = [(r, w) for r, w in jobs if "method=" in w]
    assert per_model and all(re.search(r"method=simcse(,|$)", w) for _, w in per_model), per_model
    seeds = yaml.safe_load((ws / "tests/smoke/config.yaml").read_text())["grid"]["seeds"]
    assert sum(r == "train" for r, _ in per_model) == len(seeds)
    aggregates = [r for r, w in jobs if "method=" not in w]
    aggregate_kinds = ("_table", "_figure", "_data", "_report", "_metrics")
    assert all(r in ("all", "table") or r.endswith(aggregate_kinds) for r in aggregates)
    # DVC rewrote params.yaml (its own YAML style): the one change is the parameter set
    baseline["methods"]["simcse"]["params"]["temperature"] = 0.1
    assert project_config(ws, check=False) == baseline

    after = {
        name: json.loads((ws / f"results/metrics/{name}.json").read_text())
        for name in ("sts", "transfer")
    }
    shown = json.loads(sh(["dvc", "exp", "show", "--json"], ws).stdout)
    head = next(r for r in shown if r["rev"] != "workspace")
    (exp,) = [rev for e in head["experiments"] for rev in e["revs"] if rev["name"] == name]
    params = exp["data"]["params"]["params.yaml"]["data"]
    assert params["methods"]["simcse"]["params"]["temperature"] == 0.1
    # dvc exp show: the headline metrics (each row's STS average: the sts table's metrics)
    headline = "results/headline.json"
    assert exp["data"]["metrics"][headline]["data"]["sts"] == after["sts"]
    assert head["data"]["metrics"][headline]["data"]["sts"] == before["sts"]

    targets = ["--targets", "results/metrics"]  # every table's metrics, not only the headline
    diff = json.loads(sh(["dvc", "metrics", "diff", "--json", "HEAD", name, *targets], ws).stdout)
    changed = {table: set(diff.get(f"results/metrics/{table}.json", {})) for table in after}
    assert "simcse.splade-tiny.avg" in changed["sts"], diff
    for table, keys in changed.items():
        assert all(k.startswith("simcse.") for k in keys), (table, diff)
        for method in set(after[table]) - {"simcse"}:  # every other row: the baseline's number
            assert after[table][method] == before[table][method], (table, method)
    evals = (ws / "results/eval/sts/simcse/splade-tiny").glob("seed*.json")
    new = [json.loads(p.read_text())["avg"] for p in evals]
    assert diff["results/metrics/sts.json"]["simcse.splade-tiny.avg"]["new"] == pytest.approx(
        sum(new) / len(new), abs=1e-4
    )
    default = json.loads(sh(["dvc", "metrics", "diff", "--json", "HEAD", name], ws).stdout)
    assert set(default) == {headline} and "sts.simcse.splade-tiny.avg" in default[headline]


# GCSE last: `make smoke` runs it in its grid, CI after the rest (CI_GCSE: CI's grid plus gcse),
# since it adds a method and its rows to this workspace's metrics and tables, which every test
# above (the experiment's `dvc metrics diff` too) expects to hold CI's grid only.
@pytest.fixture(scope="module")
def gcse_run(smoke_run: Path) -> Path:
    """GCSE over the finished CI grid: only stage 1 (gcse_stage1), the LLM synthesis, the
    denoising, the stage-2 trainings and evaluations (and the tables) run."""
    start = time.perf_counter()
    sh([*SMOKE, "--configfile", "tests/smoke/config.yaml", CI_GCSE], smoke_run, timeout=3600)
    (smoke_run / "gcse_seconds.txt").write_text(f"{time.perf_counter() - start:.1f}\n")
    return smoke_run


def test_smoke_gcse_ran_the_real_llm_and_trained_on_its_triplets(gcse_run: Path) -> None:
    """The pinned SmolLM2 answered every prompt of the smoke's sources (the released mode's two
    extractions, a fill-in for the extension sentence, one positive and one negative each, and
    the extension sentences' own), the report accounts for each completion, and stage 2 trained
    on as many anchors as the denoising kept (the released rule adds a self-pair row per unused
    candidate), starting from the stage-1 run (gcse_stage1)."""
    ws = gcse_run
    config = project_config(ws, ws / "tests/smoke/config.yaml", ws / CI_GCSE)
    sources = config["generators"]["gcse"]
    (report_path,) = (ws / "results/gcse/candidates/wiki-smoke").glob("*.report.json")
    report = json.loads(report_path.read_text())
    assert "smollm2" in report["llm"]["model"].lower() and report["backend"] == "transformers"
    n = sources["max_sources"] - sum(report["skipped"].values())
    assert report["mode"] == "released"
    # every completion counted once: per source two extractions, a fill-in and two synthesis
    # prompts; per extension sentence two extractions and two synthesis prompts
    e = report["extension_sentences"]
    assert sum(report["totals"].values()) == 5 * n + 4 * e and 0 <= e <= n
    assert report["cache"]["misses"] == report["cache"]["calls"] > 0
    assert 0 <= report["fell_back"] <= report["totals"]["failed"]
    for seed in method_seeds(config, "gcse", "splade-tiny"):
        (anchors,) = (ws / "results/gcse/triplets/wiki-smoke").glob(
            f"*/gcse_anchor/splade-tiny/seed{seed}.txt"
        )
        triplets = json.loads(
            next(anchors.parents[2].glob(f"report/splade-tiny/seed{seed}.json")).read_text()
        )
        kept = triplets["triplets"]
        assert len(anchors.read_text().splitlines()) == kept and n + e <= kept <= 3 * (n + e)
        meta = json.loads(
            (ws / f"results/models/gcse/splade-tiny/seed{seed}/negcse.json").read_text()
        )
        assert meta["corpus_sentences"] == kept
        assert meta["guides"]["evaluation"].endswith(
            f"results/models/gcse_stage1/splade-tiny/seed{seed}"
        )
        # the LLM that wrote the data: in the model's metadata and its evaluation
        assert meta["llm"] == {"backend": "transformers", "model": sources["model"]}
        sts = json.loads((ws / f"results/eval/sts/gcse/splade-tiny/seed{seed}.json").read_text())
        assert sts["llm"] == sources["model"]
    table = (ws / "results/tables/sts.md").read_text()
    # the row marked, the caption naming the LLM
    (row,) = [r for r in table.splitlines() if r.startswith("| GCSE ")]
    mark = row.split(" | ")[0].removeprefix("| GCSE ")
    assert f"{mark} data written by the LLM {sources['model']}." in table
