"""SNCSE: BML and the ablation losses against hand computations of the paper's equations,
where gradients go, the views, and a few training steps per method on splade-tiny."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from negcse.encoders.poolers import get_pooler
from negcse.evaluation.embedder import Embedder
from negcse.losses import bidirectional_margin_loss, info_nce_paired_negative
from negcse.methods.base import StepContext
from negcse.methods.registry import build_method
from negcse.training.model import SentenceEncoder
from negcse.training.settings import TrainSettings
from negcse.training.trainer import TrainData, Trainer

H = [[1.0, 0.0, 0.5], [0.2, 1.0, -0.3], [-0.5, 0.4, 1.0]]
HP = [[0.9, 0.1, 0.4], [0.1, 0.8, -0.2], [0.3, -0.6, 0.7]]
HN = [[0.7, 0.6, 0.1], [-0.2, 0.9, 0.3], [-0.4, 0.5, 0.8]]


def _cos(u: list[float], v: list[float]) -> float:
    dot = sum(a * b for a, b in zip(u, v, strict=True))
    return dot / (math.sqrt(sum(a * a for a in u)) * math.sqrt(sum(b * b for b in v)))


def _relu(x: float) -> float:
    return max(x, 0.0)


def _hand_bml(h, hp, hn, alpha, beta) -> float:
    """Eq. (4)-(5), averaged over the batch."""
    total = 0.0
    for a, p, n in zip(h, hp, hn, strict=True):
        delta = _cos(a, n) - _cos(a, p)
        total += _relu(delta + alpha) + _relu(-delta - beta)
    return total / len(h)


def _hand_nce_row(h, cols, i, tau, extra: list[float] = ()) -> float:
    logits = [_cos(h[i], c) / tau for c in cols] + [x / tau for x in extra]
    return -logits[i] + math.log(sum(math.exp(x) for x in logits))


def _t(x) -> torch.Tensor:
    return torch.tensor(x, dtype=torch.float32)


@pytest.mark.parametrize(("alpha", "beta"), [(0.1, 0.3), (0.0, 2.0), (0.5, 0.6)])
def test_bml_equals_hand_computation(alpha: float, beta: float) -> None:
    got = bidirectional_margin_loss(_t(H), _t(HP), _t(HN), alpha, beta).item()
    assert math.isclose(got, _hand_bml(H, HP, HN, alpha, beta), rel_tol=1e-5, abs_tol=1e-7)


def _unit(angle: float) -> list[float]:
    return [math.cos(angle), math.sin(angle)]


def test_bml_is_flat_inside_the_band_and_linear_outside() -> None:
    """h = e1, h+ at cos 0.9; h# at cos 0.9 + delta. Inside [-beta, -alpha]: loss 0, grad 0."""
    alpha, beta = 0.1, 0.3
    h = _t([[1.0, 0.0]])
    hp = _t([_unit(math.acos(0.9))])

    def run(delta: float):
        hn = _t([_unit(math.acos(0.9 + delta))]).requires_grad_()
        anchor = h.clone().requires_grad_()
        positive = hp.clone().requires_grad_()
        loss = bidirectional_margin_loss(anchor, positive, hn, alpha, beta)
        loss.backward()
        return loss.item(), anchor.grad, positive.grad, hn.grad

    loss, ga, gp, gn = run(-0.2)  # inside the band
    assert loss == 0.0
    assert all(torch.count_nonzero(g) == 0 for g in (ga, gp, gn))
    loss, _, gp, gn = run(-0.05)  # too similar to the negation: delta + alpha = 0.05
    assert math.isclose(loss, 0.05, abs_tol=1e-5)
    # d loss / d cos(h, h#) = +1: the gradient on h# points along h's component orthogonal to h#
    assert torch.count_nonzero(gn) > 0 and torch.count_nonzero(gp) > 0
    loss, _, _, gn = run(-0.5)  # too far apart: -delta - beta = 0.2
    assert math.isclose(loss, 0.2, abs_tol=1e-5)
    assert torch.count_nonzero(gn) > 0


def test_nl_loss_is_eq_9() -> None:
    tau = 0.05
    got = info_nce_paired_negative(_t(H), _t(HP), _t(HN), tau).item()
    want = sum(_hand_nce_row(H, HP, i, tau, [_cos(H[i], HN[i])]) for i in range(3)) / 3
    assert math.isclose(got, want, rel_tol=1e-5)


def _emb() -> dict[str, torch.Tensor]:
    return {"anchor": _t(H), "positive": _t(HP), "negation": _t(HN)}


def _ctx() -> StepContext:
    return StepContext(0, torch.nn.Linear(1, 1), "bert-base-uncased")


def test_sncse_loss_is_infonce_plus_lambda_bml() -> None:
    params = {"temperature": 0.05, "alpha": 0.1, "beta": 0.3, "bml_weight": 1e-3}
    method = build_method("sncse", params, "bert-base-uncased")
    out = method.loss(_emb(), _ctx())
    nce = sum(_hand_nce_row(H, HP, i, 0.05) for i in range(3)) / 3
    want = nce + 1e-3 * _hand_bml(H, HP, HN, 0.1, 0.3)
    assert math.isclose(out.loss.item(), want, rel_tol=1e-5)
    assert set(out.logs) == {"infonce", "bml"}


def test_pl_loss_is_eq_8() -> None:
    method = build_method("sncse_pl", {"temperature": 0.05}, "bert-base-uncased")
    got = method.loss(_emb(), _ctx()).loss.item()
    want = sum(_hand_nce_row(H, HP, i, 0.05) + _hand_nce_row(H, HN, i, 0.05) for i in range(3)) / 3
    assert math.isclose(got, want, rel_tol=1e-5)


def test_infonce_ablation_ignores_the_negation() -> None:
    method = build_method("sncse_infonce", {"temperature": 0.05}, "bert-base-uncased")
    emb = _emb()
    a = method.loss(emb, _ctx()).loss.item()
    emb["negation"] = -emb["negation"]
    assert method.loss(emb, _ctx()).loss.item() == a
    assert method.columns == ()
    assert [v.name for v in method.views(0)] == ["anchor", "positive"]


def test_views_prompts_and_columns() -> None:
    method = build_method("sncse", {}, "roberta-base")
    views = {v.name: v for v in method.views(0)}
    assert views["anchor"].pooler == "prompt_sncse_anchor"
    assert views["positive"].pooler == views["negation"].pooler == "prompt_sncse_positive"
    assert views["anchor"].column == views["positive"].column == "sentence"
    assert views["negation"].column == "negation_sncse" and method.columns == ("negation_sncse",)
    assert method.eval_pooler == "prompt_sncse_anchor"  # the released evaluation scripts' prompt
    assert method.use_mlp


def test_bml_reaches_the_encoder_only_outside_the_band(splade_tiny: Path) -> None:
    """Real forward passes, BML alone: a band that holds every delta ([-5, 5]) gives the
    encoder no gradient at all; the paper's band on an untrained model (delta ~ 0 > -alpha) does."""
    torch.manual_seed(0)
    model = SentenceEncoder.from_pretrained(str(splade_tiny), 0.0)
    pooler_a = get_pooler("prompt_sncse_anchor", tokenizer=model.tokenizer)
    pooler_p = get_pooler("prompt_sncse_positive", tokenizer=model.tokenizer)
    texts = ["a man plays a guitar.", "the cat sleeps."]
    negs = ["a man does not play a guitar .", "the cat does not sleep ."]

    def grads(alpha: float, beta: float) -> float:
        model.zero_grad()
        h = model.embed(texts, pooler_a, 32, True, torch.device("cpu"))
        hp = model.embed(texts, pooler_p, 32, True, torch.device("cpu"))
        hn = model.embed(negs, pooler_p, 32, True, torch.device("cpu"))
        bidirectional_margin_loss(h, hp, hn, alpha, beta).backward()
        return sum(
            float(p.grad.abs().sum()) for p in model.backbone.parameters() if p.grad is not None
        )

    assert grads(-5.0, 5.0) == 0.0  # band [-5, 5] holds every delta in [-2, 2]
    assert grads(0.1, 0.3) > 0.0  # untrained: cos(h, h#) ~ cos(h, h+), delta ~ 0 > -alpha


SETTINGS = dict(
    epochs=2,  # 8 sentences, batch 4: 2 steps per epoch
    batch_size=4,
    learning_rate=1e-4,
    max_seq_len=32,
    dropout=0.1,
    scheduler="linear",
    warmup_ratio=0.0,
    weight_decay=0.0,
    max_grad_norm=1.0,
    max_steps=3,
    eval_steps=3,
    checkpoint_steps=3,
    precision="fp32",
)
CORPUS = [
    "A man is playing a guitar.",
    "The cat sat on the mat.",
    "She will arrive tomorrow morning.",
    "Paris is the capital of France.",
    "They built a new bridge last year.",
    "The children are reading books.",
    "He can swim very fast.",
    "Rain fell all night",
]


def _dev(encode) -> float:
    emb = encode(["a man is playing a guitar.", "a man plays the guitar.", "the cat sleeps."])
    e = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    return float(e[0] @ e[1] - e[0] @ e[2])


@pytest.mark.mirror
@pytest.mark.slow
@pytest.mark.parametrize("name", ["sncse", "sncse_pl", "sncse_nl", "sncse_infonce"])
def test_few_training_steps_end_to_end(name: str, splade_tiny: Path, tmp_path: Path) -> None:
    from negcse.generators.negation import negate

    torch.manual_seed(0)
    model = SentenceEncoder.from_pretrained(str(splade_tiny), 0.1)
    before = {n: p.detach().clone() for n, p in model.backbone.named_parameters()}
    method = build_method(name, {}, "splade-tiny")
    columns = {"sentence": CORPUS}
    if method.columns:
        columns["negation_sncse"] = negate(CORPUS, style="sncse")
    trainer = Trainer(
        method,
        model,
        TrainData(columns),
        TrainSettings(**SETTINGS),
        1,
        _dev,
        tmp_path / "ckpt",
        device=torch.device("cpu"),
        progress=False,
    )
    state = trainer.train()
    assert state.step == 3 and math.isfinite(state.best_score)
    changed = [n for n, p in model.backbone.named_parameters() if not torch.equal(p, before[n])]
    assert any("encoder.layer" in n for n in changed)
    trainer.save(tmp_path / "model", {"eval_pooler": method.eval_pooler})
    enc = Embedder.load(str(tmp_path / "model"), "prompt_sncse_anchor", device=torch.device("cpu"))
    np.testing.assert_allclose(enc.encode(CORPUS[:3]), trainer.encode_eval(CORPUS[:3]), atol=1e-5)
