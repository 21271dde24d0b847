"""GCSE stage 2 (Wang et al. 2025, eq. 12-13): triplets and a Gaussian-decayed hard negative.

Each corpus line x_i (the anchor) comes with a synthesized positive and hard negative, the text
columns ``gcse_positive`` and ``gcse_negative`` aligned with the corpus (denoised triplets; in
the workflow the corpus is the triplets' anchor column ``gcse_anchor``, the generator spec
``negcse.generators.specs.gcse`` names all three). The trained model (a copy of the stage-1
evaluation model, the ``evaluation`` guide, with its MLP head: ``init_guide``) encodes the
three with dropout, [CLS] + MLP as SimCSE trains. The frozen stage-1 model is the ``evaluation``
guide (``negcse train --guide evaluation=STAGE1_MODEL``): it gives s'_i = cos(h'_i, h'_i-) of
the anchor and its own hard negative, and the loss is
:func:`negcse.losses.gcse.gaussian_decayed_info_nce` (``form`` "released", the default: G as a
detached change, width sigma 0.0085 = the released alpha 0.17 logits; or "paper": the gradient
through G, eq. 12-13 read literally, the labelled variant ``gcse_paper_form``;
docs/fidelity-gcse.md says why). The guide embeds with [CLS] + the dense + tanh head
saved with the model, as the released frozen SimCSE does (``guide_pooler``).

Training settings of the released stage 2 (``RELEASED_TRAIN``): max_seq_len 64, batch 128,
lr 1e-5, 2 epochs, STS-B dev every 125 steps: the method's ``train`` block in params.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from negcse.gcse.released import augment_anchor
from negcse.generators.specs.gcse import ANCHOR_COLUMN, NEGATIVE_COLUMN, POSITIVE_COLUMN
from negcse.losses import info_nce
from negcse.losses.gcse import RELEASED_SIGMA, DecayForm, gaussian_decayed_info_nce
from negcse.methods.base import (
    Augmentation,
    Guide,
    LossOutput,
    Method,
    MethodParams,
    StepContext,
    View,
)
from negcse.methods.params import bounded
from negcse.methods.registry import register
from negcse.runtime.lazy import F, torch

if TYPE_CHECKING:
    from torch import Tensor

GUIDE = "evaluation"

#: the released stage-2 training settings (GCSE_REFERENCE.md §5), as ``train`` overrides
RELEASED_TRAIN: dict[str, Any] = {
    "max_seq_len": 64,
    "batch_size": 128,
    "learning_rate": 1.0e-5,
    "epochs": 2,
    "eval_steps": 125,
}


@dataclass(frozen=True)
class GCSEParams(MethodParams):
    """``sigma``: eq. 13's width in cosine units (released alpha 0.17 x tau = 0.0085; paper
    0.01); ``form``: "released" (detached change) or "paper" (gradient through G); ``decay``:
    False replaces G by s (Table 4's "w/o decay");
    ``guide_pooler``: how the frozen model embeds ("cls": [CLS] + its saved head);
    ``token_type``: 1 gives the positives and negatives token type 1 as the released trainer."""

    sigma: float = bounded(RELEASED_SIGMA, gt=0)
    form: DecayForm = "released"
    decay: bool = True  # False: Table 4's "w/o decay" (G = s: the plain hard-negative logit)
    guide_pooler: str = "cls"
    #: token type of the positive and negative views and of the frozen model's negatives
    #: (released cl_loader: 1, bug 13; the evaluation's inputs stay type 0); models without
    #: token types ignore it
    token_type: int = bounded(0, ge=0, le=1)


@register
class GCSE(Method[GCSEParams]):
    name = "gcse"
    papers = ("gcse",)
    Params = GCSEParams
    columns = (POSITIVE_COLUMN, NEGATIVE_COLUMN)
    # the workflow trains on the denoised triplets' anchors and starts from the stage-1 model
    corpus_column = ANCHOR_COLUMN
    init_guide = GUIDE

    def views(self, step: int) -> list[View]:
        t = self.params.token_type
        return [
            View("anchor"),
            View("positive", POSITIVE_COLUMN, token_type=t),
            View("negative", NEGATIVE_COLUMN, token_type=t),
        ]

    def guides(self) -> tuple[Guide, ...]:
        # the released frozen model reads the trained model's inputs (gcse_trainer: one batch
        # for both), so its negatives carry the views' token type too
        t = self.params.token_type
        types = ((NEGATIVE_COLUMN, t),) if t else ()
        pooler = self.params.guide_pooler
        return (Guide(GUIDE, ("sentence", NEGATIVE_COLUMN), pooler, token_types=types),)

    def loss(self, emb: dict[str, Tensor], ctx: StepContext) -> LossOutput:
        p = self.params
        frozen = ctx.guides[GUIDE]
        s_frozen = F.cosine_similarity(frozen["sentence"], frozen[NEGATIVE_COLUMN], dim=-1)
        # w/o decay: s' below every cosine puts each row in eq. 13's branch s > s' (G = s)
        s_prime = s_frozen if p.decay else torch.full_like(s_frozen, -2.0)
        loss = gaussian_decayed_info_nce(
            emb["anchor"],
            emb["positive"],
            emb["negative"],
            s_prime,
            p.temperature,
            p.sigma,
            p.form,
        )
        return LossOutput(loss, {"gcse": loss.detach(), "frozen_cos": s_frozen.mean()})


@dataclass(frozen=True)
class GCSEStage1Params(MethodParams):
    """``augmentation``: "word_doubling" is the released stage-1 loader's (``cl_loader.py``
    L81-104, on for every training row: ``is_enhance_feature`` is never read and
    ``enhance_feature_lang`` 'en' is truthy): each sentence repeats k of its first L - 1
    space-separated words, k = randrange(min(10, L, max(2, floor(ratio * L)))), drawn anew at
    every epoch; so k is 0 or 1 with equal odds below 60 words. "none": plain SimCSE."""

    augmentation: Literal["word_doubling", "none"] = "word_doubling"
    duplication_ratio: float = bounded(0.05, gt=0, le=1)  # released enhance_dup


@register
class GCSEStage1(Method[GCSEStage1Params]):
    """GCSE's stage 1, the evaluation model (released ``cse_trainer.py`` + ``cl_loader.py``):
    unsupervised SimCSE on one sentence per row, both views the same augmented text (the
    released loader stacks one tokenization twice), dropout the only other noise. Its released
    schedule, precision, clipping and data order are train settings (params.yaml)."""

    name = "gcse_stage1"
    Params = GCSEStage1Params
    papers = ("gcse",)

    def augmentations(self) -> dict[str, Augmentation]:
        p = self.params
        if p.augmentation == "none":
            return {}
        return {"sentence": partial(augment_anchor, ratio=p.duplication_ratio)}

    def loss(self, emb: dict[str, Tensor], ctx: StepContext) -> LossOutput:
        loss = info_nce(emb["anchor"], emb["positive"], self.params.temperature)
        return LossOutput(loss, {"infonce": loss.detach()})
