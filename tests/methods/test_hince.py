"""HiNCE (SAN paper eq. 2) by hand, its reduction to InfoNCE, and the SAN methods' views, loss and
per-view dropout, inspected inside every forward pass of the real trainer."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from negcse.losses import hierarchical_info_nce, info_nce
from negcse.methods.base import StepContext
from negcse.methods.registry import build_method
from negcse.training.model import SentenceEncoder
from negcse.training.settings import TrainSettings
from negcse.training.trainer import TrainData, Trainer


def _cos(u: list[float], v: list[float]) -> float:
    dot = sum(a * b for a, b in zip(u, v, strict=True))
    return dot / math.sqrt(sum(a * a for a in u) * sum(b * b for b in v))


def _hince_by_hand(a, p, s, tau1, tau2) -> float:
    """-1/N sum_i log e^{cos(a_i,p_i)/t1} / sum_j (e^{cos(a_i,p_j)/t1} + e^{cos(a_i,s_j)/t2})."""
    total = 0.0
    for i, ai in enumerate(a):
        num = math.exp(_cos(ai, p[i]) / tau1)
        den = sum(math.exp(_cos(ai, pj) / tau1) for pj in p)
        den += sum(math.exp(_cos(ai, sj) / tau2) for sj in s)
        total += -math.log(num / den)
    return total / len(a)


@pytest.mark.parametrize(("tau1", "tau2"), [(0.05, 0.08), (0.05, 0.1), (0.1, 0.05), (1.0, 0.5)])
def test_hince_equals_hand_computation(tau1: float, tau2: float) -> None:
    a = [[1.0, 0.2, -0.3], [0.1, 0.9, 0.4], [-0.5, 0.3, 0.8]]
    p = [[0.9, 0.1, -0.2], [0.2, 1.0, 0.1], [-0.4, 0.5, 0.7]]
    s = [[0.8, -0.3, 0.1], [0.3, 0.6, 0.9], [0.2, 0.1, 0.5]]
    got = hierarchical_info_nce(
        torch.tensor(a, dtype=torch.float64),
        torch.tensor(p, dtype=torch.float64),
        tau1,
        torch.tensor(s, dtype=torch.float64),
        tau2,
    )
    # the loss takes float32 logits: agreement to float32 precision
    assert float(got) == pytest.approx(_hince_by_hand(a, p, s, tau1, tau2), rel=1e-5, abs=1e-6)


def test_hince_without_san_is_info_nce() -> None:
    g = torch.Generator().manual_seed(0)
    a, p = torch.randn(8, 16, generator=g), torch.randn(8, 16, generator=g)
    no_san = hierarchical_info_nce(a, p, 0.05)
    assert torch.equal(no_san, info_nce(a, p, 0.05))
    # the SAN term only adds to the denominator: the loss grows with it, less at a higher tau2
    s = a + 0.1 * torch.randn(8, 16, generator=g)  # SAN samples close to their anchors
    at_008 = hierarchical_info_nce(a, p, 0.05, s, 0.08)
    at_05 = hierarchical_info_nce(a, p, 0.05, s, 0.5)
    assert no_san < at_05 < at_008


def test_hince_needs_tau2_with_san() -> None:
    a = torch.randn(2, 4)
    with pytest.raises(ValueError, match="tau2"):
        hierarchical_info_nce(a, a, 0.05, a)


def test_simcse_san_views_and_loss() -> None:
    method = build_method("simcse_san", {"tau2": 0.07, "p2": 0.15}, "bert-base-uncased")
    views = {v.name: v for v in method.views(0)}
    assert views["anchor"].dropout is None and views["positive"].dropout is None
    assert views["san"].column == "san" and views["san"].dropout == 0.15
    assert method.columns == ("san",)
    g = torch.Generator().manual_seed(1)
    emb = {k: torch.randn(4, 8, generator=g) for k in ("anchor", "positive", "san")}
    out = method.loss(emb, StepContext(0, torch.nn.Identity(), "bert-base-uncased"))
    expected = hierarchical_info_nce(emb["anchor"], emb["positive"], 0.05, emb["san"], 0.07)
    assert torch.equal(out.loss, expected)


def test_sncse_san_is_hince_plus_lambda_bml() -> None:
    params = {"tau2": 0.1, "p2": 0.2, "bml_weight": 1e-3, "alpha": 0.1, "beta": 0.3}
    method = build_method("sncse_san", params, "bert-base-uncased")
    views = {v.name: v for v in method.views(0)}
    assert set(views) == {"anchor", "positive", "negation", "san"}
    assert views["san"].dropout == 0.2 and views["san"].pooler != views["anchor"].pooler
    assert all(views[k].dropout is None for k in ("anchor", "positive", "negation"))
    g = torch.Generator().manual_seed(2)
    emb = {k: torch.randn(4, 8, generator=g) for k in views}
    out = method.loss(emb, StepContext(0, torch.nn.Identity(), "bert-base-uncased"))
    a, pos, neg = emb["anchor"], emb["positive"], emb["negation"]
    delta = F.cosine_similarity(a, neg) - F.cosine_similarity(a, pos)
    bml = (torch.relu(delta + 0.1) + torch.relu(-delta - 0.3)).mean()
    hince = hierarchical_info_nce(a, pos, 0.05, emb["san"], 0.1)
    assert float(out.loss) == pytest.approx(float(hince + 1e-3 * bml), rel=1e-6)


@pytest.mark.parametrize("bad", [{"tau2": 0.0}, {"p2": 1.0}, {"p2": -0.1}])
def test_bad_params_rejected(bad: dict) -> None:
    with pytest.raises(ValueError):
        build_method("simcse_san", bad, "bert-base-uncased")


# -- dropout inside each forward pass -------------------------------------------------------------

SETTINGS = dict(
    epochs=1,
    batch_size=4,
    learning_rate=1e-4,
    max_seq_len=32,
    dropout=0.15,
    scheduler="linear",
    warmup_ratio=0.0,
    weight_decay=0.0,
    max_grad_norm=1.0,
    max_steps=1,
    eval_steps=1,
    checkpoint_steps=1,
    precision="fp32",
)


class DropoutRecorder:
    """Per backbone forward pass: the rows encoded and every dropout rate actually applied
    (nn.Dropout modules as called, and the dropout_p handed to SDPA attention)."""

    def __init__(self, backbone: torch.nn.Module, monkeypatch: pytest.MonkeyPatch) -> None:
        self.passes: list[dict] = []
        backbone.register_forward_pre_hook(self._start, with_kwargs=True)
        for module in backbone.modules():
            if isinstance(module, torch.nn.Dropout):
                module.register_forward_pre_hook(self._dropout)
        real_sdpa = F.scaled_dot_product_attention

        def sdpa(*args, **kwargs):
            self.passes[-1]["sdpa"].append(kwargs.get("dropout_p", 0.0))
            return real_sdpa(*args, **kwargs)

        monkeypatch.setattr(F, "scaled_dot_product_attention", sdpa)

    def _start(self, module, args, kwargs) -> None:
        rows = kwargs["input_ids"].shape[0]
        self.passes.append({"rows": rows, "dropout": [], "sdpa": []})

    def _dropout(self, module, args) -> None:
        self.passes[-1]["dropout"].append(module.p)


def _trainer(method_name: str, params: dict, splade: Path, columns: dict) -> Trainer:
    model = SentenceEncoder.from_pretrained(str(splade), SETTINGS["dropout"])
    method = build_method(method_name, params, "splade-tiny")
    return Trainer(
        method,
        model,
        TrainData(columns),
        TrainSettings(**SETTINGS),
        seed=1,
        dev_scorer=lambda encode: 0.0,
        checkpoint_dir=Path("unused"),
        device=torch.device("cpu"),
        progress=False,
    )


SENTENCES = [
    "A man is playing a guitar.",
    "The cat sleeps on the warm sofa.",
    "Stocks fell sharply on Monday.",
    "She wrote three books about birds.",
]
SAN = [
    "A woman is eating a sandwich.",
    "The dog runs on the cold floor.",
    "Prices rose slowly on Friday.",
    "He read two papers about fish.",
]


@pytest.mark.mirror
def test_san_view_gets_p2_and_only_it(splade_tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trainer = _trainer("simcse_san", {"p2": 0.2}, splade_tiny, {"sentence": SENTENCES, "san": SAN})
    backbone = trainer.model.backbone
    backbone.train()
    rec = DropoutRecorder(backbone, monkeypatch)
    idx = torch.arange(4).numpy()
    emb = trainer.encode_views(trainer.method.views(0), idx)
    assert set(emb) == {"anchor", "positive", "san"}
    assert [p["rows"] for p in rec.passes] == [8, 4]  # anchor+positive together, then SAN
    first, second = rec.passes
    assert first["dropout"] and set(first["dropout"]) == {0.15}
    assert second["dropout"] and set(second["dropout"]) == {0.2}
    if backbone.config._attn_implementation == "sdpa":
        assert set(first["sdpa"]) == {0.15} and set(second["sdpa"]) == {0.2}
    # every rate is back to the model's afterwards
    rates = {m.p for m in backbone.modules() if isinstance(m, torch.nn.Dropout)}
    assert rates == {0.15}
    probs = {m.dropout_prob for m in backbone.modules() if hasattr(m, "dropout_prob")}
    assert probs <= {0.15}


@pytest.mark.mirror
def test_sncse_san_passes(splade_tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    columns = {"sentence": SENTENCES, "san": SAN, "negation_sncse": [f"Not {s}" for s in SENTENCES]}
    trainer = _trainer("sncse_san", {"p2": 0.3}, splade_tiny, columns)
    backbone = trainer.model.backbone
    backbone.train()
    rec = DropoutRecorder(backbone, monkeypatch)
    trainer.encode_views(trainer.method.views(0), torch.arange(4).numpy())
    # anchor prompt; positive prompt (positive + negation); SAN prompt at p2
    assert [p["rows"] for p in rec.passes] == [4, 8, 4]
    assert [set(p["dropout"]) for p in rec.passes] == [{0.15}, {0.15}, {0.3}]
