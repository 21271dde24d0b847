"""The ``openai`` backend against a real OpenAI-compatible server: llama.cpp's ``llama-server``,
started here on loopback with the pinned SmolLM2-135M-Instruct GGUF (not a mock of the client
nor of the server). Requests are counted by the server's own log (tests/llm/llama_server.py).

Skipped, saying so, where ``make llama-server`` has not been run. Slow: the run takes about a
minute on two cores.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import llama_server  # tests/llm/ is on sys.path under pytest's rootdir import
import pytest

from negcse.llm.backend import GenerationSettings
from negcse.llm.openai_backend import OpenAIBackend, OpenAISettings
from negcse.llm.pinned import SMOLLM2_135M, locate

pytestmark = pytest.mark.slow
KEY = "sk-llama-5e1f0c9a7b3d2468ace0"
KEY_ENV = "NEGCSE_LLAMA_TEST_KEY"
SOURCES = [
    "A man is playing a guitar on the street.",
    "Two dogs run across a snowy field.",
    "The senate passed the budget bill on Tuesday.",
    "A woman slices three tomatoes in the kitchen.",
    "Children are building a sandcastle at the beach.",
    "The train to Boston leaves at nine in the morning.",
    "A chef is cooking pasta in a large pot.",
    "Four students are reading books in the library.",
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    exe = llama_server.binary()
    if exe is None:
        pytest.skip("llama-server not built: run `make llama-server` or set NEGCSE_LLAMA_SERVER")
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with llama_server.LlamaServer(exe, locate(SMOLLM2_135M), log, slots=8, api_key=KEY) as srv:
        yield srv


def _synthesize(out: Path, url: str, log: Path) -> subprocess.Popen[bytes]:
    """``negcse gcse-synthesize`` through the openai backend, as a process that can be killed."""
    cmd = [sys.executable, "-m", "negcse", "gcse-synthesize"]
    cmd += ["--input", str(out / "src.txt"), "--output", str(out / "candidates.jsonl")]
    cmd += ["--report", str(out / "report.json"), "--cache", str(out / "cache.sqlite")]
    cmd += ["--backend", "openai", "--base-url", url, "--model", "smollm2"]
    cmd += ["--api-key-env", KEY_ENV, "--max-in-flight", "2", "--max-new-tokens", "48"]
    cmd += ["--timeout", "600"]  # a retried timeout would be a second request for one prompt
    env = dict(os.environ, **{KEY_ENV: KEY})
    return subprocess.Popen(cmd, stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env)


def _cached(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        try:
            return int(con.execute("SELECT COUNT(*) FROM completions").fetchone()[0])
        except sqlite3.OperationalError:  # table not created yet
            return 0


def test_killed_run_resumes_without_asking_again_and_key_never_written(server, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "src.txt").write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    db = out / "cache.sqlite"
    # 1. killed (SIGKILL) once at least 5 completions are cached
    first = _synthesize(out, server.url, out / "run1.log")
    deadline = time.monotonic() + 300
    while _cached(db) < 5 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert first.poll() is None, f"the run ended before it could be killed: {out / 'run1.log'}"
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert not (out / "candidates.jsonl").exists() and not (out / "report.json").exists()
    server.wait_idle()  # requests in flight at the kill finish on the server (unanswered here)
    cached, before = _cached(db), server.tasks()
    assert before >= cached >= 5
    # 2. restarted: only what is not cached is asked, each once; answers that do not parse are
    # not stored (cache.failed)
    second = _synthesize(out, server.url, out / "run2.log")
    assert second.wait(timeout=600) == 0, (out / "run2.log").read_text()
    report = json.loads((out / "report.json").read_text())
    asked = server.tasks() - before
    total = _cached(db)
    failed = sum(report["cache"]["failed"].values())
    assert asked == report["cache"]["calls"] == report["cache"]["misses"] > 0
    assert total - cached == asked - failed  # each stored answer a new one
    assert report["cache"]["hits"] >= cached
    assert report["sources"] == len(SOURCES) and report["llm"]["model"] == "smollm2"
    # 3. a rerun with unchanged settings asks the server only what was not stored, and no
    # stored prompt again (it would not add a row)
    third = _synthesize(out, server.url, out / "run3.log")
    assert third.wait(timeout=600) == 0, (out / "run3.log").read_text()
    rerun = json.loads((out / "report.json").read_text())["cache"]
    assert server.tasks() - before - asked == rerun["calls"] == rerun["misses"]
    assert _cached(db) - total == rerun["calls"] - sum(rerun["failed"].values())
    # the key did its job (the server refuses a request without it) ...
    request = urllib.request.Request(
        f"{server.url}/chat/completions",
        data=json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 401
    # ... and is in no output, cache, log of the three runs, nor the server's log
    files = [p for p in out.rglob("*") if p.is_file()] + [server.log]
    assert {p.name for p in files} >= {"candidates.jsonl", "report.json", "cache.sqlite"}
    assert {"run1.log", "run2.log", "run3.log", "server.log"} <= {p.name for p in files}
    leaked = [str(p) for p in files if KEY.encode() in p.read_bytes()]
    assert leaked == []


def test_eight_requests_are_in_flight_at_once_at_the_server(server, monkeypatch):
    """Same prompts, greedy, same token cap: with ``max_in_flight`` 8 the server's log shows
    all 8 completions processed at the same time (its 8 slots batch them), with 1 never two.
    The wall times are printed and recorded in benchmarks/gcse.md, not asserted (a timing is
    a benchmark figure): on a CPU the server's decoding is compute-bound, so batching 8
    sequences costs about 8 times one; the speed-up needs a GPU server."""
    prompts = [f"Write two sentences about this scene: {s}" for s in SOURCES]
    settings = GenerationSettings(max_new_tokens=64, do_sample=False)
    monkeypatch.setenv(KEY_ENV, KEY)
    timing: dict[int, float] = {}
    for in_flight in (8, 1):
        backend = OpenAIBackend(
            OpenAISettings(server.url, "smollm2", KEY_ENV, max_in_flight=in_flight)
        )
        before, since = server.tasks(), len(server.log_lines())
        start = time.perf_counter()
        answers = dict(backend.stream(prompts, settings))
        timing[in_flight] = time.perf_counter() - start
        assert backend.requests == len(prompts) == server.tasks() - before
        assert all(answers[i].strip() for i in range(len(prompts)))
        assert server.most_at_once(since) == in_flight
    load = os.getloadavg()[0]
    print(
        f"1 in flight {timing[1]:.1f} s, 8 in flight {timing[8]:.1f} s: "
        f"{timing[1] / timing[8]:.1f}x (load average {load:.1f} on {os.cpu_count()} cores)"
    )
