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
