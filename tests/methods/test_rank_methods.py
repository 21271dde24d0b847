"""rankcse, rankcse_san, rlrd and rlrd_san train on CPU with frozen teachers (splade-tiny from the
mirror; each teacher a copy of the starting model): the teachers stay frozen, their similarity
lists are those of an independent encoding, and every term of eq. 6 / eq. 7 is in the loss."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from negcse.encoders.poolers import get_pooler
from negcse.losses import cosine_matrix
from negcse.methods.base import LossOutput, StepContext
from negcse.methods.registry import build_method
from negcse.training.model import SentenceEncoder
from negcse.training.settings import TrainSettings
from negcse.training.trainer import TrainData, Trainer
from negcse.workflow.config import project_config

REPO = Path(__file__).resolve().parents[2]
#: params.yaml's training defaults, cut to 3 steps of 4 sentences in fp32
SETTINGS = TrainSettings.from_dict(
    {
        **project_config(REPO)["train"],
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

    # teacher2 is the starting model in eval mode: its lists are an independent encoding's (of
    # the sentence, or for RLRD of the prompt-wrapped sentence: anchor rows, positive columns)
    out, ctx = seen[0]
    spec = trainer.method.guides()[1]
    fresh = SentenceEncoder.from_pretrained(str(splade_tiny), 0.0).eval()
    pooler = get_pooler(spec.pooler, tokenizer=fresh.tokenizer)
    assert ctx.rows is not None
    rows = ctx.rows
    encoded = {key: (column, prompt) for key, column, prompt in spec.encoded()}

    def independent(key: str) -> torch.Tensor:
        column, prompt = encoded[key]
        wrap = pooler if prompt is None else get_pooler(prompt, tokenizer=fresh.tokenizer)
        batch = wrap.tokenize(fresh.tokenizer, [columns[column][i] for i in rows], 32)
        with torch.no_grad():
            return fresh.embed_batch(batch, pooler, False)

    row_key, col_key = trainer.method.teacher_lists()[0]
    assert (row_key, col_key) == (("anchor", "positive") if "rlrd" in name else ("sentence",) * 2)
    got = cosine_matrix(ctx.guides["teacher2"][row_key], ctx.guides["teacher2"][col_key])
    expected = cosine_matrix(independent(row_key), independent(col_key))
    assert torch.allclose(got, expected, atol=1e-5)


@pytest.mark.mirror
def test_rlrd_teachers_encode_the_released_prompt_inputs(splade_tiny: Path) -> None:
    """The released RLRD trainer hands both teachers the student's input ids: the anchor prompt
    (row of the lists), the positive prompt (columns), the SAN prompt without " ." (SAN lists);
    the SNCSE-style teacher pools at [MASK], the SimCSE teacher at [CLS]. Expected ids: the
    released texts written out, through the tokenizer as one string."""
    from transformers import AutoModel, AutoTokenizer

    from negcse.training.guides import FrozenGuide

    columns = {"sentence": ["A man plays a guitar", "Dogs run ."], "san": ["two cats sit", "x"]}
    texts = {
        "anchor": 'This sentence : " A man plays a guitar . " means [MASK] .',
        "positive": 'This sentence of " A man plays a guitar . " means [MASK] .',
        "san": 'This sentence of " two cats sit " means [MASK] .',
    }
    tokenizer = AutoTokenizer.from_pretrained(str(splade_tiny))
    model = AutoModel.from_pretrained(str(splade_tiny)).eval()
    specs = build_method("rlrd_san", {}, "splade-tiny").guides()
    assert [(g.name, g.pooler) for g in specs] == [
        ("teacher1", "prompt_sncse_anchor"),
        ("teacher2", "cls_before_pooler"),
    ]
    for spec in specs:
        guide = FrozenGuide.load(spec, str(splade_tiny), torch.device("cpu"))
        emb = guide.encode(columns, np.array([0, 1]), 32, torch.device("cpu"))
        assert set(emb) == set(texts)
        for key, text in texts.items():
            ids = tokenizer(text)["input_ids"]
            rows = guide.rows[key]
            assert rows.tokens[rows.offsets[0] : rows.offsets[1]].tolist() == ids
            with torch.no_grad():
                hidden = model(torch.tensor([ids])).last_hidden_state[0]
            at = ids.index(tokenizer.mask_token_id) if spec.name == "teacher1" else 0
            assert torch.allclose(emb[key][0], hidden[at], atol=1e-5)
    bare = build_method("rlrd_san", {"teacher_inputs": "sentence"}, "splade-tiny").guides()
    assert all(g.inputs == () and g.columns == ("sentence", "san") for g in bare)
    with pytest.raises(ValueError, match="teacher_inputs: must be one of prompts, sentence"):
        build_method("rlrd", {"teacher_inputs": "prompt"}, "splade-tiny")


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
        ({"distillation": "listnte"}, "distillation: must be one of listmle, listnet"),
        ({"teacher_weight": 0.0}, "teacher_weight"),
        ({"tau2": 0.0}, "tau2"),
        ({"p2": 1.5}, "p2"),
        ({"lambda": 0.2}, "unknown parameter"),
    ],
)
def test_bad_params_are_named(params: dict, message: str) -> None:
    with pytest.raises((ValueError, KeyError), match=message):
        build_method("rankcse_san", params, "bert-base-uncased")
