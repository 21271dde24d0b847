"""One GPU per job: ``python -m negcse.workflow.gpu_slots -- CMD ...`` runs CMD on a free GPU of its own.

Snakemake's ``--resources gpu=N`` caps how many GPU jobs run at once but does not say which
GPU each gets; without more, every job would start on GPU 0. This wrapper takes the first free
slot among the machine's GPUs (the entries of ``CUDA_VISIBLE_DEVICES`` if set, else the GPUs
``nvidia-smi -L`` lists), exports ``CUDA_VISIBLE_DEVICES=<that GPU>`` and replaces itself with
CMD (``exec``). A slot is an exclusive ``flock`` on ``<dir>/gpu<id>.lock``, held by the open file
that CMD inherits: the kernel releases it when the job's processes end, however they end (kill
-9 included), so no stale lock survives a crash. With every slot taken it waits for one. On a
machine without GPUs CMD runs unchanged.

``NEGCSE_GPU_SLOT_DIR`` sets the lock folder (default ``.snakemake/gpu-slots`` in the
working directory, i.e. one set of slots per workflow checkout); lock files carry the host name,
so a folder on a shared file system does not couple machines. Under a cluster scheduler that
assigns the GPUs itself (SLURM: ``SLURM_JOB_ID`` is set), or with ``NEGCSE_GPU_SLOTS=off``, CMD
runs unchanged.

``NEGCSE_JOBS_PER_GPU=k`` (default 1) gives every GPU k slots, for trainings too small to fill
a GPU alone (an eager step is bound by the host's kernel launches, so k processes overlap on
one GPU). The first job on a GPU starts as before; a further job takes a shared slot of a GPU
only while ``nvidia-smi`` reports at least ``NEGCSE_GPU_MIN_FREE_MB`` (default 10240) MiB free
on it, else it waits (no memory check where ``nvidia-smi`` is absent). Jobs spread over the
GPUs before any GPU gets a second job.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

DEFAULT_DIR = ".snakemake/gpu-slots"
DEFAULT_MIN_FREE_MB = 10240


def visible_gpus() -> list[str]:
    """The GPUs jobs may use: CUDA_VISIBLE_DEVICES entries, else nvidia-smi's list."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return [d.strip() for d in env.split(",") if d.strip() and d.strip() != "-1"]
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(
            ["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [str(i) for i, line in enumerate(out.splitlines()) if line.startswith("GPU ")]


def free_memory_mb() -> dict[str, int] | None:
    """Free memory (MiB) per GPU, keyed by index and by UUID, from ``nvidia-smi``; None
    where it cannot say."""
    if shutil.which("nvidia-smi") is None:
        return None
    query = ["nvidia-smi", "--query-gpu=index,uuid,memory.free", "--format=csv,noheader,nounits"]
    try:
        out = subprocess.run(query, capture_output=True, text=True, timeout=30, check=True).stdout
        free: dict[str, int] = {}
        for line in out.splitlines():
            if line.strip():
                index, uuid, mb = (f.strip() for f in line.split(","))
                free[index] = free[uuid] = int(mb)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return free


def jobs_per_gpu() -> int:
    raw = os.environ.get("NEGCSE_JOBS_PER_GPU", "1")
    if not raw.isdigit() or int(raw) < 1:
        raise SystemExit(f"gpu_slots: NEGCSE_JOBS_PER_GPU must be an integer >= 1, got {raw!r}")
    return int(raw)


def min_free_mb() -> int:
    raw = os.environ.get("NEGCSE_GPU_MIN_FREE_MB", str(DEFAULT_MIN_FREE_MB))
    if not raw.isdigit():
        raise SystemExit(f"gpu_slots: NEGCSE_GPU_MIN_FREE_MB must be an integer, got {raw!r}")
    return int(raw)


def job_limit(requested: int | None) -> tuple[int, str] | None:
    """For a local run on a machine with GPUs: the cap on concurrent GPU jobs (its GPUs x
    ``NEGCSE_JOBS_PER_GPU``) and a one-line note, when ``requested`` (the ``gpu`` resource,
    None: unset) asks for more; None where there is nothing to lower (no GPU visible, a
    cluster scheduler assigns the GPUs, or slots are off). A profile's ``gpu: 2`` on a one-GPU
    box would otherwise start a second job that only waits for the first one's slot."""
    if "SLURM_JOB_ID" in os.environ or os.environ.get("NEGCSE_GPU_SLOTS") == "off":
        return None
    devices = visible_gpus()
    if not devices:
        return None
    cap = len(devices) * jobs_per_gpu()
    if requested is not None and requested <= cap:
        return None
    asked = "unset" if requested is None else str(requested)
    return cap, (
        f"GPU jobs at once: {cap} ({len(devices)} GPU(s) x NEGCSE_JOBS_PER_GPU="
        f"{jobs_per_gpu()}; the gpu resource was {asked})"
    )


def _lock(path: Path) -> int | None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    os.set_inheritable(fd, True)
    return fd


def try_acquire(
    devices: Sequence[str], lock_dir: Path, per_gpu: int = 1, min_free: int = 0
) -> tuple[str, int] | None:
    """Lock the first free slot: (device, open inheritable fd holding the lock) or None.

    Slot 0 of each device first (one job per GPU, in order), then slot 1 of each, and so on;
    a slot beyond the first is taken only where the device has ``min_free`` MiB free (when
    ``nvidia-smi`` can tell)."""
    lock_dir.mkdir(parents=True, exist_ok=True)
    host = socket.gethostname()
    free: dict[str, int] | None = None
    for slot in range(per_gpu):
        for device in devices:
            name = f"{host}-gpu{device}.lock" if slot == 0 else f"{host}-gpu{device}.{slot}.lock"
            if slot > 0 and min_free > 0:
                if free is None:
                    free = free_memory_mb() or {}
                if free.get(device, min_free) < min_free:
                    continue
            fd = _lock(lock_dir / name)
            if fd is not None:
                return device, fd
    return None


def acquire(
    devices: Sequence[str], lock_dir: Path, poll: float = 0.5, per_gpu: int = 1, min_free: int = 0
) -> tuple[str, int]:
    """Wait until a slot is free and lock it."""
    waited = False
    while True:
        got = try_acquire(devices, lock_dir, per_gpu, min_free)
        if got is not None:
            return got
        if not waited:
            print(
                f"gpu_slots: all {len(devices) * per_gpu} GPU slots busy "
                f"({len(devices)} GPU(s) x {per_gpu} job(s), or too little free memory); waiting",
                file=sys.stderr,
            )
            waited = True
        time.sleep(poll)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        print("usage: python -m negcse.workflow.gpu_slots -- CMD [ARGS...]", file=sys.stderr)
        return 2
    scheduled = "SLURM_JOB_ID" in os.environ or os.environ.get("NEGCSE_GPU_SLOTS") == "off"
    devices = [] if scheduled else visible_gpus()
    if devices:
        lock_dir = Path(os.environ.get("NEGCSE_GPU_SLOT_DIR", DEFAULT_DIR))
        device, _fd = acquire(devices, lock_dir, per_gpu=jobs_per_gpu(), min_free=min_free_mb())
        os.environ["CUDA_VISIBLE_DEVICES"] = device
        print(f"gpu_slots: CUDA_VISIBLE_DEVICES={device}", file=sys.stderr, flush=True)
    os.execvp(args[0], args)  # the lock's fd stays open in CMD


if __name__ == "__main__":
    sys.exit(main())
