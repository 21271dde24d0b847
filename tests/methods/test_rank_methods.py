"""rankcse, rankcse_san, rlrd and rlrd_san train on CPU with frozen teachers (splade-tiny from the
mirror; each teacher a copy of the starting model): the teachers stay frozen, their similarity
lists are those of an independent encoding, and every term of eq. 6 / eq. 7 is in the loss."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from negcse.losses import cosine_matrix
from negcse.methods.base import LossOutput, StepContext
from negcse.methods.registry import build_method
from negcse.poolers import get_pooler
from negcse.training.model import SentenceEncoder
from negcse.training.trainer import TrainData, Trainer
from negcse.workflow.config import TrainSettings, load_config

REPO = Path(__file__).resolve().parents[2]
#: params.yaml's training defaults, cut to 3 steps of 4 sentences in fp32
SETTINGS = TrainSettings.from_dict(
    {
        **load_config(REPO / "params.yaml")["train"],
        **{"batch_size": 4, "max_steps": 3, "eval_steps": 3, "checkpoint_steps": 3},
        **{"learning_rate": 1e-4, "precision": "fp32"},
    }
)

PARTS = {
    "rankcse": {"infonce", "consistency", "rank"},
    "rankcse_san": {"hince", "consistency", "rank", "rank_san"},
    "rlrd": {"infonce", "bml", "rank", "teacher1_weight"},  # the agent's weight of teacher 1
    "rlrd_san": {"hince", "bml", "rank", "rank_san", "teacher1_weight"},
}


@pytest.fixture(scope="module")
def columns(mirror: Path) -> dict[str, list[str]]:
    path = mirror / "data/unlabeled/wiki1m/wiki1m_random10k.txt"
    sentences = path.read_text(encoding="utf-8").splitlines()[:12]
    return {
        "sentence": sentences,
        "san": sentences[1:] + sentences[:1],  # stand-ins: the plumbing, not SAN quality
        "negation_sncse": [f"Not {s}" for s in sentences],
    }


def _trainer(name: str, splade: Path, columns: dict, tmp: Path, guides: dict) -> Trainer:
    torch.manual_seed(0)
    return Trainer(
        build_method(name, {}, "splade-tiny"),
        SentenceEncoder.from_pretrained(str(splade), SETTINGS.dropout),
        TrainData(columns),
        SETTINGS,
        seed=0,
        dev_scorer=lambda encode: 0.0,
        checkpoint_dir=tmp,
        device=torch.device("cpu"),
        progress=False,
        guides=guides,
    )


@pytest.mark.mirror
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PARTS))
def test_trains_with_frozen_teachers(
    name: str, splade_tiny: Path, columns: dict, tmp_path: Path
) -> None:
    guides = {"teacher1": str(splade_tiny), "teacher2": str(splade_tiny)}
    trainer = _trainer(name, splade_tiny, columns, tmp_path, guides)
    seen: list[tuple[LossOutput, StepContext]] = []
    real_loss = trainer.method.loss

    def spy(emb: dict, ctx: StepContext) -> LossOutput:  # records, then runs the real loss
        out = real_loss(emb, ctx)
        seen.append((out, ctx))
        return out

    trainer.method.loss = spy  # type: ignore[method-assign]
    teacher_before = {
        k: v.clone() for k, v in trainer.guides["teacher1"].model.state_dict().items()
    }
    student_before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    state = trainer.train()

    assert state.step == 3 and len(seen) == 3
    for out, ctx in seen:
        assert math.isfinite(float(out.loss.detach()))
        assert set(out.logs) == PARTS[name]
        assert set(ctx.guides) == {"teacher1", "teacher2"}
        assert all(not t.requires_grad for g in ctx.guides.values() for t in g.values())
    teacher = trainer.guides["teacher1"].model
    assert all(torch.equal(v, teacher_before[k]) for k, v in teacher.state_dict().items())
    assert not any(p.requires_grad for p in teacher.parameters())
    changed = [
        k for k, v in trainer.model.state_dict().items() if not torch.equal(v, student_before[k])
    ]
    assert changed  # the student trained

    # teacher2 is the starting model in eval mode: its lists are an independent encoding's
    out, ctx = seen[0]
    pooler_name = trainer.method.guides()[1].pooler
    fresh = SentenceEncoder.from_pretrained(str(splade_tiny), 0.0).eval()
    pooler = get_pooler(pooler_name, tokenizer=fresh.tokenizer)
    assert ctx.rows is not None
    texts = [columns["sentence"][i] for i in ctx.rows]
    with torch.no_grad():
        expected = fresh.embed(texts, pooler, 32, False, torch.device("cpu"))
    got = ctx.guides["teacher2"]["sentence"]
    assert torch.allclose(cosine_matrix(got, got), cosine_matrix(expected, expected), atol=1e-5)


@pytest.mark.mirror
def test_missing_teacher_is_named(splade_tiny: Path, columns: dict, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="teacher2"):
        _trainer("rankcse", splade_tiny, columns, tmp_path, {"teacher1": str(splade_tiny)})


@pytest.mark.mirror
def test_single_teacher_when_its_weight_is_one(
    splade_tiny: Path, columns: dict, tmp_path: Path
) -> None:
    method = build_method("rankcse_san", {"teacher_weight": 1.0}, "splade-tiny")
    assert [(g.name, g.columns) for g in method.guides()] == [("teacher1", ("sentence", "san"))]


def test_params_follow_the_released_scripts_and_table6() -> None:
    rankcse_san = build_method("rankcse_san", {}, "bert-base-uncased").params
    rlrd_san = build_method("rlrd_san", {}, "bert-base-uncased").params
    # Table 6 (tau2, p2, weight of ListMLE+SAN) and the 4184 / 20101 scripts
    assert (rankcse_san.tau2, rankcse_san.p2, rankcse_san.san_rank_weight) == (0.05, 0.2, 0.4)
    assert (rlrd_san.tau2, rlrd_san.p2, rlrd_san.san_rank_weight) == (0.1, 0.2, 0.2)
    assert (rankcse_san.consistency_weight, rankcse_san.distillation_weight) == (1.0, 1.0)
    assert (rlrd_san.consistency_weight, rlrd_san.distillation_weight) == (0.0, 1e-3)
    assert (rlrd_san.bml_weight, rlrd_san.teacher_weight) == (1e-3, 0.5)
    assert rankcse_san.teacher_weight == 0.33


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"distillation": "listnte"}, "listmle or listnet"),
        ({"teacher_weight": 0.0}, "teacher_weight"),
        ({"tau2": 0.0}, "tau2"),
        ({"p2": 1.5}, "p2"),
        ({"lambda": 0.2}, "unknown parameter"),
    ],
)
def test_bad_params_are_named(params: dict, message: str) -> None:
    with pytest.raises((ValueError, KeyError), match=message):
        build_method("rankcse_san", params, "bert-base-uncased")
