"""SAN + HiNCE (Wang et al. 2025): syntactically aligned negatives under a two-temperature InfoNCE.

The SAN column (``negcse san-negatives``, aligned with the corpus) is encoded in its own forward
pass with dropout ``p2`` (0.2; the released code gives the last column its own dropout modules),
while the anchor and positive keep the model's dropout. HiNCE (eq. 2) puts the in-batch positives
at ``temperature`` (tau1) and every SAN sample of the batch at ``tau2`` in one denominator.

- ``simcse_san``: SimCSE with HiNCE in place of InfoNCE (eq. 3; tau2 0.08).
- ``sncse_san``: SNCSE's prompts and BML, HiNCE in place of its InfoNCE (eq. 4; tau2 0.1). The
  SAN sample goes through the positive's prompt without the `` .`` SNCSE adds to its other
  inputs (the released ``train_SNCSE.py`` has that line commented out for the SAN column).

The scale ablation (Table 7) and the tau2 x p2 grid (Figure 3 / appendix C) are params.yaml
entries of these two implementations.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from negcse.encoders.poolers import POOLERS, PROMPTS, PromptPooler, register_pooler
from negcse.generators.specs.san import COLUMN as SAN_COLUMN
from negcse.losses import bidirectional_margin_loss, hierarchical_info_nce
from negcse.methods.base import LossOutput, Method, MethodParams, StepContext, View
from negcse.methods.params import bounded
from negcse.methods.registry import register
from negcse.methods.sncse import POSITIVE_PROMPT, SNCSE, SNCSEParams

if TYPE_CHECKING:
    from torch import Tensor

#: SNCSE's positive prompt without the " ." it adds to a sentence lacking final punctuation
SAN_PROMPT = "prompt_sncse_positive_nopunct"

if SAN_PROMPT not in POOLERS:
    register_pooler(
        SAN_PROMPT,
        functools.partial(
            PromptPooler, name=SAN_PROMPT, template=PROMPTS[POSITIVE_PROMPT][0], punctuate=False
        ),
    )


@dataclass(frozen=True)
class HiNCEParams(MethodParams):
    tau2: float = bounded(0.08, gt=0)  # temperature of the SAN logits (tau1 is ``temperature``)
    p2: float | None = bounded(0.2, ge=0, lt=1)  # the SAN pass's dropout; None: the model's


@dataclass(frozen=True)
class SNCSESanParams(SNCSEParams):
    tau2: float = bounded(0.1, gt=0)
    p2: float | None = bounded(0.2, ge=0, lt=1)


@register
class SimCSESan(Method[HiNCEParams]):
    name = "simcse_san"
    papers = ("san-hince",)
    Params = HiNCEParams
    columns = (SAN_COLUMN,)

    def views(self, step: int) -> list[View]:
        return [
            View("anchor"),
            View("positive"),
            View("san", SAN_COLUMN, dropout=self.params.p2),
        ]

    def loss(self, emb: dict[str, Tensor], ctx: StepContext) -> LossOutput:
        p = self.params
        loss = hierarchical_info_nce(
            emb["anchor"], emb["positive"], p.temperature, emb["san"], p.tau2
        )
        return LossOutput(loss, {"hince": loss.detach()})


@register
class SNCSESan(SNCSE[SNCSESanParams]):
    name = "sncse_san"
    papers = ("sncse", "san-hince")
    Params = SNCSESanParams
    columns = (*SNCSE.columns, SAN_COLUMN)

    def views(self, step: int) -> list[View]:
        return [*super().views(step), View("san", SAN_COLUMN, SAN_PROMPT, dropout=self.params.p2)]

    def loss(self, emb: dict[str, Tensor], ctx: StepContext) -> LossOutput:
        p = self.params
        hince = hierarchical_info_nce(
            emb["anchor"], emb["positive"], p.temperature, emb["san"], p.tau2
        )
        bml = bidirectional_margin_loss(
            emb["anchor"], emb["positive"], emb["negation"], p.alpha, p.beta
        )
        loss = hince + p.bml_weight * bml
        return LossOutput(loss, {"hince": hince.detach(), "bml": bml.detach()})
