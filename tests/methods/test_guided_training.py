"""The trainer's contract with a method that declares a numeric column, a text column and a
frozen guide, for a toy method registered here (no source edit): the loss gets the batch rows
of each column and the guide's embeddings; the guide stays frozen and out of the checkpoint; a
resumed run ends where an uninterrupted one does. Mirror's splade-tiny on CPU."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
import torch
from torch import Tensor
from transformers import AutoModel, AutoTokenizer

from negcse.encoders.poolers import get_pooler
from negcse.losses import cosine_matrix, info_nce
from negcse.methods.base import Guide, LossOutput, Method, MethodParams, StepContext
from negcse.methods.registry import METHODS, build_method, register
from negcse.training.guides import guide_paths
from negcse.training.model import SentenceEncoder
from negcse.training.settings import TrainSettings
from negcse.training.trainer import TrainData, Trainer
from negcse.workflow.config import project_config

pytestmark = pytest.mark.mirror
REPO = Path(__file__).resolve().parents[2]

# the shared training defaults of params.yaml, shortened to 4 steps of 8 rows
SETTINGS = {
    **project_config(REPO, check=False)["train"],
    **dict(batch_size=8, max_steps=4, eval_steps=2, checkpoint_steps=2, precision="fp32"),
}


@dataclass(frozen=True)
class ToyParams(MethodParams):
    distill: float = 1.0


class ToyGuided(Method[ToyParams]):
    """InfoNCE weighted by a numeric column, plus matching the guide's similarity matrix."""

    name = "toy_guided"
    Params = ToyParams
    columns = ("weight", "tag")
    seen: ClassVar[list[StepContext]] = []

    def guides(self) -> tuple[Guide, ...]:
        return (Guide("teacher", ("sentence",), "cls_before_pooler", default="splade-tiny"),)

    def loss(self, emb: dict[str, Tensor], ctx: StepContext) -> LossOutput:
        ToyGuided.seen.append(ctx)
        weights = ctx.columns["weight"]
        assert isinstance(weights, Tensor)
        nce = info_nce(emb["anchor"], emb["positive"], self.params.temperature, weights=weights)
        teacher = ctx.guides["teacher"]["sentence"]
        gap = cosine_matrix(emb["anchor"], emb["anchor"]) - cosine_matrix(teacher, teacher)
        return LossOutput(nce + self.params.distill * gap.pow(2).mean(), {"infonce": nce})


@pytest.fixture
def toy() -> Iterator[type[ToyGuided]]:
    register(ToyGuided)
    ToyGuided.seen = []
    yield ToyGuided
    METHODS.pop(ToyGuided.name)


@pytest.fixture(scope="module")
def data(mirror: Path) -> TrainData:
    lines = (mirror / "data/unlabeled/wiki1m/wiki1m_random10k.txt").read_text().splitlines()
    sentences = lines[:32]
    weights = np.linspace(0.5, 2.0, 32).astype(np.float32)
    return TrainData(
        {"sentence": sentences, "weight": weights, "tag": [f"t{i}" for i in range(32)]}
    )


def _dev(encode) -> float:
    emb = encode(["a man is playing a guitar.", "a man plays the guitar.", "the cat sleeps."])
    e = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    return float(e[0] @ e[1] - e[0] @ e[2])


def _trainer(splade: Path, data: TrainData, ckpt: Path, mirror: Path) -> Trainer:
    torch.manual_seed(0)
    model = SentenceEncoder.from_pretrained(str(splade), 0.1)
    method = build_method("toy_guided", {}, "splade-tiny")
    paths = guide_paths(method.guides(), {}, str(mirror))  # the declared default, resolved
    settings = TrainSettings(**SETTINGS)
    return Trainer(
        method, model, data, settings, 7, _dev, ckpt, torch.device("cpu"), False, guides=paths
    )


@pytest.mark.slow
def test_columns_and_guide_reach_the_loss_and_resume(
    toy: type[ToyGuided], splade_tiny: Path, data: TrainData, mirror: Path, tmp_path: Path
) -> None:
    first = _trainer(splade_tiny, data, tmp_path / "a", mirror)
    guide = first.guides["teacher"]
    before = {k: v.clone() for k, v in guide.model.state_dict().items()}
    start = {k: v.clone() for k, v in first.model.backbone.state_dict().items()}
    state = first.train()

    assert [ctx.step for ctx in toy.seen] == [0, 1, 2, 3]
    tok = AutoTokenizer.from_pretrained(splade_tiny)
    reference = AutoModel.from_pretrained(splade_tiny).eval()  # the guide, loaded independently
    for ctx in toy.seen:
        rows = ctx.rows.tolist()
        weight = ctx.columns["weight"]
        assert isinstance(weight, Tensor) and weight.dtype == torch.float32
        assert weight.tolist() == pytest.approx(data.columns["weight"][rows].tolist())
        assert ctx.columns["tag"] == [f"t{i}" for i in rows]
        teacher = ctx.guides["teacher"]["sentence"]
        assert not teacher.requires_grad
        texts = [data.columns["sentence"][i] for i in rows]
        with torch.no_grad():
            out = reference(
                **tok(texts, padding=True, truncation=True, max_length=32, return_tensors="pt")
            )
        torch.testing.assert_close(teacher, out.last_hidden_state[:, 0], rtol=1e-4, atol=1e-5)

    # the guide is frozen and unchanged; the trained model moved
    assert not guide.model.training
    assert not any(p.requires_grad for p in guide.model.parameters())
    for key, value in guide.model.state_dict().items():
        assert torch.equal(value, before[key]), key
    assert any(not torch.equal(v, start[k]) for k, v in first.model.backbone.state_dict().items())
    # last.pt (step 2) holds the trained model only
    saved = torch.load(tmp_path / "a" / "last.pt", weights_only=True)
    assert saved["state"]["step"] == 2
    assert set(saved["model"]) == set(first.model.state_dict())

    # a run resumed from step 2 (guides loaded again) ends where the uninterrupted one did
    # (best.pt stays: a resumed state whose best weights are gone restarts from scratch)
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    toy.seen = []
    second = _trainer(splade_tiny, data, tmp_path / "b", mirror)
    resumed = second.train()
    assert [ctx.step for ctx in toy.seen] == [2, 3]
    assert resumed.curve[:-1] == state.curve[:-1]
    for p, q in zip(first.model.parameters(), second.model.parameters(), strict=True):
        assert torch.equal(p, q)


def test_guide_errors(toy: type[ToyGuided], splade_tiny: Path, data: TrainData) -> None:
    method = build_method("toy_guided", {}, "splade-tiny")
    with pytest.raises(ValueError, match="--guide judge: the method declares no such guide"):
        guide_paths(method.guides(), {"judge": str(splade_tiny)})
    with pytest.raises(ValueError, match=r"guide\(s\) teacher need a model"):
        Trainer(
            method,
            SentenceEncoder.from_pretrained(str(splade_tiny), 0.1),
            data,
            TrainSettings(**SETTINGS),
            7,
            _dev,
            Path("unused"),
            torch.device("cpu"),
            False,
        )
    plain = build_method("simcse", {}, "splade-tiny")
    with pytest.raises(ValueError, match="its guides: none"):
        guide_paths(plain.guides(), {"teacher": str(splade_tiny)})


def test_cls_guide_needs_a_saved_head(splade_tiny: Path) -> None:
    from negcse.training.guides import FrozenGuide

    with pytest.raises(ValueError, match="pooler 'cls' needs the dense \\+ tanh head"):
        FrozenGuide.load(Guide("g", pooler="cls"), str(splade_tiny), torch.device("cpu"))


def test_a_head_drawn_at_random_is_no_saved_head(splade_tiny: Path, tmp_path: Path) -> None:
    """splade-tiny's BertModel has a pooler layer, but its weights lack one: GCSE's stage 2
    would have started from a head transformers drew at random."""
    from negcse.errors import ModelFilesError

    model = SentenceEncoder.from_pretrained(str(splade_tiny), 0.1)
    assert model.backbone.pooler is not None and not model.has_saved_head()
    with pytest.raises(ModelFilesError, match="no saved MLP head"):
        model.load_saved_head()
    torch.manual_seed(0)
    model.save(tmp_path / "saved", get_pooler("cls"), {})
    again = SentenceEncoder.from_pretrained(str(tmp_path / "saved"), 0.1)
    again.load_saved_head()
    torch.testing.assert_close(again.mlp.dense.weight, model.mlp.dense.weight, rtol=0, atol=0)
