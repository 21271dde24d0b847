"""Helpers of the workflow tests (tests/test_workflow.py, tests/workflow/test_dry_runs.py): a
throwaway git copy of the committed repository, commands run in it, and parsers of Snakemake's
output."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
SMOKE = ["snakemake", "--profile", "profiles/smoke"]
#: GCSE's domain setting: an overlay of the smoke grid, a grid of its own (results/grids/gcse-domain/)
DOMAIN_CONFIGS = ("tests/smoke/config.yaml", "tests/smoke/gcse-domain.yaml")
#: CI's reductions of the smoke grid (SAN masked-only, TREC), merged over it
CI_REDUCTIONS = "tests/smoke/ci.yaml"


def sh(
    cmd: list[str],
    cwd: Path,
    check: bool = True,
    timeout: int = 1800,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` in ``cwd`` (in this environment, or ``env`` in its place)."""
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
        )
    return proc


def job_counts(output: str) -> dict[str, int]:
    """The 'Job stats' table of a Snakemake run or dry run."""
    counts: dict[str, int] = {}
    block = output.split("Job stats:")[-1]
    for line in block.splitlines():
        m = re.match(r"^(\w+)\s+(\d+)\s*$", line.strip())
        if m and m.group(1) != "total":
            counts[m.group(1)] = int(m.group(2))
    return counts


def jobs_with_wildcards(output: str) -> list[tuple[str, str]]:
    """(rule, wildcards) of every job in a dry run."""
    jobs, rule = [], None
    for line in output.splitlines():
        m = re.match(r"^(?:localrule|rule) (\w+):", line)
        if m:
            rule = m.group(1)
            jobs.append((rule, ""))
        elif rule and line.strip().startswith("wildcards:"):
            jobs[-1] = (rule, line.strip())
    return jobs


def set_param(ws: Path, key: str, value: Any) -> str:
    """Write ``key`` (dotted: ``methods.simcse.params.temperature``) into ``ws``'s params.yaml,
    an override of config/defaults.yaml as a user writes one; returns the file's old text."""
    params = ws / "params.yaml"
    original = params.read_text()
    config = yaml.safe_load(original)
    *parents, last = key.split(".")
    node = config
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value
    params.write_text(yaml.safe_dump(config, sort_keys=False))
    return original


def committed_copy(parent: Path, edit: Callable[[Path], None] | None = None) -> Path:
    """A git repository holding the project's committed files (as a fresh clone would), with
    ``edit`` applied before its one commit."""
    ws = parent / "negcse"
    ws.mkdir()
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=REPO, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(ws)], input=archive.stdout, check=True)
    if edit is not None:
        edit(ws)
    for cmd in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"],
    ):
        sh(cmd, ws)
    return ws
