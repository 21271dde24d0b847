"""The Snakemake profiles name real rules, and none is loaded behind the user's back."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
PROFILES = sorted((REPO / "profiles").glob("*/profile.yaml"))


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


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.parent.name)
def test_per_rule_settings_name_existing_rules(profile: Path, rules: set[str]) -> None:
    settings = yaml.safe_load(profile.read_text())
    for key in ("set-resources", "set-threads"):
        unknown = set(settings.get(key) or {}) - rules
        assert not unknown, f"{profile.relative_to(REPO)} {key}: no such rule {sorted(unknown)}"


def test_model_jobs_share_two_cores_in_smoke() -> None:
    smoke = yaml.safe_load((REPO / "profiles/smoke/profile.yaml").read_text())
    assert smoke["cores"] == 2 and smoke["resources"]["gpu"] == 2
    assert smoke["set-threads"]["train"] == smoke["set-threads"]["evaluate_model"] == 1
