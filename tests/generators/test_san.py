"""SAN mask-predict negatives with a real MLM (the mirror's splade-tiny, uncased BERT vocabulary)
on real Wikipedia lines: token count kept, changes concentrated on high-score tokens at the rate
the formula allows, the released greedy-fill quirk, the degenerate-output fallback, determinism,
the command, and the workflow settings."""

from __future__ import annotations

import itertools
import json
import logging
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from negcse.cli import main
from negcse.generators.negation import negate_raw
from negcse.generators.pos_lexicon import PosLexicon, build_lexicon
from negcse.generators.registry import column_file, settings
from negcse.generators.san import (
    PUNCTUATION,
    MaskPredictor,
    SanGenerator,
    SanParams,
    SanStats,
    _splice,
    apply_fallback,
    is_degenerate,
)
from negcse.generators.settings import options
from negcse.generators.specs.san import SanSettings, lexicon_path
from negcse.generators.specs.san import variant as san_variant_of

# -- pure helpers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", True),
        ("   ", True),
        ("-., p.", True),  # the paper's example: 4 punctuation / (4 + 1 space)
        ("a, b c", True),  # 1 / (1 + 2) = 0.33 >= 0.3
        (", a b c d", False),  # 1 / (1 + 4) = 0.2
        ("a. b. c. d e f g h", True),  # 3 / (3 + 7) = 0.3 exactly
        ("a. b. c. d e f g h i", False),  # 3 / (3 + 8)
        ("abc", False),  # neither punctuation nor spaces
        ("." * 51, False),  # longer than 50 characters always passes
        ("the cat sat on the mat.", False),
    ],
)
def test_is_degenerate_by_hand(text: str, expected: bool) -> None:
    assert is_degenerate(text) is expected


def test_splice_keeps_untouched_text_and_separates_words() -> None:
    text = "High School. Playing"
    # tokens: high(0,4) school(5,11) .(11,12) play(13,17) ##ing(17,20)
    offsets = [(0, 4), (5, 11), (11, 12), (13, 17), (17, 20)]
    words = [True, True, True, True, False]
    assert _splice(text, offsets, [None] * 5, words) == text
    # "." -> a word: a space keeps it a separate word
    assert _splice(text, offsets, [None, None, "brothers", None, None], words) == (
        "High School brothers Playing"
    )
    # a word -> another word, and a continuation piece -> another piece
    assert _splice(text, offsets, ["low", None, None, None, "ed"], words) == "low School. Played"
    # a word -> punctuation needs no space
    assert _splice(text, offsets, [None, ",", None, None, None], words) == "High ,. Playing"


def test_fallback_replaces_only_degenerate_samples() -> None:
    sentences = ["Stafford acting General Secretary.", "He is at home.", "The cat sat."]
    samples = ["-., p.", "she was at school.", ""]
    out, n = apply_fallback(samples, sentences)
    assert n == 2
    negations = negate_raw([sentences[0], sentences[2]], style="sncse")
    assert out == [negations[0], "she was at school.", negations[1]]


# -- with the MLM ---------------------------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Single-threaded torch: on a shared 2-core machine, two threads run several times slower."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def lexicon(splade_tiny: Path) -> PosLexicon:
    from transformers import AutoTokenizer

    return build_lexicon(AutoTokenizer.from_pretrained(str(splade_tiny)), progress=False)


@pytest.fixture(scope="module")
def sentences(mirror: Path) -> list[str]:
    path = mirror / "data/unlabeled/wiki1m/wiki1m_random10k.txt"
    return path.read_text(encoding="utf-8").splitlines()[:200]


def _generator(splade: Path, lexicon: PosLexicon, **params) -> SanGenerator:
    p = SanParams(**params)
    return SanGenerator(MaskPredictor.load(str(splade), lexicon, p.scale), p)


@pytest.fixture(scope="module")
def default_run(splade_tiny: Path, lexicon: PosLexicon, sentences: list[str]):
    gen = _generator(splade_tiny, lexicon)
    stats = SanStats()
    return gen, gen.generate(sentences, seed=1, fallback=False, stats=stats), stats


@pytest.mark.mirror
def test_token_count_kept(default_run, sentences: list[str], splade_tiny: Path, lexicon) -> None:
    gen, out, _ = default_run
    tok = gen.tok
    # on token ids the length is kept exactly
    seqs = tok(sentences[:50])["input_ids"]  # [CLS] ... [SEP]
    new = gen.mask_predict_ids(seqs, np.random.default_rng(0))
    assert [len(s) for s in new] == [len(s) for s in seqs]
    # in the text: words (BERT's pre-tokenization) and MLM tokens, measured
    pre = tok.backend_tokenizer.pre_tokenizer.pre_tokenize_str
    same_words = np.mean([len(pre(a)) == len(pre(b)) for a, b in zip(sentences, out, strict=True)])
    n_a = np.array([len(x) for x in tok(sentences, add_special_tokens=False)["input_ids"]])
    n_b = np.array([len(x) for x in tok(out, add_special_tokens=False)["input_ids"]])
    assert same_words >= 0.99
    assert np.mean(n_a == n_b) >= 0.9 and np.abs(n_a - n_b).mean() < 0.15
    # the released loop (greedy fill of every position, re-tokenized each pass) does not
    quirky = _generator(splade_tiny, lexicon, reference_quirks=True).generate(
        sentences, seed=1, fallback=False
    )
    assert (
        np.mean([len(pre(a)) == len(pre(b)) for a, b in zip(sentences, quirky, strict=True)]) < 0.2
    )


@pytest.mark.mirror
def test_changes_concentrate_on_high_score_tokens(default_run) -> None:
    _, _, stats = default_run
    rows = {s: (n, c) for s, (n, c) in stats.changed_by_score.items() if n >= 100}
    assert {1, 5, 7, 8, 9} <= set(rows)
    rate = {s: c / n for s, (n, c) in rows.items()}
    # a position is masked at least once with probability 1 - (1 - s/20)^4 (it keeps its original
    # token, and score, until first masked) and changes only if masked: that bounds the rate
    for s, (n, _) in rows.items():
        bound = 1 - (1 - s / 20) ** 4
        assert rate[s] <= bound + 4 * np.sqrt(bound * (1 - bound) / n), s
    scores = sorted(rate)
    assert all(rate[a] < rate[b] for a, b in itertools.pairwise(scores))  # rises with the score
    assert rate[9] > 4 * rate[1]
    high_tokens = sum(n for s, (n, _) in stats.changed_by_score.items() if s >= 7)
    high_changed = sum(c for s, (_, c) in stats.changed_by_score.items() if s >= 7)
    assert high_changed / stats.changed_tokens > high_tokens / stats.tokens  # enriched
    assert high_changed / stats.changed_tokens > 0.6


@pytest.mark.mirror
@pytest.mark.parametrize("scale", [20.0, 40.0])
def test_first_pass_mask_rate_is_score_over_scale(
    splade_tiny: Path, lexicon: PosLexicon, sentences: list[str], scale: float
) -> None:
    gen = _generator(splade_tiny, lexicon, iterations=1, scale=scale)
    stats = SanStats()
    gen.generate(sentences, seed=5, fallback=False, stats=stats)
    ids = [t for x in gen.tok(sentences, add_special_tokens=False)["input_ids"] for t in x]
    p = lexicon.mask_probabilities(scale)[ids]
    expected, sd = p.sum(), np.sqrt((p * (1 - p)).sum())
    assert abs(stats.masked - expected) < 4 * sd


@pytest.mark.mirror
def test_reference_quirks_fill_every_position(
    splade_tiny: Path, lexicon: PosLexicon, sentences: list[str]
) -> None:
    # with (almost) no masks the default mode returns the text unchanged; the released loop still
    # replaces every position by the MLM's argmax, lowercases and ends with punctuation
    few = sentences[:60]
    plain = _generator(splade_tiny, lexicon, scale=1e12).generate(few, seed=1, fallback=False)
    assert plain == few
    quirky = _generator(splade_tiny, lexicon, scale=1e12, reference_quirks=True).generate(
        few, seed=1, fallback=False
    )
    assert all(
        q == q.lower() and (not q or q[-1] in PUNCTUATION or q[-1].isalnum()) for q in quirky
    )
    assert np.mean([q != s.lower() for q, s in zip(quirky, few, strict=True)]) > 0.9


@pytest.mark.mirror
def test_reference_fill_equals_the_full_model_argmax(
    splade_tiny: Path, lexicon: PosLexicon, sentences: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # handle.py's fill written out: the whole MLM's logits, argmax at every position, padding
    # -> 0, [CLS] / [SEP] kept; fill_all runs the head on the kept positions only, here in
    # blocks of 5 positions, and must give the same ids
    monkeypatch.setattr("negcse.generators.san.HEAD_ROWS", 5)
    predictor = MaskPredictor.load(str(splade_tiny), lexicon, 20.0)
    tok = predictor.tokenizer
    enc = tok(sentences[:9], padding=True, return_tensors="pt")
    ids, attn = enc["input_ids"], enc["attention_mask"]
    assert (attn == 0).any()  # a padded batch
    mask = torch.rand(ids.shape, generator=torch.Generator().manual_seed(0)) < 0.3
    mask &= attn.bool()
    masked = ids.masked_fill(mask, tok.mask_token_id)
    with torch.inference_mode():
        logits = predictor.model(input_ids=masked, attention_mask=attn).logits
    expected = logits.argmax(-1).clone() * attn
    expected[masked == tok.cls_token_id] = tok.cls_token_id
    expected[masked == tok.sep_token_id] = tok.sep_token_id
    assert torch.equal(predictor.fill_all(ids, attn, mask), expected)


@pytest.mark.mirror
def test_fallback_in_the_generator(splade_tiny: Path, lexicon: PosLexicon) -> None:
    gen = _generator(splade_tiny, lexicon)
    sentences = ["", "Stafford acting General Secretary.", "The museum opened in 1928."]
    stats = SanStats()
    raw = gen.generate(sentences, seed=3, fallback=False)
    out = gen.generate(sentences, seed=3, fallback=True, stats=stats)
    bad = [i for i, r in enumerate(raw) if is_degenerate(r)]
    assert 0 in bad  # an empty line gives an empty sample
    assert stats.fallbacks == stats.degenerate == len(bad)
    expected = negate_raw([sentences[i].strip() for i in bad], style="sncse")
    assert [out[i] for i in bad] == expected
    assert all(out[i] == raw[i] for i in range(3) if i not in bad)


@pytest.mark.mirror
def test_deterministic_and_batch_independent(
    splade_tiny: Path, lexicon: PosLexicon, sentences: list[str]
) -> None:
    few = sentences[:60]
    gen = _generator(splade_tiny, lexicon)
    first = gen.generate(few, seed=1, fallback=False)
    assert gen.generate(few, seed=1, fallback=False) == first
    small_batches = _generator(splade_tiny, lexicon, batch_size=7)
    assert small_batches.generate(few, seed=1, fallback=False) == first
    other = gen.generate(few, seed=2, fallback=False)
    assert np.mean([a != b for a, b in zip(first, other, strict=True)]) > 0.8


@pytest.mark.mirror
def test_lexicon_must_match_the_tokenizer(splade_tiny: Path, lexicon: PosLexicon) -> None:
    short = PosLexicon(lexicon.tokens[:100], lexicon.pos[:100], lexicon.scores[:100])
    with pytest.raises(ValueError, match="build the lexicon from this MLM"):
        MaskPredictor.load(str(splade_tiny), short, 20)


@pytest.mark.mirror
def test_command(
    splade_tiny: Path,
    lexicon: PosLexicon,
    sentences: list[str],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join([*sentences[:40], ""]) + "\n", encoding="utf-8")
    lexicon.write_tsv(tmp_path / "lexicon.tsv")
    args = [
        "san-negatives",
        "--corpus",
        str(corpus),
        "--lexicon",
        str(tmp_path / "lexicon.tsv"),
        "--mlm",
        str(splade_tiny),
        "--output",
        str(tmp_path / "san.txt"),
        "--stats",
        str(tmp_path / "stats.json"),
        "--seed",
        "4",
        "--no-progress",
    ]
    with caplog.at_level(logging.INFO):
        assert main(args) == 0
    lines = (tmp_path / "san.txt").read_text(encoding="utf-8").split("\n")
    assert len(lines) == 42 and lines[-1] == ""  # 41 samples, one per line
    assert lines[40]  # the empty line got its negation
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["sentences"] == 41 and stats["fallbacks"] >= 1
    assert "degenerate samples" in caplog.text


# -- workflow settings ----------------------------------------------------------------------------


def _config(**method_san) -> dict:
    return {
        "generators": {"san": {"mlm": "splade-tiny"}},
        "methods": {"m": {"implementation": "simcse_san", "generators": {"san": method_san}}},
    }


def san_settings(config: dict, method: str) -> dict:
    return settings(config, "san", method)


def san_variant(values: dict) -> str:
    return san_variant_of(values, "san")


def test_settings_layers_and_variant() -> None:
    settings = san_settings(_config(scale=10), "m")
    assert settings["mlm"] == "splade-tiny" and settings["scale"] == 10
    assert san_variant(settings) == "splade-tiny_s10_i4_t128_c2048"
    quirky = san_settings(_config(reference_quirks=True, fallback=True), "m")
    assert san_variant(quirky).endswith("_ref_fb")
    # the command line, derived from SanSettings: every option in field order, a flag word
    # where its value is the flag's, the lexicon (a workflow setting) not passed
    assert options(quirky, SanSettings) == (
        "--mlm splade-tiny --scale 20 --iterations 4 --max-tokens 128 --chunk-size 2048 "
        "--batch-size 64 --reference-quirks"
    )
    assert options(settings, SanSettings) == (
        "--mlm splade-tiny --scale 10 --iterations 4 --max-tokens 128 --chunk-size 2048 "
        "--batch-size 64 --no-fallback"
    )
    path = column_file(_config(), "san", "m", "3", "wiki")
    assert path == "results/negatives/san/wiki/splade-tiny_s20_i4_t128_c2048/seed3.txt"
    released = san_settings(_config(lexicon="released", reference_quirks=True), "m")
    assert san_variant(released) == "splade-tiny_s20_i4_t128_c2048_ref_rel"
    assert lexicon_path("splade-tiny", "released").endswith("/splade-tiny+released.tsv")


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"sclae": 10}, "unknown setting"),
        ({"scale": 0}, "scale"),
        ({"fallback": "yes"}, r"methods\.m\.generators\.san\.fallback: 'yes' is not of type 'boolean'"),
        ({"lexicon": "nltk"}, r"lexicon: 'nltk' is not one of \['spacy', 'released'\]"),
    ],
)
def test_bad_settings(override: dict, message: str) -> None:
    with pytest.raises((KeyError, ValueError), match=message):
        san_settings(_config(**override), "m")


# -- the released loop changes the token count (issue 11: the paper grid's default) ---------------


class _ScriptedMLM(torch.nn.Module):
    """An MLM whose argmax is scripted: every token predicts itself, except the ``swap`` map.

    With no masks drawn, whatever changes comes from filling every position (the released
    loop) and from decoding + re-tokenizing; the masked-only mode leaves such a text alone."""

    def __init__(self, vocab_size: int, swap: dict[int, int]) -> None:
        super().__init__()
        self.vocab_size, self.swap = vocab_size, swap

    def get_output_embeddings(self) -> None:
        return None

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> SimpleNamespace:
        target = input_ids.clone()
        for old, new in self.swap.items():
            target[input_ids == old] = new
        return SimpleNamespace(logits=torch.nn.functional.one_hot(target, self.vocab_size).float())


@pytest.mark.mirror
def test_reference_mode_changes_the_token_count(splade_tiny: Path) -> None:
    """Table 1's sentence: the scripted MLM predicts [PAD] for "with" and the piece "##s" for
    "daughter". handle.py's decode drops [PAD] and glues "a" + "##s" into "as": by hand,
    "his wife moved to australia in 1956 along as." (12 tokens -> 10), which the masked-only
    mode cannot produce (it keeps 12)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(splade_tiny))
    sentence = "His wife moved to Australia in 1956 along with a daughter."
    ids = tok.convert_tokens_to_ids
    swap = {ids("with"): tok.pad_token_id, ids("daughter"): ids("##s")}
    lexicon = PosLexicon(
        tuple(tok.convert_ids_to_tokens(list(range(len(tok))))),
        ("X",) * len(tok),
        np.ones(len(tok), dtype=np.int64),
    )
    model = _ScriptedMLM(len(tok), swap)
    outputs = {}
    for quirks in (True, False):
        params = SanParams(scale=1e12, reference_quirks=quirks)  # no masks drawn
        predictor = MaskPredictor(model, tok, lexicon, params.scale, torch.device("cpu"))
        outputs[quirks] = SanGenerator(predictor, params).generate([sentence], 1, fallback=False)
    assert outputs[True] == ["his wife moved to australia in 1956 along as."]
    assert len(tok.tokenize(sentence)) == 12 and len(tok.tokenize(outputs[True][0])) == 10
    assert outputs[False] == [sentence]
