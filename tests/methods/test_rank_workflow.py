"""The workflow trains the teachers upstream of their students: a smoke-profile dry run with the
four rank-distillation methods added (their teachers: the suite's simcse and sncse)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.slow, pytest.mark.mirror]
REPO = Path(__file__).resolve().parents[2]
SIMCSE_PAIR = {"teacher1": {"method": "simcse"}, "teacher2": {"method": "simcse"}}
SNCSE_PAIR = {"teacher1": {"method": "sncse"}, "teacher2": {"method": "simcse"}}
OVERLAY = {
    "grid": {
        "methods": ["simcse", "sncse", "rankcse", "rankcse_san", "rlrd", "rlrd_san"],
        "backbones": ["splade-tiny"],
        "seeds": [1],
    },
    "methods": {
        "rankcse": {"implementation": "rankcse", "guides": SIMCSE_PAIR},
        "rankcse_san": {"implementation": "rankcse_san", "guides": SIMCSE_PAIR},
        "rlrd": {"implementation": "rlrd", "guides": SNCSE_PAIR},
        "rlrd_san": {"implementation": "rlrd_san", "guides": SNCSE_PAIR},
    },
}


def _train_jobs(output: str) -> list[tuple[str, str]]:
    """(method, shell command) of each train job, in the dry run's (execution) order."""
    jobs: list[tuple[str, str]] = []
    rule = None
    for line in output.splitlines():
        if m := re.match(r"^(?:localrule|rule) (\w+):", line):
            rule = m.group(1)
        elif rule == "train" and (m := re.search(r"wildcards: method=(\w+),", line)):
            jobs.append((m.group(1), ""))
        elif rule == "train" and jobs and "python -m negcse train" in line:
            jobs[-1] = (jobs[-1][0], line)
    return jobs


def test_teachers_train_before_their_students(tmp_path: Path) -> None:
    ws = tmp_path / "negcse"
    ws.mkdir()
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=REPO, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(ws)], input=archive.stdout, check=True)
    (ws / "overlay.yaml").write_text(yaml.safe_dump(OVERLAY))
    cmd = ["snakemake", "-n", "-p", "--profile", "profiles/smoke", "--configfile"]
    cmd += ["tests/smoke/config.yaml", "overlay.yaml", "--", "all"]
    proc = subprocess.run(cmd, cwd=ws, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    jobs = _train_jobs(proc.stdout)
    order = [method for method, _ in jobs]
    assert sorted(order) == sorted(OVERLAY["grid"]["methods"])
    for student, teachers in (
        ("rankcse", {"simcse"}),
        ("rankcse_san", {"simcse"}),
        ("rlrd", {"simcse", "sncse"}),
        ("rlrd_san", {"simcse", "sncse"}),
    ):
        assert all(order.index(t) < order.index(student) for t in teachers)
        command = dict(jobs)[student]
        for guide, entry in OVERLAY["methods"][student]["guides"].items():
            folder = f"results/models/{entry['method']}/splade-tiny/seed1"
            assert f"--guide {guide}={folder}" in command
    assert "--guide" not in dict(jobs)["simcse"]
