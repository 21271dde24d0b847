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


def try_acquire(devices: Sequence[str], lock_dir: Path) -> tuple[str, int] | None:
    """Lock the first free device: (device, open inheritable fd holding the lock) or None."""
    lock_dir.mkdir(parents=True, exist_ok=True)
    for device in devices:
        name = f"{socket.gethostname()}-gpu{device}.lock"
        fd = os.open(lock_dir / name, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        os.set_inheritable(fd, True)
        return device, fd
    return None


def acquire(devices: Sequence[str], lock_dir: Path, poll: float = 0.5) -> tuple[str, int]:
    """Wait until a device is free and lock it."""
    waited = False
    while True:
        got = try_acquire(devices, lock_dir)
        if got is not None:
            return got
        if not waited:
            print(f"gpu_slots: all {len(devices)} GPU slots busy; waiting", file=sys.stderr)
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
        device, _fd = acquire(devices, lock_dir)
        os.environ["CUDA_VISIBLE_DEVICES"] = device
        print(f"gpu_slots: CUDA_VISIBLE_DEVICES={device}", file=sys.stderr, flush=True)
    os.execvp(args[0], args)  # the lock's fd stays open in CMD


if __name__ == "__main__":
    sys.exit(main())
