"""The workflow read, not run, in a throwaway copy of the repository: `snakemake --lint`, the
paper grid's dry run with its GPU-hours estimate, a `--configfile` selection and GCSE's stage
order. (tests/test_workflow.py runs the smoke grid; these run beside it in CI.)"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from workflow_copy import GCSE_CONFIGS, SMOKE, committed_copy, job_counts, jobs_with_wildcards, sh

pytestmark = [pytest.mark.slow, pytest.mark.mirror]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return committed_copy(tmp_path_factory.mktemp("dry"))


@pytest.fixture(scope="module")
def lint(workspace: Path) -> subprocess.CompletedProcess[str]:
    """`snakemake --lint` of the workspace (one workflow parse for the tests that read it)."""
    return sh(["snakemake", "--lint"], workspace)


def test_lint(lint: subprocess.CompletedProcess[str]) -> None:
    assert "Congratulations" in lint.stdout + lint.stderr


def test_paper_grid_dry_run_lists_every_train_job(
    workspace: Path, lint: subprocess.CompletedProcess[str]
) -> None:
    """The default grid is every configured method (52: 38 + RankCSE, RankCSE+SAN and its three
    lambda variants, RLRD, RLRD+SAN + GCSE and its w/o filtering, w/o decay, released, w randomly
    and two sigma variants) x 4 backbones x 3 seeds, with the GPU generators behind it, and the dry run prints
    the GPU-hours estimate. Its time is a benchmark figure (benchmarks/base.md), not asserted
    here."""
    config = yaml.safe_load((workspace / "params.yaml").read_text())
    out = sh(["snakemake", "-n", "--profile", "profiles/local"], workspace)
    counts = job_counts(out.stdout)
    grid = config["grid"]
    assert grid["methods"] == list(config["methods"])
    assert len(grid["backbones"]) == 4 and len(grid["seeds"]) == 3
    # 456 + 7 RankCSE/RLRD methods x 12 + 7 GCSE methods x 12
    assert counts["train"] == len(grid["methods"]) * 4 * 3 == 624
    assert counts["evaluate_model"] == counts["train"]
    # SAN samples per seed: scale 20 (simcse_san, sncse_san, the tau2 x p2 grid), 10, 30, 40,
    # the masked-only variant (simcse_san_masked) and scale 20 with the negation fallback
    # (RankCSE+SAN, its lambda variants and RLRD+SAN share it)
    assert counts["san_negatives"] == 6 * 3
    assert counts["back_translation"] == 2 and counts["paraphrase"] == 1  # de and ru pivots
    # GCSE: one synthesis per mode (paper, released) and w randomly's (no prompt, no LLM);
    # denoised triplets per stage-1 model (backbone x seed) for each of paper, w/o filtering,
    # w randomly and released (w/o decay and the sigma variants share paper's or w/o filtering's)
    assert counts["gcse_synthesize"] == 3
    assert counts["gcse_denoise"] == 4 * 4 * 3
    log = out.stdout + out.stderr
    assert "Estimated GPU hours on one" in log
    table = log[log.index("Estimated GPU hours") :].splitlines()
    rows = {
        line.split()[0]: line.split()
        for line in table[2 : len(grid["methods"]) + 2]
        if line.strip()
    }
    assert set(grid["methods"]) <= set(rows)
    assert all(int(rows[m][1]) == 2 * 4 * 3 for m in grid["methods"])  # train + evaluation
    assert "no measured cost" not in "".join(table[2 : len(grid["methods"]) + 2])
    # the dry-run-only table stays out of other commands (the lint run, a real run)
    assert "Estimated GPU hours" not in lint.stdout


def test_configfile_selects_a_smaller_grid(workspace: Path) -> None:
    out = sh(
        [
            "snakemake",
            "-n",
            "--profile",
            "profiles/local",
            "--configfile",
            "config/simcse-only.yaml",
        ],
        workspace,
    )
    assert job_counts(out.stdout)["train"] == 4 * 3


def test_gcse_stage1_simcse_runs_before_synthesis_denoising_and_stage2(workspace: Path) -> None:
    """A GCSE model's dry run: the LLM synthesis and SimCSE's own train job (the stage-1 model,
    no second trainer) feed the denoising job, whose anchors are stage 2's training corpus."""
    target = "results/models/gcse/splade-tiny/seed1"
    overlay = ["--configfile", *GCSE_CONFIGS]
    out = sh([*SMOKE, *overlay, "-n", "--forceall", target], workspace)
    jobs = jobs_with_wildcards(out.stdout)
    order = [rule if rule != "train" else f"train {wc}" for rule, wc in jobs]
    stage1 = order.index("train wildcards: method=simcse, backbone=splade-tiny, seed=1")
    stage2 = order.index("train wildcards: method=gcse, backbone=splade-tiny, seed=1")
    assert order.index("gcse_denoise") > max(stage1, order.index("gcse_synthesize"))
    assert stage2 == len(order) - 1  # the target comes last
    assert job_counts(out.stdout)["train"] == 2
    dag = sh([*SMOKE, *overlay, "--dag", "--forceall", target], workspace).stdout
    labels = dict(re.findall(r"\t(\d+)\[label = \"(\w+)", dag))
    edges = {(labels[a], labels[b]) for a, b in re.findall(r"\t(\d+) -> (\d+)", dag)}
    assert {("train", "gcse_denoise"), ("gcse_synthesize", "gcse_denoise")} <= edges
    assert ("gcse_denoise", "train") in edges and ("corpus", "gcse_synthesize") in edges
