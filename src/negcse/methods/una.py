"""UNA (Shu et al.): SimCSE plus TF-IDF hard negatives every alpha batches, and/or paraphrase
positives.

Injection, as in the released code (``una.py``: ``tokenize`` and ``simcse_unsup_loss``): at every
step with ``step % alpha == 0`` (0-based, so steps 0, alpha, 2 alpha, ...) each of the B
examples adds its negative, encoded twice with dropout like the sentence itself, so the batch of
B pairs becomes 2B pairs (4B rows in one forward pass). The loss is the released symmetric
InfoNCE (:func:`negcse.losses.symmetric_info_nce`): every row is an anchor whose positive is its
partner and whose negatives are all other rows, so a sentence is pushed from its own negative
(and from every other negative of the batch) and each negative forms a dropout pair of its own.
At the other steps the same loss runs on the 2B rows of the B pairs.

``objective="infonce"`` is the alternative reading of the paper's eq. (1): SimCSE's asymmetric
InfoNCE with the negatives as B extra columns (one extra view), not the released behaviour.

Negatives come from the ``una_negative`` column: one line per corpus line, written per seed by
``negcse una-negatives`` (Snakemake: the steps of ``negcse.generators.specs.una``); the Table 2 ablations are
the same method fed by other generator settings. Positives come from the ``paraphrase`` column
(PEGASUS, ``negcse paraphrase``) in ``una_paraphrase`` and ``una_both``, from the sentence itself
otherwise.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal, TypeVar

from negcse.generators.specs.paraphrase import COLUMN as PARAPHRASE_COLUMN
from negcse.generators.specs.una import COLUMN as NEGATIVE_COLUMN
from negcse.losses import info_nce, symmetric_info_nce
from negcse.methods.base import LossOutput, Method, MethodParams, StepContext, View
from negcse.methods.params import bounded
from negcse.methods.registry import register
from negcse.runtime.lazy import torch

if TYPE_CHECKING:
    from torch import Tensor

logger = logging.getLogger(__name__)

Objective = Literal["symmetric", "infonce"]


@dataclass(frozen=True)
class ParaphraseParams(MethodParams):
    """Positives from a column; no negatives injected."""

    objective: Objective = "symmetric"


@dataclass(frozen=True)
class UnaParams(ParaphraseParams):
    """``alpha``: negatives every alpha steps (paper Table C4: 5 best; 0 = never)."""

    alpha: int = bounded(5, ge=0)


#: the family's params: positives only, or with negatives (``UnaParams``)
UP = TypeVar("UP", bound=ParaphraseParams)


class _UnaFamily(Method[UP]):
    """Shared views and loss; subclasses choose the positive column and whether to inject."""

    Params = ParaphraseParams
    papers = ("una",)
    positive_column: ClassVar[str] = "sentence"
    negative_column: ClassVar[str | None] = None

    def injects(self, step: int) -> bool:
        """Whether the negatives join the batch at (0-based) ``step``."""
        alpha = getattr(self.params, "alpha", 0)
        return self.negative_column is not None and alpha > 0 and step % alpha == 0

    def views(self, step: int) -> list[View]:
        views = [View("anchor"), View("positive", column=self.positive_column)]
        if self.injects(step):
            column = self.negative_column
            assert column is not None
            views.append(View("negative", column=column))
            if self.params.objective == "symmetric":
                views.append(View("negative_positive", column=column))
        return views

    def loss(self, emb: dict[str, Tensor], ctx: StepContext) -> LossOutput:
        tau = self.params.temperature
        anchor, positive = emb["anchor"], emb["positive"]
        negative = emb.get("negative")
        if self.params.objective == "symmetric":
            first, second = anchor, positive
            if negative is not None:
                first = torch.cat([anchor, negative])
                second = torch.cat([positive, emb["negative_positive"]])
            loss = symmetric_info_nce(first, second, tau)
            rows = 2 * first.size(0)
        else:
            loss = info_nce(anchor, positive, tau, hard_negatives=negative)
            rows = anchor.size(0) + positive.size(0) + (0 if negative is None else negative.size(0))
        logs = {"loss": loss.detach(), "rows": float(rows)}
        logs["negatives_injected"] = float(negative is not None)
        return LossOutput(loss, logs)


@register
class Una(_UnaFamily[UnaParams]):
    """SimCSE + UNA negatives (and the Table 2 ablations, through the negatives file)."""

    name = "una"
    Params = UnaParams
    columns = (NEGATIVE_COLUMN,)
    negative_column = NEGATIVE_COLUMN


@register
class UnaBaseline(_UnaFamily[ParaphraseParams]):
    """UNA's own SimCSE baseline (released ``run_*_simcse.sh``): the symmetric loss over the
    sentence's two dropout views, never a negative, under UNA's training settings."""

    name = "una_baseline"
    Params = ParaphraseParams


@register
class UnaParaphrase(_UnaFamily[ParaphraseParams]):
    """SimCSE with paraphrase positives (UNA paper, Table 1 "+paraphrasing")."""

    name = "una_paraphrase"
    Params = ParaphraseParams
    columns = (PARAPHRASE_COLUMN,)
    positive_column = PARAPHRASE_COLUMN


@register
class UnaBoth(_UnaFamily[UnaParams]):
    """Paraphrase positives + UNA negatives (UNA paper, Table 1 "+both")."""

    name = "una_both"
    Params = UnaParams
    columns = (PARAPHRASE_COLUMN, NEGATIVE_COLUMN)
    positive_column = PARAPHRASE_COLUMN
    negative_column = NEGATIVE_COLUMN
