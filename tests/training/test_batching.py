"""Pre-tokenized training batches (negcse.training.batching) equal the per-step tokenizer's, element for
element: the reference is ``pooler.tokenize`` on the batch's texts, as the trainer used to call
it every step."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoTokenizer

from negcse.encoders.poolers import get_pooler
from negcse.training.batching import collate, tokenize_rows

pytestmark = pytest.mark.mirror


@pytest.fixture(scope="module")
def tokenizer(splade_tiny: Path):
    return AutoTokenizer.from_pretrained(str(splade_tiny))


@pytest.fixture(scope="module")
def texts(mirror: Path) -> list[str]:
    lines = (mirror / "data/unlabeled/wiki1m/wiki1m_random10k.txt").read_text().splitlines()
    return [*lines[:300], "", "x", "a very long sentence " * 40]


@pytest.mark.parametrize("pooler_name", ["cls_before_pooler", "prompt_sncse_anchor"])
def test_collated_batches_equal_per_step_tokenization(tokenizer, texts, pooler_name) -> None:
    pooler = get_pooler(pooler_name, tokenizer=tokenizer)
    # small chunks: rows of one column come from differently padded tokenizer calls
    first = tokenize_rows(pooler, tokenizer, texts, 32, chunk=37)
    second = tokenize_rows(pooler, tokenizer, texts[::-1], 32, chunk=50)
    rng = np.random.default_rng(0)
    for _ in range(5):
        idx = rng.permutation(len(texts))[:24]
        got = collate([first, second], idx)
        want = pooler.tokenize(
            tokenizer, [texts[i] for i in idx] + [texts[::-1][i] for i in idx], 32
        )
        assert set(got) == set(want)
        for key in want:
            assert got[key].dtype == want[key].dtype, key
            assert torch.equal(got[key], want[key]), key


def test_static_padding_pads_to_max_len_and_keeps_the_tokens(tokenizer, texts) -> None:
    pooler = get_pooler("cls_before_pooler", tokenizer=tokenizer)
    rows = tokenize_rows(pooler, tokenizer, texts, 32)
    idx = np.arange(10)
    dynamic, static = collate([rows], idx), collate([rows], idx, pad_to=32)
    width = dynamic["input_ids"].shape[1]
    assert static["input_ids"].shape == (10, 32) and width < 32
    assert torch.equal(static["input_ids"][:, :width], dynamic["input_ids"])
    assert int(static["input_ids"][:, width:].abs().sum()) == 0  # [PAD] is id 0
    assert torch.equal(static["attention_mask"].sum(1), dynamic["attention_mask"].sum(1))
    with pytest.raises(ValueError, match="does not fit padding 8"):
        collate([rows], idx, pad_to=8)


def test_longest_row_is_the_static_width_of_a_prompt_column(tokenizer, texts) -> None:
    """OssCSE's template comes after the sentence is cut to max_length, so its rows can exceed
    max_length; ``longest`` is the width that fits every row of the column."""
    pooler = get_pooler("prompt_osscse_anchor", tokenizer=tokenizer)
    rows = tokenize_rows(pooler, tokenizer, texts, 16)
    per_row = [len(pooler.tokenize(tokenizer, [t], 16)["input_ids"][0]) for t in texts[-3:]]
    assert rows.longest > 16 and rows.longest >= max(per_row)
    assert rows.longest == int(max(rows.offsets[i + 1] - rows.offsets[i] for i in range(len(rows))))
    idx = np.arange(len(texts))
    assert collate([rows], idx, pad_to=rows.longest)["input_ids"].shape[1] == rows.longest
    with pytest.raises(ValueError, match="does not fit padding 16"):
        collate([rows], idx, pad_to=16)
