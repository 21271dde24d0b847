"""``negcse doctor``: one screen on what this machine gives negcse (torch, CUDA, GPUs, driver,
the device setting, the lock installed vs requested, mirror, cache, free disk).

Exit 0 when nothing is wrong for what is asked, 1 when something is (the line starting with
``problem:`` says what and the fix): the installed lock is not the requested one or its file
changed since ``make setup``, an NVIDIA driver older than the CUDA build needs, and with
``--gpu`` (or ``device: cuda`` in force) no CUDA GPU that torch can use."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from negcse.data.sources import CACHE_ENV, MIRROR_ENV, ResolveError, cache_root, mirror_root
from negcse.data.sources import offline as is_offline
from negcse.errors import UserError
from negcse.runtime.lazy import LazyModule
from negcse.runtime.lock_record import installed_lock
from negcse.workflow.lockfile import file_sha256, parse_lock

if TYPE_CHECKING:
    import torch

    from negcse.runtime import device as device_policy
else:  # torch: imported when the command runs, not for --help
    torch = LazyModule("torch")
    device_policy = LazyModule("negcse.runtime.device")

NAME = "doctor"
HELP = (
    "check this machine for negcse: torch, CUDA, GPUs, driver, device setting, the lock "
    "installed vs requested, mirror, cache, free disk (exit 1 on a problem)"
)
#: the oldest NVIDIA driver (major version) each CUDA major release runs on, with minor
#: version compatibility (NVIDIA's CUDA compatibility guide: 13.x >= 580, 12.x >= 525)
MIN_DRIVER = {13: 580, 12: 525, 11: 450}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--lock",
        default=None,
        help="the requested lock (make setup's LOCK; default: the lock installed here)",
    )
    p.add_argument(
        "--gpu", action="store_true", help="a CUDA GPU is required (as profiles/local says)"
    )


def _gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB"


def _tree_bytes(root: Path) -> int:
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            try:
                total += (Path(folder) / name).stat().st_size
            except OSError:
                continue
    return total


def driver_version() -> str | None:
    """The NVIDIA driver nvidia-smi reports (e.g. 580.159.04), or None without one."""
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return out.strip().splitlines()[0].strip() if out.strip() else None


def lock_cuda_major(lock: Path) -> int | None:
    """The CUDA major release a lock's runtime libraries pin (nvidia-cuda-runtime), or None
    for a lock without them (the CPU lock)."""
    pins = parse_lock(lock)
    for name in ("nvidia-cuda-runtime", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu11"):
        if name in pins:
            return int(pins[name].version.split(".")[0])
    return None


def run(args: argparse.Namespace) -> int:
    rows: list[tuple[str, str]] = []
    problems: list[str] = []
    notes: list[str] = []
    rows.append(("python", f"{sys.version.split()[0]}  {sys.executable}"))

    cuda = torch.version.cuda
    rows.append(("torch", f"{torch.__version__}  " + (f"(CUDA {cuda})" if cuda else "(CPU build)")))
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    gpus = [
        f"{i}: {torch.cuda.get_device_name(i)}, "
        f"{_gib(torch.cuda.get_device_properties(i).total_memory)}"
        for i in range(count)
    ]
    rows.append(("GPUs", "; ".join(gpus) if gpus else "none that torch can use"))

    lock_file = Path(args.lock) if args.lock else None
    installed = installed_lock()
    if lock_file is None and installed is not None:
        lock_file = Path(installed["lock"])
    want_major = int(cuda.split(".")[0]) if cuda else None
    if lock_file is not None and lock_file.is_file():
        try:
            want_major = lock_cuda_major(lock_file)
        except UserError as exc:  # a damaged lock file: one problem among the others
            problems.append(str(exc))
    driver = driver_version()
    need = MIN_DRIVER.get(want_major) if want_major else None
    if driver is None:
        needs = f"; CUDA {want_major} needs >= {need}" if need else ""
        rows.append(("driver", f"none (no nvidia-smi){needs}"))
    else:
        verdict = ""
        if need is not None:
            ok = int(driver.split(".")[0]) >= need
            verdict = f"; CUDA {want_major} needs >= {need}: " + ("ok" if ok else "TOO OLD")
            if not ok:
                problems.append(
                    f"NVIDIA driver {driver} is older than CUDA {want_major} needs (>= {need}): "
                    "update the driver"
                )
        rows.append(("driver", f"{driver}{verdict}"))

    try:
        choice = device_policy.choose()
        rows.append(("device", f"{choice.setting} -> {choice.device.type} ({choice.reason})"))
    except device_policy.DeviceError as err:
        rows.append(("device", "cuda -> none"))
        problems.append(str(err))
    if args.gpu and not gpus:
        problems.append(
            f"a CUDA GPU is required (--gpu) but {device_policy.cuda_missing()}; see docs/gpu.md"
        )
    elif cuda and not gpus:
        notes.append(f"this CUDA build sees no GPU: {device_policy.cuda_missing()}")

    if installed is None:
        rows.append(("lock", "not installed from a lock (no negcse-lock.txt in this venv)"))
        if args.lock:
            problems.append(
                f"requested lock {args.lock}, none installed: make setup LOCK={args.lock}"
            )
    else:
        label = f"installed {installed['lock']} (sha256 {installed['lock_sha256'][:12]})"
        if lock_file is not None and lock_file.is_file():
            now = file_sha256(lock_file)
            same = now == installed["lock_sha256"]
            label += f"; requested {lock_file}: " + ("the same" if same else "DIFFERENT")
            if not same:
                problems.append(
                    f"the installed lock is not {lock_file} as it is now: make setup LOCK={lock_file}"
                )
        elif lock_file is not None:
            problems.append(f"requested lock {lock_file} does not exist")
        rows.append(("lock", label))

    try:
        mirror = mirror_root()
        rows.append(("mirror", f"{mirror} (${MIRROR_ENV})" if mirror else "none"))
    except ResolveError as err:
        rows.append(("mirror", "broken"))
        problems.append(str(err))
    cache = cache_root()
    existing = next((p for p in (cache, *cache.parents) if p.is_dir()), Path("/"))
    free = shutil.disk_usage(existing).free
    used = _gib(_tree_bytes(cache)) if cache.is_dir() else "empty"
    if cache.exists() and not cache.is_dir():
        used = "not a folder"
        problems.append(f"${CACHE_ENV}={cache} is not a folder: point it at one (or unset it)")
    rows.append(("cache", f"{cache} (${CACHE_ENV}): {used}; free disk {_gib(free)}"))
    hub = os.environ.get("HF_HOME") or str(Path.home() / ".cache" / "huggingface")
    rows.append(("network", "offline (NEGCSE_OFFLINE / HF_HUB_OFFLINE)" if is_offline() else
                 f"downloads allowed (models into {hub})"))  # fmt: skip

    width = max(len(k) for k, _ in rows)
    print("negcse doctor")
    for key, value in rows:
        print(f"  {key:<{width}}  {value}")
    for note in notes:
        print(f"note: {note}")
    for problem in problems:
        print(f"problem: {problem}")
    if not problems:
        where = "GPU runs (profiles/local, profiles/slurm)" if gpus else "CPU runs (profiles/smoke)"
        print(f"ok for {where}")
    return 1 if problems else 0
