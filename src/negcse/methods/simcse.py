"""Unsupervised SimCSE: dropout positives, in-batch negatives, InfoNCE."""

from __future__ import annotations

from typing import TYPE_CHECKING

from negcse.losses import info_nce
from negcse.methods.base import LossOutput, Method, MethodParams, StepContext
from negcse.methods.registry import register

if TYPE_CHECKING:
    from torch import Tensor


@register
class SimCSE(Method[MethodParams]):
    name = "simcse"

    def loss(self, emb: dict[str, Tensor], ctx: StepContext) -> LossOutput:
        loss = info_nce(emb["anchor"], emb["positive"], self.params.temperature)
        return LossOutput(loss, {"infonce": loss.detach()})
