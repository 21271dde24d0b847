"""Load a (trained or hub) model and turn sentences into vectors, in batches."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm
from transformers import AutoModel, AutoTokenizer

from negcse.poolers import Pooler, get_pooler
from negcse.resolve import resolve_model

logger = logging.getLogger(__name__)


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


@dataclass
class Encoder:
    """A transformer, its tokenizer and a pooler: ``encode`` gives one vector per sentence."""

    model: Any
    tokenizer: Any
    pooler: Pooler
    max_length: int = 512
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))

    @classmethod
    def load(
        cls,
        name_or_path: str,
        pooler: str,
        mirror: str | os.PathLike[str] | None = None,
        device: torch.device | None = None,
        max_length: int = 512,
    ) -> Encoder:
        path = resolve_model(name_or_path, mirror)
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModel.from_pretrained(path)
        device = device or default_device()
        model.to(device).eval()
        return cls(model, tokenizer, get_pooler(pooler, tokenizer=tokenizer), max_length, device)

    @torch.no_grad()
    def encode(
        self, sentences: Sequence[str], batch_size: int = 128, progress: bool = False
    ) -> np.ndarray:
        """Embeddings in input order; sentences are length-sorted inside for speed."""
        order = np.argsort([-len(s) for s in sentences], kind="stable")
        chunks: list[np.ndarray] = []
        autocast = self.device.type == "cuda"
        starts = range(0, len(order), batch_size)
        for start in tqdm(starts, desc="encode", disable=not progress, leave=False):
            idx = order[start : start + batch_size]
            batch = self.pooler.tokenize(
                self.tokenizer, [sentences[i] for i in idx], self.max_length
            )
            batch = {k: v.to(self.device) for k, v in batch.items()}
            with torch.autocast(self.device.type, dtype=torch.float16, enabled=autocast):
                outputs = self.model(**model_inputs(batch), return_dict=True)
                emb = self.pooler.pool(outputs, batch)
            chunks.append(emb.float().cpu().numpy())
        if not chunks:
            return np.zeros((0, self.model.config.hidden_size), dtype=np.float32)
        out = np.concatenate(chunks)
        result = np.empty_like(out)
        result[order] = out
        return result


def model_inputs(batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The tokenizer outputs a Hugging Face encoder accepts (poolers may add their own keys)."""
    keys = ("input_ids", "attention_mask", "token_type_ids")
    return {k: v for k, v in batch.items() if k in keys}
