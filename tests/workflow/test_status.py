"""``negcse status``: Snakemake's own state read back (a tiny workflow's real run log, then a
partial run of the smoke grid with one training done and one failed) and the ETA's arithmetic
by hand."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time
from datetime import datetime
from pathlib import Path

import pytest

from negcse.commands.status import runs_on_gpu, snakemake_running
from negcse.workflow.status import (
    Eta,
    Job,
    JobStatus,
    RunLog,
    classify,
    eta,
    job_records,
    latest_run_log,
    parse_run_log,
    render,
)
from workflow_copy import CI_REDUCTIONS, SMOKE, committed_copy, sh

TINY = """
rule all:
    input: "out/a.txt", "out/b.txt", "out/c.txt"
rule ok:
    output: "out/{x}.txt", "out/{x}.json"
    log: "logs/{x}.log"
    wildcard_constraints: x="a|b"
    shell: "echo hi > {output[0]}; echo {{}} > {output[1]}; echo done > {log}"
rule bad:
    output: "out/c.txt"
    log: "logs/c.log"
    shell: "echo 'Traceback (most recent call last):' > {log}; echo 'ValueError: boom' >> {log}; "
        "echo 'x:   0%|          | 0/40 [00:04<?, ?it/s]' >> {log}; exit 1"
"""


def test_a_real_run_log_is_read_back(tmp_path: Path) -> None:
    """Snakemake's own log of a run where two jobs finish and one fails (keep-going)."""
    (tmp_path / "Snakefile").write_text(TINY)
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-c1", "-k"], cwd=tmp_path, capture_output=True
    )
    assert proc.returncode != 0
    path = latest_run_log(tmp_path)
    assert path is not None
    log = parse_run_log(path.read_text())
    assert log.start is not None and abs((datetime.now() - log.start).total_seconds()) < 600
    assert sorted(log.started.values()) == [
        ("out/a.txt", "out/a.json"),
        ("out/b.txt", "out/b.json"),
        ("out/c.txt",),
    ]
    assert len(log.finished) == 2 and list(log.failed.values()) == [("out/c.txt",)]
    # the DAG as Snakemake would rerun it: c and all to run
    jobs = [
        Job("ok", {"x": "a"}, ("out/a.txt", "out/a.json"), ("logs/a.log",), False),
        Job("ok", {"x": "b"}, ("out/b.txt", "out/b.json"), ("logs/b.log",), False),
        Job("bad", {}, ("out/c.txt",), (str(tmp_path / "logs/c.log"),), True),
        Job("all", {}, (), (), True),
    ]

    def mtime(path: str) -> float | None:
        full = tmp_path / path
        return full.stat().st_mtime if full.exists() else None

    states = classify(jobs, log, active=False, mtime=mtime)
    assert [s.state for s in states] == ["done", "done", "failed", "pending"]
    assert all(s.finished_at is not None for s in states[:2])  # done in this run
    start = log.start.timestamp()
    screen = render(states, eta(states, lambda job: 10.0, start, start + 60), "h")
    assert re.search(r"^ok\s+2\s+0\s+0\s+0\s+2$", screen, re.M)
    assert re.search(r"^bad\s+0\s+0\s+1\s+0\s+1$", screen, re.M)
    assert re.search(r"^total\s+2\s+0\s+1\s+1\s+4$", screen, re.M)
    assert f"bad: {tmp_path}/logs/c.log: ValueError: boom" in screen


#: a job that waits for a file the test writes, one that fails, one that succeeds
WAITING = """
rule all:
    input: "out/wait.txt", "out/bad.txt", "out/ok.txt"
rule wait:
    output: "out/wait.txt"
    shell: "while [ ! -e go ]; do sleep 0.1; done; echo w > {output}"
rule bad:
    output: "out/bad.txt"
    shell: "exit 1"
rule ok:
    output: "out/ok.txt"
    shell: "echo ok > {output}"
"""


def test_quiet_rules_run_is_read_from_snakemakes_job_records(tmp_path: Path) -> None:
    """Under ``--quiet rules`` the run log holds no job blocks: the running job is found by its
    ``incomplete`` marker, the failed one by its metadata record, while Snakemake runs."""
    (tmp_path / "Snakefile").write_text(WAITING)
    proc = subprocess.Popen(
        [sys.executable, "-m", "snakemake", "-c2", "-k", "--quiet", "rules"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    jobs = [
        Job("wait", {}, ("out/wait.txt",), (), True),
        Job("bad", {}, ("out/bad.txt",), (), True),
        Job("ok", {}, ("out/ok.txt",), (), True),
    ]
    try:
        for _ in range(1200):  # until the other two jobs ended and wait is marked (< 2 min)
            records = job_records(tmp_path, ["out/wait.txt", "out/bad.txt", "out/ok.txt"])
            if "out/wait.txt" in records.started and {"out/bad.txt", "out/ok.txt"} <= set(
                records.ended
            ):
                break
            assert proc.poll() is None, "snakemake ended before the test released it"
            time.sleep(0.1)
        assert snakemake_running(tmp_path)
        path = latest_run_log(tmp_path)
        assert path is not None
        log = parse_run_log(path.read_text())
        assert log.started == {} and log.failed == {}  # --quiet rules: no job blocks
        done = [j if j.rule != "ok" else Job("ok", {}, j.outputs, (), False) for j in jobs]
        states = classify(done, log, active=True, mtime=lambda p: None, records=records)
        assert [s.state for s in states] == ["running", "failed", "done"]
    finally:
        (tmp_path / "go").write_text("")
        proc.wait(timeout=120)
    assert (tmp_path / "out/wait.txt").is_file()
    records = job_records(tmp_path, ["out/wait.txt"])
    assert records.started == {} and "out/wait.txt" in records.ended


def test_the_eta_of_a_cpu_run_is_wall_clock_without_gpu_hours() -> None:
    job = Job("train", {}, ("a",), (), False)
    statuses = [JobStatus(job, "done", finished_at=1100.0), JobStatus(job, "pending")]
    got = eta(statuses, lambda job: 100.0, start=1000.0, now=1200.0)  # pace 2
    cpu = render(statuses, got, "h", gpu=False)
    assert "ETA: 3 min of wall clock for 1 jobs on the CPU" in cpu and "GPU" not in cpu
    assert "GPU-h left" in render(statuses, got, "h", gpu=True)
    waiting = render(statuses[1:], eta(statuses[1:], lambda job: 1.0, 1000.0, 1200.0), "h",
                     gpu=False)  # fmt: skip
    assert "not yet measured (1 jobs on the CPU" in waiting and "GPU" not in waiting
    assert not runs_on_gpu({}, {"device": "cpu"})
    assert runs_on_gpu({"config": {"device": "cuda"}}, {"device": "auto"})
    assert not runs_on_gpu({"config": {"device": "cpu"}}, {"device": "cuda"})


def test_running_jobs_are_those_the_live_run_started_and_did_not_finish() -> None:
    log = RunLog(
        start=datetime(2024, 1, 1, 12, 0),
        started={1: ("a",), 2: ("b",), 3: ("c",)},
        finished={1},
        failed={3: ("c",)},
    )
    jobs = [Job("r", {}, (o,), (), o != "a") for o in ("a", "b", "c", "d")]
    live = classify(jobs, log, active=True, mtime=lambda p: None)
    assert [s.state for s in live] == ["done", "running", "failed", "pending"]
    # no Snakemake alive: a job it started and never finished is pending again
    dead = classify(jobs, log, active=False, mtime=lambda p: None)
    assert [s.state for s in dead] == ["done", "pending", "failed", "pending"]


def test_eta_is_the_models_remaining_seconds_at_the_measured_pace() -> None:
    """Two jobs of 100 and 300 modelled seconds finished 800 s into the run: pace 2; left, 50 +
    250 modelled seconds: 600 s; a job done before the run does not count."""
    cost = {"a": 100.0, "b": 300.0, "c": 50.0, "d": 250.0, "old": 1000.0}
    jobs = {name: Job("train", {"method": name}, (name,), (), False) for name in cost}
    statuses = [
        JobStatus(jobs["a"], "done", finished_at=1100.0),
        JobStatus(jobs["b"], "done", finished_at=1700.0),
        JobStatus(jobs["old"], "done", finished_at=None),
        JobStatus(jobs["c"], "running"),
        JobStatus(jobs["d"], "pending"),
    ]
    got = eta(statuses, lambda job: cost[job.wildcards["method"]], start=1000.0, now=1800.0)
    assert got == Eta(remaining=300.0, done=400.0, pace=2.0, jobs_done=2)
    assert got.seconds == 600.0
    assert "ETA: 10 min for 2 jobs" in render(statuses, got, "h")
    assert eta(statuses[2:], lambda job: 1.0, 1000.0, 1800.0).pace is None  # none done yet


BROKEN = '''"""SimCSE whose loss fails at its first step."""
from negcse.methods.registry import register
from negcse.methods.simcse import SimCSE


@register
class Broken(SimCSE):
    name = "broken"

    def loss(self, emb, ctx):
        raise ValueError("boom: the broken method's loss")
'''
OVERLAY = """
grid: {methods: [simcse, broken], seeds: [1]}
methods:
  simcse: {seeds: [1]}  # the smoke grid runs it at three
  broken: {implementation: broken}
evaluation: {baseline: false}
train_overrides: {max_steps: 4, eval_steps: 4, checkpoint_steps: 4}
"""


@pytest.mark.slow
@pytest.mark.mirror
def test_status_of_a_partial_run_with_one_failure(tmp_path: Path) -> None:
    """The smoke grid cut to SimCSE and a method whose loss raises, one seed: both trainings
    run (keep going), SimCSE's finishes, the other fails; status counts them, names the failure
    with its log's last line and scales the cost model by this run's pace."""

    def edit(ws: Path) -> None:
        (ws / "src/negcse/methods/broken.py").write_text(BROKEN)
        (ws / "status.yaml").write_text(OVERLAY)

    ws = committed_copy(tmp_path, edit)
    configs = ["tests/smoke/config.yaml", CI_REDUCTIONS, "status.yaml"]
    targets = [f"results/models/{m}/splade-tiny/seed1" for m in ("simcse", "broken")]
    run = sh([*SMOKE, "--configfile", *configs, "-k", *targets], ws, check=False)
    assert run.returncode != 0
    env = {**os.environ, "PYTHONPATH": str(ws / "src")}  # its negcse: the broken method's
    proc = sh(
        [sys.executable, "-m", "negcse", "status", "--profile", "profiles/smoke",
         "--configfile", *configs],
        ws,
        env=env,
    )  # fmt: skip
    screen = proc.stdout
    assert "no Snakemake running; the last run started" in screen
    assert re.search(r"^corpus\s+1\s+0\s+0\s+0\s+1$", screen, re.M), screen
    assert re.search(r"^train\s+1\s+0\s+1\s+0\s+2$", screen, re.M), screen
    assert re.search(r"^evaluate_model\s+0\s+0\s+0\s+2\s+2$", screen, re.M), screen
    (failure,) = [line for line in screen.splitlines() if line.startswith("  train ")]
    assert failure.startswith(
        "  train method=broken backbone=splade-tiny seed=1: "
        "logs/train/broken/splade-tiny/seed1.log: "
    )
    assert failure.endswith("ValueError: boom: the broken method's loss"), failure
    from negcse.runtime.device import cuda_missing  # torch: only here

    if cuda_missing() is None:  # the smoke profile's device is auto: a GPU run here
        m = re.search(r"^ETA: (.*) for (\d+) jobs \(cost model: [\d.]+ GPU-h left, x[\d.]+ the "
                      r"measured pace of the (\d+) jobs", screen, re.M)  # fmt: skip
    else:  # a CPU run: wall clock, no GPU hours
        m = re.search(r"^ETA: (.*) of wall clock for (\d+) jobs on the CPU \(the pace of the "
                      r"(\d+) jobs done", screen, re.M)  # fmt: skip
        assert "GPU" not in screen
    assert m, screen
    assert int(m.group(3)) > 0  # the pace of the run's finished trainings
    dry = sh([*SMOKE, "-n", "--configfile", *configs], ws).stdout
    total = int(re.search(r"^total\s+(\d+)$", dry, re.M).group(1))
    assert int(m.group(2)) == total  # the jobs left: those a dry run would run
    assert textwrap.dedent(screen).count("\n") < 60  # one screen
