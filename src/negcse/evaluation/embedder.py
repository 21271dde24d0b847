"""A frozen model for evaluation: a transformer, its tokenizer and a pooler turn sentences into
vectors, in length-sorted batches, without gradients. (The trainable model is
``negcse.training.model.SentenceEncoder``.)"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from negcse.data.sources import resolve_model
from negcse.encoders.poolers import Pooler, get_pooler
from negcse.encoders.pretrained import (
    EVAL_MAX_LENGTH,
    default_device,
    load_pretrained,
    model_inputs,
)
from negcse.errors import UserError

logger = logging.getLogger(__name__)


@dataclass
class Embedder:
    """A transformer, its tokenizer and a pooler: ``encode`` gives one vector per sentence."""

    model: Any
    tokenizer: Any
    pooler: Pooler
    max_length: int = EVAL_MAX_LENGTH
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    #: None: fp32 (the default, as SentEval); torch.float16 / bfloat16: autocast (speed only)
    autocast_dtype: torch.dtype | None = None

    @classmethod
    def load(
        cls,
        name_or_path: str,
        pooler: str,
        mirror: str | os.PathLike[str] | None = None,
        device: torch.device | None = None,
        max_length: int = EVAL_MAX_LENGTH,
    ) -> Embedder:
        device = device or default_device()
        path = resolve_model(name_or_path, mirror)
        tokenizer, model, initialized = load_pretrained(path)
        pool = get_pooler(pooler, tokenizer=tokenizer)
        lacking = [name for name in pool.reads if name in initialized]
        if lacking:  # transformers drew them at random: every load would score differently
            raise UserError(
                f"model folder {path}: pooler '{pool.name}' reads the model's pooler layer, "
                f"which its weights lack ({', '.join(lacking)}: random at each load); use "
                "--pooler cls_before_pooler ([CLS] as it is) or mean"
            )
        model.to(device).eval()
        return cls(model, tokenizer, pool, max_length, device)

    @torch.no_grad()
    def encode(
        self, sentences: Sequence[str], batch_size: int = 128, progress: bool = False
    ) -> np.ndarray:
        """Embeddings in input order; sentences are length-sorted inside for speed."""
        order = np.argsort([-len(s) for s in sentences], kind="stable")
        chunks: list[np.ndarray] = []
        # fp32 on every device, as SentEval / SimCSE evaluate (no fp16 autocast on CUDA)
        autocast = self.autocast_dtype is not None
        starts = range(0, len(order), batch_size)
        for start in tqdm(starts, desc="encode", disable=not progress, leave=False):
            idx = order[start : start + batch_size]
            batch = self.pooler.tokenize(
                self.tokenizer, [sentences[i] for i in idx], self.max_length
            )
            batch = {k: v.to(self.device) for k, v in batch.items()}
            with torch.autocast(self.device.type, dtype=self.autocast_dtype, enabled=autocast):
                outputs = self.model(**model_inputs(batch), return_dict=True)
                emb = self.pooler.pool(outputs, batch)
            chunks.append(emb.float().cpu().numpy())
        if not chunks:
            return np.zeros((0, self.model.config.hidden_size), dtype=np.float32)
        out = np.concatenate(chunks)
        result = np.empty_like(out)
        result[order] = out
        return result
