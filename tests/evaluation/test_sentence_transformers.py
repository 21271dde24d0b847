"""``SentenceTransformer(path)`` of a saved model encodes as ``negcse evaluate`` does, for each
kind of evaluation pooler: [CLS] + the trained MLP, raw [CLS], mean, and the prompt poolers
(the sentence in a template, pooled at the mask token)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from negcse.errors import ModelFilesError
from negcse.model_cli import load_embedder
from negcse.poolers import get_pooler
from negcse.training.model import ST_CONFIG_FILE, ST_MODULE_TYPE, SentenceEncoder

pytestmark = pytest.mark.mirror

SENTENCES = [
    "A man is playing a guitar.",
    "the cat sat on the mat",  # no final punctuation: SNCSE's prompt adds " ."
    'He said "[MASK]" twice.',  # special-token text stays plain text
    " ".join(["a long sentence with many words"] * 12),  # ~84 tokens: beyond training's 32
]
#: every kind of evaluation pooler (SNCSE and RLRD share SNCSE's prompt; OssCSE has its own)
POOLERS = ["cls", "cls_before_pooler", "mean", "prompt_sncse_anchor", "prompt_osscse_anchor"]


def _save(splade_tiny: Path, pooler: str, out: Path) -> Path:
    """splade-tiny with a random MLP head, saved as training saves a model."""
    torch.manual_seed(0)
    model = SentenceEncoder.from_pretrained(str(splade_tiny), 0.1)
    model.save(out, get_pooler(pooler, tokenizer=model.tokenizer), {"eval_pooler": pooler})
    return out


def _evaluate_embeddings(model: Path) -> np.ndarray:
    """What ``negcse evaluate --model PATH`` encodes (``--pooler auto``: negcse.json's)."""
    args = argparse.Namespace(model=str(model), pooler="auto", mirror=None, threads=None)
    return load_embedder(args).encode(SENTENCES)


@pytest.mark.parametrize("pooler", POOLERS)
def test_sentence_transformers_encodes_as_evaluate(
    splade_tiny: Path, tmp_path: Path, pooler: str
) -> None:
    from sentence_transformers import SentenceTransformer

    model = _save(splade_tiny, pooler, tmp_path / pooler)
    ours = _evaluate_embeddings(model)
    st = SentenceTransformer(str(model), device="cpu").encode(SENTENCES, batch_size=2)
    assert st.shape == (len(SENTENCES), 128)
    np.testing.assert_allclose(st, ours, atol=1e-5)
    modules = json.loads((model / "modules.json").read_text())
    assert (modules[0]["type"] == ST_MODULE_TYPE) == pooler.startswith("prompt_")


def test_prompt_model_pools_at_the_mask_of_the_template(splade_tiny: Path, tmp_path: Path) -> None:
    """Independent truth: the prompt written out as text by hand, through plain transformers,
    read at the [MASK] token."""
    from sentence_transformers import SentenceTransformer

    model = _save(splade_tiny, "prompt_sncse_anchor", tmp_path / "m")
    text = 'This sentence : " the cat sat on the mat . " means [MASK] .'
    tok = AutoTokenizer.from_pretrained(model)
    hf = AutoModel.from_pretrained(model).eval()
    batch = tok([text], return_tensors="pt")
    mask = int((batch["input_ids"][0] == tok.mask_token_id).nonzero()[0, 0])
    with torch.no_grad():
        expected = hf(**batch).last_hidden_state[0, mask].numpy()
    got = SentenceTransformer(str(model), device="cpu").encode(["the cat sat on the mat"])
    np.testing.assert_allclose(got[0], expected, atol=1e-5)
    # mean pooling (what sentence-transformers did without these files) is something else
    assert not np.allclose(got[0], hf(**batch).last_hidden_state[0].mean(0).detach().numpy())


def test_unknown_pooler_is_refused_naming_the_file(splade_tiny: Path, tmp_path: Path) -> None:
    from sentence_transformers import SentenceTransformer

    model = _save(splade_tiny, "prompt_sncse_anchor", tmp_path / "m")
    config = model / ST_CONFIG_FILE
    config.write_text(json.dumps({"pooler": "prompt_nonexistent", "max_seq_length": 512}))
    with pytest.raises(ModelFilesError, match=rf"{ST_CONFIG_FILE}: unknown pooler"):
        SentenceTransformer(str(model), device="cpu")
    config.write_text(json.dumps({"pooler": "prompt_sncse_anchor"}))
    with pytest.raises(ModelFilesError, match="without max_seq_length"):
        SentenceTransformer(str(model), device="cpu")


def test_prompt_model_saved_by_sentence_transformers_loads_the_same(
    splade_tiny: Path, tmp_path: Path
) -> None:
    from sentence_transformers import SentenceTransformer

    first = SentenceTransformer(str(_save(splade_tiny, "prompt_osscse_anchor", tmp_path / "a")))
    first.save(str(tmp_path / "b"))
    again = SentenceTransformer(str(tmp_path / "b"), device="cpu")
    np.testing.assert_allclose(again.encode(SENTENCES), first.encode(SENTENCES), atol=1e-6)
    assert json.loads((tmp_path / "b" / ST_CONFIG_FILE).read_text())["pooler"] == (
        "prompt_osscse_anchor"
    )

