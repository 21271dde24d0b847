"""Sentence vectors as numpy arrays: the encode-function type, row-wise cosine and the one
sentence-embedding cache of an evaluation run: each distinct sentence is encoded once,
whichever evaluation asks for it first (STS, its splits, the probe and the analyses share most
of their sentences). Numpy only, so it is importable without torch."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from negcse.finite import finite_array

#: a function from sentences to one embedding row per sentence, in input order
EncodeFn = Callable[[Sequence[str]], np.ndarray]


def cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of two equally shaped matrices."""
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    num = (a * b).sum(axis=1)
    den = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return num / np.maximum(den, 1e-12)


class SentenceCache:
    """Wraps an encode function; every distinct sentence is encoded once over all calls.

    Each call encodes, in one call of ``encode``, the sentences it has not seen, in order of
    first appearance (every vector must be finite: a NaN is an error naming ``name``), so the batches are those an uncached run of the same calls would form.
    ``model`` is the object behind ``encode`` (an :class:`~negcse.evaluation.embedder.Embedder`)
    for an evaluation that drives the model itself (MTEB).
    """

    def __init__(self, encode: EncodeFn, model: Any = None, name: str = "the model") -> None:
        self._encode = encode
        self._vectors: dict[str, np.ndarray] = {}
        self.model = model
        self.name = name

    def __call__(self, sentences: Sequence[str]) -> np.ndarray:
        new = [s for s in dict.fromkeys(sentences) if s not in self._vectors]
        if new or not sentences:
            emb = np.asarray(self._encode(new), dtype=np.float32)
            if emb.shape[0] != len(new):
                raise ValueError(f"encode returned {emb.shape[0]} rows for {len(new)} sentences")
            if emb.size:  # no number from a broken model: every vector finite
                finite_array(emb, f"{self.name}: its embeddings", unit="sentence")
            if not sentences:
                return emb  # (0, dim)
            self._vectors.update(zip(new, emb, strict=True))
        return np.stack([self._vectors[s] for s in sentences])

    def prefetch(self, sentences: Iterable[str]) -> None:
        """Encode these sentences in one call (one length-sorted pass) ahead of later lookups."""
        self(list(dict.fromkeys(sentences)))

    def __len__(self) -> int:
        return len(self._vectors)
