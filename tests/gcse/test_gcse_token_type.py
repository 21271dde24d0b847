"""GCSE's token types (released bug 13): with ``token_type: 1`` the released trainer feeds one
batch to the trained and the frozen model (gcse_trainer L126-127), so the frozen stage-1 model
also reads the negatives as token type 1; the anchors stay type 0."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from negcse.generators.specs.gcse import NEGATIVE_COLUMN
from negcse.methods.base import Guide
from negcse.methods.registry import build_method
from negcse.training.guides import FrozenGuide

ANCHORS = ["a man plays a guitar .", "two dogs run in the snow ."]
NEGATIVES = ["nobody plays any guitar .", "two cats sleep indoors ."]


def test_guide_declares_the_views_token_type_for_negatives_only() -> None:
    default = build_method("gcse", {}, "splade-tiny").guides()[0]
    released = build_method("gcse", {"token_type": 1}, "splade-tiny").guides()[0]
    assert default.token_types == ()
    assert released.token_types == ((NEGATIVE_COLUMN, 1),)
    with pytest.raises(ValueError, match="token_types name keys it does not encode"):
        Guide("g", ("sentence",), token_types=(("other", 1),))


@pytest.mark.parametrize("token_type", [0, 1])
def test_frozen_model_gets_type_1_negatives(splade_tiny: Path, token_type: int) -> None:
    spec = build_method("gcse", {"token_type": token_type}, "splade-tiny").guides()[0]
    # splade-tiny has no saved head: [CLS] without it, the token types are what is tested
    spec = dataclasses.replace(spec, pooler="cls_before_pooler")
    guide = FrozenGuide.load(spec, str(splade_tiny), torch.device("cpu"))
    seen: list[torch.Tensor] = []

    def embed(batch, pooler, mlp):  # records what the frozen model is given
        seen.append(batch["token_type_ids"].clone())
        return guide.model.embed_batch(batch, pooler, mlp)

    guide.embed = embed
    columns = {"sentence": ANCHORS, NEGATIVE_COLUMN: NEGATIVES}
    out = guide.encode(columns, np.arange(2), 32, torch.device("cpu"))
    (types,) = seen
    assert types.shape[0] == 4  # anchors, then negatives
    assert (types[:2] == 0).all()
    assert (types[2:] == token_type).all()
    # independent truth: the raw model's [CLS] of the negatives with that token type
    tok = AutoTokenizer.from_pretrained(splade_tiny)
    model = AutoModel.from_pretrained(splade_tiny).eval()
    enc = tok(NEGATIVES, padding=True, return_tensors="pt")
    with torch.no_grad():
        want = {
            t: model(**{**enc, "token_type_ids": torch.full_like(enc["input_ids"], t)})
            .last_hidden_state[:, 0]
            .numpy()
            for t in (0, 1)
        }
    got = out[NEGATIVE_COLUMN].numpy()
    np.testing.assert_allclose(got, want[token_type], atol=1e-4)
    assert not np.allclose(got, want[1 - token_type], atol=1e-3)
