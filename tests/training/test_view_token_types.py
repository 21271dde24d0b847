"""A view's token type reaches the encoder: GCSE's ``token_type: 1`` (the released trainer's
positives and negatives, bug 13) encodes them with token_type_ids of 1, the anchor with 0."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from negcse.methods.registry import build_method
from negcse.training.model import SentenceEncoder
from negcse.training.settings import TrainSettings
from negcse.training.trainer import TrainData, Trainer

pytestmark = pytest.mark.mirror

SETTINGS = TrainSettings(
    epochs=1,
    batch_size=2,
    learning_rate=1e-5,
    max_seq_len=32,
    dropout=0.1,
    scheduler="linear",
    warmup_ratio=0.0,
    weight_decay=0.0,
    max_grad_norm=None,
    max_steps=1,
    eval_steps=1,
    checkpoint_steps=1,
    precision="fp32",
)
COLUMNS = {
    "sentence": ["A man plays a guitar.", "The cat sleeps."],
    "gcse_positive": ["A man is playing guitar.", "A cat is asleep."],
    "gcse_negative": ["Nobody plays a guitar.", "The cat runs."],
}


@pytest.mark.parametrize("token_type", [0, 1])
def test_gcse_views_token_types(splade_tiny: Path, token_type: int, monkeypatch) -> None:
    model = SentenceEncoder.from_pretrained(str(splade_tiny), 0.1)
    params = {"token_type": token_type, "guide_pooler": "cls_before_pooler"}  # no saved head
    method = build_method("gcse", params, "splade-tiny")
    trainer = Trainer(
        method,
        model,
        TrainData(COLUMNS),
        SETTINGS,
        seed=1,
        dev_scorer=lambda encode: 0.0,
        checkpoint_dir=Path("unused"),
        device=torch.device("cpu"),
        progress=False,
        guides={"evaluation": str(splade_tiny)},
    )
    seen: list[torch.Tensor] = []
    real = model.embed_batch

    def spy(batch, *args, **kwargs):
        seen.append(batch["token_type_ids"].clone())
        return real(batch, *args, **kwargs)

    monkeypatch.setattr(model, "embed_batch", spy)
    emb = trainer.encode_views(method.views(0), np.arange(2))
    assert set(emb) == {"anchor", "positive", "negative"}
    if token_type == 0:  # one pass of 6 rows, all type 0 (the default, unchanged)
        assert [t.shape[0] for t in seen] == [6] and not seen[0].any()
    else:  # the anchor alone at type 0, then positive and negative together at type 1
        assert [t.shape[0] for t in seen] == [2, 4]
        assert not seen[0].any() and bool((seen[1] == 1).all())
