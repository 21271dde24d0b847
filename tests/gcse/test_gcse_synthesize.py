"""``negcse gcse-synthesize`` end to end against a loopback OpenAI-compatible server
(tests/gcse/gcse_chat_server.py): report counts, fallbacks, odd lines, the key nowhere."""

from __future__ import annotations

import json
import logging
import socket
import sqlite3

from gcse_chat_server import ChatServer

from negcse.cli import main
from negcse.gcse.denoise import denoise, denoising_inputs
from negcse.io_utils import read_jsonl, read_lines

KEY = "sk-live-0b1c2d3e4f5a6b7c8d9e"
EXTRACTION = """```
{
  cls: 'leisure activity',
  subject: [{text: "A man", type: "person", quantity: 1}],
  action: [{text: "playing a guitar"}],
  state: [{text: "on the street"}],
  entities: [{"entity": "a man", "type": "person"}, {"entity": "a guitar", "type": "instrument"}]
}
```"""
EXTRACTION_2 = '{"subject": [{"text": "Two women", "type": "person", "quantity": 2}], "entities": [{"entity": "a violin", "type": "instrument"}]}'


def respond(prompt: str) -> str:
    """Extraction: the paper's near-JSON (repaired) or strict JSON; positives: strict JSON;
    negatives: prose that cannot be parsed (falls back)."""
    if "extract the theme category" in prompt:
        return EXTRACTION if "guitar" in prompt else EXTRACTION_2
    if any(w in prompt for w in ("rewrite", "Summarize", "storyteller")):
        return json.dumps({"text": "A rewritten sentence."})
    return "I'm sorry, I cannot\nhelp with that."


def _run(tmp_path, url: str, env_name: str = "NEGCSE_TEST_KEY", *extra: str) -> int:
    return main(
        [
            "gcse-synthesize",
            "--input",
            str(tmp_path / "src.txt"),
            "--output",
            str(tmp_path / "out" / "candidates.jsonl"),
            "--report",
            str(tmp_path / "out" / "report.json"),
            "--cache",
            str(tmp_path / "out" / "cache.sqlite"),
            "--backend",
            "openai",
            "--base-url",
            url,
            "--model",
            "stub",
            "--api-key-env",
            env_name,
            "--max-retries",
            "0",
            "--mode",
            "paper",
            *extra,
        ]
    )


def test_synthesize_end_to_end_and_key_never_written(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("NEGCSE_TEST_KEY", KEY)
    lines = [
        "A man is playing a guitar on the street.",
        "",
        "x" * 10_000,
        "Two women play a violin.",
    ]
    (tmp_path / "src.txt").write_text("\n".join(lines) + "\n")
    caplog.set_level(logging.DEBUG)
    with ChatServer(respond=respond) as server:
        assert _run(tmp_path, server.url) == 0
        asked = sum(server.requests.values())
        first = (tmp_path / "out" / "candidates.jsonl").read_bytes()
        # a rerun asks again only the 2 negatives that did not parse (never cached), and
        # writes the same
        assert _run(tmp_path, server.url) == 0
        assert sum(server.requests.values()) == asked + 2
        assert (tmp_path / "out" / "candidates.jsonl").read_bytes() == first
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    rows = [json.loads(x) for x in (tmp_path / "out" / "candidates.jsonl").read_text().splitlines()]
    assert report["sources"] == 4 and report["skipped"] == {"empty": 1, "too long": 1}
    assert asked == 2 + 2 * 2  # two extractions, one positive and one negative prompt each
    assert report["totals"] == {"parsed": 3, "repaired": 1, "failed": 2}
    assert report["parse"]["extract"] == {"parsed": 1, "repaired": 1, "failed": 0}
    assert report["fell_back"] == 2
    rerun = {"hits": asked - 2, "misses": 2, "calls": 2, "failed": {"unparsable": 2}}
    assert report["cache"] == rerun
    assert [r["skipped"] for r in rows] == [None, "empty", "too long", None]
    assert rows[1]["candidates"] == rows[2]["candidates"] == []
    for i, other in ((0, 3), (3, 0)):
        pos, neg = rows[i]["candidates"]
        assert (pos["role"], pos["status"], pos["text"]) == (
            "positive",
            "parsed",
            "A rewritten sentence.",
        )
        # the negative failed to parse: eq. 11's fallback, the other (non-skipped) source
        assert (neg["status"], neg["fallback"], neg["text"]) == (
            "failed",
            f"in-batch {other}",
            lines[other],
        )
    assert rows[0]["knowledge"]["subjects"][0]["quantity"] == 1
    assert report["kg"]["nodes"] == 4 and report["llm"] == {"base_url": server.url, "model": "stub"}
    # what the denoiser gets: the failed negatives are left to eq. 11's own fallback
    anchors, cands = denoising_inputs(rows)
    assert anchors == [lines[0], lines[3]] and cands == [["A rewritten sentence."]] * 2
    triplets = denoise(anchors, cands, [[0.95], [0.5]])
    assert [(t.positive, t.negative) for t in triplets] == [
        ("A rewritten sentence.", lines[3]),
        (lines[3], "A rewritten sentence."),
    ]
    # the key is in no output, cache or log line
    for path in (tmp_path / "out").iterdir():
        assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in caplog.text


def test_unreachable_endpoint_leaves_no_output(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("NEGCSE_TEST_KEY", KEY)
    (tmp_path / "src.txt").write_text("A man plays.\nA dog runs.\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    assert _run(tmp_path, url) == 1
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and url in errors[0] and "--base-url" in errors[0]
    assert not (tmp_path / "out" / "candidates.jsonl").exists()
    assert not (tmp_path / "out" / "report.json").exists()


def test_missing_key_names_the_variable(tmp_path, monkeypatch, caplog):
    monkeypatch.delenv("NEGCSE_NO_SUCH_KEY", raising=False)
    (tmp_path / "src.txt").write_text("A man plays.\n")
    assert _run(tmp_path, "http://127.0.0.1:9/v1", env_name="NEGCSE_NO_SUCH_KEY") == 2
    assert "NEGCSE_NO_SUCH_KEY" in caplog.text and "--api-key-env" in caplog.text


def test_no_prompts_is_w_randomly_without_an_llm(tmp_path, monkeypatch):
    """Table 4's "w randomly" (--positives 0 --negatives 0): no backend is opened (the endpoint
    is unreachable and its key unset, and the run still succeeds), and denoising gives every
    source eq. 10-11's triplet: itself as positive, another source as negative."""
    monkeypatch.delenv("NEGCSE_NO_SUCH_KEY", raising=False)
    lines = ["A man plays.", "A dog runs.", "Two cats sleep."]
    (tmp_path / "src.txt").write_text("\n".join(lines) + "\n")
    url = "http://127.0.0.1:9/v1"
    args = ("--positives", "0", "--negatives", "0")
    assert _run(tmp_path, url, "NEGCSE_NO_SUCH_KEY", *args) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["llm"] is None and report["totals"] == {"parsed": 0, "repaired": 0, "failed": 0}
    rows = [json.loads(x) for x in (tmp_path / "out" / "candidates.jsonl").read_text().splitlines()]
    anchors, cands = denoising_inputs(rows)
    assert anchors == lines and cands == [[], [], []]
    for t, anchor in zip(denoise(anchors, cands, [[], [], []], seed=1), lines, strict=True):
        assert t.positive == anchor and t.negative in lines and t.negative != anchor


def test_bad_answers_fall_back_uncached_and_the_fixed_endpoint_is_asked_again(
    tmp_path, monkeypatch
):
    """Content null, 10 MB to a 32-token request, the key echoed: every completion of the run
    is a failure (each row falls back, counted in the report), nothing is cached; once the
    endpoint answers properly the rerun asks every prompt again and the rows are real."""
    monkeypatch.setenv("NEGCSE_TEST_KEY", KEY)
    lines = ["A man is playing a guitar on the street.", "Two women play a violin."]
    (tmp_path / "src.txt").write_text("\n".join(lines) + "\n")
    out, tokens = tmp_path / "out", ("--max-new-tokens", "32")
    bad = {"null": None, "huge": json.dumps({"text": "x" * 10_000_000}), "echo": f"key: {KEY}"}
    answer = {"now": respond}
    with ChatServer(respond=lambda p: answer["now"](p)) as server:
        for kind, reply in bad.items():
            answer["now"] = lambda p, reply=reply: reply
            assert _run(tmp_path, server.url, "NEGCSE_TEST_KEY", *tokens) == 0
            report = json.loads((out / "report.json").read_text())
            failed = {"null": "empty", "huge": "too long", "echo": "holds the API key"}[kind]
            assert report["cache"]["failed"] == {failed: 6}  # 2 extractions + 2 x 2 prompts
            assert report["totals"] == {"parsed": 0, "repaired": 0, "failed": 6}
            assert report["fell_back"] == 4
            with sqlite3.connect(out / "cache.sqlite") as con:
                assert con.execute("SELECT COUNT(*) FROM completions").fetchone() == (0,)
            data = (out / "candidates.jsonl").read_bytes()
            assert len(data) < 10_000 and KEY.encode() not in data
        asked = sum(server.requests.values())
        answer["now"] = respond  # the endpoint is fixed
        assert _run(tmp_path, server.url, "NEGCSE_TEST_KEY", *tokens) == 0
        assert sum(server.requests.values()) - asked == 6
    report = json.loads((out / "report.json").read_text())
    prose = report["totals"]["failed"]  # respond's answers to negative prompts: not cached
    assert report["cache"] == {"hits": 0, "misses": 6, "calls": 6, "failed": {"unparsable": prose}}
    rows = read_jsonl(out / "candidates.jsonl")
    positives = [c for r in rows for c in r["candidates"] if c["role"] == "positive"]
    assert [(c["text"], c["fallback"]) for c in positives] == [("A rewritten sentence.", None)] * 2
    for path in out.iterdir():
        assert KEY.encode() not in path.read_bytes(), path


def test_unicode_line_breaks_survive_synthesize_and_denoise(tmp_path, monkeypatch):
    """U+2028, U+2029 and U+0085 in a source line and in answers: the JSON lines stay one row
    per source for any reader (ASCII escapes), and gcse-denoise reads them back intact."""
    monkeypatch.setenv("NEGCSE_TEST_KEY", KEY)
    odd = "\u2028\u2029\u0085"
    lines = [f"A man{odd}plays a guitar.", f"Two women{odd}play a violin.", "A dog runs."]
    (tmp_path / "src.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def answer(prompt: str) -> str:
        if "extract the theme category" in prompt:
            return '{"subject": []}'
        return json.dumps({"text": f"Answer{odd}line."}, ensure_ascii=False)

    with ChatServer(respond=answer) as server:
        assert _run(tmp_path, server.url) == 0
    data = (tmp_path / "out" / "candidates.jsonl").read_bytes()
    assert data.isascii() and len(data.decode().splitlines()) == len(lines)  # even splitlines
    rows = read_jsonl(tmp_path / "out" / "candidates.jsonl")
    assert [r["anchor"] for r in rows] == lines
    assert {c["text"] for r in rows for c in r["candidates"]} == {f"Answer{odd}line."}
    out = tmp_path / "den"
    args = ["gcse-denoise", "--candidates", str(tmp_path / "out" / "candidates.jsonl")]
    args += ["--model", "unused-with-no-filter", "--no-filter", "--report", str(out / "r.json")]
    for col in ("anchors", "positives", "negatives"):
        args += [f"--{col}", str(out / f"{col}.txt")]
    assert main(args) == 0
    assert read_lines(out / "anchors.txt") == lines
    assert read_lines(out / "positives.txt") == [f"Answer{odd}line."] * 3
