"""The trainable sentence encoder: a Hugging Face backbone plus SimCSE's MLP head.

Saving writes one folder that both ``transformers.AutoModel.from_pretrained`` and
``sentence_transformers.SentenceTransformer`` load with the evaluation pooler: the trained MLP
goes into the backbone's pooler weights (so ``cls`` = [CLS] + MLP, as SimCSE's conversion
script does) and the sentence-transformers module files describe the pooler.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
from collections.abc import Iterator
from importlib import metadata, resources
from pathlib import Path
from typing import Any

import torch
import transformers
from torch import Tensor, nn
from transformers import AutoConfig

from negcse.encoders.poolers import POOLER_WEIGHT, Pooler, PromptPooler
from negcse.encoders.pretrained import (
    EVAL_MAX_LENGTH,
    check_readable,
    load_pretrained,
    model_inputs,
)
from negcse.errors import ModelFilesError
from negcse.io_utils import write_json
from negcse.training.model_card import model_card

logger = logging.getLogger(__name__)

#: the sentence-transformers module of a model saved with a prompt pooler (its code is copied into
#: the folder: negcse.encoders.st_prompt and the negcse.encoders.prompt_template it imports), and its config file
ST_MODULE_TYPE = "st_prompt.PromptEncoder"
ST_MODULE_FILES = ("st_prompt.py", "prompt_template.py")
ST_CONFIG_FILE = "negcse_sentence_transformers.json"


class MLPHead(nn.Module):
    """Dense + tanh over the pooled vector (SimCSE's MLPLayer)."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.dense = nn.Linear(hidden, hidden)
        self.activation = nn.Tanh()
        nn.init.normal_(self.dense.weight, std=0.02)
        nn.init.zeros_(self.dense.bias)

    def forward(self, x: Tensor) -> Tensor:
        return self.activation(self.dense(x))


class SentenceEncoder(nn.Module):
    def __init__(self, backbone: Any, tokenizer: Any) -> None:
        super().__init__()
        self.backbone = backbone
        self.tokenizer = tokenizer
        self.mlp = MLPHead(backbone.config.hidden_size)
        #: the backbone's parameters its folder lacked, drawn at random (load_pretrained)
        self.initialized: frozenset[str] = frozenset()

    @classmethod
    def from_pretrained(cls, path: str, dropout: float) -> SentenceEncoder:
        try:
            config = AutoConfig.from_pretrained(path)
        except (OSError, ValueError) as exc:
            check_readable(path)
            raise ModelFilesError(f"model folder {path}: bad config.json ({exc})") from exc
        for key in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            if hasattr(config, key):
                setattr(config, key, dropout)
        tokenizer, backbone, initialized = load_pretrained(path, config)
        encoder = cls(backbone, tokenizer)
        encoder.initialized = initialized
        return encoder

    def has_saved_head(self) -> bool:
        """Whether the backbone's pooler holds the dense + tanh layer :meth:`save` stores (a
        model the suite trained), loaded from its folder rather than drawn at random."""
        dense = getattr(getattr(self.backbone, "pooler", None), "dense", None)
        return dense is not None and POOLER_WEIGHT not in self.initialized

    def load_saved_head(self) -> None:
        """The MLP head from the dense + tanh layer :meth:`save` stores as the backbone's
        pooler (a model the suite trained); a backbone without that layer is an error."""
        if not self.has_saved_head():
            raise ModelFilesError(
                f"the model has no saved MLP head (backbone {POOLER_WEIGHT} missing from its "
                "weights)"
            )
        dense = self.backbone.pooler.dense
        self.mlp.dense.load_state_dict(dense.state_dict())

    def embed(
        self, texts: list[str], pooler: Pooler, max_len: int, mlp: bool, device: torch.device
    ) -> Tensor:
        batch = pooler.tokenize(self.tokenizer, texts, max_len)
        return self.embed_batch({k: v.to(device) for k, v in batch.items()}, pooler, mlp)

    def embed_batch(
        self, batch: dict[str, Tensor], pooler: Pooler, mlp: bool, square_mask: bool = False
    ) -> Tensor:
        """Embeddings of an already tokenized batch (on the model's device).

        ``square_mask``: hand the backbone the attention mask as (batch, query, key). BERT and
        RoBERTa then build the same additive mask (0 / dtype min) without the 2D path's
        ``torch.all(mask == 1)`` check, a host sync in every forward on CUDA."""
        inputs = model_inputs(batch)
        if square_mask:
            mask = inputs["attention_mask"]
            inputs["attention_mask"] = mask[:, None, :].expand(-1, mask.size(1), -1)
        outputs = self.backbone(**inputs, return_dict=True)
        pooled = pooler.pool(outputs, batch)
        return self.mlp(pooled) if mlp else pooled

    def compiled_embed(self, mode: str | None, static_padding: bool) -> Any:
        """:meth:`embed_batch` through ``torch.compile(mode=mode)`` (None: no compilation).
        With ``static_padding`` every view group keeps one shape, so each gets a static graph of
        its own (``dynamic=False``: no second, dynamic-shape compilation once a second group's
        shape is seen; CUDA graphs are per shape either way); without it torch.compile's default
        (dynamic once a shape changes)."""
        if not mode:
            return None
        return torch.compile(self.embed_batch, mode=mode, dynamic=False if static_padding else None)

    def save(self, out: Path, eval_pooler: Pooler, meta: dict[str, Any]) -> None:
        """Hugging Face + sentence-transformers layout, MLP stored as the backbone's pooler."""
        pooler_layer = getattr(self.backbone, "pooler", None)
        if pooler_layer is not None and hasattr(pooler_layer, "dense"):
            pooler_layer.dense.load_state_dict(self.mlp.dense.state_dict())
        self.backbone.save_pretrained(out, safe_serialization=True)
        self.tokenizer.save_pretrained(out)
        write_sentence_transformers_files(out, eval_pooler, self.backbone.config.hidden_size)
        if eval_pooler.name == "cls":
            save_dense_weights(out, self.mlp)
        (out / "negcse.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        if "method" in meta:  # a run's model (its spec in meta): the card (negcse export redoes it)
            (out / "README.md").write_text(model_card(meta), encoding="utf-8")


def write_sentence_transformers_files(out: Path, pooler: Pooler, hidden: int) -> None:
    """modules.json etc. so SentenceTransformer(out) encodes as ``negcse evaluate`` does: the
    evaluation pooler and its token limit (``EVAL_MAX_LENGTH``, not the training one). A prompt
    pooler has no sentence-transformers equivalent: ``negcse.st_module.PooledEncoder`` is the
    one module then (tokenization with the template, pooling at the mask token)."""
    write_json(out / "config_sentence_transformers.json", st_model_config())
    st_cfg = {"max_seq_length": EVAL_MAX_LENGTH, "do_lower_case": False}
    if isinstance(pooler, PromptPooler):  # our own module, shipped in the folder
        modules = [{"idx": 0, "name": "0", "path": "", "type": ST_MODULE_TYPE}]
        st_cfg = {
            "pooler": pooler.name,
            "template": pooler.template,
            "punctuate": pooler.punctuate,
            "truncate": pooler.truncate,
            "max_seq_length": EVAL_MAX_LENGTH,
        }
        (out / ST_CONFIG_FILE).write_text(json.dumps(st_cfg, indent=2), encoding="utf-8")
        (out / "modules.json").write_text(json.dumps(modules, indent=2), encoding="utf-8")
        for name in ST_MODULE_FILES:
            shutil.copyfile(str(resources.files("negcse.encoders").joinpath(name)), out / name)
        return
    if pooler.st_mode is None:
        raise ValueError(f"pooler {pooler.name} has no sentence-transformers form")
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {
            "idx": 1,
            "name": "1",
            "path": "1_Pooling",
            "type": "sentence_transformers.models.Pooling",
        },
    ]
    pooling = {
        "word_embedding_dimension": hidden,
        "pooling_mode_cls_token": pooler.st_mode == "cls",
        "pooling_mode_mean_tokens": pooler.st_mode == "mean",
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
    }
    (out / "1_Pooling").mkdir(parents=True, exist_ok=True)
    (out / "1_Pooling" / "config.json").write_text(json.dumps(pooling, indent=2), encoding="utf-8")
    if pooler.name == "cls":  # [CLS] + the trained dense+tanh, as a Dense module
        modules.append(
            {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}
        )
        dense_dir = out / "2_Dense"
        dense_dir.mkdir(exist_ok=True)
        cfg = {
            "in_features": hidden,
            "out_features": hidden,
            "bias": True,
            "activation_function": "torch.nn.modules.activation.Tanh",
        }
        (dense_dir / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    (out / "modules.json").write_text(json.dumps(modules, indent=2), encoding="utf-8")
    (out / "sentence_bert_config.json").write_text(json.dumps(st_cfg), encoding="utf-8")


def st_model_config() -> dict[str, Any]:
    """``config_sentence_transformers.json``: the versions it was saved with, cosine similarity,
    no prompts (a prompt pooler's template is its module's own)."""
    return {
        "__version__": {
            "sentence_transformers": metadata.version("sentence-transformers"),
            "transformers": transformers.__version__,
            "pytorch": torch.__version__,
        },
        "model_type": "SentenceTransformer",
        "prompts": {},
        "default_prompt_name": None,
        "similarity_fn_name": "cosine",
    }


def save_dense_weights(out: Path, mlp: MLPHead) -> None:
    """Weights of the 2_Dense module (only written for the ``cls`` pooler)."""
    from safetensors.torch import save_file

    dense = {
        "linear.weight": mlp.dense.weight.detach().cpu(),
        "linear.bias": mlp.dense.bias.detach().cpu(),
    }
    save_file(dense, str(out / "2_Dense" / "model.safetensors"))


@contextlib.contextmanager
def dropout_rate(module: nn.Module, p: float | None) -> Iterator[None]:
    """Temporarily set every dropout rate in ``module`` (nn.Dropout and SDPA attention)."""
    if p is None:
        yield
        return
    saved: list[tuple[Any, str, float]] = []
    for sub in module.modules():
        if isinstance(sub, nn.Dropout):
            saved.append((sub, "p", sub.p))
            sub.p = p
        if isinstance(getattr(sub, "dropout_prob", None), float):
            saved.append((sub, "dropout_prob", sub.dropout_prob))
            sub.dropout_prob = p
    try:
        yield
    finally:
        for obj, attr, value in saved:
            setattr(obj, attr, value)


def torch_threads(n: int | None) -> None:
    if n:
        torch.set_num_threads(n)
        os.environ["OMP_NUM_THREADS"] = str(n)
