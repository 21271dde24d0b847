"""llama.cpp's own OpenAI-compatible server (``llama-server``) on loopback, for the tests of the
``openai`` backend against a real server and a real model.

The binary is built by ``make llama-server`` (llama.cpp as vendored in the pinned
llama-cpp-python sdist, envs/llama-server.txt) into ``.venv/bin``; ``NEGCSE_LLAMA_SERVER`` may
name another one. The model is the pinned SmolLM2-135M-Instruct GGUF (envs/llm-model.txt).

Requests are counted at the server: llama-server logs one ``processing task`` line per
completion task it starts (a chat completion with n = 1 is one task); it has no per-request
counter in /metrics.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TASK_LINE = "processing task"
RELEASE_LINE = "stop processing"  # a slot releases its task


def binary() -> Path | None:
    """The llama-server to test: $NEGCSE_LLAMA_SERVER, else the venv's, else one on PATH."""
    env = os.environ.get("NEGCSE_LLAMA_SERVER")
    if env:
        return Path(env)
    for candidate in (REPO / ".venv" / "bin" / "llama-server", shutil.which("llama-server")):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    """``llama-server`` with ``slots`` parallel sequences (continuous batching), its log in a file.

    ``threads`` 1 by default: on a shared, oversubscribed machine two threads spin at ggml's
    barriers and ran over 100 times slower here (benchmarks/gcse.md).

    ``api_key``: required of clients (passed in the server's environment, LLAMA_API_KEY, so it
    is not on the command line).
    """

    def __init__(
        self,
        exe: Path,
        model: Path,
        log: Path,
        slots: int = 8,
        ctx_per_slot: int = 1024,
        threads: int = 1,
        api_key: str | None = None,
    ) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log = log
        self.cmd = [
            str(exe),
            "--model", str(model),
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--parallel", str(slots),
            "--ctx-size", str(slots * ctx_per_slot),
            "--threads", str(threads),
            "--threads-batch", str(threads),
            "--no-webui",
            "--alias", "smollm2",
        ]  # fmt: skip
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_")}
        self.headers: dict[str, str] = {}
        if api_key:
            self.env["LLAMA_API_KEY"] = api_key
            self.headers["Authorization"] = f"Bearer {api_key}"
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> LlamaServer:
        self._fh = self.log.open("ab")
        self.proc = subprocess.Popen(
            self.cmd, stdout=self._fh, stderr=subprocess.STDOUT, env=self.env
        )
        deadline = time.monotonic() + 180
        health = f"http://127.0.0.1:{self.port}/health"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama-server exited with {self.proc.returncode}: {self.log}")
            try:
                with urllib.request.urlopen(health, timeout=5) as reply:
                    if reply.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.5)
        self.__exit__()
        raise RuntimeError(f"llama-server not healthy after 180 s: {self.log}")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._fh.close()

    def tasks(self) -> int:
        """Completion tasks the server has started so far (its own log lines)."""
        self._fh.flush()
        text = self.log.read_text(encoding="utf-8", errors="replace")
        return text.count(TASK_LINE)

    def log_lines(self) -> list[str]:
        self._fh.flush()
        return self.log.read_text(encoding="utf-8", errors="replace").splitlines()

    def most_at_once(self, since: int = 0) -> int:
        """The most completion tasks the server processed at the same time, from its log lines
        ``since`` on (each task's ``launch_slot_`` ... ``release`` lines)."""
        busy = most = 0
        for line in self.log_lines()[since:]:
            if TASK_LINE in line:
                busy += 1
                most = max(most, busy)
            elif RELEASE_LINE in line:
                busy -= 1
        return most

    def wait_idle(self, timeout_s: float = 120.0) -> None:
        """Until no slot is processing (after a client was killed mid-request)."""
        deadline = time.monotonic() + timeout_s
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/slots", headers=self.headers
        )
        while time.monotonic() < deadline:
            with urllib.request.urlopen(request, timeout=10) as reply:
                if not any(s.get("is_processing") for s in json.loads(reply.read())):
                    return
            time.sleep(0.5)
        raise RuntimeError("llama-server still busy")
