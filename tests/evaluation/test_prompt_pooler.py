"""Prompt poolers: the token-level prompt equals the full-text tokenization when nothing is cut,
truncation keeps the whole template within max_seq_len, and the vector is the mask's state."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoModel, AutoTokenizer, RobertaTokenizerFast

from negcse.encoders.poolers import PROMPTS, PromptPooler, get_pooler
from negcse.encoders.pretrained import model_inputs
from negcse.evaluation.embedder import Embedder

SENTENCES = [
    "A man is playing a guitar.",
    "the cat sat on the mat",  # no final punctuation: SNCSE adds " ."
    "Tom and Jerry did not become good friends!",
    "  leading and trailing spaces  ",
]
LONG = " ".join(["supercalifragilistic", "words", "keep", "coming", "here"] * 12) + "."


@pytest.fixture(scope="module")
def bert_tok(splade_tiny: Path):
    return AutoTokenizer.from_pretrained(splade_tiny)


@pytest.fixture(scope="module")
def bpe_tok(tmp_path_factory: pytest.TempPathFactory) -> RobertaTokenizerFast:
    """A RoBERTa-style byte-level BPE tokenizer trained here on a few lines."""
    from tokenizers import ByteLevelBPETokenizer

    lines = [
        'This sentence : " man is playing a guitar . " means something .',
        'This sentence of "cat sat on the mat" means it.',
        "the cat sat on the mat, a man is playing a guitar.",
    ] * 10
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        lines,
        vocab_size=350,
        min_frequency=1,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
        show_progress=False,
    )
    folder = tmp_path_factory.mktemp("bpe")
    bpe.save_model(str(folder))
    return RobertaTokenizerFast(
        vocab_file=str(folder / "vocab.json"), merges_file=str(folder / "merges.txt")
    )


def _full_text(name: str, sentence: str, tokenizer) -> list[int]:
    """The independent truth: the template filled in as text, tokenized in one go."""
    template, punctuate, _ = PROMPTS[name]
    text = sentence.strip()
    if punctuate and text[-1] not in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~":
        text += " ."
    filled = template.replace("{sentence}", text).replace("{mask}", tokenizer.mask_token)
    return tokenizer(filled)["input_ids"]


def _rows(batch: dict[str, torch.Tensor]) -> list[list[int]]:
    return [
        ids[mask.bool()].tolist()
        for ids, mask in zip(batch["input_ids"], batch["attention_mask"], strict=True)
    ]


@pytest.mark.mirror
@pytest.mark.parametrize("name", sorted(PROMPTS))
def test_untruncated_prompt_equals_full_text_tokenization(name: str, bert_tok) -> None:
    pooler = get_pooler(name, tokenizer=bert_tok)
    batch = pooler.tokenize(bert_tok, SENTENCES, 64)
    assert _rows(batch) == [_full_text(name, s, bert_tok) for s in SENTENCES]


@pytest.mark.parametrize("name", ["prompt_sncse_anchor", "prompt_sncse_positive"])
def test_byte_level_bpe_gets_the_sentence_with_its_leading_space(name: str, bpe_tok) -> None:
    """RoBERTa-style tokenizers: the sentence's first word is 'Ġman' as in the full text, not
    'man' after a lone 'Ġ' (what tokenizing 'This sentence : " ' and the sentence apart gives)."""
    sentences = ["man is playing a guitar .", "cat sat on the mat"]
    pooler = get_pooler(name, tokenizer=bpe_tok)
    batch = pooler.tokenize(bpe_tok, sentences, 64)
    assert _rows(batch) == [_full_text(name, s, bpe_tok) for s in sentences]
    tokens = bpe_tok.convert_ids_to_tokens(_rows(batch)[0])
    assert tokens[5] == "Ġman" and "Ġ" not in tokens
    assert bpe_tok.tokenize('This sentence : " ')[-1] == "Ġ"  # the released split's extra token


@pytest.mark.mirror
@pytest.mark.parametrize("max_len", [16, 20, 32])
@pytest.mark.parametrize("name", ["prompt_sncse_anchor", "prompt_sncse_positive"])
def test_truncation_keeps_the_template(name: str, max_len: int, bert_tok) -> None:
    pooler = get_pooler(name, tokenizer=bert_tok)
    batch = pooler.tokenize(bert_tok, [LONG, "short one."], max_len)
    long_row, short_row = _rows(batch)
    assert len(long_row) == max_len and batch["input_ids"].shape[1] == max_len
    # The released trainer's construction, written from its description: [CLS] + prefix +
    # sentence cut to max_len - |prefix| - |suffix| - 2 + suffix + [SEP].
    tok = bert_tok.tokenize
    ids = bert_tok.convert_tokens_to_ids
    prefix = ids(tok(PROMPTS[name][0].split("{sentence}")[0]))
    suffix = ids(tok(' " means [MASK] .'))
    body = ids(tok(LONG))[: max_len - len(prefix) - len(suffix) - 2]
    expected = [bert_tok.cls_token_id, *prefix, *body, *suffix, bert_tok.sep_token_id]
    assert long_row == expected
    assert short_row == _full_text(name, "short one.", bert_tok)
    for row, m in zip(batch["input_ids"], batch["mask_index"], strict=True):
        assert row[m] == bert_tok.mask_token_id
        assert (row == bert_tok.mask_token_id).sum() == 1


@pytest.mark.mirror
def test_plain_pooler_gives_the_tokenizers_own_tensors(bert_tok, bpe_tok) -> None:
    # the base tokenize goes through numpy for speed: the same keys, int64 values and shapes
    # as the tokenizer's own return_tensors="pt", truncated and padded alike
    for tok in (bert_tok, bpe_tok):
        ours = get_pooler("mean").tokenize(tok, [*SENTENCES, LONG], 16)
        theirs = tok(
            [*SENTENCES, LONG], padding=True, truncation=True, max_length=16, return_tensors="pt"
        )
        assert ours.keys() == theirs.keys() and theirs["input_ids"].shape == (5, 16)
        for key, value in theirs.items():
            assert ours[key].dtype == value.dtype == torch.int64 and torch.equal(ours[key], value)


@pytest.mark.mirror
def test_literal_mask_text_in_a_sentence_stays_text(bert_tok) -> None:
    pooler = get_pooler("prompt_sncse_anchor", tokenizer=bert_tok)
    batch = pooler.tokenize(bert_tok, ["the [MASK] token and [SEP] here."], 32)
    row = batch["input_ids"][0]
    assert (row == bert_tok.mask_token_id).sum() == 1
    assert row[batch["mask_index"][0]] == bert_tok.mask_token_id


@pytest.mark.mirror
def test_no_room_for_the_sentence_is_an_error(bert_tok) -> None:
    pooler = get_pooler("prompt_sncse_anchor", tokenizer=bert_tok)
    with pytest.raises(ValueError, match="no room"):
        pooler.tokenize(bert_tok, ["a"], 10)


def test_template_must_hold_sentence_then_mask() -> None:
    with pytest.raises(ValueError):
        PromptPooler(name="x", template="{mask} means {sentence}")
    with pytest.raises(ValueError):
        PromptPooler(name="x", template="no placeholders")


@pytest.mark.mirror
def test_pooled_vector_is_the_hidden_state_at_the_mask(splade_tiny: Path, bert_tok) -> None:
    model = AutoModel.from_pretrained(splade_tiny).eval()
    pooler = get_pooler("prompt_sncse_positive", tokenizer=bert_tok)
    batch = pooler.tokenize(bert_tok, [*SENTENCES, LONG], 32)
    with torch.no_grad():
        out = model(**model_inputs(batch), return_dict=True)
        pooled = pooler.pool(out, batch)
    for i, row in enumerate(batch["input_ids"]):
        (pos,) = (row == bert_tok.mask_token_id).nonzero()[0]
        assert torch.equal(pooled[i], out.last_hidden_state[i, pos])
    # padding does not change a row's vector: each sentence alone gives the same
    with torch.no_grad():
        alone = pooler.tokenize(bert_tok, [SENTENCES[1]], 32)
        single = pooler.pool(model(**model_inputs(alone), return_dict=True), alone)
    assert torch.allclose(single[0], pooled[1], atol=1e-5)


@pytest.mark.mirror
def test_encoder_load_uses_the_prompt_pooler(splade_tiny: Path, bert_tok) -> None:
    enc = Embedder.load(str(splade_tiny), "prompt_sncse_anchor", device=torch.device("cpu"))
    got = enc.encode(SENTENCES, batch_size=2)
    model = AutoModel.from_pretrained(splade_tiny).eval()
    want = []
    with torch.no_grad():
        for s in SENTENCES:
            ids = torch.tensor([_full_text("prompt_sncse_anchor", s, bert_tok)])
            hidden = model(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state
            want.append(hidden[0, (ids[0] == bert_tok.mask_token_id).nonzero()[0, 0]].numpy())
    np.testing.assert_allclose(got, np.stack(want), atol=1e-5)


@pytest.mark.mirror
def test_osscse_cuts_the_sentence_then_adds_the_template_keeping_the_not(bert_tok) -> None:
    """PromptBERT's train.py: sentence[:32] tokens, then [CLS] prefix ... suffix [SEP]. On a
    sentence whose "not" is its 27th token, the whole-prompt budget (22 sentence tokens) cuts
    the "not" and makes the negation token-identical to the positive; PromptBERT's keeps it."""
    sentence = (
        "the old stone bridge over the wide river near the small quiet village in the green "
        "valley where many people walk every day and they do like it ."
    )
    negation = sentence.replace("they do like", "they do not like")
    tok = bert_tok.tokenize
    assert tok(negation).index("not") == 26 and len(tok(negation)) == 30  # hand count
    positive = get_pooler("prompt_osscse_positive", tokenizer=bert_tok)
    fit = get_pooler("prompt_osscse_positive_fit", tokenizer=bert_tok)
    ids = bert_tok.convert_tokens_to_ids
    prefix = ids(tok('This sentence of "'))
    suffix = ids(tok('" means [MASK].'))
    new_rows = _rows(positive.tokenize(bert_tok, [sentence, negation], 32))
    assert new_rows[1] == [bert_tok.cls_token_id, *prefix, *ids(tok(negation)), *suffix,
                           bert_tok.sep_token_id]
    assert bert_tok.convert_tokens_to_ids("not") in new_rows[1]
    assert new_rows[0] != new_rows[1]
    old_rows = _rows(fit.tokenize(bert_tok, [sentence, negation], 32))
    assert len(old_rows[1]) == 32 and old_rows[0] == old_rows[1]  # the "not" was cut
    # and a sentence longer than 32 tokens keeps exactly 32 of them
    long_row = _rows(positive.tokenize(bert_tok, [LONG], 32))[0]
    assert long_row[1 + len(prefix) : -1 - len(suffix)] == ids(tok(LONG))[:32]
