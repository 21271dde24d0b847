"""The LLM layer: OpenAI-compatible backend settings and errors, the response cache, key safety.

The OpenAI backend runs against a small loopback HTTP server (tests/gcse/gcse_chat_server.py): the
``openai`` client library itself is not mocked.
"""

from __future__ import annotations

import json
import logging
import socket
import sqlite3

import pytest
from gcse_chat_server import ChatServer  # tests/ is on sys.path under pytest's rootdir import

from negcse.llm.backend import GenerationSettings, LLMError
from negcse.llm.cache import CachedLLM, cache_key
from negcse.llm.openai_backend import OpenAIBackend, OpenAISettings, RequestBudgetExceeded, redact

KEY = "sk-test-7f3a9c2e51d8b46a0e9f"
FAST = GenerationSettings(max_new_tokens=16)


def _settings(url: str, **kw) -> OpenAISettings:
    return OpenAISettings(base_url=url, model="stub", api_key_env="NEGCSE_TEST_KEY", **kw)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends


def test_settings_validation_names_the_setting():
    with pytest.raises(ValueError, match=r"llm\.openai\.base_url"):
        OpenAISettings(base_url="localhost:8000", model="m")
    with pytest.raises(ValueError, match="name of an environment variable"):
        OpenAISettings(base_url="http://h/v1", model="m", api_key_env=KEY)
    with pytest.raises(ValueError, match=r"--max-in-flight"):
        OpenAISettings(base_url="http://h/v1", model="m", max_in_flight=0, setting_prefix="-")
    with pytest.raises(ValueError, match="top_p"):
        GenerationSettings(top_p=0.0)


def test_missing_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("NEGCSE_TEST_KEY", raising=False)
    with pytest.raises(LLMError, match="NEGCSE_TEST_KEY"):
        OpenAIBackend(_settings("http://127.0.0.1:1/v1"))


def test_unreachable_endpoint_is_one_clear_error(monkeypatch):
    monkeypatch.setenv("NEGCSE_TEST_KEY", KEY)
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    backend = OpenAIBackend(_settings(url, max_retries=0))
    with pytest.raises(LLMError) as err:
        list(backend.stream(["hello"], FAST))
    msg = str(err.value)
    assert url in msg and "llm.openai.base_url" in msg and KEY not in msg


def test_cache_key_and_redaction():
    a = cache_key("openai", {"base_url": "u", "model": "m"}, FAST, "p")
    assert a == cache_key("openai", {"base_url": "u", "model": "m"}, FAST, "p")
    assert a != cache_key(
        "openai", {"base_url": "u", "model": "m"}, GenerationSettings(seed=1), "p"
    )
    assert a != cache_key("openai", {"base_url": "u", "model": "m2"}, FAST, "p")
    assert redact(f"Bearer {KEY} failed", KEY) == "Bearer [REDACTED] failed"


def test_concurrency_retries_budget(monkeypatch):
    monkeypatch.setenv("NEGCSE_TEST_KEY", KEY)
    prompts = [f"sentence {i}" for i in range(8)]
    with ChatServer(delay_s=0.2) as server:
        backend = OpenAIBackend(_settings(server.url, max_in_flight=4))
        got = dict(backend.stream(prompts, FAST))
        assert [json.loads(got[i])["text"] for i in range(8)] == [p[::-1] for p in prompts]
        assert server.max_in_flight == 4
        assert set(server.auth) == {f"Bearer {KEY}"}  # the key travels in the header only
    with ChatServer(fail_first=2, fail_status=503) as server:
        backend = OpenAIBackend(_settings(server.url, backoff_s=0.01))
        assert len(list(backend.stream(["a"], FAST))) == 1
        assert server.total == 3 and backend.requests == 3  # two 503s retried
    with ChatServer(fail_first=5, fail_status=429) as server:
        backend = OpenAIBackend(_settings(server.url, backoff_s=0.01, max_retries=2))
        with pytest.raises(LLMError, match="gave up after 3 attempts"):
            list(backend.stream(["a"], FAST))
    with ChatServer(delay_s=0.6) as server:  # every answer later than the timeout
        backend = OpenAIBackend(_settings(server.url, timeout_s=0.2, backoff_s=0.01, max_retries=1))
        with pytest.raises(LLMError, match="gave up after 2 attempts"):
            list(backend.stream(["a"], FAST))
        assert backend.requests == 2
    with ChatServer() as server:
        backend = OpenAIBackend(_settings(server.url, request_budget=2, max_in_flight=1))
        with pytest.raises(RequestBudgetExceeded, match="request_budget"):
            list(backend.stream(["a", "b", "c"], FAST))
        assert server.total == 2


def test_cache_rerun_makes_no_call_and_killed_run_resumes(monkeypatch, tmp_path, caplog):
    monkeypatch.setenv("NEGCSE_TEST_KEY", KEY)
    prompts = [f"source {i}" for i in range(6)] + ["source 0"]  # a repeat is asked once
    db = tmp_path / "cache.sqlite"
    caplog.set_level(logging.INFO)
    with ChatServer() as server:
        # a run killed after 3 answers (the budget stops it like a kill would)
        killed = OpenAIBackend(_settings(server.url, request_budget=3, max_in_flight=1))
        with CachedLLM(killed, db) as llm, pytest.raises(RequestBudgetExceeded):
            llm.generate(prompts, FAST)
        assert sum(server.requests.values()) == 3
        with CachedLLM(OpenAIBackend(_settings(server.url)), db) as llm:
            first = llm.generate(prompts, FAST)
            assert llm.stats.hits == 4 and llm.stats.calls == 3  # only the 3 not yet answered
        assert max(server.requests.values()) == 1 and len(server.requests) == 6
        with CachedLLM(OpenAIBackend(_settings(server.url)), db) as llm:
            assert llm.generate(prompts, FAST) == first
            assert llm.stats.calls == 0 and llm.stats.hits == 7
        assert sum(server.requests.values()) == 6
    assert "7 hits, 0 misses" in caplog.text
    # the cache holds neither the key nor the variable's value anywhere
    dump = "\n".join(sqlite3.connect(db).iterdump())
    assert KEY not in dump and KEY not in caplog.text


def test_pinned_model_is_verified():
    from dataclasses import replace

    from negcse.llm.pinned import SMOLLM2_135M, locate

    assert locate(SMOLLM2_135M).stat().st_size == 98_362_432
    with pytest.raises(LLMError, match="does not match the pinned"):
        locate(replace(SMOLLM2_135M, file_sha256="0" * 64))
    with pytest.raises(LLMError, match=r"0\.1\.2 is installed, pinned 9\.9"):
        locate(replace(SMOLLM2_135M, version="9.9"))
    with pytest.raises(LLMError, match="envs/llm-model.txt"):
        locate(replace(SMOLLM2_135M, package="negcse-no-such-model-package"))
