"""``SentenceTransformer(path)`` of a saved model encodes as ``negcse evaluate`` does, for each
kind of evaluation pooler: [CLS] + the trained MLP, raw [CLS], mean, and the prompt poolers
(the sentence in a template, pooled at the mask token, by the module code the folder carries),
also in an environment where negcse is not installed."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from negcse.encoders.poolers import get_pooler
from negcse.errors import ModelFilesError
from negcse.model_cli import load_embedder
from negcse.training.model import ST_CONFIG_FILE, ST_MODULE_FILES, ST_MODULE_TYPE, SentenceEncoder
from plugin_venv import load_without_negcse

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
    st = SentenceTransformer(str(model), device="cpu", trust_remote_code=True)
    got = st.encode(SENTENCES, batch_size=2)
    assert got.shape == (len(SENTENCES), 128)
    np.testing.assert_allclose(got, ours, atol=1e-5)
    modules = json.loads((model / "modules.json").read_text())
    assert (modules[0]["type"] == ST_MODULE_TYPE) == pooler.startswith("prompt_")
    assert all((model / f).is_file() for f in ST_MODULE_FILES) == pooler.startswith("prompt_")
    config = json.loads((model / "config_sentence_transformers.json").read_text())
    assert config["similarity_fn_name"] == "cosine" and config["prompts"] == {}


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
    st = SentenceTransformer(str(model), device="cpu", trust_remote_code=True)
    got = st.encode(["the cat sat on the mat"])
    np.testing.assert_allclose(got[0], expected, atol=1e-5)
    # mean pooling (what sentence-transformers did without these files) is something else
    assert not np.allclose(got[0], hf(**batch).last_hidden_state[0].mean(0).detach().numpy())


def test_a_bad_template_is_refused_naming_the_file(splade_tiny: Path, tmp_path: Path) -> None:
    from sentence_transformers import SentenceTransformer

    model = _save(splade_tiny, "prompt_sncse_anchor", tmp_path / "m")
    config = model / ST_CONFIG_FILE
    values = json.loads(config.read_text())
    config.write_text(json.dumps({**values, "template": "no mask: {sentence}"}))
    with pytest.raises(ValueError, match=rf"{ST_CONFIG_FILE}: a prompt template needs one"):
        SentenceTransformer(str(model), device="cpu", trust_remote_code=True)
    del values["template"]
    config.write_text(json.dumps(values))
    with pytest.raises(ValueError, match=rf"{ST_CONFIG_FILE}: missing or without template"):
        SentenceTransformer(str(model), device="cpu", trust_remote_code=True)


def test_a_folder_of_the_earlier_module_loads_with_negcse(
    splade_tiny: Path, tmp_path: Path
) -> None:
    """A prompt model saved before the module travelled (``negcse.st_module.PooledEncoder``,
    its pooler's name only) still encodes as ``negcse evaluate``; an unknown pooler is refused
    naming the file."""
    from sentence_transformers import SentenceTransformer

    model = _save(splade_tiny, "prompt_osscse_anchor", tmp_path / "old")
    for name in ST_MODULE_FILES:
        (model / name).unlink()
    modules = [{"idx": 0, "name": "0", "path": "", "type": "negcse.st_module.PooledEncoder"}]
    (model / "modules.json").write_text(json.dumps(modules))
    config = model / ST_CONFIG_FILE
    config.write_text(json.dumps({"pooler": "prompt_osscse_anchor", "max_seq_length": 512}))
    got = SentenceTransformer(str(model), device="cpu").encode(SENTENCES)
    np.testing.assert_allclose(got, _evaluate_embeddings(model), atol=1e-5)
    config.write_text(json.dumps({"pooler": "prompt_nonexistent", "max_seq_length": 512}))
    with pytest.raises(ModelFilesError, match=rf"{ST_CONFIG_FILE}: unknown pooler"):
        SentenceTransformer(str(model), device="cpu")
    config.write_text(json.dumps({"pooler": "prompt_osscse_anchor"}))
    with pytest.raises(ModelFilesError, match="without max_seq_length"):
        SentenceTransformer(str(model), device="cpu")


def test_prompt_model_saved_by_sentence_transformers_loads_the_same(
    splade_tiny: Path, tmp_path: Path
) -> None:
    from sentence_transformers import SentenceTransformer

    saved = _save(splade_tiny, "prompt_osscse_anchor", tmp_path / "a")
    first = SentenceTransformer(str(saved), trust_remote_code=True)
    first.save(str(tmp_path / "b"))
    assert all((tmp_path / "b" / f).is_file() for f in ST_MODULE_FILES)
    again = SentenceTransformer(str(tmp_path / "b"), device="cpu", trust_remote_code=True)
    np.testing.assert_allclose(again.encode(SENTENCES), first.encode(SENTENCES), atol=1e-6)
    assert json.loads((tmp_path / "b" / ST_CONFIG_FILE).read_text())["pooler"] == (
        "prompt_osscse_anchor"
    )


@pytest.mark.slow  # a fresh interpreter imports torch and sentence-transformers (~20 s)
def test_prompt_models_load_without_negcse(splade_tiny: Path, tmp_path: Path) -> None:
    """SNCSE's and OssCSE's prompt models (and a mean-pooled one) encode as ``negcse
    evaluate`` does in a venv where negcse cannot be imported."""
    poolers = ["prompt_sncse_anchor", "prompt_osscse_anchor", "mean"]
    folders = [_save(splade_tiny, p, tmp_path / p) for p in poolers]
    for folder, got in zip(
        folders, load_without_negcse(folders, SENTENCES, tmp_path / "venv"), strict=True
    ):
        np.testing.assert_allclose(got, _evaluate_embeddings(folder), atol=1e-5)
