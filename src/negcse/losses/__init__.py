"""Contrastive losses shared by the methods (each method composes its own from these).

Every per-row loss takes optional ``weights`` (one per row of ``anchor``): the batch mean becomes
sum_i w_i l_i / sum_i w_i, which is the plain mean for equal weights (:func:`weighted_mean`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from negcse.runtime.lazy import F, torch

if TYPE_CHECKING:
    from torch import Tensor


def cosine_matrix(a: Tensor, b: Tensor) -> Tensor:
    """All-pairs cosine similarity, shape (len(a), len(b))."""
    return F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T


def weighted_mean(per_row: Tensor, weights: Tensor | None) -> Tensor:
    """sum_i w_i x_i / sum_i w_i over rows (the mean without weights); weights >= 0, sum > 0."""
    if weights is None:
        return per_row.mean()
    n = per_row.size(0)
    if weights.shape != (n,):
        raise ValueError(f"weights must have shape ({n},), got {tuple(weights.shape)}")
    w = weights.to(per_row)
    if bool((w < 0).any()) or not bool(w.sum() > 0):
        raise ValueError("weights must be >= 0 and sum to a positive number")
    return (w * per_row).sum() / w.sum()


def _cross_entropy(logits: Tensor, labels: Tensor, weights: Tensor | None) -> Tensor:
    """Row-wise cross-entropy, batch mean (torch's own reduction without weights)."""
    if weights is None:
        return F.cross_entropy(logits, labels)
    return weighted_mean(F.cross_entropy(logits, labels, reduction="none"), weights)


def info_nce(
    anchor: Tensor,
    positive: Tensor,
    temperature: float,
    hard_negatives: Tensor | None = None,
    weights: Tensor | None = None,
) -> Tensor:
    """InfoNCE with in-batch negatives (SimCSE eq. 1), mean over the batch.

    Row i of ``anchor`` is pulled towards row i of ``positive`` and pushed from every other row
    of ``positive`` (and, if given, from every row of ``hard_negatives``, as extra columns).
    """
    logits = cosine_matrix(anchor, positive) / temperature
    if hard_negatives is not None:
        logits = torch.cat([logits, cosine_matrix(anchor, hard_negatives) / temperature], dim=1)
    labels = torch.arange(anchor.size(0), device=anchor.device)
    return _cross_entropy(logits.float(), labels, weights)


def symmetric_info_nce(
    first: Tensor, second: Tensor, temperature: float, weights: Tensor | None = None
) -> Tensor:
    """InfoNCE over all 2N rows of a batch of N pairs (NT-Xent), mean over the 2N rows.

    Row i of ``first`` and row i of ``second`` are a positive pair. Every row is an anchor: its
    positive is its partner and its negatives are the other 2N - 2 rows of both sides (itself
    excluded). This is the loss of the released UNA code (``simcse_unsup_loss``); extra pairs,
    such as a negative sentence encoded twice, enter as extra rows. ``weights`` (N,) weigh
    pair i's two rows alike.
    """
    n = first.size(0)
    rows = torch.cat([first, second])
    logits = (cosine_matrix(rows, rows) / temperature).float()
    self_mask = torch.eye(2 * n, dtype=torch.bool, device=logits.device)
    logits = logits.masked_fill(self_mask, float("-inf"))
    partner = torch.arange(2 * n, device=logits.device).roll(n)
    return _cross_entropy(logits, partner, None if weights is None else weights.repeat(2))


def margin_band_loss(
    anchor: Tensor,
    closer: Tensor,
    farther: Tensor,
    alpha: float,
    beta: float,
    weights: Tensor | None = None,
) -> Tensor:
    """Keep cos(h, closer) - cos(h, farther) within [alpha, beta], row by row; batch mean.

    With delta = cos(h, farther) - cos(h, closer): ReLU(delta + alpha) + ReLU(-delta - beta).
    Zero (and zero gradient) inside the band, linear outside.
    """
    delta = F.cosine_similarity(anchor, farther, dim=-1) - F.cosine_similarity(
        anchor, closer, dim=-1
    )
    return weighted_mean((F.relu(delta + alpha) + F.relu(-delta - beta)).float(), weights)


def bidirectional_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    soft_negative: Tensor,
    alpha: float,
    beta: float,
    weights: Tensor | None = None,
) -> Tensor:
    """SNCSE's BML (eq. 4-5): delta = cos(h, h#) - cos(h, h+); ReLU(delta + alpha) +
    ReLU(-delta - beta), mean over the batch."""
    return margin_band_loss(anchor, positive, soft_negative, alpha, beta, weights)


def two_way_margin_loss(
    anchor: Tensor,
    paraphrase: Tensor,
    negation: Tensor,
    alpha: float,
    beta: float,
    weights: Tensor | None = None,
) -> Tensor:
    """OssCSE's two-way max margin (eq. 3): max(sim(h, h_n) - sim(h, h_p) + alpha, 0) +
    max(sim(h, h_p) - sim(h, h_n) - beta, 0), mean over the batch (the same band as BML)."""
    return margin_band_loss(anchor, paraphrase, negation, alpha, beta, weights)


def info_nce_paired_negative(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    temperature: float,
    weights: Tensor | None = None,
) -> Tensor:
    """InfoNCE with one extra logit per row: row i's own negative only (SNCSE eq. 9, "NL").

    Unlike :func:`info_nce` with ``hard_negatives`` (every row's negative is a column for every
    anchor), anchor i sees cos(h_i, h#_i) and no other row's negative.
    """
    logits = cosine_matrix(anchor, positive) / temperature
    own = F.cosine_similarity(anchor, negative, dim=-1) / temperature
    logits = torch.cat([logits, own[:, None]], dim=1)
    labels = torch.arange(anchor.size(0), device=anchor.device)
    return _cross_entropy(logits.float(), labels, weights)


def recall_loss(parameters: Sequence[Tensor], initial: Sequence[Tensor], gamma: float) -> Tensor:
    """gamma / 2 * sum_i (theta_i - theta0_i)^2 (RecAdam's quadratic penalty, OssCSE eq. 4).

    ``initial`` holds detached copies of ``parameters`` taken before training; the gradient with
    respect to theta is gamma * (theta - theta0).
    """
    if len(parameters) != len(initial):
        raise ValueError(f"{len(parameters)} parameters but {len(initial)} initial values")
    pairs = zip(parameters, initial, strict=True)
    total = torch.stack([(p - p0).float().pow(2).sum() for p, p0 in pairs])
    return 0.5 * gamma * total.sum()


def hierarchical_info_nce(
    anchor: Tensor,
    positive: Tensor,
    temperature: float,
    san: Tensor | None = None,
    san_temperature: float | None = None,
    weights: Tensor | None = None,
) -> Tensor:
    """HiNCE (SAN paper eq. 2): InfoNCE whose denominator also holds every SAN sample at tau2.

    Row i: -log( e^{s(h_i, h_i+)/tau1} / sum_j [e^{s(h_i, h_j+)/tau1} + e^{s(h_i, h_j-)/tau2}] ),
    mean over the batch; ``san`` row j is h_j- (all SAN samples of the batch are negatives of
    every anchor). Without ``san`` this is :func:`info_nce`.
    """
    logits = cosine_matrix(anchor, positive) / temperature
    if san is not None:
        if san_temperature is None:
            raise ValueError("san_temperature (tau2) is required with SAN samples")
        logits = torch.cat([logits, cosine_matrix(anchor, san) / san_temperature], dim=1)
    labels = torch.arange(anchor.size(0), device=anchor.device)
    return _cross_entropy(logits.float(), labels, weights)
