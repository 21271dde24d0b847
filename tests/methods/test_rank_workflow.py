"""The smoke grid's rank-distillation methods (tests/smoke/config.yaml) in the workflow: a dry
run trains each teacher upstream of its students and passes its folder as ``--guide``; after a
run, a changed teacher setting reruns exactly the teacher, its students, their evaluations and
the aggregate tables.

The run is a real Snakemake run of the smoke grid in a throwaway copy of the repository whose
``python`` only writes each job's declared outputs (no training): Snakemake records every job's
params as after a real run, and ``--rerun-triggers`` (the smoke profile's: mtime, params, input,
code) then decides what a params.yaml change reruns. What the jobs compute plays no part in
that decision, so the empty outputs test the DAG and its triggers, not the methods."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from negcse.workflow.config import method_seeds, project_config
from negcse.workflow.guide_config import guide_args
from workflow_copy import set_param

pytestmark = [pytest.mark.slow, pytest.mark.mirror]
REPO = Path(__file__).resolve().parents[2]
SMOKE = ["snakemake", "--profile", "profiles/smoke"]  # its grid: tests/smoke/config.yaml
BACKBONE = "splade-tiny"
STUDENTS = ["rankcse", "rankcse_san", "rlrd", "rlrd_san"]

# The fake interpreter: creates whichever declared outputs (the list in $FAKE_OUTPUTS) are
# missing, folders for the trained models; Snakemake deletes a job's outputs before running it,
# so each job rewrites its own.
FAKE_PYTHON = """#!{python}
import os
import pathlib

for line in pathlib.Path(os.environ["FAKE_OUTPUTS"]).read_text().splitlines():
    kind, path = line.split("\\t")
    p = pathlib.Path(path)
    if p.exists():
        continue
    if kind == "dir":
        p.mkdir(parents=True)
    else:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("")
"""


def sh(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, f"{' '.join(cmd)}:\n{proc.stdout[-3000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout + proc.stderr


def dry_run_jobs(output: str) -> list[dict[str, Any]]:
    """Rule, wildcards, outputs and shell command of each job of a dry run (-n -p), in order."""
    jobs: list[dict[str, Any]] = []
    for line in output.splitlines():
        if m := re.match(r"^(?:localrule|rule) (\w+):", line):
            jobs.append({"rule": m.group(1), "wildcards": {}, "output": [], "shell": ""})
        elif not jobs:
            continue
        elif m := re.match(r"^\s+wildcards: (.*)$", line):
            pairs = (kv.split("=", 1) for kv in m.group(1).split(", "))
            jobs[-1]["wildcards"] = dict(pairs)
        elif m := re.match(r"^\s+output: (.*)$", line):
            jobs[-1]["output"] = m.group(1).split(", ")
        elif "python -m negcse" in line and not jobs[-1]["shell"]:
            jobs[-1]["shell"] = line
    return jobs


def smoke_config(ws: Path) -> dict[str, Any]:
    """The smoke grid merged over params.yaml, as Snakemake merges them."""
    return project_config(ws, ws / "tests/smoke/config.yaml")


def seeds(ws: Path, method: str) -> list[str]:
    return [str(s) for s in method_seeds(smoke_config(ws), method, BACKBONE)]


def guide_entries(ws: Path, method: str) -> dict[str, dict[str, Any]]:
    """The smoke grid's guides of a student on splade-tiny (the config's own words)."""
    return smoke_config(ws)["methods"][method]["backbones"][BACKBONE]["guides"]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("rank") / "negcse"
    ws.mkdir()
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=REPO, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(ws)], input=archive.stdout, check=True)
    return ws


@pytest.fixture(scope="module")
def fresh_dry_run(workspace: Path) -> list[dict[str, Any]]:
    return dry_run_jobs(sh([*SMOKE, "-n", "-p"], workspace))


def test_teachers_train_before_their_students(
    workspace: Path, fresh_dry_run: list[dict[str, Any]]
) -> None:
    trains = [j for j in fresh_dry_run if j["rule"] == "train"]
    order = [(j["wildcards"]["method"], j["wildcards"]["seed"]) for j in trains]
    grid = smoke_config(workspace)["grid"]
    assert set(STUDENTS) <= set(grid["methods"])
    config = smoke_config(workspace)
    # guide runs outside the grid (GCSE's stage 1) train at their student's seeds
    guides_only = {
        (entry["method"], seed)
        for m in grid["methods"]
        for entry in (config["methods"][m].get("guides") or {}).values()
        if entry.get("method") and entry["method"] not in grid["methods"]
        for seed in seeds(workspace, m)
    }
    expected = {(m, s) for m in grid["methods"] for s in seeds(workspace, m)} | guides_only
    assert sorted(order) == sorted(expected)
    for student in STUDENTS:
        teachers = {e["method"] for e in guide_entries(workspace, student).values()}
        assert teachers and not teachers & set(STUDENTS)  # the suite's own runs, no chains
        for seed in seeds(workspace, student):
            job = trains[order.index((student, seed))]
            for guide, entry in guide_entries(workspace, student).items():
                # seed-matched: the teacher run of the same seed, trained before the student
                assert order.index((entry["method"], seed)) < order.index((student, seed))
                folder = f"results/models/{entry['method']}/{BACKBONE}/seed{seed}"
                assert f"--guide {guide}={folder}" in job["shell"]
    config = smoke_config(workspace)
    for job in trains:  # of the others only GCSE has a guide, its stage-1 model
        method, seed = job["wildcards"]["method"], job["wildcards"]["seed"]
        if method == "gcse":
            assert guide_args(config, method, BACKBONE, seed) in job["shell"]
        elif method not in STUDENTS:
            assert "--guide" not in job["shell"]


@pytest.fixture(scope="module")
def smoke_run(workspace: Path, fresh_dry_run: list[dict[str, Any]], tmp_path_factory) -> Path:
    """The smoke grid run by Snakemake with the fake interpreter; then nothing is left to do."""
    fake = tmp_path_factory.mktemp("fakebin")
    python = fake / "python"
    python.write_text(FAKE_PYTHON.format(python=sys.executable))
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    manifest = fake / "outputs.tsv"
    manifest.write_text(
        "".join(
            f"{'dir' if j['rule'] == 'train' else 'file'}\t{path}\n"
            for j in fresh_dry_run
            for path in j["output"]
        )
    )
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "FAKE_OUTPUTS": str(manifest)}
    sh([*SMOKE, "--cores", "1"], workspace, env=env)
    assert "Nothing to be done" in sh([*SMOKE, "-n"], workspace)
    return workspace


def rerun_after_change(ws: Path, method: str, key: str, value: float) -> list[dict[str, Any]]:
    """The dry run after overriding methods.<method>.params.<key> in params.yaml (restored
    after)."""
    params = ws / "params.yaml"
    assert project_config(ws, check=False)["methods"][method]["params"][key] != value
    original = set_param(ws, f"methods.{method}.params.{key}", value)
    try:
        return dry_run_jobs(sh([*SMOKE, "-n"], ws))
    finally:
        params.write_text(original)


@pytest.mark.parametrize(
    ("teacher", "key", "value", "students"),
    [
        # RLRD's first teacher: both RLRD methods rerun, RankCSE's do not
        ("sncse", "bml_weight", 2.0e-3, {"rlrd", "rlrd_san"}),
        # RankCSE's second teacher: both RankCSE methods rerun, RLRD's do not
        ("simcse_dropout15", "temperature", 0.06, {"rankcse", "rankcse_san"}),
    ],
)
def test_a_changed_teacher_reruns_the_teacher_its_students_and_the_tables(
    smoke_run: Path, teacher: str, key: str, value: float, students: set[str]
) -> None:
    for student in students:  # the students are this teacher's, by the smoke config
        assert teacher in {e["method"] for e in guide_entries(smoke_run, student).values()}
    jobs = rerun_after_change(smoke_run, teacher, key, value)
    # a method's page (method_report) has a method wildcard but reads the tables: an aggregate
    per_model = [j for j in jobs if "method" in j["wildcards"] and j["rule"] != "method_report"]
    expected = {(m, s) for m in {teacher, *students} for s in seeds(smoke_run, m)}
    for rule in ("train", "evaluate_model"):
        got = {
            (j["wildcards"]["method"], j["wildcards"]["seed"])
            for j in per_model
            if j["rule"] == rule
        }
        assert got == expected, (rule, sorted(got))
    assert {j["rule"] for j in per_model} == {"train", "evaluate_model"}
    # nothing upstream of training or of the untrained baseline: only aggregates over methods
    aggregates = [j for j in jobs if j not in per_model]
    kinds = ("_table", "_figure", "_data", "_report", "_metrics")
    assert all(j["rule"] in ("all", "table") or j["rule"].endswith(kinds) for j in aggregates)
    assert any(j["rule"] == "table" and j["wildcards"].get("table") == "sts" for j in aggregates)
