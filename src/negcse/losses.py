"""Contrastive losses shared by the methods (each method composes its own from these)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor


def cosine_matrix(a: Tensor, b: Tensor) -> Tensor:
    """All-pairs cosine similarity, shape (len(a), len(b))."""
    return F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T


def info_nce(
    anchor: Tensor,
    positive: Tensor,
    temperature: float,
    hard_negatives: Tensor | None = None,
) -> Tensor:
    """InfoNCE with in-batch negatives (SimCSE eq. 1), mean over the batch.

    Row i of ``anchor`` is pulled towards row i of ``positive`` and pushed from every other row
    of ``positive`` (and, if given, from every row of ``hard_negatives``, as extra columns).
    """
    logits = cosine_matrix(anchor, positive) / temperature
    if hard_negatives is not None:
        logits = torch.cat([logits, cosine_matrix(anchor, hard_negatives) / temperature], dim=1)
    labels = torch.arange(anchor.size(0), device=anchor.device)
    return F.cross_entropy(logits.float(), labels)


def symmetric_info_nce(first: Tensor, second: Tensor, temperature: float) -> Tensor:
    """InfoNCE over all 2N rows of a batch of N pairs (NT-Xent), mean over the 2N rows.

    Row i of ``first`` and row i of ``second`` are a positive pair. Every row is an anchor: its
    positive is its partner and its negatives are the other 2N - 2 rows of both sides (itself
    excluded). This is the loss of the released UNA code (``simcse_unsup_loss``); extra pairs,
    such as a negative sentence encoded twice, enter as extra rows.
    """
    n = first.size(0)
    rows = torch.cat([first, second])
    logits = (cosine_matrix(rows, rows) / temperature).float()
    self_mask = torch.eye(2 * n, dtype=torch.bool, device=logits.device)
    logits = logits.masked_fill(self_mask, float("-inf"))
    partner = torch.arange(2 * n, device=logits.device).roll(n)
    return F.cross_entropy(logits, partner)
