"""A sentence-transformers input module that encodes with any negcse pooler.

A saved model whose evaluation pooler has no sentence-transformers equivalent (the prompt
poolers of SNCSE, OssCSE and RLRD: the sentence wrapped in a template, pooled at the mask
token) names :class:`PooledEncoder` in its ``modules.json``; ``SentenceTransformer(path)`` then
tokenizes and pools exactly as ``negcse evaluate`` does (``negcse.evaluation.embedder``).
Loading it imports this package: ``pip install`` negcse where the model is used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from sentence_transformers.base.modules.input_module import InputModule

from negcse.errors import ModelFilesError
from negcse.model_cli import pooler_name
from negcse.poolers import get_pooler
from negcse.pretrained import load_pretrained, model_inputs
from negcse.training.model import ST_CONFIG_FILE as CONFIG_FILE


class PooledEncoder(InputModule):
    """The model folder's transformer and tokenizer with the negcse pooler ``pooler``:
    ``preprocess`` is the pooler's tokenization (a prompt pooler wraps the sentence and records
    the mask position), ``forward`` its pooling."""

    config_file_name = CONFIG_FILE
    config_keys = ["pooler", "max_seq_length"]  # noqa: RUF012 (sentence-transformers' API)
    save_in_root = True

    def __init__(self, model_path: str, pooler: str, max_seq_length: int) -> None:
        super().__init__()
        try:
            pooler_name(pooler)
        except Exception as exc:
            raise ModelFilesError(f"{Path(model_path) / CONFIG_FILE}: {exc}") from None
        self.pooler = pooler
        self.max_seq_length = max_seq_length
        self.tokenizer, self.auto_model = load_pretrained(model_path)
        self._pooler = get_pooler(pooler, tokenizer=self.tokenizer)

    def preprocess(
        self, inputs: list[Any], prompt: str | None = None, **_: Any
    ) -> dict[str, torch.Tensor]:
        if prompt:
            raise ValueError(
                f"this model's pooler {self.pooler} applies its own prompt; encode without one"
            )
        if not all(isinstance(text, str) for text in inputs):
            raise ValueError(f"pooler {self.pooler} encodes single sentences (str) only")
        return dict(self._pooler.tokenize(self.tokenizer, inputs, self.max_seq_length))

    def forward(self, features: dict[str, Any], **_: Any) -> dict[str, Any]:
        outputs = self.auto_model(**model_inputs(features), return_dict=True)
        features["token_embeddings"] = outputs.last_hidden_state
        features["sentence_embedding"] = self._pooler.pool(outputs, features)
        return features

    def get_embedding_dimension(self) -> int:
        return int(self.auto_model.config.hidden_size)

    get_sentence_embedding_dimension = get_embedding_dimension

    def save(self, output_path: str, *_: Any, safe_serialization: bool = True, **__: Any) -> None:
        self.auto_model.save_pretrained(output_path, safe_serialization=safe_serialization)
        self.save_tokenizer(output_path)
        self.save_config(output_path)

    @classmethod
    def load(  # type: ignore[override]
        cls,
        model_name_or_path: str,
        subfolder: str = "",
        token: bool | str | None = None,
        cache_folder: str | None = None,
        revision: str | None = None,
        local_files_only: bool = False,
        **_: Any,
    ) -> PooledEncoder:
        hub = {"token": token, "cache_folder": cache_folder, "revision": revision}
        folder = cls.load_dir_path(
            model_name_or_path, subfolder=subfolder, local_files_only=local_files_only, **hub
        )
        config = cls.load_config(
            model_name_or_path, subfolder=subfolder, local_files_only=local_files_only, **hub
        )
        missing = [key for key in cls.config_keys if key not in config]
        if missing:
            raise ModelFilesError(
                f"{Path(str(folder)) / CONFIG_FILE}: missing or without {', '.join(missing)}"
            )
        return cls(str(folder), str(config["pooler"]), int(config["max_seq_length"]))
