"""A sentence-transformers module for models that pool at a prompt's mask token.

A model folder saved with a prompt pooler (SNCSE, OssCSE, RLRD: the sentence wrapped in a
template, read at the mask token) holds a copy of this file and of ``prompt_template.py`` and
names :class:`PromptEncoder` in its ``modules.json`` (``st_prompt.PromptEncoder``); its config
file holds the template. So ``SentenceTransformer(path, trust_remote_code=True)`` builds the
inputs and pools exactly as ``negcse evaluate`` does, where negcse is not installed: the module
needs torch, transformers and sentence-transformers only (tests/evaluation/
test_sentence_transformers.py checks it in an environment without negcse).
"""

from __future__ import annotations

import json
import os
from typing import Any

import torch
from transformers import AutoModel, AutoTokenizer

try:  # sentence-transformers 5
    from sentence_transformers.base.modules.input_module import InputModule
except ImportError:  # sentence-transformers 4
    from sentence_transformers.models import InputModule

from .prompt_template import check_template, pool_at_mask, prompt_batch, template_ids

#: the module's config file in the model folder
CONFIG_FILE = "negcse_sentence_transformers.json"
#: the encoder inputs of a tokenized batch
MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class PromptEncoder(InputModule):
    """The folder's transformer and tokenizer; ``preprocess`` wraps each sentence in
    ``template`` at token level and records its mask position, ``forward`` reads the last hidden
    state there. ``pooler`` is the name negcse gave the prompt (informational)."""

    config_file_name = CONFIG_FILE
    config_keys = ["pooler", "template", "punctuate", "truncate", "max_seq_length"]  # noqa: RUF012
    save_in_root = True

    def __init__(
        self,
        model_path: str,
        template: str,
        punctuate: bool,
        truncate: str,
        max_seq_length: int,
        pooler: str = "prompt",
    ) -> None:
        super().__init__()
        check_template(template, truncate)
        self.pooler, self.template, self.punctuate = pooler, template, punctuate
        self.truncate, self.max_seq_length = truncate, max_seq_length
        self.tokenizer = AutoTokenizer.from_pretrained(model_path)
        self.auto_model = AutoModel.from_pretrained(model_path)
        self._ids = template_ids(self.tokenizer, template)

    def preprocess(
        self, inputs: list[Any], prompt: str | None = None, **_: Any
    ) -> dict[str, torch.Tensor]:
        if prompt:
            raise ValueError(f"pooler {self.pooler} applies its own prompt; encode without one")
        if not all(isinstance(text, str) for text in inputs):
            raise ValueError(f"pooler {self.pooler} encodes single sentences (str) only")
        return prompt_batch(
            self.tokenizer, self._ids, inputs, self.max_seq_length, self.truncate, self.punctuate
        )

    tokenize = preprocess  # sentence-transformers 4's name

    def forward(self, features: dict[str, Any], **_: Any) -> dict[str, Any]:
        inputs = {k: v for k, v in features.items() if k in MODEL_INPUTS}
        outputs = self.auto_model(**inputs, return_dict=True)
        features["token_embeddings"] = outputs.last_hidden_state
        features["sentence_embedding"] = pool_at_mask(
            outputs.last_hidden_state, features["mask_index"]
        )
        return features

    def get_embedding_dimension(self) -> int:
        return int(self.auto_model.config.hidden_size)

    get_sentence_embedding_dimension = get_embedding_dimension

    def save(self, output_path: str, *_: Any, safe_serialization: bool = True, **__: Any) -> None:
        self.auto_model.save_pretrained(output_path, safe_serialization=safe_serialization)
        self.tokenizer.save_pretrained(output_path)
        with open(os.path.join(output_path, CONFIG_FILE), "w", encoding="utf-8") as fh:
            json.dump({k: getattr(self, k) for k in self.config_keys}, fh, indent=2)

    @classmethod
    def from_config(cls, folder: str, config: dict[str, Any]) -> PromptEncoder:
        """The module of ``folder`` from its config file's values; a missing key is a
        ValueError naming the file."""
        path = os.path.join(folder, CONFIG_FILE)
        missing = [k for k in cls.config_keys if k not in config]
        if missing:
            raise ValueError(f"{path}: missing or without {', '.join(missing)}")
        try:
            check_template(str(config["template"]), str(config["truncate"]))
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
        return cls(
            folder,
            str(config["template"]),
            bool(config["punctuate"]),
            str(config["truncate"]),
            int(config["max_seq_length"]),
            str(config["pooler"]),
        )

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
    ) -> PromptEncoder:
        hub = {"token": token, "cache_folder": cache_folder, "revision": revision}
        folder = cls.load_dir_path(
            model_name_or_path, subfolder=subfolder, local_files_only=local_files_only, **hub
        )
        config = cls.load_config(
            model_name_or_path, subfolder=subfolder, local_files_only=local_files_only, **hub
        )
        return cls.from_config(str(folder), config)
