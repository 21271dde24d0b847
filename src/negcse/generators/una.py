"""UNA hard negatives: TF-IDF-driven term replacement (Shu et al., UNA, Section 3).

For a sentence (lowercased, word-tokenized) with tokens i = 1..n and scores z_i:

- ``scores="sentence"`` (paper, Algorithm 1 line 6, and the released ``get_replace_prob``):
  z_i = ln(1 + n_t / n) * idf(t), the sentence's own TF-IDF of token i's term t;
  ``scores="global"``: z_i = s_t, the term's global score (max TF-IDF over the corpus).
- p_i = min(beta * (z_i - min z) / C, 1), C = mean_i (z_i - min z), over token positions as
  the released code does (a repeated term counts once per occurrence). C = 0 (one token, or all
  scores equal) gives p_i = 0. The first position holding the highest score gets p = 1.
- Each position is replaced independently with probability p_i. The replacement is drawn from
  the terms ranked within +-``window`` of the replaced term (rank order of s, ties by first
  occurrence), with probability proportional to s. As in the released code the window holds
  the term itself, except for the forced (p = 1) position: there the term itself is left out,
  so every negative differs from its (tokenized) sentence.

Ablations (UNA Table 2): ``select="random"`` replaces every position with probability beta and
forces one uniformly chosen position; ``replace="random"`` draws the replacement uniformly from
the whole vocabulary (the forced position again never keeps its term).

Tokens missing from the table (only when the table was fit on another corpus) are kept as
they are and take no part in the scores. An empty line gives an empty negative.

Sampling is vectorized: the window draw inverts the cumulative sum of s in rank order with
``searchsorted``, so memory is O(vocabulary), not O(vocabulary x window) as the released
neighbour tables. Randomness comes from ``negcse.runtime.seed.numpy_rng(seed, UNA_STREAM, *stream,
chunk)`` with the input cut into chunks of ``chunk_size`` sentences: the output depends on the
seed, stream, chunk size and parameters, not on anything else.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tqdm import tqdm

from negcse.generators.specs.una import UnaSettings
from negcse.generators.tfidf import TfidfTable, read_tfidf_table
from negcse.generators.word_tokenize import una_tokenize
from negcse.runtime.seed import numpy_rng

logger = logging.getLogger(__name__)

UNA_STREAM = 0x554E41  # "UNA": this generator's numpy sub-stream


@dataclass
class UnaStats:
    """Counts over everything generated so far."""

    sentences: int = 0
    empty: int = 0
    tokens: int = 0
    unknown_tokens: int = 0
    replaced: int = 0
    unchanged: int = 0  # non-empty sentences without any known token (left as tokenized)

    def add(self, other: UnaStats) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


# ---------------------------------------------------------------------------------------------
# Vectorized building blocks (public for the tests: each is a formula of the paper)


def segment_starts(seg: np.ndarray) -> np.ndarray:
    """Start index of each run of equal values in a non-decreasing array."""
    if seg.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.r_[True, seg[1:] != seg[:-1]])


def sentence_tfidf(
    ranks: np.ndarray, sent: np.ndarray, lengths: np.ndarray, idf: np.ndarray
) -> np.ndarray:
    """z per token: ln(1 + n_t / n) * idf(t), n_t counted within the token's sentence.

    ``ranks``: term index per token (-1 unknown), ``sent``: sentence index per token
    (non-decreasing), ``lengths``: tokens per sentence (unknown tokens included)."""
    key = sent * (len(idf) + 1) + (ranks + 1)
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    n_t = counts[inverse]
    z = np.log1p(n_t / lengths[sent]) * idf[np.maximum(ranks, 0)]
    return np.where(ranks >= 0, z, np.nan)


def replace_probabilities(
    z: np.ndarray, seg: np.ndarray, beta: float
) -> tuple[np.ndarray, np.ndarray]:
    """p_i = min(beta (z_i - min z) / C, 1), C = mean(z_i - min z), per segment (sentence).

    ``seg``: segment index per token, non-decreasing, every segment non-empty. Returns p and the
    forced position of each segment (first position of the maximum), where p is set to 1."""
    starts = segment_starts(seg)
    zmin = np.minimum.reduceat(z, starts)
    zmax = np.maximum.reduceat(z, starts)
    d = z - zmin[seg]
    c = np.bincount(seg, weights=d) / np.bincount(seg)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(c[seg] > 0, np.minimum(beta * d / c[seg], 1.0), 0.0)
    top = np.flatnonzero(z == zmax[seg])
    _, first = np.unique(seg[top], return_index=True)
    forced = top[first]
    p[forced] = 1.0
    return p, forced


def window_sample(
    cumsum: np.ndarray, ranks: np.ndarray, u: np.ndarray, radius: int, exclude_self: np.ndarray
) -> np.ndarray:
    """Draw a rank in [r - radius, r + radius] (clipped to the vocabulary) with probability
    proportional to the scores, by inverting ``cumsum`` (= [0, s_0, s_0 + s_1, ...]).

    Where ``exclude_self``, rank r itself is left out. A window whose (remaining) scores sum to
    0 is sampled uniformly."""
    n_terms = len(cumsum) - 1
    lo = np.maximum(ranks - radius, 0)
    hi = np.minimum(ranks + radius + 1, n_terms)
    own = cumsum[ranks + 1] - cumsum[ranks]
    total = cumsum[hi] - cumsum[lo] - np.where(exclude_self, own, 0.0)
    target = cumsum[lo] + u * total
    # Skip the excluded term's interval [cumsum[r], cumsum[r + 1]).
    target = np.where(exclude_self & (target >= cumsum[ranks]), target + own, target)
    j = np.clip(np.searchsorted(cumsum, target, side="right") - 1, lo, hi - 1)
    # Zero-weight windows, and a rounding landing on the excluded term: uniform instead.
    fallback = (total <= 0) | (exclude_self & (j == ranks))
    if fallback.any():
        j[fallback] = _uniform_in_window(
            lo[fallback], hi[fallback], ranks[fallback], u[fallback], exclude_self[fallback]
        )
    return j


def _uniform_in_window(
    lo: np.ndarray, hi: np.ndarray, ranks: np.ndarray, u: np.ndarray, exclude_self: np.ndarray
) -> np.ndarray:
    size = hi - lo - exclude_self.astype(np.int64)
    j = lo + np.minimum((u * size).astype(np.int64), size - 1)
    return j + (exclude_self & (j >= ranks))


def uniform_sample(
    n_terms: int, ranks: np.ndarray, u: np.ndarray, exclude_self: np.ndarray
) -> np.ndarray:
    """A rank uniformly from the whole vocabulary (without r where ``exclude_self``)."""
    return _uniform_in_window(
        np.zeros_like(ranks), np.full_like(ranks, n_terms), ranks, u, exclude_self
    )


# ---------------------------------------------------------------------------------------------


@dataclass
class UnaGenerator:
    """Holds the table in rank order; ``generate`` turns sentences into UNA negatives."""

    table: TfidfTable
    index: dict[str, int] = field(init=False, repr=False)
    cumsum: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if len(self.table) < 2:
            raise ValueError(
                f"UNA needs at least 2 terms to replace one with another, table has {len(self.table)}"
            )
        self.index = {t: i for i, t in enumerate(self.table.terms)}
        self.cumsum = np.concatenate([[0.0], np.cumsum(self.table.max_tfidf)])

    @classmethod
    def from_table(cls, path: str | os.PathLike[str]) -> UnaGenerator:
        return cls(read_tfidf_table(path))

    def generate(
        self,
        sentences: Sequence[str],
        seed: int,
        stream: Sequence[int] = (),
        stats: UnaStats | None = None,
        **settings: Any,
    ) -> list[str]:
        """One negative per sentence, aligned: lowercased, tokenized, space-joined;
        ``settings``: fields of :class:`UnaSettings` (the others at their defaults)."""
        params = UnaSettings(**settings)
        return list(self.iter_generate(sentences, seed, params, stream, stats))

    def iter_generate(
        self,
        sentences: Iterable[str],
        seed: int,
        params: UnaSettings,
        stream: Sequence[int] = (),
        stats: UnaStats | None = None,
        progress: bool = False,
    ) -> Iterator[str]:
        """Lazily, ``params.chunk_size`` sentences at a time (chunk k draws from its own
        stream)."""
        chunk_size = params.chunk_size
        it = iter(sentences)
        bar = tqdm(desc="una negatives", unit="line", disable=not progress)
        for k in itertools.count():
            chunk = list(itertools.islice(it, chunk_size))
            if not chunk:
                break
            rng = numpy_rng(seed, UNA_STREAM, *stream, k)
            out, chunk_stats = self.generate_tokens([una_tokenize(s) for s in chunk], rng, params)
            if stats is not None:
                stats.add(chunk_stats)
            bar.update(len(chunk))
            yield from (" ".join(toks) for toks in out)
        bar.close()

    def generate_tokens(
        self, token_lists: Sequence[list[str]], rng: np.random.Generator, params: UnaSettings
    ) -> tuple[list[list[str]], UnaStats]:
        """The vectorized core on tokenized sentences."""
        n_sent = len(token_lists)
        lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=n_sent)
        flat = list(itertools.chain.from_iterable(token_lists))
        get = self.index.get
        ranks = np.fromiter((get(t, -1) for t in flat), dtype=np.int64, count=len(flat))
        sent = np.repeat(np.arange(n_sent), lengths)
        known = np.flatnonzero(ranks >= 0)  # positions that take part, in sentence order
        k_ranks = ranks[known]
        starts = segment_starts(sent[known])  # one segment per sentence with a known token
        is_start = np.zeros(len(known), dtype=bool)
        is_start[starts] = True
        seg = np.cumsum(is_start) - 1

        # Fixed draws per known token and per segment, whatever the mode.
        u_select = rng.random(len(known))
        u_force = rng.random(len(starts))
        u_replace = rng.random(len(known))

        if len(known) == 0:
            p, forced = np.zeros(0), np.zeros(0, dtype=np.int64)
        elif params.select == "tfidf":
            if params.scores == "sentence":
                z = sentence_tfidf(ranks, sent, lengths, self.table.idf)[known]
            else:
                z = self.table.max_tfidf[k_ranks]
            p, forced = replace_probabilities(z, seg, params.beta)
        else:
            seg_len = np.diff(np.r_[starts, len(known)])
            forced = starts + np.minimum((u_force * seg_len).astype(np.int64), seg_len - 1)
            p = np.full(len(known), min(params.beta, 1.0))
            p[forced] = 1.0
        is_forced = np.zeros(len(known), dtype=bool)
        is_forced[forced] = True
        chosen = np.flatnonzero((u_select < p) | is_forced)

        r, u, excl = k_ranks[chosen], u_replace[chosen], is_forced[chosen]
        if params.replace == "window":
            new = window_sample(self.cumsum, r, u, params.window, excl)
        else:
            new = uniform_sample(len(self.table), r, u, excl)

        terms = self.table.terms
        for pos, j in zip(known[chosen].tolist(), new.tolist(), strict=True):
            flat[pos] = terms[j]
        offsets = np.r_[0, np.cumsum(lengths)].tolist()
        out = [flat[a:b] for a, b in itertools.pairwise(offsets)]
        stats = UnaStats(
            sentences=n_sent,
            empty=int((lengths == 0).sum()),
            tokens=len(flat),
            unknown_tokens=len(flat) - len(known),
            replaced=len(chosen),
            unchanged=n_sent - len(starts) - int((lengths == 0).sum()),
        )
        return out, stats
