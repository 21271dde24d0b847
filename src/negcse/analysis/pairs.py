"""Sentence pairs for the similarity distributions (SNCSE Figure 4).

SNCSE Section 4.3: "we randomly select 5000 sentences from STS task ... For each sentence, we take
itself as positive pair ... the negation of the sentence to construct soft negative pair, and
take another randomly selected sentence as negative pair". The pool is the distinct sentences of
the seven STS test sets; the partner of each sampled sentence is another sampled sentence
(a random cyclic derangement, so no sentence is paired with itself).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

import numpy as np

from negcse.data.sts import STS_TASKS, STSData, load_sts
from negcse.encoders.vectors import EncodeFn, cosine_rows
from negcse.runtime.seed import numpy_rng

logger = logging.getLogger(__name__)

SAMPLE_STREAM = 5000  # numpy_rng stream of the sentence sample
PARTNER_STREAM = 5001  # numpy_rng stream of the random partners


def sts_sentences(
    tasks: Iterable[str] = STS_TASKS, protocol: str = "senteval", mirror: str | None = None
) -> list[str]:
    """Distinct non-empty sentences of the STS test sets, in order of first appearance."""
    seen: dict[str, None] = {}
    for task in tasks:
        data = load_sts(task, protocol, mirror)
        for a, b in zip(data.sent1, data.sent2, strict=True):
            for s in (a, b):
                if s.strip():
                    seen.setdefault(s, None)
    return list(seen)


def sample_sentences(pool: Sequence[str], n: int, seed: int) -> list[str]:
    """``n`` distinct sentences drawn without replacement (all of them, shuffled, if fewer)."""
    if n < 2:
        raise ValueError(f"need at least 2 sentences, got n={n}")
    if n > len(pool):
        logger.warning("asked for %d sentences, the pool has %d: using all", n, len(pool))
        n = len(pool)
    idx = numpy_rng(seed, SAMPLE_STREAM).choice(len(pool), size=n, replace=False)
    return [pool[i] for i in idx]


def random_partners(n: int, seed: int) -> np.ndarray:
    """``partner[i] != i`` for every i: one random cycle through all ``n`` items."""
    if n < 2:
        raise ValueError(f"need at least 2 items for distinct partners, got {n}")
    order = numpy_rng(seed, PARTNER_STREAM).permutation(n)
    partner = np.empty(n, dtype=np.int64)
    partner[order] = np.roll(order, -1)
    return partner


def pair_cosines(encode: EncodeFn, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """Cosine similarity of each pair (a[i], b[i])."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} first sentences but {len(b)} second sentences")
    return cosine_rows(encode(a), encode(b))


def task_cosines(encode: EncodeFn, data: STSData) -> np.ndarray:
    """Cosine similarity of every pair of an STS task."""
    return pair_cosines(encode, data.sent1, data.sent2)
