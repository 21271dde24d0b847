"""GCSE stage 2 as a method: ``negcse train`` with the triplet columns and ``--guide``, on the
mirror's splade-tiny. The loss logged at step 0 is checked against eq. 12-13 computed here by
hand (numpy loops) from embeddings computed independently with transformers."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from negcse.cli import main
from negcse.encoders.poolers import get_pooler
from negcse.methods.base import Guide
from negcse.methods.gcse import GCSE, NEGATIVE_COLUMN, POSITIVE_COLUMN, RELEASED_TRAIN
from negcse.methods.registry import build_method
from negcse.runtime.seed import seed_everything
from negcse.training.model import SentenceEncoder

TAU, SIGMA = 0.05, 0.01


def test_params_and_declarations() -> None:
    method = build_method("gcse", {}, "bert-base-uncased")
    assert (method.params.temperature, method.params.sigma, method.params.form) == (
        0.05,
        0.0085,
        "released",
    )
    assert method.columns == (POSITIVE_COLUMN, NEGATIVE_COLUMN)
    assert method.guides() == (Guide("evaluation", ("sentence", NEGATIVE_COLUMN), "cls"),)
    assert RELEASED_TRAIN == {
        "max_seq_len": 64,
        "batch_size": 128,
        "learning_rate": 1.0e-5,
        "epochs": 2,
        "eval_steps": 125,
    }
    with pytest.raises(ValueError, match="form: must be one of paper, released"):
        build_method("gcse", {"form": "cosine"}, "b")
    with pytest.raises(ValueError, match="sigma: must be > 0, got 0"):
        build_method("gcse", {"sigma": 0}, "b")
    with pytest.raises(KeyError, match="unknown parameter"):
        build_method("gcse", {"alpha": 0.17}, "b")


def _hand_loss(h: np.ndarray, hp: np.ndarray, hn: np.ndarray, s_frozen_cos: np.ndarray) -> float:
    """Eq. 12-13 written out: logits cos/tau; the anchor's own hard negative replaced by G."""

    def cos(u: np.ndarray, v: np.ndarray) -> float:
        return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))

    n, total = len(h), 0.0
    for i in range(n):
        logits = [cos(h[i], hp[j]) / TAU for j in range(n)]
        for j in range(n):
            b = cos(h[i], hn[j]) / TAU
            if j == i:
                s, s_prime = b, s_frozen_cos[i] / TAU
                if s <= s_prime:
                    b = s * (1 - math.exp(-((s - s_prime) ** 2) * TAU**2 / (2 * SIGMA**2)))
            logits.append(b)
        top = max(logits)
        log_z = top + math.log(sum(math.exp(x - top) for x in logits))
        total += log_z - logits[i]
    return total / n


def _row_cos(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return (u * v).sum(1) / np.linalg.norm(u, axis=1) / np.linalg.norm(v, axis=1)


def _cls(model_dir: Path, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """([CLS] hidden state, BERT pooler output = tanh(dense([CLS]))) in fp32, eval mode."""
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir).eval()
    with torch.no_grad():
        out = model(**tok(texts, padding=True, truncation=True, max_length=64, return_tensors="pt"))
    return out.last_hidden_state[:, 0].double().numpy(), out.pooler_output.double().numpy()


@pytest.mark.mirror
@pytest.mark.slow
def test_train_command_step0_loss_is_eq_12_13(
    mirror: Path, splade_tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = (mirror / "data/unlabeled/wiki1m/wiki1m_random10k.txt").read_text().splitlines()
    anchors = [s for s in lines if 20 < len(s) < 120][:8]
    positives = [" ".join(s.split()[:-1]) for s in anchors]  # the sentence minus its last word
    negatives = [f"it is not true that {s}" for s in anchors]  # hard: close to the anchor
    corpus, pos_file, neg_file = tmp_path / "c.txt", tmp_path / "p.txt", tmp_path / "n.txt"
    for path, rows in ((corpus, anchors), (pos_file, positives), (neg_file, negatives)):
        path.write_text("\n".join(rows) + "\n")
    # the guide: a copy of the starting model (the same seed draws the same MLP head) saved as a
    # suite model, its head (stored as the BERT pooler) nudged so that s and s' differ by
    # about 1e-3 in cosine, where eq. 13's decay acts
    seed_everything(5)
    stage1 = SentenceEncoder.from_pretrained(str(splade_tiny), 0.1)
    with torch.no_grad():
        noise = torch.randn(
            stage1.mlp.dense.weight.shape, generator=torch.Generator().manual_seed(0)
        )
        stage1.mlp.dense.weight.add_(0.005 * noise)
    stage1.save(tmp_path / "stage1", get_pooler("cls"), {})
    seen: dict[str, object] = {}
    original = GCSE.loss

    def record(self: GCSE, emb, ctx):
        out = original(self, emb, ctx)
        if ctx.step == 0:
            seen["loss"] = float(out.loss.detach())
            seen["rows"] = ctx.rows.copy()
            head = ctx.model.mlp.dense.state_dict()
            seen["dense"] = {k: v.detach().clone() for k, v in head.items()}
            seen["guide_grad"] = any(t.requires_grad for t in ctx.guides["evaluation"].values())
        return out

    monkeypatch.setattr(GCSE, "loss", record)
    # start from the backbone, not from the guide (init_guide): eq. 13's branches need s != s'
    # at step 0; test_stage2_starts_as_a_copy_of_the_stage1_model covers the copy
    monkeypatch.setattr(GCSE, "init_guide", None)
    train = {**RELEASED_TRAIN, "batch_size": 8, "epochs": 1, "max_steps": 2, "eval_steps": 2}
    run = {
        "method": "gcse",
        "implementation": "gcse",
        "backbone": "splade-tiny",
        "params": {},
        "generators": {},
        "train": {
            **train,
            "dropout": 0.0,  # deterministic views, so the step-0 embeddings can be recomputed
            "scheduler": "linear",
            "warmup_ratio": 0.0,
            "weight_decay": 0.0,
            "max_grad_norm": None,
            "checkpoint_steps": 125,
            "precision": "fp32",
        },
    }
    args = ["train", "--run", json.dumps(run), "--seed", "5", "--corpus", str(corpus)]
    args += ["--column", f"{POSITIVE_COLUMN}={pos_file}"]
    args += ["--column", f"{NEGATIVE_COLUMN}={neg_file}"]
    args += ["--guide", f"evaluation={tmp_path / 'stage1'}", "--out", str(tmp_path / "out")]
    args += ["--checkpoint-dir", str(tmp_path / "ckpt"), "--no-progress", "--threads", "1"]
    assert main(args) == 0
    assert seen["guide_grad"] is False
    assert sorted(seen["rows"].tolist()) == list(range(8))  # one batch: the whole corpus

    cls_a, _ = _cls(splade_tiny, anchors)
    cls_p, _ = _cls(splade_tiny, positives)
    cls_n, _ = _cls(splade_tiny, negatives)
    w = seen["dense"]["weight"].double().numpy()
    b = seen["dense"]["bias"].double().numpy()
    h, hp, hn = (np.tanh(x @ w.T + b) for x in (cls_a, cls_p, cls_n))
    _, ga = _cls(tmp_path / "stage1", anchors)
    _, gn = _cls(tmp_path / "stage1", negatives)
    s_frozen = _row_cos(ga, gn)
    s = _row_cos(h, hn)
    assert np.all(np.abs(s - s_frozen) > 2e-4)  # no row at eq. 13's switch at s = s'
    assert (s < s_frozen).sum() >= 2 and (s > s_frozen).sum() >= 1  # both branches
    assert seen["loss"] == pytest.approx(_hand_loss(h, hp, hn, s_frozen), rel=1e-4)
    # the decay changed the loss: without it (s' far below s on every row) the value differs
    undecayed = _hand_loss(h, hp, hn, np.full(len(s), -10.0))
    assert abs(undecayed - seen["loss"]) > 1e-2

    meta = json.loads((tmp_path / "out" / "negcse.json").read_text())
    assert meta["guides"] == {"evaluation": str((tmp_path / "stage1").resolve())}
    assert not (tmp_path / "ckpt").exists()


@pytest.mark.mirror
@pytest.mark.slow
def test_stage2_starts_as_a_copy_of_the_stage1_model(
    mirror: Path, splade_tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trained model starts from the `evaluation` guide's folder, encoder and saved head
    (the paper's "one copy instance of the evaluation model"), not from the backbone: the
    stage-1 model here differs from splade-tiny in its word embeddings and head."""
    lines = (mirror / "data/unlabeled/wiki1m/wiki1m_random10k.txt").read_text().splitlines()
    anchors = [s for s in lines if 20 < len(s) < 120][:8]
    positives = [" ".join(s.split()[:-1]) for s in anchors]
    negatives = [f"it is not true that {s}" for s in anchors]
    files = {}
    for name, rows in (("c", anchors), ("p", positives), ("n", negatives)):
        files[name] = tmp_path / f"{name}.txt"
        files[name].write_text("\n".join(rows) + "\n")
    seed_everything(11)  # a head the student's own seed (5) would not draw
    stage1 = SentenceEncoder.from_pretrained(str(splade_tiny), 0.1)
    words = stage1.backbone.get_input_embeddings().weight
    with torch.no_grad():
        words.add_(0.01 * torch.randn(words.shape, generator=torch.Generator().manual_seed(1)))
    stage1_words = words.detach().clone()
    stage1.save(tmp_path / "stage1", get_pooler("cls"), {})
    head = {k: v.detach().clone() for k, v in stage1.mlp.dense.state_dict().items()}
    seen: dict[str, object] = {}
    original = GCSE.loss

    def record(self: GCSE, emb, ctx):
        out = original(self, emb, ctx)
        if ctx.step == 0:
            seen["loss"] = float(out.loss.detach())
            seen["dense"] = {
                k: v.detach().clone() for k, v in ctx.model.mlp.dense.state_dict().items()
            }
            seen["words"] = ctx.model.backbone.get_input_embeddings().weight.detach().clone()
        return out

    monkeypatch.setattr(GCSE, "loss", record)
    train = {**RELEASED_TRAIN, "batch_size": 8, "epochs": 1, "max_steps": 1, "eval_steps": 1}
    train.update(dropout=0.0, scheduler="linear", warmup_ratio=0.0, weight_decay=0.0)
    train.update(max_grad_norm=None, checkpoint_steps=125, precision="fp32")
    run = {"method": "gcse", "implementation": "gcse", "backbone": "splade-tiny"}
    run.update(params={}, generators={}, train=train)
    args = ["train", "--run", json.dumps(run), "--seed", "5", "--corpus", str(files["c"])]
    args += ["--column", f"{POSITIVE_COLUMN}={files['p']}"]
    args += ["--column", f"{NEGATIVE_COLUMN}={files['n']}"]
    args += ["--guide", f"evaluation={tmp_path / 'stage1'}", "--out", str(tmp_path / "out")]
    args += ["--checkpoint-dir", str(tmp_path / "ckpt"), "--no-progress", "--threads", "1"]
    assert main(args) == 0
    for key, value in head.items():
        torch.testing.assert_close(seen["dense"][key], value)  # the guide's head, not a new one
    torch.testing.assert_close(seen["words"], stage1_words)
    backbone_words = AutoModel.from_pretrained(splade_tiny).get_input_embeddings().weight
    assert not torch.allclose(seen["words"], backbone_words)
    assert np.isfinite(seen["loss"])
