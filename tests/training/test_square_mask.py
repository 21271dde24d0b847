"""The (batch, query, key) attention mask the trainer hands BERT and RoBERTa on CUDA gives the
embeddings of transformers' own 2D-mask path."""

from __future__ import annotations

import pytest
import torch
from transformers import BertConfig, BertModel, RobertaConfig, RobertaModel

from negcse.encoders.poolers import get_pooler
from negcse.training.model import SentenceEncoder

SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)


@pytest.mark.parametrize(
    "backbone",
    [
        lambda: BertModel(BertConfig(**SMALL)),
        lambda: RobertaModel(RobertaConfig(**SMALL, pad_token_id=1)),
    ],
    ids=["bert", "roberta"],
)
@pytest.mark.parametrize("pooler_name", ["cls_before_pooler", "mean"])
def test_square_mask_gives_the_2d_mask_embeddings(backbone, pooler_name: str) -> None:
    torch.manual_seed(0)
    model = SentenceEncoder(backbone(), tokenizer=None).eval()
    pooler = get_pooler(pooler_name)
    ids = torch.randint(5, 900, (4, 7))
    mask = torch.ones(4, 7, dtype=torch.long)
    mask[0, 3:] = 0  # padded rows: the 2D path builds an additive mask, which must match
    mask[2, 5:] = 0
    ids[mask == 0] = 1
    padded = {"input_ids": ids, "attention_mask": mask}
    full = {"input_ids": ids, "attention_mask": torch.ones_like(mask)}  # 2D path: no mask
    with torch.no_grad():
        for batch in (padded, full):
            ref = model.embed_batch(batch, pooler, mlp=True)
            got = model.embed_batch(batch, pooler, mlp=True, square_mask=True)
            torch.testing.assert_close(got, ref, rtol=0, atol=1e-6)
        # the mask is honoured: changing a padded token changes nothing, a real one does
        edited = dict(padded, input_ids=ids.clone())
        edited["input_ids"][0, 5] = 42
        same = model.embed_batch(edited, pooler, mlp=True, square_mask=True)
        torch.testing.assert_close(same, ref_padded := model.embed_batch(padded, pooler, True))
        edited["input_ids"][0, 1] = 42
        moved = model.embed_batch(edited, pooler, mlp=True, square_mask=True)
        assert not torch.allclose(moved[0], ref_padded[0])
