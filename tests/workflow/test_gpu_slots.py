"""GPU slots (negcse.workflow.gpu_slots) on CPU: concurrent jobs get distinct devices through
CUDA_VISIBLE_DEVICES, a job waits while every slot is taken, and a slot whose holder is killed
with SIGKILL is free again (the kernel drops the flock with the process). k jobs per GPU
(``NEGCSE_JOBS_PER_GPU``) against a fake ``nvidia-smi`` on PATH that lists two GPUs and reports
their free memory from a file the test edits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from negcse.workflow.gpu_slots import (
    free_memory_mb,
    job_limit,
    jobs_per_gpu,
    try_acquire,
    visible_gpus,
)

SRC = str(Path(__file__).resolve().parents[2] / "src")


SLOT_ENV = ("SLURM_JOB_ID", "NEGCSE_GPU_SLOTS", "NEGCSE_JOBS_PER_GPU", "NEGCSE_GPU_MIN_FREE_MB")


def _holder(
    tmp: Path, name: str, devices: str | None, extra: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """A job that records its CUDA_VISIBLE_DEVICES and then sleeps, holding its slot
    (``devices`` None: the GPUs are the ones nvidia-smi lists)."""
    env = {
        **{k: v for k, v in os.environ.items() if k not in (*SLOT_ENV, "CUDA_VISIBLE_DEVICES")},
        "NEGCSE_GPU_SLOT_DIR": str(tmp / "slots"),
        "PYTHONPATH": SRC,
        **(extra or {}),
    }
    if devices is not None:
        env["CUDA_VISIBLE_DEVICES"] = devices
    cmd = f'echo "$CUDA_VISIBLE_DEVICES" > {tmp / name}.tmp && mv {tmp / name}.tmp {tmp / name}'
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "negcse.workflow.gpu_slots",
            "--",
            "sh",
            "-c",
            f"{cmd}; exec sleep 60",
        ],
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


def _fake_nvidia_smi(tmp: Path, free_mb: tuple[int, int]) -> dict[str, str]:
    """A PATH whose nvidia-smi lists GPUs 0 and 1 (``-L``) and prints the free memory held in
    ``tmp/free.csv`` for the memory query; returns the environment additions."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    script = bin_dir / "nvidia-smi"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "-L" ]; then\n'
        '  echo "GPU 0: Fake H100 (UUID: GPU-aaa)"; echo "GPU 1: Fake H100 (UUID: GPU-bbb)"\n'
        f"else cat {tmp / 'free.csv'}; fi\n"
    )
    script.chmod(0o755)
    _set_free(tmp, free_mb)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def _set_free(tmp: Path, free_mb: tuple[int, int]) -> None:
    rows = [
        f"{i}, GPU-{u}, {mb}\n"
        for i, (u, mb) in enumerate(zip(("aaa", "bbb"), free_mb, strict=True))
    ]
    (tmp / "free.csv.tmp").write_text("".join(rows))
    (tmp / "free.csv.tmp").replace(tmp / "free.csv")


def test_k_jobs_share_a_gpu_spread_first_and_wait_for_free_memory(tmp_path: Path) -> None:
    """k = 2 on the two GPUs of the fake nvidia-smi: the first two jobs take GPUs 0 and 1, the
    third shares GPU 0 (80 GB free), the fourth waits while GPU 1 reports 4,000 MiB free (under
    the 10,240 MiB floor) and starts on GPU 1 once it reports 50,000; a fifth finds all four
    slots taken."""
    extra = {**_fake_nvidia_smi(tmp_path, (80_000, 4_000)), "NEGCSE_JOBS_PER_GPU": "2"}
    jobs = []
    try:
        for i in range(3):  # one at a time: the order of the slots is the point
            jobs.append(_holder(tmp_path, f"job{i}", None, extra))
            _wait_for(tmp_path / f"job{i}")
        assert [(tmp_path / f"job{i}").read_text().strip() for i in range(3)] == ["0", "1", "0"]
        jobs.append(_holder(tmp_path, "job3", None, extra))
        time.sleep(1.5)
        assert not (tmp_path / "job3").exists() and jobs[-1].poll() is None
        _set_free(tmp_path, (76_000, 50_000))
        assert _wait_for(tmp_path / "job3") == "1"
        jobs.append(_holder(tmp_path, "job4", None, extra))
        time.sleep(1.5)
        assert not (tmp_path / "job4").exists() and jobs[-1].poll() is None
    finally:
        for job in jobs:
            job.kill()
            job.wait()


def test_shared_slots_read_free_memory_by_uuid_and_one_job_per_gpu_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in _fake_nvidia_smi(tmp_path, (30_000, 2_000)).items():
        monkeypatch.setenv(key, value)
    assert free_memory_mb() == {"0": 30_000, "GPU-aaa": 30_000, "1": 2_000, "GPU-bbb": 2_000}
    devices, slots = ["GPU-aaa", "GPU-bbb"], tmp_path / "slots"
    held = [try_acquire(devices, slots, per_gpu=2, min_free=10_240) for _ in range(4)]
    # GPU-aaa, GPU-bbb, GPU-aaa again (30,000 MiB free), then nothing: GPU-bbb has 2,000
    assert [h[0] if h else None for h in held] == ["GPU-aaa", "GPU-bbb", "GPU-aaa", None]
    others = [try_acquire(devices, tmp_path / "other") for _ in range(2)]  # default: 1 per GPU
    assert [h[0] if h else None for h in others] == devices
    others = [h[1] for h in others if h]
    assert try_acquire(devices, tmp_path / "other") is None
    for fd in [h[1] for h in held if h] + others:
        os.close(fd)
    monkeypatch.setenv("NEGCSE_JOBS_PER_GPU", "0")
    with pytest.raises(SystemExit, match="NEGCSE_JOBS_PER_GPU must be an integer >= 1, got '0'"):
        jobs_per_gpu()


def test_a_local_run_asks_no_more_gpu_jobs_than_slots(monkeypatch: pytest.MonkeyPatch) -> None:
    """profiles/smoke's gpu: 2 on a one-GPU machine: lowered to 1 (a second job would only wait
    for the first one's slot); to 2 with two jobs per GPU; left alone without GPUs, under SLURM
    or with slots off."""
    for var in ("SLURM_JOB_ID", "NEGCSE_GPU_SLOTS", "NEGCSE_JOBS_PER_GPU"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert job_limit(2) == (1, "GPU jobs at once: 1 (1 GPU(s) x NEGCSE_JOBS_PER_GPU=1; "
                               "the gpu resource was 2)")  # fmt: skip
    assert job_limit(None) is not None and job_limit(None)[0] == 1  # type: ignore[index]
    assert job_limit(1) is None
    monkeypatch.setenv("NEGCSE_JOBS_PER_GPU", "2")
    assert job_limit(2) is None and job_limit(4)[0] == 2  # type: ignore[index]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    assert job_limit(8)[0] == 4  # type: ignore[index]
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    assert job_limit(8) is None
    monkeypatch.delenv("SLURM_JOB_ID")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert job_limit(2) is None
