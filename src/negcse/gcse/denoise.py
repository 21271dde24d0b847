"""Denoising of synthetic candidates with the frozen evaluation model's similarities (eq. 10-11).

A function over precomputed similarities sim(h'_i, h'_ij) (cosine), so it can be checked by
hand and fed later by the frozen stage-1 model. Paper: the positive is a candidate with
sim >= alpha (0.9), else the anchor itself (eq. 10); the negative a candidate with sim <= beta
(0.75), else a random other sentence (eq. 11, "in-batch"). Released code
(``9_denoise_generation.py``): positive sim >= 0.80, negative sim < 0.75, negative fallback the
source six rows away, and every candidate given neither role becomes an extra self-pair row.

Candidate order (``order``): "roles" (default) looks for the positive among the positive-prompt
candidates first and for the hard negative among the negative-prompt candidates first, so a
positive-prompt candidate becomes the negative only when no negative-prompt candidate
qualifies; "listed" checks them in listed order for both roles (released: [positive,
negative]; the released bug ``listed_order``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Choice = Literal["first", "random"]
Order = Literal["roles", "listed"]
ORDERS = ("roles", "listed")


@dataclass(frozen=True)
class Triplet:
    anchor: str
    positive: str
    negative: str
    positive_from: str  # "candidate <j>" or "anchor"
    negative_from: str  # "candidate <j>", "in-batch <k>" or "offset <k>"


def _check(
    anchors: Sequence[str], candidates: Sequence[Sequence[str]], sims: Sequence[Sequence[float]]
) -> None:
    if not (len(anchors) == len(candidates) == len(sims)):
        raise ValueError(
            f"{len(anchors)} anchors, {len(candidates)} candidate lists and {len(sims)} similarity lists"
        )
    for i, (c, s) in enumerate(zip(candidates, sims, strict=True)):
        if len(c) != len(s):
            raise ValueError(f"source {i}: {len(c)} candidates but {len(s)} similarities")


def _pick(js: list[int], choice: Choice, rng: random.Random) -> int | None:
    if not js:
        return None
    return js[0] if choice == "first" else rng.choice(js)


def _ranked(js: list[int], roles: Sequence[str] | None, want: str, order: Order) -> list[list[int]]:
    """Qualifying candidate indices in the groups tried one after the other: those of the
    wanted role, then the rest ("roles"), or all in listed order ("listed" or no roles)."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    if order == "listed" or roles is None:
        return [js]
    return [[j for j in js if roles[j] == want], [j for j in js if roles[j] != want]]


def _choose(
    js: list[int],
    roles: Sequence[str] | None,
    want: str,
    order: Order,
    choice: Choice,
    rng: random.Random,
) -> int | None:
    for group in _ranked(js, roles, want, order):
        if group:
            return _pick(group, choice, rng)
    return None


def _check_roles(
    candidates: Sequence[Sequence[str]], roles: Sequence[Sequence[str]] | None
) -> None:
    if roles is None:
        return
    if len(roles) != len(candidates) or any(
        len(r) != len(c) for r, c in zip(roles, candidates, strict=True)
    ):
        raise ValueError("roles must give one role per candidate")


def denoise(
    anchors: Sequence[str],
    candidates: Sequence[Sequence[str]],
    similarities: Sequence[Sequence[float]],
    alpha: float = 0.9,
    beta: float = 0.75,
    seed: int = 0,
    choice: Choice = "first",
    roles: Sequence[Sequence[str]] | None = None,
    order: Order = "roles",
) -> list[Triplet]:
    """Eq. 10-11: one triplet per anchor. ``choice``: among several qualifying candidates, the
    first in order, or a seeded random one; ``roles`` ("positive" / "negative" per candidate)
    and ``order`` say which are tried first. The fallback negative x_k is drawn uniformly from
    the other anchors (the whole set stands for the batch)."""
    _check(anchors, candidates, similarities)
    _check_roles(candidates, roles)
    if alpha <= beta:
        raise ValueError(
            f"alpha ({alpha}) must exceed beta ({beta}), or a candidate could take both roles"
        )
    rng = random.Random(seed)
    out = []
    for i, (anchor, cands, sims) in enumerate(zip(anchors, candidates, similarities, strict=True)):
        r = None if roles is None else roles[i]
        p = _choose(
            [j for j, s in enumerate(sims) if s >= alpha], r, "positive", order, choice, rng
        )
        n = _choose([j for j, s in enumerate(sims) if s <= beta], r, "negative", order, choice, rng)
        if n is None:
            if len(anchors) < 2:
                raise ValueError("the in-batch negative fallback (eq. 11) needs at least 2 anchors")
            k = rng.randrange(len(anchors) - 1)
            k += k >= i  # uniform over the other anchors
            negative, neg_from = anchors[k], f"in-batch {k}"
        else:
            negative, neg_from = cands[n], f"candidate {n}"
        positive, pos_from = (anchor, "anchor") if p is None else (cands[p], f"candidate {p}")
        out.append(Triplet(anchor, positive, negative, pos_from, neg_from))
    return out


def _offset_source(i: int, n: int, offset: int) -> int:
    """The released negative fallback's source: i + offset, or i - offset near the end. Where
    neither exists (fewer than 2 * offset anchors; released: a KeyError) it wraps around,
    skipping i itself."""
    if n < 2:
        raise ValueError("the negative fallback needs at least 2 anchors")
    k = i + offset if i + offset < n else i - offset
    if not 0 <= k < n:
        k = (i + offset) % n
        k = (k + 1) % n if k == i else k
    return k


def denoise_released(
    anchors: Sequence[str],
    candidates: Sequence[Sequence[str]],
    similarities: Sequence[Sequence[float]],
    alpha: float = 0.80,
    beta: float = 0.75,
    offset: int = 6,
    roles: Sequence[Sequence[str]] | None = None,
    order: Order = "roles",
) -> list[Triplet]:
    """The released rule: first candidate with sim >= alpha, first with sim < beta (strict),
    negative fallback anchors[i + 6] (or [i - 6] near the end; wrapping around where neither
    exists), and a self-pair row
    (c, c, negative) for every candidate given neither role; "first" in ``order``."""
    _check(anchors, candidates, similarities)
    _check_roles(candidates, roles)
    rng = random.Random(0)  # unused: "first" never draws
    out = []
    for i, (anchor, cands, sims) in enumerate(zip(anchors, candidates, similarities, strict=True)):
        k = _offset_source(i, len(anchors), offset)
        r = None if roles is None else roles[i]
        p = _choose(
            [j for j, s in enumerate(sims) if s >= alpha], r, "positive", order, "first", rng
        )
        n = _choose([j for j, s in enumerate(sims) if s < beta], r, "negative", order, "first", rng)
        negative, neg_from = (
            (anchors[k], f"offset {k}") if n is None else (cands[n], f"candidate {n}")
        )
        positive, pos_from = (anchor, "anchor") if p is None else (cands[p], f"candidate {p}")
        out.append(Triplet(anchor, positive, negative, pos_from, neg_from))
        for j, c in enumerate(cands):
            if j not in (p, n):
                out.append(Triplet(c, c, negative, f"candidate {j}", neg_from))
    return out


def usable(candidate: dict) -> bool:
    """Not fallen back and not empty; a candidate kept by the released bug 10 is usable."""
    return candidate.get("fallback") == "kept" or (
        candidate.get("fallback") is None and bool(candidate["text"])
    )


def denoising_inputs(rows: Sequence[dict]) -> tuple[list[str], list[list[str]]]:
    """Anchors and their candidates from ``gcse-synthesize`` output rows: skipped sources are
    left out, and so are fallen-back candidates (eq. 10-11 re-derive them in :func:`denoise`)."""
    anchors, candidates = [], []
    for row in rows:
        if row.get("skipped"):
            continue
        anchors.append(row["anchor"])
        candidates.append([c["text"] for c in row["candidates"] if usable(c)])
    return anchors, candidates


def candidate_roles(rows: Sequence[dict]) -> list[list[str]]:
    """The prompt role of each candidate :func:`denoising_inputs` keeps, aligned with it."""
    return [
        [c["role"] for c in row["candidates"] if usable(c)]
        for row in rows
        if not row.get("skipped")
    ]
