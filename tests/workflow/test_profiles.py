"""The Snakemake profiles name real rules, and none is loaded behind the user's back."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml
from snakemake_executor_plugin_slurm.partitions import read_partition_file

from negcse.generators.steps import all_steps
from negcse.workflow.plan import SUBJECTS

REPO = Path(__file__).resolve().parents[2]
PROFILES = sorted((REPO / "profiles").glob("*/profile.yaml"))
CI_SLURM = REPO / "tests/slurm/profile.yaml"  # the SLURM test cluster's site settings


@pytest.fixture(scope="module")
def rules() -> set[str]:
    out = subprocess.run(
        ["snakemake", "--list-rules"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    # one rule per unindented line, its docstring (if any) after the name
    return {line.split()[0] for line in out.splitlines() if line and not line[0].isspace()}


def test_no_workflow_default_profile() -> None:
    """Snakemake loads profiles/default on top of every --profile and lets it win: the smoke
    profile's two parallel jobs became one (gpu=1 from the default)."""
    assert not (REPO / "profiles" / "default").exists()
    assert {p.parent.name for p in PROFILES} >= {"local", "smoke", "slurm"}


@pytest.mark.parametrize("profile", [*PROFILES, CI_SLURM], ids=lambda p: str(p.parent.name))
def test_per_rule_settings_name_existing_rules(profile: Path, rules: set[str]) -> None:
    settings = yaml.safe_load(profile.read_text())
    for key in ("set-resources", "set-threads"):
        unknown = set(settings.get(key) or {}) - rules
        assert not unknown, f"{profile.relative_to(REPO)} {key}: no such rule {sorted(unknown)}"


def test_model_jobs_share_two_cores_in_smoke() -> None:
    smoke = yaml.safe_load((REPO / "profiles/smoke/profile.yaml").read_text())
    assert smoke["cores"] == 2 and smoke["resources"]["gpu"] == 2
    assert smoke["set-threads"]["train"] == smoke["set-threads"]["evaluate_model"] == 1


def test_slurm_profile_holds_site_settings_only() -> None:
    """What a job needs is declared once, in its rule; the SLURM profile names the account and
    the partitions, whose file the executor reads (one partition with GPUs, one without)."""
    slurm = yaml.safe_load((REPO / "profiles/slurm/profile.yaml").read_text())
    assert "set-resources" not in slurm and "set-threads" not in slurm
    assert set(slurm["default-resources"]) == {"slurm_account"}
    for config in (slurm, yaml.safe_load(CI_SLURM.read_text())):
        gpus = [
            p.limits.max_gpu for p in read_partition_file(REPO / config["slurm-partition-config"])
        ]
        assert 0 in gpus and max(gpus) >= 1, config["slurm-partition-config"]


def test_gpu_rules_declare_their_memory_and_runtime() -> None:
    """The SLURM profile no longer supplies them: every rule asking for a GPU declares both."""
    text = "".join(p.read_text() for p in sorted(REPO.glob("rules/**/*.smk")))
    gpu_rules = {}
    for block in re.split(r"^ *rule\b ?", text, flags=re.M):
        if "gpu=1" in block:  # a rule of a loop (`rule:`) has its name under `name:`
            name = block.split(":")[0] or re.findall(r"name:\s*(\S+)", block)[0]
            gpu_rules[name] = block
    # rules/evaluate.smk: one definition, a rule per kind of model
    assert [s.rule for s in SUBJECTS] == [
        "evaluate_model",
        "evaluate_untrained",
        "evaluate_released",
    ]
    assert {"train", "_subject.rule"} <= set(gpu_rules)
    for name, block in gpu_rules.items():
        assert "mem_mb=" in block and "runtime=" in block, name
    # the generators' rules are their specs' steps (rules/generators.smk)
    gpu_steps = [step for step in all_steps() if "gpu" in step.resources]
    assert {"paraphrase", "san_negatives", "gcse_denoise"} <= {step.name for step in gpu_steps}
    for step in gpu_steps:
        assert {"mem_mb", "runtime"} <= set(step.resources), step.name
