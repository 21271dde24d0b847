"""The LLM layer: OpenAI-compatible backend settings and errors, the response cache, key safety.

The OpenAI backend runs against a small loopback HTTP server (tests/gcse/gcse_chat_server.py): the
``openai`` client library itself is not mocked.
"""

from __future__ import annotations

import email.utils
import json
import logging
import socket
import sqlite3
import time

import pytest
from gcse_chat_server import ChatServer  # tests/ is on sys.path under pytest's rootdir import

from negcse.errors import UserError
from negcse.llm.backend import BadAnswer, GenerationSettings, LLMError, answer_problem
from negcse.llm.cache import CachedLLM, cache_key
from negcse.llm.openai_backend import (
    OpenAIBackend,
    OpenAISettings,
    RequestBudgetExceeded,
    redact,
    retry_after_s,
)

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


# -- bad answers are failures, never cached; broken endpoints are one line ----------------------


def test_answer_length_rule_by_hand():
    """32 tokens x 64 bytes = 2,048 bytes: 2,048 pass, 2,049 do not; bytes, not characters."""
    s = GenerationSettings(max_new_tokens=32)
    assert answer_problem("a" * 2048, s) is None
    assert answer_problem("a" * 2049, s).kind == "too long"
    assert answer_problem("é" * 1024, s) is None  # 2 bytes each: 2,048 bytes
    assert answer_problem("é" * 1025, s).kind == "too long"
    assert answer_problem("", s).kind == answer_problem(" \n", s).kind == "empty"


def test_null_content_key_echo_and_token_count_over_max_tokens_are_bad_answers(monkeypatch):
    monkeypatch.setenv("NEGCSE_TEST_KEY", KEY)
    answers = {"null": None, "echo": f'{{"text": "your key is {KEY}"}}', "long": "ok", "good": "ok"}
    # the server reports 17 completion tokens for "long" (over max_tokens 16), 1 for the others
    with ChatServer(
        respond=lambda p: answers[p], usage=lambda text: 17 if text == "ok" else 1
    ) as server:
        backend = OpenAIBackend(_settings(server.url))
        got = dict(backend.stream(["null", "echo", "long"], FAST))
    assert got[0] == BadAnswer("empty", "content None")
    assert got[1].kind == "holds the API key" and KEY not in got[1].detail
    assert got[2] == BadAnswer("too long", "17 completion tokens, max_tokens 16")
    with ChatServer(respond=lambda p: answers[p], usage=lambda text: 16) as server:
        assert dict(OpenAIBackend(_settings(server.url)).stream(["good"], FAST)) == {0: "ok"}


def test_bad_answers_are_not_cached_and_asked_again(monkeypatch, tmp_path):
    monkeypatch.setenv("NEGCSE_TEST_KEY", KEY)
    db = tmp_path / "cache.sqlite"
    huge = "x" * 10_000_000  # 10 MB to a 16-token request
    answers = {"a": None, "b": huge, "c": f"echo {KEY}", "d": "fine"}
    with ChatServer(respond=lambda p: answers[p]) as server:
        with CachedLLM(OpenAIBackend(_settings(server.url)), db) as llm:
            assert llm.generate(list(answers), FAST) == ["", "", "", "fine"]
            assert llm.stats.failed == {"empty": 1, "too long": 1, "holds the API key": 1}
        assert sqlite3.connect(db).execute("SELECT prompt FROM completions").fetchall() == [("d",)]
        answers.update(a="fixed a", b="fixed b", c="fixed c")  # the endpoint is fixed
        with CachedLLM(OpenAIBackend(_settings(server.url)), db) as llm:
            assert llm.generate(list(answers), FAST) == ["fixed a", "fixed b", "fixed c", "fine"]
            assert llm.stats.hits == 1 and llm.stats.calls == 3 and not llm.stats.failed
        assert server.requests == {"a": 2, "b": 2, "c": 2, "d": 1}
    assert KEY not in "\n".join(sqlite3.connect(db).iterdump())


def test_answer_cached_before_the_rule_is_asked_again(monkeypatch, tmp_path):
    """A cache written before answers were checked may hold an empty or a huge answer."""
    monkeypatch.setenv("NEGCSE_TEST_KEY", KEY)
    db = tmp_path / "cache.sqlite"
    answer = {"now": "first"}
    with ChatServer(respond=lambda p: answer["now"]) as server:
        with CachedLLM(OpenAIBackend(_settings(server.url)), db) as llm:
            llm.generate(["a", "b", "c"], FAST)
        with sqlite3.connect(db) as con:  # what an older version stored
            con.execute("UPDATE completions SET completion = '' WHERE prompt = 'a'")
            con.execute("UPDATE completions SET completion = ? WHERE prompt = 'b'", ("y" * 1025,))
        answer["now"] = "again"
        with CachedLLM(OpenAIBackend(_settings(server.url)), db) as llm:
            assert llm.generate(["a", "b", "c"], FAST) == ["again", "again", "first"]
        assert server.requests == {"a": 2, "b": 2, "c": 1}


def test_only_answers_that_parse_are_cached(monkeypatch, tmp_path):
    """``accept`` (in the pipeline: the prompt's parser) rejects prose: it is returned, counted
    ``unparsable``, not cached, and asked again; a cached answer it rejects is asked again."""
    monkeypatch.setenv("NEGCSE_TEST_KEY", KEY)
    db = tmp_path / "cache.sqlite"
    answers = {"a": '{"text": "A."}', "b": "Sorry, no."}
    is_json = lambda i, text: text.startswith("{")  # noqa: E731
    with ChatServer(respond=lambda p: answers[p]) as server:
        with CachedLLM(OpenAIBackend(_settings(server.url)), db) as llm:
            assert llm.generate(["a", "b"], FAST, is_json) == ['{"text": "A."}', "Sorry, no."]
            assert llm.stats.failed == {"unparsable": 1}
        answers["b"] = '{"text": "B."}'
        with CachedLLM(OpenAIBackend(_settings(server.url)), db) as llm:
            assert llm.generate(["a", "b"], FAST, is_json) == ['{"text": "A."}', '{"text": "B."}']
            assert llm.stats.hits == 1 and llm.stats.calls == 1
        with CachedLLM(OpenAIBackend(_settings(server.url)), db) as llm:  # a stricter parser
            llm.generate(["a", "b"], FAST, lambda i, text: "B" in text)
        assert server.requests == {"a": 2, "b": 2}


_COMPLETION = {"id": "x", "object": "chat.completion", "created": 0, "model": "stub"}


@pytest.mark.parametrize(
    ("body", "content_type", "says"),
    [
        (b'{"id": "x", "choices": [', "application/json", "not JSON in UTF-8"),
        (json.dumps({**_COMPLETION, "choices": []}).encode(), "application/json", "no choices"),
        (
            b'{"choices": [{"message": {"content": "caf\xe9"}}]}',  # Latin-1, not UTF-8
            "application/json",
            "not JSON in UTF-8",
        ),
        (b"<html>502 Bad Gateway</html>", "text/html", "not a chat completion"),
    ],
    ids=["malformed-json", "empty-choices", "not-utf8", "html"],
)
def test_broken_endpoint_body_is_one_line_naming_the_endpoint(
    monkeypatch, tmp_path, body, content_type, says
):
    monkeypatch.setenv("NEGCSE_TEST_KEY", KEY)
    with ChatServer(raw=lambda p: (200, body, content_type)) as server:
        backend = OpenAIBackend(_settings(server.url))
        with pytest.raises(LLMError) as err:
            list(backend.stream(["hello"], FAST))
    msg = str(err.value)
    assert says in msg and server.url in msg and "llm.openai.base_url" in msg
    assert "\n" not in msg and KEY not in msg and isinstance(err.value, UserError)


def test_retry_after_header_forms():
    now = 1_700_000_000.0  # 2023-11-14 22:13:20 GMT
    assert retry_after_s("7", now) == 7.0
    assert retry_after_s(" 0.5 ", now) == 0.5
    assert retry_after_s("Tue, 14 Nov 2023 22:13:50 GMT", now) == 30.0
    assert retry_after_s("Tue, 14 Nov 2023 22:13:00 GMT", now) == 0.0  # already past
    assert retry_after_s("-3", now) == 0.0
    for unreadable in (None, "", "soon", "inf", "nan", "Tue, 14 Nov 2023 22:13:50"):
        assert retry_after_s(unreadable, now) is None, unreadable


def test_retry_after_on_429_is_honoured_and_capped(monkeypatch):
    """backoff_s is 1 ms, so only the header makes the client wait: 1 s (seconds form), 2 to 3 s
    (an HTTP-date 3 s ahead, whole seconds), and 3600 s capped at backoff_max_s (1.5 s)."""
    monkeypatch.setenv("NEGCSE_TEST_KEY", KEY)
    cases = (
        (lambda: "1", 1.0, 3.0),  # upper bounds: a busy machine, not the rule
        (lambda: email.utils.formatdate(time.time() + 3, usegmt=True), 1.5, 5.0),
        (lambda: "3600", 1.5, 4.0),
    )
    for header, least, most in cases:
        value = header()
        with ChatServer(fail_first=1, fail_status=429, fail_headers={"Retry-After": value}) as srv:
            backend = OpenAIBackend(_settings(srv.url, backoff_s=0.001, backoff_max_s=1.5))
            start = time.monotonic()
            assert len(list(backend.stream(["a"], FAST))) == 1
            waited = time.monotonic() - start
        assert srv.total == 2 and least <= waited <= most, (value, waited)


def test_error_body_with_line_breaks_and_the_key_is_one_redacted_line(monkeypatch):
    """An HTTP 400 whose body (not UTF-8, several lines) quotes the key."""
    monkeypatch.setenv("NEGCSE_TEST_KEY", KEY)
    body = b"bad request\n\xff\xfe line two\nyour key " + KEY.encode() + b"\n" + b"x" * 5000
    with ChatServer(raw=lambda p: (400, body, "text/plain")) as server, pytest.raises(
        LLMError
    ) as err:
        list(OpenAIBackend(_settings(server.url)).stream(["hello"], FAST))
    msg = str(err.value)
    assert "HTTP 400" in msg and server.url in msg and "\n" not in msg and KEY not in msg
    assert len(msg) < 600
