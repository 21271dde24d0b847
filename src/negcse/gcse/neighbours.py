"""The released KG's ``related`` lists (steps 3-4): a frozen sentence encoder's nearest
neighbours, whose last one a positive revision uses as its replacement (step 7's
``get_related``).

- Entities: one pool per type (stripped texts, first-seen order, each once per type), the top
  k = 10 of each by exact unnormalised inner product (faiss ``IndexFlatIP``); looked up by the
  stripped text in the first type whose pool gave it a neighbour.
- Main parts: one pool of every subject, action and state text (first occurrence across kinds),
  top k = 5.
- The query is in its own pool, so rank 1 is usually itself; the replacement is rank k.
- The encoder: ``SentenceTransformer(path)`` on a plain Hugging Face folder, i.e. mean pooling
  (``gcse-synthesize`` passes ``negcse.evaluation.embedder.Embedder`` with the ``mean``
  pooler: fp32, 512 tokens).

Bugs (GCSE_REFERENCE.md §6): bug 2, the batch count (``n // 1024 + 1 if n % 1024 == 0 else
n // 1024``) leaves the last partial batch of 1,024 queries without neighbours, so every pool
under 1,024 nodes has none: reproduced with ``dropped_batches`` (the released bug
``identity_revision``). Bug 3, k above a pool's size: faiss pads with -1 and ``documents[-1]``
takes the pool's last text; fixed here (the farthest real neighbour), no switch. Step 7's
lookup (``get_related``): its dict holds every entity under the first type (KG file order) that
holds it, neighbours or not, and is queried with the entity as the LLM wrote it (the KG's keys
are stripped): a text whose first type has no neighbours, or that has surrounding spaces, is
kept although another type gives it one: reproduced with ``released_lookup`` (the released bug
``related_lookup``). Main parts are keyed and looked up unstripped in the released code, so
stripping both sides here gives the same replacements.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from negcse.gcse.kg import MAIN_PART_KINDS, Knowledge, Node

if TYPE_CHECKING:
    from negcse.gcse.synthesis import Neighbour

#: texts -> one embedding row per text
Encoder = Callable[[Sequence[str]], np.ndarray]
ENTITY_K = 10
MAIN_PART_K = 5
RELEASED_BATCH = 1024
_QUERY_CHUNK = 1024  # query rows scored at once (memory only)


def queried(n: int, dropped_batches: bool) -> int:
    """How many of a pool's n texts (the first ones) get neighbours: all, or with the released
    batch count only whole batches of 1,024 (all n when n is a multiple of 1,024)."""
    if not dropped_batches or n % RELEASED_BATCH == 0:
        return n
    return n // RELEASED_BATCH * RELEASED_BATCH


def last_neighbours(
    texts: Sequence[str], embeddings: np.ndarray, k: int, dropped_batches: bool = False
) -> dict[str, str]:
    """text -> its k-th nearest text by inner product (itself included; ties in pool order;
    the farthest when the pool has fewer than k). Texts left unqueried are absent."""
    n = len(texts)
    if embeddings.shape[0] != n:
        raise ValueError(f"{n} texts but {embeddings.shape[0]} embeddings")
    emb = np.asarray(embeddings, dtype=np.float32)
    out: dict[str, str] = {}
    kk = min(k, n)
    for start in range(0, queried(n, dropped_batches), _QUERY_CHUNK):
        stop = min(start + _QUERY_CHUNK, queried(n, dropped_batches))
        scores = emb[start:stop] @ emb.T
        order = np.argsort(-scores, axis=1, kind="stable")[:, :kk]
        for row, i in enumerate(range(start, stop)):
            out[texts[i]] = texts[int(order[row, -1])]
    return out


@dataclass
class EncoderNeighbours:
    """The released ``related`` replacements of one pass's knowledge (a :data:`Neighbour`:
    ``neighbours(node, main_part)``, None when the text has none: the revision keeps it)."""

    entities: dict[str, str] = field(default_factory=dict)
    main_parts: dict[str, str] = field(default_factory=dict)
    #: the released lookup: text -> the first type holding it, and that type's neighbours
    first_type: dict[str, str] = field(default_factory=dict)
    by_type: dict[str, dict[str, str]] = field(default_factory=dict)
    released_lookup: bool = False

    @classmethod
    def build(
        cls,
        knowledge: Sequence[Knowledge],
        encode: Encoder,
        dropped_batches: bool = False,
        released_lookup: bool = False,
    ) -> EncoderNeighbours:
        pools: dict[str, list[str]] = {}
        for k in knowledge:
            for node in k.entities:
                pool = pools.setdefault(node.type.strip(), [])
                if node.text.strip() not in pool:
                    pool.append(node.text.strip())
        parts: list[str] = []
        for k in knowledge:
            for kind in MAIN_PART_KINDS:
                parts += [t for t in k.parts(kind) if t not in parts]
        out = cls(released_lookup=released_lookup)
        for kind, texts in pools.items():
            found = last_neighbours(texts, encode(texts), ENTITY_K, dropped_batches)
            out.by_type[kind] = found
            for text in texts:
                out.first_type.setdefault(text, kind)
            for text, repl in found.items():
                out.entities.setdefault(text, repl)  # the first type giving a neighbour wins
        if parts:
            out.main_parts = last_neighbours(parts, encode(parts), MAIN_PART_K, dropped_batches)
        return out

    def __call__(self, node: Node, main_part: bool) -> str | None:
        if main_part:
            return self.main_parts.get(node.text.strip())
        if not self.released_lookup:
            return self.entities.get(node.text.strip())
        text = node.text if node.raw is None else node.raw  # step 7 queries the LLM's text
        kind = self.first_type.get(text)
        return None if kind is None else self.by_type[kind].get(text)


def neighbour_factory(
    encode: Encoder | None, dropped_batches: bool, released_lookup: bool = False
) -> Callable[[Sequence[Knowledge]], Neighbour] | None:
    """What the pipeline calls on each pass's knowledge (None: no encoder, the KG's own related
    replacement)."""
    if encode is None:
        return None
    return lambda knowledge: EncoderNeighbours.build(
        knowledge, encode, dropped_batches, released_lookup
    )
