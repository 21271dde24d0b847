"""GPU slots (negcse.workflow.gpu_slots) on CPU: concurrent jobs get distinct devices through
CUDA_VISIBLE_DEVICES, a job waits while every slot is taken, and a slot whose holder is killed
with SIGKILL is free again (the kernel drops the flock with the process)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from negcse.workflow.gpu_slots import try_acquire, visible_gpus

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _holder(tmp: Path, name: str, devices: str) -> subprocess.Popen[bytes]:
    """A job that records its CUDA_VISIBLE_DEVICES and then sleeps, holding its slot."""
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("SLURM_JOB_ID", "NEGCSE_GPU_SLOTS")},
        "CUDA_VISIBLE_DEVICES": devices,
        "NEGCSE_GPU_SLOT_DIR": str(tmp / "slots"),
        "PYTHONPATH": SRC,
    }
    cmd = f'echo "$CUDA_VISIBLE_DEVICES" > {tmp / name}.tmp && mv {tmp / name}.tmp {tmp / name}'
    return subprocess.Popen(
        [sys.executable, "-m", "negcse.workflow.gpu_slots", "--", "sh", "-c", f"{cmd}; exec sleep 60"],
        env=env,
        stderr=subprocess.DEVNULL,
    )


def _wait_for(path: Path, timeout: float = 20.0) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.is_file():
            return path.read_text().strip()
        time.sleep(0.05)
    raise AssertionError(f"{path} not written within {timeout} s")


def test_visible_gpus_follow_cuda_visible_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2, 5,7")
    assert visible_gpus() == ["2", "5", "7"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert visible_gpus() == []


def test_concurrent_jobs_get_distinct_slots_and_a_killed_job_frees_its_slot(
    tmp_path: Path,
) -> None:
    jobs = [_holder(tmp_path, f"job{i}", "4,5,6") for i in range(3)]
    try:
        got = sorted(_wait_for(tmp_path / f"job{i}") for i in range(3))
        assert got == ["4", "5", "6"]
        # a fourth job waits: no slot is free
        waiting = _holder(tmp_path, "job3", "4,5,6")
        jobs.append(waiting)
        time.sleep(1.0)
        assert not (tmp_path / "job3").exists() and waiting.poll() is None
        # kill -9 the holder of device 5: the waiting job gets exactly that device
        victim = next(j for i, j in enumerate(jobs[:3]) if _wait_for(tmp_path / f"job{i}") == "5")
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        assert _wait_for(tmp_path / "job3") == "5"
        # and no slot is free now, as seen from here
        assert try_acquire(["4", "5", "6"], tmp_path / "slots") is None
    finally:
        for job in jobs:
            job.kill()
            job.wait()
    # every holder gone: every slot is free again
    got = try_acquire(["4", "5", "6"], tmp_path / "slots")
    assert got is not None and got[0] == "4"
    os.close(got[1])


@pytest.mark.parametrize(
    ("extra", "seen"),
    [
        ({"CUDA_VISIBLE_DEVICES": ""}, "[]"),
        ({"CUDA_VISIBLE_DEVICES": "3,4", "SLURM_JOB_ID": "7"}, "[3,4]"),
        ({"CUDA_VISIBLE_DEVICES": "3,4", "NEGCSE_GPU_SLOTS": "off"}, "[3,4]"),
    ],
    ids=["no GPUs", "SLURM assigns the GPUs", "switched off"],
)
def test_command_runs_unchanged_without_gpus_under_slurm_or_when_off(
    tmp_path: Path, extra: dict[str, str], seen: str
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("SLURM_JOB_ID", "NEGCSE_GPU_SLOTS")}
    env.update(PYTHONPATH=SRC, **extra)
    cmd = ["sh", "-c", 'echo "[$CUDA_VISIBLE_DEVICES]"']
    out = subprocess.run(
        [sys.executable, "-m", "negcse.workflow.gpu_slots", "--", *cmd],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    )
    assert out.stdout.strip() == seen
    assert not (tmp_path / ".snakemake").exists()
