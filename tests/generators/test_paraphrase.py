"""Paraphrase positives: the `paraphrase` command on a tiny PEGASUS built from a config.

`tuner007/pegasus_paraphrase` is not in the mirror and cannot be downloaded, and its
sentencepiece tokenizer needs the `sentencepiece` package (not installed). The code path is the
same for any seq2seq model with a Hugging Face tokenizer, so the test builds a
`PegasusForConditionalGeneration` with tiny dimensions and random weights over splade-tiny's
uncased WordPiece tokenizer (pad = [PAD], eos = [SEP]) and saves both as a model folder. Its
outputs are meaningless, but they are deterministic: the batched, length-sorted, cached command
must give what `generate` gives on each sentence alone.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer, PegasusConfig, PegasusForConditionalGeneration

from negcse.commands import paraphrase as paraphrase_cmd
from negcse.generators import paraphrase as para
from negcse.io_utils import read_lines, write_lines

SENTENCES = [
    "the cat sat on the mat .",
    "a much longer sentence about the history of the roman empire and its many provinces",
    "",
    "short one",
    "the cat sat on the mat .",
    "paris is the capital of france",
]


@pytest.fixture(scope="module")
def tiny_pegasus(splade_tiny: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tok = AutoTokenizer.from_pretrained(splade_tiny)
    config = PegasusConfig(
        vocab_size=tok.vocab_size,
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=64,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.sep_token_id,
        decoder_start_token_id=tok.pad_token_id,
    )
    torch.manual_seed(0)
    model = PegasusForConditionalGeneration(config)
    folder = tmp_path_factory.mktemp("tiny-pegasus")
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def _args(corpus: Path, out: Path, cache: Path, model: Path, **kw: object) -> argparse.Namespace:
    values = {
        "corpus": str(corpus),
        "output": str(out),
        "cache": str(cache),
        "model": str(model),
        "num_beams": 10,
        "max_length": 20,
        "batch_size": 4,
        "precision": "fp32",
        "mirror": None,
        "threads": None,
        "no_progress": True,
    }
    values.update(kw)
    return argparse.Namespace(**values)


def _one_at_a_time(model_dir: Path, sentences: list[str], beams: int, max_length: int) -> list[str]:
    """Independent reference: plain `generate` per sentence, no batching, no cache."""
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = PegasusForConditionalGeneration.from_pretrained(model_dir).eval()
    out = []
    with torch.no_grad():
        for s in sentences:
            if not s:
                out.append("")
                continue
            ids = tok(s, truncation=True, max_length=max_length, return_tensors="pt")
            gen = model.generate(
                input_ids=ids["input_ids"],
                attention_mask=ids["attention_mask"],
                num_beams=beams,
                max_length=max_length,
            )
            out.append(" ".join(tok.decode(gen[0], skip_special_tokens=True).split()))
    return out


@pytest.mark.mirror
def test_command_matches_unbatched_generation_and_keeps_alignment(
    tiny_pegasus: Path, tmp_path: Path
) -> None:
    write_lines(tmp_path / "corpus.txt", SENTENCES)
    args = _args(tmp_path / "corpus.txt", tmp_path / "out.txt", tmp_path / "c.sqlite", tiny_pegasus)
    assert paraphrase_cmd.run(args) == 0
    got = read_lines(tmp_path / "out.txt")
    assert len(got) == len(SENTENCES)
    assert got == _one_at_a_time(tiny_pegasus, SENTENCES, beams=10, max_length=20)
    assert got[2] == "" and got[0] == got[4]
    assert any(got)  # the tiny model does produce text


@pytest.mark.mirror
def test_cache_skips_sentences_already_paraphrased(
    tiny_pegasus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    real = para.Paraphraser.paraphrase

    def spy(self: para.Paraphraser, sentences: list[str]) -> list[str]:
        seen.extend(sentences)
        return real(self, sentences)

    monkeypatch.setattr(para.Paraphraser, "paraphrase", spy)
    cache = tmp_path / "c.sqlite"
    write_lines(tmp_path / "a.txt", SENTENCES[:4])
    assert (
        paraphrase_cmd.run(_args(tmp_path / "a.txt", tmp_path / "a.out", cache, tiny_pegasus)) == 0
    )
    assert sorted(seen) == sorted(s for s in dict.fromkeys(SENTENCES[:4]) if s)

    # a grown corpus: only its new distinct sentence is generated
    seen.clear()
    write_lines(tmp_path / "b.txt", SENTENCES)
    assert (
        paraphrase_cmd.run(_args(tmp_path / "b.txt", tmp_path / "b.out", cache, tiny_pegasus)) == 0
    )
    assert seen == ["paris is the capital of france"]
    assert read_lines(tmp_path / "b.out")[:4] == read_lines(tmp_path / "a.out")

    # everything cached: the model is not even loaded
    def no_load(*_: object, **__: object) -> para.Paraphraser:
        raise AssertionError("model loaded although every sentence is cached")

    monkeypatch.setattr(para.Paraphraser, "load", no_load)
    assert (
        paraphrase_cmd.run(_args(tmp_path / "b.txt", tmp_path / "c.out", cache, tiny_pegasus)) == 0
    )
    assert read_lines(tmp_path / "c.out") == read_lines(tmp_path / "b.out")


@pytest.mark.mirror
def test_cache_is_keyed_by_generation_settings(tiny_pegasus: Path, tmp_path: Path) -> None:
    write_lines(tmp_path / "a.txt", SENTENCES)
    cache = tmp_path / "c.sqlite"
    paraphrase_cmd.run(_args(tmp_path / "a.txt", tmp_path / "x.out", cache, tiny_pegasus))
    paraphrase_cmd.run(
        _args(tmp_path / "a.txt", tmp_path / "y.out", cache, tiny_pegasus, num_beams=1)
    )
    settings10 = para.GenerationSettings(str(tiny_pegasus), num_beams=10, max_length=20)
    settings1 = para.GenerationSettings(str(tiny_pegasus), num_beams=1, max_length=20)
    with para.open_cache(cache, settings10) as c10, para.open_cache(cache, settings1) as c1:
        assert len(c10) == len(c1) == 4  # distinct non-empty sentences, once per setting
    assert read_lines(tmp_path / "y.out") == _one_at_a_time(
        tiny_pegasus, SENTENCES, beams=1, max_length=20
    )
