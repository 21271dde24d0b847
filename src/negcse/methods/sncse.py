"""SNCSE (Wang et al. 2022): negations as soft negatives through the bidirectional margin loss.

Three prompt views per sentence, each pooled at the mask token (MLP + tanh on top in training):
the anchor ``This sentence : " X " means [MASK] .``, the dropout positive ``This sentence of " X "
means [MASK] .`` and the soft negative, the negation of X in the positive's prompt. Evaluation
uses the anchor prompt, as the released evaluation scripts do. Loss (eq. 7): InfoNCE over anchor
and positive + lambda * BML(delta = cos(h, h#) - cos(h, h+)).

Table 3's ablations, each its own method: ``sncse_pl`` (the negation as a pure positive, eq. 8),
``sncse_nl`` (as a pure negative of its own anchor, eq. 9) and ``sncse_infonce`` (negation
ignored; the prompts stay).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from negcse.generators.specs.negation import SNCSE_COLUMN as NEGATION_COLUMN
from negcse.losses import bidirectional_margin_loss, info_nce, info_nce_paired_negative
from negcse.methods.base import (
    Column,
    LossOutput,
    Method,
    MethodParams,
    P,
    StepContext,
    View,
    identical_prompt_pairs,
)
from negcse.methods.params import bounded
from negcse.methods.registry import register

if TYPE_CHECKING:
    from torch import Tensor

logger = logging.getLogger(__name__)

ANCHOR_PROMPT = "prompt_sncse_anchor"
POSITIVE_PROMPT = "prompt_sncse_positive"


@dataclass(frozen=True)
class SNCSEParams(MethodParams):
    alpha: float = 0.1  # lower bound of cos(h, h+) - cos(h, h#)
    beta: float = 0.3  # upper bound
    #: lambda: 1e-3 for BERT, 5e-4 for RoBERTa (per backbone in params)
    bml_weight: float = bounded(1e-3, ge=0)


#: SNCSE's params or a subclass of them (SNCSE + SAN)
SP = TypeVar("SP", bound=SNCSEParams)


class _SNCSEBase(Method[P]):
    """Prompt views shared by SNCSE and its ablations."""

    columns = (NEGATION_COLUMN,)
    eval_pooler = ANCHOR_PROMPT
    papers = ("sncse",)

    def views(self, step: int) -> list[View]:
        views = [
            View("anchor", "sentence", ANCHOR_PROMPT),
            View("positive", "sentence", POSITIVE_PROMPT),
        ]
        if self.columns:
            views.append(View("negation", NEGATION_COLUMN, POSITIVE_PROMPT))
        return views

    def prepare(
        self, columns: dict[str, Column], tokenizer: Any, max_length: int
    ) -> dict[str, float]:
        """Count the negations token-identical to their positive after truncation (the released
        whole-prompt budget can cut the inserted "not")."""
        if NEGATION_COLUMN not in self.columns:
            return {}
        pooler = self.pooler(POSITIVE_PROMPT, tokenizer)
        sentences = columns["sentence"]
        same = identical_prompt_pairs(
            pooler, tokenizer, sentences, columns[NEGATION_COLUMN], max_length
        )
        logger.info(
            "%s: %d of %d negations are token-identical to their positive after truncation",
            self.name,
            same,
            len(sentences),
        )
        return {"sentences": len(sentences), "identical_negations": same}


@register
class SNCSE(_SNCSEBase[SP]):
    name = "sncse"
    Params = SNCSEParams

    def loss(self, emb: dict[str, Tensor], ctx: StepContext) -> LossOutput:
        p = self.params
        nce = info_nce(emb["anchor"], emb["positive"], p.temperature)
        bml = bidirectional_margin_loss(
            emb["anchor"], emb["positive"], emb["negation"], p.alpha, p.beta
        )
        loss = nce + p.bml_weight * bml
        return LossOutput(loss, {"infonce": nce.detach(), "bml": bml.detach()})


@register
class SNCSEPositiveLoss(_SNCSEBase[MethodParams]):
    """Ablation PL (eq. 8): InfoNCE(h, h+) + InfoNCE(h, h#), in-batch negations as negatives."""

    name = "sncse_pl"

    def loss(self, emb: dict[str, Tensor], ctx: StepContext) -> LossOutput:
        tau = self.params.temperature
        nce = info_nce(emb["anchor"], emb["positive"], tau)
        nce_neg = info_nce(emb["anchor"], emb["negation"], tau)
        return LossOutput(nce + nce_neg, {"infonce": nce.detach(), "infonce_neg": nce_neg.detach()})


@register
class SNCSENegativeLoss(_SNCSEBase[MethodParams]):
    """Ablation NL (eq. 9): the negation of sentence i as one extra negative of anchor i."""

    name = "sncse_nl"

    def loss(self, emb: dict[str, Tensor], ctx: StepContext) -> LossOutput:
        loss = info_nce_paired_negative(
            emb["anchor"], emb["positive"], emb["negation"], self.params.temperature
        )
        return LossOutput(loss, {"infonce": loss.detach()})


@register
class SNCSEInfoNCE(_SNCSEBase[MethodParams]):
    """Ablation InfoNCE (Table 3, "w.o. BML" in Table 2): the prompts without the negation."""

    name = "sncse_infonce"
    columns = ()

    def loss(self, emb: dict[str, Tensor], ctx: StepContext) -> LossOutput:
        loss = info_nce(emb["anchor"], emb["positive"], self.params.temperature)
        return LossOutput(loss, {"infonce": loss.detach()})
