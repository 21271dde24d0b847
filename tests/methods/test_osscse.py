"""OssCSE: two-way margin and recall loss against hand computations, where gradients go, the
paraphrase pipeline (back-translation on tiny FSMT models built here, MER selection, the offline
fallback, the workflow settings) and a few training steps on splade-tiny."""

from __future__ import annotations

import json
import math
import os
import string
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from negcse.evaluation.embedder import Embedder
from negcse.generators.backtranslation import back_translate, select_paraphrases, surface_edits
from negcse.generators.registry import column_file, settings
from negcse.generators.specs.negation import variant_args
from negcse.generators.specs.osscse_paraphrase import candidates
from negcse.losses import recall_loss, two_way_margin_loss
from negcse.methods.base import StepContext
from negcse.methods.registry import build_method
from negcse.text.mer import mer
from negcse.training.model import SentenceEncoder
from negcse.training.settings import TrainSettings
from negcse.training.trainer import TrainData, Trainer

H = [[1.0, 0.0, 0.5], [0.2, 1.0, -0.3], [-0.5, 0.4, 1.0], [0.3, 0.3, 0.3]]
HP = [[0.9, 0.1, 0.4], [0.1, 0.8, -0.2], [0.3, -0.6, 0.7], [0.3, 0.2, 0.4]]
HN = [[0.7, 0.6, 0.1], [-0.2, 0.9, 0.3], [-0.4, 0.5, 0.8], [0.3, 0.3, 0.31]]


def _cos(u: list[float], v: list[float]) -> float:
    dot = sum(a * b for a, b in zip(u, v, strict=True))
    return dot / (math.sqrt(sum(a * a for a in u)) * math.sqrt(sum(b * b for b in v)))


def _hand_margin(h, hp, hn, alpha, beta) -> float:
    """Eq. (3), averaged over the batch."""
    total = 0.0
    for a, p, n in zip(h, hp, hn, strict=True):
        total += max(_cos(a, n) - _cos(a, p) + alpha, 0.0)
        total += max(_cos(a, p) - _cos(a, n) - beta, 0.0)
    return total / len(h)


def _t(x) -> torch.Tensor:
    return torch.tensor(x, dtype=torch.float32)


@pytest.mark.parametrize(("alpha", "beta"), [(0.05, 0.2), (0.0, 0.0), (0.3, 1.0)])
def test_two_way_margin_equals_hand_computation(alpha: float, beta: float) -> None:
    got = two_way_margin_loss(_t(H), _t(HP), _t(HN), alpha, beta).item()
    assert math.isclose(got, _hand_margin(H, HP, HN, alpha, beta), rel_tol=1e-5, abs_tol=1e-7)


def test_two_way_margin_gradient_vanishes_inside_the_band() -> None:
    # h = e1; cos(h, h_p) = 0.9, cos(h, h_n) = 0.8: difference 0.1 in [0.05, 0.2]
    def unit(c: float) -> list[float]:
        return [c, math.sqrt(1 - c * c)]

    h = _t([[1.0, 0.0]]).requires_grad_()
    hp = _t([unit(0.9)]).requires_grad_()
    hn = _t([unit(0.8)]).requires_grad_()
    loss = two_way_margin_loss(h, hp, hn, 0.05, 0.2)
    loss.backward()
    assert loss.item() == 0.0
    assert all(torch.count_nonzero(g) == 0 for g in (h.grad, hp.grad, hn.grad))
    hn2 = _t([unit(0.88)]).requires_grad_()  # difference 0.02 < alpha: pays 0.03
    loss = two_way_margin_loss(h, hp, hn2, 0.05, 0.2)
    loss.backward()
    assert math.isclose(loss.item(), 0.03, abs_tol=1e-5)
    assert torch.count_nonzero(hn2.grad) > 0


def test_recall_loss_value_and_gradient() -> None:
    torch.manual_seed(0)
    theta = [torch.randn(3, 4, requires_grad=True), torch.randn(5, requires_grad=True)]
    theta0 = [t.detach() + torch.randn_like(t) for t in theta]
    gamma = 2e-3
    loss = recall_loss(theta, theta0, gamma)
    hand = 0.0
    for t, t0 in zip(theta, theta0, strict=True):
        hand += float(((t.detach().numpy() - t0.numpy()) ** 2).sum())
    assert math.isclose(loss.item(), gamma / 2 * hand, rel_tol=1e-5)
    loss.backward()
    for t, t0 in zip(theta, theta0, strict=True):
        torch.testing.assert_close(t.grad, gamma * (t.detach() - t0))
    with pytest.raises(ValueError):
        recall_loss(theta, theta0[:1], gamma)


@pytest.fixture(scope="module")
def encoder(splade_tiny: Path) -> SentenceEncoder:
    torch.manual_seed(0)
    return SentenceEncoder.from_pretrained(str(splade_tiny), 0.1)


PARAMS = {"temperature": 0.05, "alpha": 0.05, "beta": 0.2, "margin_weight": 1e-3,
          "recall_weight": 2e-3}  # fmt: skip


@pytest.mark.mirror
def test_attach_takes_a_detached_copy_of_the_encoder_only(encoder: SentenceEncoder) -> None:
    method = build_method("osscse", PARAMS, "splade-tiny")
    emb = {k: _t(v) for k, v in zip(("anchor", "positive", "paraphrase"), (H, HP, HP), strict=True)}
    emb["negation"] = _t(HN)
    with pytest.raises(RuntimeError, match="attach"):
        method.loss(emb, StepContext(0, encoder, "splade-tiny"))
    method.attach(encoder)
    backbone = [p for p in encoder.backbone.parameters() if p.requires_grad]
    assert len(method._theta0) == len(backbone)
    for p, p0 in zip(backbone, method._theta0, strict=True):
        assert torch.equal(p, p0) and not p0.requires_grad and p0.device == p.device
        assert p0.data_ptr() != p.data_ptr()
    mlp_ids = {id(p) for p in encoder.mlp.parameters()}
    assert not mlp_ids & {id(p) for p in method._theta}


@pytest.mark.mirror
def test_osscse_loss_and_where_its_gradients_go(splade_tiny: Path) -> None:
    """With fixed embeddings, the encoder's gradient is exactly gamma * (theta - theta0), the MLP
    head gets none, and the loss is l_c + l_r + lambda * l_m by hand."""
    torch.manual_seed(0)
    model = SentenceEncoder.from_pretrained(str(splade_tiny), 0.1)
    method = build_method("osscse", PARAMS, "splade-tiny")
    method.attach(model)
    rng = np.random.default_rng(0)
    shifts = []
    with torch.no_grad():
        for p in model.backbone.parameters():
            d = torch.from_numpy(rng.normal(0, 1e-2, p.shape).astype(np.float32))
            p.add_(d)
            shifts.append(d)
    emb = {"anchor": _t(H), "positive": _t(HP), "paraphrase": _t(HP), "negation": _t(HN)}
    emb = {k: v.requires_grad_() for k, v in emb.items()}
    out = method.loss(emb, StepContext(0, model, "splade-tiny"))
    nce = 0.0
    for i in range(4):
        logits = [_cos(H[i], c) / 0.05 for c in HP]
        nce += -logits[i] + math.log(sum(math.exp(x) for x in logits))
    recall = 2e-3 / 2 * sum(float((d.double() ** 2).sum()) for d in shifts)
    want = nce / 4 + recall + 1e-3 * _hand_margin(H, HP, HN, 0.05, 0.2)
    assert math.isclose(out.loss.item(), want, rel_tol=1e-5)
    assert math.isclose(out.logs["recall"], recall, rel_tol=1e-4)
    out.loss.backward()
    for p, d in zip(model.backbone.parameters(), shifts, strict=True):
        torch.testing.assert_close(p.grad, 2e-3 * d, rtol=1e-4, atol=1e-9)
    assert all(p.grad is None for p in model.mlp.parameters())
    assert emb["negation"].grad.abs().sum() > 0 and emb["paraphrase"].grad.abs().sum() > 0


def test_views_and_columns() -> None:
    method = build_method("osscse", {}, "roberta-base")
    views = {v.name: v for v in method.views(0)}
    assert views["anchor"].pooler == "prompt_osscse_anchor"
    assert {views[k].pooler for k in ("positive", "negation", "paraphrase")} == {
        "prompt_osscse_positive"
    }
    assert method.columns == ("negation_osscse", "paraphrase_osscse")
    assert views["paraphrase"].column == "paraphrase_osscse"
    assert method.eval_pooler == "prompt_osscse_anchor"


# -- paraphrases --------------------------------------------------------------------------------


def test_select_paraphrases_keeps_the_band_and_falls_back_to_the_sentence() -> None:
    sentences = [
        "the cat sat on the mat today",  # de: MER 0 (too close), ru: 2/7 = 0.29 kept
        "a b c d e f g h i j",  # de: 2/10 kept, ru: 1.0 dropped
        "one two three",  # nothing in the band -> the sentence itself
    ]
    candidates = {
        "de": ["the cat sat on the mat today", "a b c d e f g h x y", "uno dos tres"],
        "ru": ["the cat was on the mat yesterday", "z z z z z z z z z z", "one two three"],
    }
    assert math.isclose(mer(sentences[0], candidates["ru"][0]), 2 / 7)
    assert math.isclose(mer(sentences[1], candidates["de"][1]), 2 / 10)
    chosen, stats = select_paraphrases(sentences, candidates, 0.15, 0.6, seed=0)
    assert chosen == [candidates["ru"][0], candidates["de"][1], sentences[2]]
    assert stats.kept == 2 and stats.fallback_to_sentence == 1
    assert stats.below_band == {"de": 1, "ru": 1} and stats.above_band == {"de": 1, "ru": 1}
    assert math.isclose(stats.mean_mer_kept, (2 / 7 + 2 / 10) / 2)


def test_select_draws_among_several_kept_candidates_by_seed() -> None:
    sentences = ["w1 w2 w3 w4 w5 w6 w7 w8 w9 w10"] * 200
    candidates = {
        "de": ["w1 w2 w3 w4 w5 w6 w7 w8 x y"] * 200,  # MER 0.2
        "ru": ["w1 w2 w3 w4 w5 w6 w7 x y z"] * 200,  # MER 0.3
    }
    a, sa = select_paraphrases(sentences, candidates, seed=1)
    b, _ = select_paraphrases(sentences, candidates, seed=1)
    c, _ = select_paraphrases(sentences, candidates, seed=2)
    assert a == b and a != c
    assert 60 < sa.chosen["de"] < 140 and sa.chosen["de"] + sa.chosen["ru"] == 200
    with pytest.raises(ValueError, match="lines"):
        select_paraphrases(sentences, {"de": candidates["de"][:3]})


def test_surface_edits_fallback() -> None:
    sentences = [
        "the quick brown fox jumps over the lazy dog near the river bank today",
        "short",
        "",
        "two words",
    ]
    a = surface_edits(sentences, 0.15, seed=0)
    assert a == surface_edits(sentences, 0.15, seed=0) and len(a) == 4
    assert a[1] == "short" and a[2] == ""
    assert sorted(a[0].split()) != sorted(sentences[0].split()) or a[0] != sentences[0]
    assert set(a[0].split()) <= set(sentences[0].split()) and a[0]
    assert 0 < mer(sentences[0], a[0]) <= 0.6


# Tiny translation models built from a config (random weights: the outputs are gibberish, but
# they depend on the input, which is what the batching, order and cache checks need).
CHARS = list(string.ascii_lowercase) + list(".,!?'")


def _tiny_fsmt(folder: Path, langs: list[str], seed: int) -> Path:
    from transformers import FSMTConfig, FSMTForConditionalGeneration, FSMTTokenizer

    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for c in CHARS:
        vocab.setdefault(c, len(vocab))
        vocab.setdefault(c + "</w>", len(vocab))
    folder.mkdir(parents=True)
    for side in ("src", "tgt"):
        (folder / f"vocab-{side}.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    tok = FSMTTokenizer(
        langs=langs,
        src_vocab_file=str(folder / "vocab-src.json"),
        tgt_vocab_file=str(folder / "vocab-tgt.json"),
        merges_file=str(folder / "merges.txt"),
    )
    cfg = FSMTConfig(
        langs=langs,
        src_vocab_size=len(vocab),
        tgt_vocab_size=len(vocab),
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=128,
        init_std=1.0,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    FSMTForConditionalGeneration(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("fsmt")
    return _tiny_fsmt(root / "en-de", ["en", "de"], 0), _tiny_fsmt(root / "de-en", ["de", "en"], 1)


SOURCE = ["hello world.", "a cat", "the quick brown fox jumps", "no", "", "yes it is", "a cat"]


def _direct(folder: Path, text: str, max_length: int) -> str:
    """The independent path: one sentence, straight through transformers' generate."""
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    with torch.no_grad():
        ids = model.generate(**tok([text], return_tensors="pt"), num_beams=1, max_length=max_length)
    return " ".join(tok.batch_decode(ids, skip_special_tokens=True)[0].split())


def test_back_translation_on_tiny_fsmt_models(tiny_pair: tuple[Path, Path], tmp_path: Path) -> None:
    fwd, bwd = tiny_pair
    cache = tmp_path / "bt.sqlite"
    # greedy: a random tiny model has near-ties that batched beam search may break otherwise
    kwargs = dict(num_beams=1, max_length=16, batch_size=3, progress=False)
    out, stats = back_translate(SOURCE, str(fwd), str(bwd), cache, **kwargs)
    assert len(out) == len(SOURCE) and out[4] == "" and out[1] == out[6]
    for src, got in zip(SOURCE, out, strict=True):
        pivot = _direct(fwd, src, 16) if src else ""
        # an empty text (line or pivot) stays empty, without a call to the model
        assert got == (_direct(bwd, pivot, 16) if pivot else "")
    assert stats.forward_generated == 5  # distinct non-empty sentences
    assert len(set(out)) > 2  # the round trips depend on the input

    def refuse(name, settings):
        raise AssertionError("everything should come from the cache")

    again, stats2 = back_translate(SOURCE, str(fwd), str(bwd), cache, load=refuse, **kwargs)
    assert again == out and stats2.forward_generated == stats2.backward_generated == 0


def test_back_translate_command(tiny_pair: tuple[Path, Path], tmp_path: Path) -> None:
    fwd, bwd = tiny_pair
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(SOURCE[:4]) + "\n")
    out = tmp_path / "bt.txt"
    cmd = [sys.executable, "-m", "negcse", "back-translate", "--corpus", str(corpus),
           "--output", str(out), "--forward", str(fwd), "--backward", str(bwd),
           "--cache", str(tmp_path / "c.sqlite"), "--num-beams", "1", "--max-length", "16",
           "--stats", str(tmp_path / "s.json"), "--no-progress"]  # fmt: skip
    subprocess.run(cmd, check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    lines = out.read_text().splitlines()
    assert len(lines) == 4 and lines[1] == _direct(bwd, _direct(fwd, "a cat", 16), 16)
    assert json.loads((tmp_path / "s.json").read_text())["sentences"] == 4


# -- workflow settings ---------------------------------------------------------------------------


def test_workflow_settings_and_files() -> None:
    config = {
        "methods": {
            "sncse": {"implementation": "sncse"},
            "sncse_ref": {
                "implementation": "sncse",
                "generators": {"negation": {"reference_quirks": True}},
            },
        },
        "generators": {"osscse_paraphrase": {"source": "surface_edits"}},
    }
    negation = column_file(config, "negation_sncse", "sncse", 1, "wiki")
    assert negation == "results/negatives/negation/wiki/sncse.txt"
    assert (
        column_file(config, "negation_sncse", "sncse_ref", 1, "wiki")
        == "results/negatives/negation/wiki/sncse-reference.txt"
    )
    assert column_file(config, "negation_osscse", "sncse_ref", 1, "wiki").endswith(
        "/wiki/osscse.txt"
    )
    assert variant_args("sncse-reference") == "--style sncse --reference-quirks"
    assert variant_args("osscse") == "--style osscse"
    source = settings(config, "osscse_paraphrase")
    assert candidates(source, "wiki") == {
        "edits": "results/negatives/osscse_paraphrase/wiki/surface_edits.txt"
    }
    config["generators"]["osscse_paraphrase"]["source"] = "backtranslation"
    assert sorted(candidates(settings(config, "osscse_paraphrase"), "wiki")) == ["de", "ru"]
    assert settings(config, "osscse_paraphrase")["mer_min"] == 0.15
    assert settings(config, "negation")["reference_quirks"] is False
    for bad in ({"sourc": "x"}, {"source": "llm"}, {"mer_min": 0.7, "mer_max": 0.6}):
        with pytest.raises((KeyError, ValueError)):
            settings({"generators": {"osscse_paraphrase": bad}}, "osscse_paraphrase")


# -- training ------------------------------------------------------------------------------------

CORPUS = [
    "A man is playing a guitar.",
    "The cat sat on the mat.",
    "She will arrive tomorrow morning.",
    "Paris is the capital of France.",
    "They built a new bridge last year over the wide river.",
    "The children are reading books in the library.",
    "He can swim very fast.",
    "Rain fell all night",
]


def _dev(encode) -> float:
    emb = encode(["a man is playing a guitar.", "a man plays the guitar.", "the cat sleeps."])
    e = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    return float(e[0] @ e[1] - e[0] @ e[2])


@pytest.mark.mirror
@pytest.mark.slow
def test_few_training_steps_end_to_end(splade_tiny: Path, tmp_path: Path) -> None:
    from negcse.generators.negation import negate

    torch.manual_seed(0)
    model = SentenceEncoder.from_pretrained(str(splade_tiny), 0.1)
    method = build_method("osscse", {}, "splade-tiny")
    paraphrases, _ = select_paraphrases(CORPUS, {"edits": surface_edits(CORPUS, 0.2, 0)})
    data = TrainData(
        {
            "sentence": CORPUS,
            "negation_osscse": negate(CORPUS, style="osscse"),
            "paraphrase_osscse": paraphrases,
        }
    )
    settings = TrainSettings(
        epochs=2, batch_size=4, learning_rate=1e-4, max_seq_len=32, dropout=0.1,
        scheduler="linear", warmup_ratio=0.0, weight_decay=0.0, max_grad_norm=1.0,
        max_steps=3, eval_steps=3, checkpoint_steps=3, precision="fp32",
    )  # fmt: skip
    trainer = Trainer(
        method, model, data, settings, 1, _dev, tmp_path / "ckpt",
        device=torch.device("cpu"), progress=False,
    )  # fmt: skip
    state = trainer.train()
    assert state.step == 3 and math.isfinite(state.best_score)
    # recall loss: theta0 kept, the encoder moved away from it
    moved = sum(
        float((p - p0).abs().sum()) for p, p0 in zip(method._theta, method._theta0, strict=True)
    )
    assert moved > 0
    trainer.save(tmp_path / "model", {"eval_pooler": method.eval_pooler})
    enc = Embedder.load(str(tmp_path / "model"), "prompt_osscse_anchor", device=torch.device("cpu"))
    np.testing.assert_allclose(enc.encode(CORPUS[:3]), trainer.encode_eval(CORPUS[:3]), atol=1e-5)
