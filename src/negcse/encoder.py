"""Load a (trained or hub) model and turn sentences into vectors, in batches."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from safetensors import SafetensorError
from tqdm.auto import tqdm
from transformers import AutoModel, AutoTokenizer

from negcse.errors import ModelFilesError
from negcse.poolers import Pooler, get_pooler
from negcse.resolve import resolve_model

logger = logging.getLogger(__name__)


# Set inside `shared_encoders()`: one loaded Encoder per (model, pooler, mirror, device, length).
_SHARED: dict[tuple[str, ...], Encoder] | None = None


def load_pretrained(path: str, config: Any = None) -> tuple[Any, Any]:
    """Tokenizer and model of a Hugging Face folder; missing or damaged files are a
    :class:`ModelFilesError` naming the folder (transformers raises several unrelated types)."""
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModel.from_pretrained(path, **({"config": config} if config else {}))
    except (OSError, ValueError, TypeError, SafetensorError) as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise ModelFilesError(
            f"model folder {path}: cannot load it ({type(exc).__name__}: {reason}); its files "
            "are missing or damaged: fetch the model again"
        ) from exc
    return tokenizer, model


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


@contextmanager
def shared_encoders() -> Iterator[None]:
    """Several evaluations of frozen models in one process (``negcse batch``).

    Inside, ``Encoder.load`` loads each model once and every loaded encoder keeps the vector of
    each sentence it has encoded: a sentence that several evaluations read (STS, its splits,
    the analyses) is encoded once. Outside, nothing is cached.
    """
    global _SHARED
    previous, _SHARED = _SHARED, {}
    try:
        yield
    finally:
        _SHARED = previous


@dataclass
class Encoder:
    """A transformer, its tokenizer and a pooler: ``encode`` gives one vector per sentence."""

    model: Any
    tokenizer: Any
    pooler: Pooler
    max_length: int = 512
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    memo: dict[str, np.ndarray] | None = None  # sentence -> vector, set by shared_encoders()
    #: None: fp32 (the default, as SentEval); torch.float16 / bfloat16: autocast (speed only)
    autocast_dtype: torch.dtype | None = None

    @classmethod
    def load(
        cls,
        name_or_path: str,
        pooler: str,
        mirror: str | os.PathLike[str] | None = None,
        device: torch.device | None = None,
        max_length: int = 512,
    ) -> Encoder:
        device = device or default_device()
        key = (str(name_or_path), pooler, str(mirror), str(device), str(max_length))
        if _SHARED is not None and key in _SHARED:
            return _SHARED[key]
        path = resolve_model(name_or_path, mirror)
        tokenizer, model = load_pretrained(path)
        model.to(device).eval()
        pool = get_pooler(pooler, tokenizer=tokenizer)
        encoder = cls(model, tokenizer, pool, max_length, device)
        if _SHARED is not None:
            encoder.memo = {}
            _SHARED[key] = encoder
        return encoder

    def encode(
        self, sentences: Sequence[str], batch_size: int = 128, progress: bool = False
    ) -> np.ndarray:
        """Embeddings in input order; sentences are length-sorted inside for speed."""
        if self.memo is None:
            return self._encode(sentences, batch_size, progress)
        memo = self.memo
        new = [s for s in dict.fromkeys(sentences) if s not in memo]
        if new:
            memo.update(zip(new, self._encode(new, batch_size, progress), strict=True))
        if not sentences:
            return self._encode([], batch_size)
        return np.stack([memo[s] for s in sentences])

    @torch.no_grad()
    def _encode(
        self, sentences: Sequence[str], batch_size: int, progress: bool = False
    ) -> np.ndarray:
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


def model_inputs(batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The tokenizer outputs a Hugging Face encoder accepts (poolers may add their own keys)."""
    keys = ("input_ids", "attention_mask", "token_type_ids")
    return {k: v for k, v in batch.items() if k in keys}
