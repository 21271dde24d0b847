"""A guide read from its cache gives the loss and the gradient of its per-step forward.

The cache (``negcse.training.guide_cache``) is written by one pass over the corpus in batches of
another size than training's (other padding widths); a step on a batch then reads its rows. Both
paths run in fp32 on CPU here (no autocast), so the comparison is at 1e-5; a cache written under
fp16 autocast is compared by the same code on a GPU run only (it stores the fp16 encodings in
float32, exactly, but the per-step path would hand the loss fp16 tensors).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from negcse.encoders.poolers import get_pooler
from negcse.methods.base import StepContext
from negcse.methods.registry import build_method
from negcse.methods.san import SAN_COLUMN
from negcse.training.guide_cache import CachedGuide, guide_files, write_guide_cache
from negcse.training.guides import GuideError
from negcse.training.model import SentenceEncoder
from negcse.training.settings import TrainSettings
from negcse.training.trainer import TrainData, Trainer

pytestmark = [pytest.mark.mirror, pytest.mark.slow]

SETTINGS = dict(
    epochs=1,
    batch_size=8,
    learning_rate=1e-4,
    max_seq_len=32,
    dropout=0.1,
    scheduler="linear",
    warmup_ratio=0.0,
    weight_decay=0.0,
    max_grad_norm=1.0,
    max_steps=2,
    eval_steps=100,
    checkpoint_steps=100,
    precision="fp32",
)

#: (implementation, params): ListMLE with the released epsilon and exact, ListNet, RLRD's agent
#: with and without SAN, GCSE's frozen stage-1 model
CASES = [
    ("rankcse", {}),
    ("rankcse", {"listmle_epsilon": 0.0}),
    ("rankcse_san", {"distillation": "listnet"}),
    ("rlrd", {}),
    ("rlrd", {"listmle_epsilon": 0.0, "teacher_inputs": "sentence"}),
    ("rlrd_san", {}),
    ("gcse", {}),
]


@pytest.fixture(scope="module")
def sentences(mirror: Path) -> list[str]:
    path = mirror / "data/unlabeled/wiki1m/wiki1m_random10k.txt"
    return path.read_text(encoding="utf-8").splitlines()[:40]


@pytest.fixture(scope="module")
def guide_model(splade_tiny: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """splade-tiny saved by the suite with its MLP head (GCSE's ``cls`` guide pools with it)."""
    out = tmp_path_factory.mktemp("guide")
    torch.manual_seed(0)
    SentenceEncoder.from_pretrained(str(splade_tiny), 0.1).save(out, get_pooler("cls"), {})
    return out


def _columns(method, sentences: list[str]) -> dict:  # type: ignore[no-untyped-def]
    columns: dict = {"sentence": sentences}
    for k, column in enumerate(method.columns):  # stand-in negatives / positives: shifted lines
        columns[column] = sentences[k + 1 :] + sentences[: k + 1]
    return columns


def _step(trainer: Trainer, idx: np.ndarray) -> tuple[float, list[torch.Tensor], dict]:
    """One step's loss and gradients on rows ``idx`` (dropout and the agent's draws seeded)."""
    method, model = trainer.method, trainer.model
    torch.manual_seed(3)
    method.attach(model)
    model.train()
    model.zero_grad(set_to_none=True)
    torch.manual_seed(4)
    emb = trainer.encode_views(method.views(0), idx)
    guides = trainer.encode_guides(idx)
    ctx = StepContext(0, model, method.backbone, idx, trainer.batch_columns(idx), guides)
    out = method.loss(emb, ctx)
    out.loss.backward()
    grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
    return out.loss.item(), grads, guides


@pytest.mark.parametrize(("implementation", "params"), CASES)
def test_cached_guide_gives_the_per_step_loss_and_gradient(
    implementation: str,
    params: dict,
    splade_tiny: Path,
    guide_model: Path,
    sentences: list[str],
    tmp_path: Path,
) -> None:
    method = build_method(implementation, params, "splade-tiny")
    columns = _columns(method, sentences)
    settings = TrainSettings(**SETTINGS)
    cpu = torch.device("cpu")
    paths = {g.name: str(guide_model) for g in method.guides()}
    caches = {}
    for g in method.guides():  # one folder per guide (its model and the corpus), batch 7
        caches[g.name] = str(tmp_path / g.name)
        write_guide_cache([g], str(guide_model), columns, caches[g.name], 32, cpu, None, 7)
    torch.manual_seed(1)
    model = SentenceEncoder.from_pretrained(str(splade_tiny), 0.1)

    def trainer(caches: dict) -> Trainer:  # type: ignore[type-arg]
        m = build_method(implementation, params, "splade-tiny")
        return Trainer(
            m, model, TrainData(columns), settings, 1, lambda e: 0.0, tmp_path / "ckpt", cpu,
            progress=False, guides=paths, guide_caches=caches,
        )  # fmt: skip

    live, cached = trainer({}), trainer(caches)
    assert all(type(g).__name__ == "CachedGuide" for g in cached.guides.values())
    idx = np.array([5, 0, 33, 12, 7, 21, 39, 2])
    loss_live, grads_live, guides_live = _step(live, idx)
    loss_cached, grads_cached, guides_cached = _step(cached, idx)
    for name, texts in guides_live.items():
        for key, emb in texts.items():
            torch.testing.assert_close(guides_cached[name][key], emb, rtol=0, atol=1e-5)
    assert loss_cached == pytest.approx(loss_live, rel=0, abs=1e-5)
    assert len(grads_live) == len(grads_cached) > 0
    for a, b in zip(grads_cached, grads_live, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-5)


def test_a_cache_of_other_settings_or_texts_is_refused(
    guide_model: Path, sentences: list[str], tmp_path: Path
) -> None:
    san = build_method("rankcse_san", {}, "splade-tiny")
    plain = build_method("rankcse", {}, "splade-tiny")
    cpu = torch.device("cpu")
    folder = tmp_path / "cache"
    meta = write_guide_cache(
        plain.guides()[:1], str(guide_model), _columns(plain, sentences), folder, 32, cpu, None
    )
    assert set(meta["texts"]) == set(guide_files(plain.guides()[0]).values())
    assert meta["rows"] == len(sentences) and meta["autocast"] == "none"
    with pytest.raises(
        GuideError, match=f"no cls_before_pooler.{SAN_COLUMN}.npy"
    ):  # rankcse_san's SAN text is absent
        CachedGuide.open(san.guides()[0], folder, len(sentences), 32, "none")
    with pytest.raises(GuideError, match="'max_seq_len' is 32, the run needs 64"):
        CachedGuide.open(plain.guides()[0], folder, len(sentences), 64, "none")
    with pytest.raises(GuideError, match="'autocast' is 'none', the run needs 'float16'"):
        CachedGuide.open(plain.guides()[0], folder, len(sentences), 32, "float16")


def test_encode_guide_command_writes_the_union_of_the_students_texts(
    guide_model: Path, sentences: list[str], tmp_path: Path
) -> None:
    import json

    from negcse.cli import main

    corpus, san = tmp_path / "corpus.txt", tmp_path / "san.txt"
    corpus.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    san.write_text("\n".join(sentences[1:] + sentences[:1]) + "\n", encoding="utf-8")
    train = {**SETTINGS, "max_seq_len": 24}
    runs = [
        json.dumps(
            {"method": m, "implementation": m, "backbone": "x", "params": {}, "train": train}
        )
        for m in ("rankcse", "rankcse_san")
    ]
    out = tmp_path / "cache"
    base = ["encode-guide", "--model", str(guide_model), "--corpus", str(corpus)]
    students = ["--student", "teacher1", runs[0], "--student", "teacher2", runs[1]]
    assert main([*base, *students, "--out", str(out)]) == 2  # no SAN file
    assert not out.exists()
    assert main([*base, "--student", "teacher3", runs[0], "--out", str(out)]) == 2
    assert main([*base, *students, "--column", f"{SAN_COLUMN}={san}", "--out", str(out)]) == 0
    meta = json.loads((out / "guide.json").read_text())
    assert sorted(meta["texts"]) == sorted(
        ["cls_before_pooler.sentence.npy", f"cls_before_pooler.{SAN_COLUMN}.npy"]
    )
    assert meta["max_seq_len"] == 24 and meta["rows"] == len(sentences)
    assert np.load(out / "cls_before_pooler.sentence.npy").shape[0] == len(sentences)
