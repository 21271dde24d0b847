"""A real small instruct model (SmolLM2-135M-Instruct Q4_1 GGUF, pinned PyPI package) through the
transformers backend and the response cache; and the command on it. Slow: loading and CPU
generation take tens of seconds (the first run also converts the GGUF once)."""

from __future__ import annotations

import json

import pytest

from negcse.cli import main
from negcse.llm.backend import GenerationSettings
from negcse.llm.cache import CachedLLM
from negcse.llm.pinned import SMOLLM2_135M, locate
from negcse.llm.transformers_backend import TransformersBackend

pytestmark = pytest.mark.slow
MODEL = SMOLLM2_135M.name


@pytest.fixture(scope="module")
def backend() -> TransformersBackend:
    return TransformersBackend.from_pinned(MODEL, batch_size=3, device="cpu")


def test_pinned_file_checksum():
    path = locate(SMOLLM2_135M)
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_real_generation_batched_equals_single_and_cache_rerun(backend, tmp_path):
    prompts = [
        'Rewrite this sentence: "A man is playing a guitar." Answer in JSON {"text": ""}.',
        "What is the capital of France? Answer in one word.",
        "Write the number that comes after 41.",
    ]
    settings = GenerationSettings(max_new_tokens=24, do_sample=False)
    with CachedLLM(backend, tmp_path / "c.sqlite") as llm:
        first = llm.generate(prompts, settings)
        assert llm.stats.calls == 3
    assert all(isinstance(t, str) and t.strip() for t in first)
    assert "paris" in first[1].lower()
    # greedy decoding: a left-padded batch gives what one prompt at a time gives
    backend.batch_size = 1
    try:
        single = [t for _, t in sorted(backend.stream(prompts, settings))]
    finally:
        backend.batch_size = 3
    assert single == first
    with CachedLLM(backend, tmp_path / "c.sqlite") as llm:
        assert llm.generate(prompts, settings) == first
        assert llm.stats.calls == 0 and llm.stats.hits == 3


def test_command_on_the_real_model(tmp_path):
    src = tmp_path / "src.txt"
    src.write_text(
        "A man is playing a guitar on the street.\n\nTwo dogs run across a snowy field.\n"
    )
    args = [
        "gcse-synthesize",
        "--input",
        str(src),
        "--output",
        str(tmp_path / "cand.jsonl"),
        "--report",
        str(tmp_path / "report.json"),
        "--cache",
        str(tmp_path / "cache.sqlite"),
        "--model",
        MODEL,
        "--device",
        "cpu",
        "--max-new-tokens",
        "48",
        "--threads",
        "1",
        "--mode",
        "paper",
    ]
    assert main(args) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["skipped"] == {"empty": 1, "too long": 0}
    assert sum(report["totals"].values()) == 2 + 4 == report["cache"]["calls"]
    rows = [json.loads(x) for x in (tmp_path / "cand.jsonl").read_text().splitlines()]
    for row in (rows[0], rows[2]):
        assert [c["role"] for c in row["candidates"]] == ["positive", "negative"]
        assert all(c["text"] for c in row["candidates"])
    assert report["fell_back"] == report["totals"]["failed"] - report["parse"].get(
        "extract", {}
    ).get("failed", 0)
