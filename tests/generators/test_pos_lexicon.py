"""SAN's POS lexicon on the real uncased BERT vocabulary (the mirror's splade-tiny tokenizer):
Table 2 scores on known tokens, spaCy's isolated tags, mask probabilities, the file format and
the reported distribution."""

from __future__ import annotations

import json
import logging
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from negcse.cli import main
from negcse.generators.pos_lexicon import (
    LexiconError,
    PosLexicon,
    load_tagger,
    token_text,
)

pytestmark = pytest.mark.mirror

# The paper's Table 2, typed from papers/san-hince.txt.
TABLE_2 = {
    "NOUN": 9, "VERB": 9, "ADJ": 8, "PROPN": 8, "ADV": 7, "PRON": 7, "CCONJ": 6, "DET": 6,
    "ADP": 5, "CONJ": 5, "SCONJ": 5, "AUX": 4, "NUM": 4, "PART": 3, "INTJ": 2, "PUNCT": 1,
    "SYM": 1, "X": 1,
}  # fmt: skip


@pytest.fixture(scope="module")
def built(splade_tiny: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The lexicon as the workflow builds it: `negcse pos-lexicon` on splade-tiny."""
    out = tmp_path_factory.mktemp("lexicon")
    table, stats = out / "lexicon.tsv", out / "stats.json"
    code = main(
        [
            "pos-lexicon",
            "--mlm",
            str(splade_tiny),
            "--output",
            str(table),
            "--stats",
            str(stats),
            "--no-progress",
        ]
    )
    assert code == 0
    return table, stats


@pytest.fixture(scope="module")
def lexicon(built: tuple[Path, Path]) -> PosLexicon:
    return PosLexicon.read_tsv(built[0])


@pytest.fixture(scope="module")
def tokenizer(splade_tiny: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(splade_tiny))


def test_one_entry_per_token_id(lexicon: PosLexicon, tokenizer) -> None:
    assert len(lexicon) == len(tokenizer) == 30522
    assert list(lexicon.tokens) == tokenizer.convert_ids_to_tokens(list(range(30522)))


# tokens whose isolated spaCy tag is that of a dictionary; "the" and "a" come out PRON when
# tagged alone, as in the released table (which has 1 DET in the whole vocabulary)
KNOWN = {
    "water": "NOUN", "run": "VERB", "eat": "VERB", "beautiful": "ADJ", "london": "PROPN",
    "quickly": "ADV", "very": "ADV", "she": "PRON", "and": "CCONJ", "but": "CCONJ",
    "of": "ADP", "in": "ADP", "because": "SCONJ", "if": "SCONJ", "can": "AUX",
    "seven": "NUM", "to": "PART", "not": "PART", "oh": "INTJ", "hello": "INTJ",
    ",": "PUNCT", ".": "PUNCT", "$": "SYM", "the": "PRON",
}  # fmt: skip


def test_known_tokens_match_table_2(lexicon: PosLexicon) -> None:
    index = {t: i for i, t in enumerate(lexicon.tokens)}
    for token, pos in KNOWN.items():
        i = index[token]
        assert lexicon.pos[i] == pos, token
        assert lexicon.scores[i] == TABLE_2[pos], token


def test_special_pieces_and_unused(lexicon: PosLexicon, tokenizer) -> None:
    for token_id in tokenizer.all_special_ids:  # [PAD] [UNK] [CLS] [SEP] [MASK]
        assert lexicon.pos[token_id] == "SPECIAL" and lexicon.scores[token_id] == 0
    for i, token in enumerate(lexicon.tokens):
        if token.startswith("##") or token.startswith("[unused"):
            assert (lexicon.pos[i], lexicon.scores[i]) == ("X", 1), token


def test_every_word_is_spacys_isolated_tag(lexicon: PosLexicon, tokenizer) -> None:
    """An independent re-tagging of a sample of word tokens: one spaCy call per token."""
    nlp = load_tagger()
    rng = np.random.default_rng(0)
    words = [
        i
        for i, t in enumerate(lexicon.tokens)
        if lexicon.pos[i] not in ("SPECIAL",) and not t.startswith(("##", "[unused"))
    ]
    for i in rng.choice(words, size=300, replace=False):
        doc = nlp(token_text(tokenizer, lexicon.tokens[i]))
        assert lexicon.pos[i] == doc[0].pos_, lexicon.tokens[i]
        assert lexicon.scores[i] == TABLE_2.get(doc[0].pos_, 1)


@pytest.mark.parametrize("scale", [10, 20, 30, 40])
def test_mask_probability_is_score_over_scale(lexicon: PosLexicon, scale: int) -> None:
    probs = lexicon.mask_probabilities(scale)
    assert np.allclose(probs, np.minimum(lexicon.scores / scale, 1.0))
    index = {t: i for i, t in enumerate(lexicon.tokens)}
    assert probs[index["water"]] == pytest.approx(9 / scale)
    assert probs[index["[CLS]"]] == 0.0


def test_distribution_reported(lexicon: PosLexicon, built: tuple[Path, Path]) -> None:
    rows = lexicon.distribution()
    assert sum(r["tokens"] for r in rows) == len(lexicon)
    assert sum(r["share"] for r in rows) == pytest.approx(1.0)
    assert {r["pos"]: r["tokens"] for r in rows} == dict(Counter(lexicon.pos))
    stats = json.loads(built[1].read_text())
    assert stats["vocabulary"] == 30522 and stats["distribution"] == rows
    assert stats["mean_mask_probability"]["20"] == pytest.approx(lexicon.scores.mean() / 20)
    # the vocabulary is mostly content words: nouns, verbs, proper nouns, adjectives
    content = sum(r["tokens"] for r in rows if r["score"] >= 8)
    assert content / len(lexicon) > 0.6


def test_log_line(lexicon: PosLexicon, caplog: pytest.LogCaptureFixture) -> None:
    from negcse.generators.pos_lexicon import log_distribution

    with caplog.at_level(logging.INFO):
        log_distribution(lexicon, 20)
    assert "NOUN(9)" in caplog.text and "mean mask probability at scale 20" in caplog.text


def test_roundtrip(lexicon: PosLexicon, tmp_path: Path) -> None:
    lexicon.write_tsv(tmp_path / "copy.tsv")
    again = PosLexicon.read_tsv(tmp_path / "copy.tsv")
    assert again.tokens == lexicon.tokens and again.pos == lexicon.pos
    assert np.array_equal(again.scores, lexicon.scores)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("id\ttoken\tpos\tscore\n", "line 1: expected header"),
        ("token_id\ttoken\tpos\tscore\n0\t[PAD]\tSPECIAL\n", "line 2: expected 4 fields"),
        ("token_id\ttoken\tpos\tscore\n0\ta\tX\tone\n", "line 2: token_id and score"),
        ("token_id\ttoken\tpos\tscore\n0\ta\tX\t1\n2\tb\tX\t1\n", "line 3: token_id 2, expected 1"),
        ("token_id\ttoken\tpos\tscore\n", "no entries"),
    ],
)
def test_bad_files_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LexiconError, match=message):
        PosLexicon.read_tsv(path)
