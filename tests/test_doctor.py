"""``negcse doctor``: one screen, exit 1 with a ``problem:`` line for each thing that is wrong
(a lock other than the requested one, a driver too old for the lock's CUDA, a GPU required
where torch has none), exit 0 otherwise."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import torch

from negcse import cli
from negcse.commands import doctor
from negcse.workflow.lockfile import file_sha256

REPO = Path(__file__).resolve().parents[1]
CPU_LOCK, CUDA_LOCK = "locks/cpu.txt", "locks/cuda.txt"


def _doctor(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = cli.main(["doctor", *args])
    return code, capsys.readouterr().out.splitlines()


@pytest.fixture
def installed_cpu_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process as if `make setup` had installed the CPU lock (whatever installed it)."""
    record = {"lock": CPU_LOCK, "lock_sha256": file_sha256(REPO / CPU_LOCK)}
    monkeypatch.setattr(doctor, "installed_lock", lambda: record)
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("NEGCSE_DEVICE", raising=False)


def _fake_nvidia_smi(tmp: Path, monkeypatch: pytest.MonkeyPatch, driver: str | None) -> None:
    """nvidia-smi on PATH answering with ``driver`` (None: no nvidia-smi at all)."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    if driver is not None:
        script = bin_dir / "nvidia-smi"
        script.write_text(f"#!/bin/sh\necho {driver}\n")
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin:/bin")


def test_the_cuda_lock_pins_cuda_13_whose_driver_floor_is_580() -> None:
    assert doctor.lock_cuda_major(REPO / CUDA_LOCK) == 13
    assert doctor.lock_cuda_major(REPO / CPU_LOCK) is None
    assert doctor.MIN_DRIVER[13] == 580


@pytest.mark.usefixtures("installed_cpu_lock")
def test_same_lock_is_ok_and_another_is_a_problem(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_nvidia_smi(tmp_path, monkeypatch, None)
    code, out = _doctor(capsys, "--lock", CPU_LOCK)
    assert out[0] == "negcse doctor" and len(out) <= 24  # one screen
    lock_row = next(line for line in out if line.split()[:1] == ["lock"])
    assert lock_row.endswith(f"requested {CPU_LOCK}: the same")
    assert not [line for line in out if line.startswith("problem:")]
    if not torch.cuda.is_available():
        assert code == 0 and out[-1] == "ok for CPU runs (profiles/smoke)"

    code, out = _doctor(capsys, "--lock", CUDA_LOCK)
    assert code == 1
    assert f"problem: the installed lock is not {CUDA_LOCK} as it is now: make setup LOCK=" \
        f"{CUDA_LOCK}" in out  # fmt: skip
    assert any(line.split()[:1] == ["driver"] and "CUDA 13 needs >= 580" in line for line in out)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA GPU is present")
@pytest.mark.usefixtures("installed_cpu_lock")
def test_a_required_gpu_that_torch_cannot_use_is_a_problem(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_nvidia_smi(tmp_path, monkeypatch, None)
    code, out = _doctor(capsys, "--gpu")
    assert code == 1
    assert [line for line in out if line.startswith("problem:")] == [
        "problem: a CUDA GPU is required (--gpu) but "
        f"{doctor.device_policy.cuda_missing()}; see docs/gpu.md"
    ]
    monkeypatch.setenv("NEGCSE_DEVICE", "cuda")  # the device setting in force says the same
    code, out = _doctor(capsys)
    assert code == 1 and any("device 'cuda' is required" in line for line in out)


@pytest.mark.usefixtures("installed_cpu_lock")
@pytest.mark.parametrize(("driver", "verdict"), [("575.51.03", "TOO OLD"), ("580.159.04", "ok")])
def test_the_driver_is_checked_against_the_requested_locks_cuda(
    driver: str,
    verdict: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _fake_nvidia_smi(tmp_path, monkeypatch, driver)
    record = {"lock": CUDA_LOCK, "lock_sha256": file_sha256(REPO / CUDA_LOCK)}
    monkeypatch.setattr(doctor, "installed_lock", lambda: record)
    code, out = _doctor(capsys, "--lock", CUDA_LOCK)
    assert f"  driver   {driver}; CUDA 13 needs >= 580: {verdict}" in out
    too_old = f"problem: NVIDIA driver {driver} is older than CUDA 13 needs (>= 580): update " \
        "the driver"  # fmt: skip
    assert (too_old in out) == (verdict == "TOO OLD")
    if verdict == "TOO OLD":
        assert code == 1
