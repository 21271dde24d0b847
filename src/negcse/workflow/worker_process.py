"""The warm worker of a Snakemake run (``runtime.worker``: the smoke profile): started by the
Snakefile's ``onstart`` as a child of Snakemake, stopped and reaped by ``onsuccess`` and
``onerror``, so the run's CPU time (``/usr/bin/time``) counts its children.

It starts in the environment the jobs' shell gives ``python -m negcse`` (the shell prefix's
``PYTHONPATH`` and ``NEGCSE_DEVICE``, Snakemake's thread variables of a 1-thread job), so that
its requests are not refused (``negcse.runtime.worker.LOAD_TIME_ENV``). A job of more threads,
or any job when the server is gone, runs in its own process.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from negcse.runtime.worker import ENV

#: what Snakemake sets to a job's thread count (snakemake.shell)
THREAD_ENV = ("OMP_NUM_THREADS", "GOTO_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
              "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")  # fmt: skip
SOCKET = ".snakemake/negcse-worker.sock"
LOG = ".snakemake/negcse-worker.log"


def job_env(base: Mapping[str, str], package_src: str, device: str, socket: str) -> dict[str, str]:
    """The environment of a 1-thread job's ``python -m negcse`` (the Snakefile's shell
    prefix over ``base``), with ``$NEGCSE_WORKER`` naming ``socket``."""
    env = dict(base)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = f"{package_src}:{path}" if path else package_src
    env["NEGCSE_DEVICE"] = device
    env[ENV] = socket
    env.update(dict.fromkeys(THREAD_ENV, "1"))
    return env


def start(
    env: Mapping[str, str], socket: str = SOCKET, log: str = LOG, wait: float = 60
) -> subprocess.Popen | None:
    """``python -m negcse worker`` (the ``python`` a job's shell finds), its output in ``log``,
    once its socket exists (its imports take a few seconds; at most ``wait`` seconds, after
    which a job runs in its own process till it does); None where no ``python`` is found or
    the server ended."""
    python = shutil.which("python", path=env.get("PATH"))
    if python is None:
        return None
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(socket)  # a stale one of a run that was killed
    with open(log, "ab") as out:
        process = subprocess.Popen(
            [python, "-m", "negcse", "worker", "--socket", socket],
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,  # a terminal's Ctrl-C reaches Snakemake, which stops it
        )
    deadline = time.monotonic() + wait
    while not os.path.exists(socket) and time.monotonic() < deadline:
        if process.poll() is not None:
            return None
        time.sleep(0.1)
    return process


def stop(process: subprocess.Popen | None, timeout: float = 30) -> None:
    """Stop the server (its running children with it) and reap it."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    os.environ.pop(ENV, None)
