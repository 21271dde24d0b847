"""OssCSE (Surface-structure bias, 2023; no code was released): margin between paraphrases and
negations, recall loss against forgetting.

Views, each pooled at the mask token (MLP + tanh in training, as SimCSE): the anchor
``This sentence : "X" means [MASK].`` and the positive ``This sentence of "X" means [MASK].``
(the paper's two prompts, PromptBERT spacing); the negation (root insertion) and the paraphrase
(back-translation kept by MER) in the positive's prompt. Evaluation uses the anchor prompt.

Loss (eq. 5): L = l_c + l_r + lambda * l_m with l_c InfoNCE over the two prompt views, l_r the
recall loss gamma/2 * sum (theta - theta0)^2 over the encoder's (backbone's) parameters, theta0
taken by :meth:`OssCSE.attach` before training, and l_m the two-way max margin on the anchor
with the paraphrase h_p and the negation h_n.

Options (``params``): ``truncate`` ``sentence`` (PromptBERT's: the sentence cut to max_seq_len
tokens, then the template; default) or ``prompt`` (the whole prompt fits max_seq_len);
``mask_fallback`` drops from l_m the rows whose paraphrase is the sentence itself (no
back-translation in the MER band); ``recall`` ``loss`` (eq. 4 inside the loss, so its gradient
goes through Adam; default) or ``decoupled`` (RecAdam's form: after each Adam step,
theta -= lr * gamma * (theta - theta0), outside the adaptive update; no annealing).
:meth:`OssCSE.prepare` logs the paraphrase fallback rows and the negations token-identical to
their positive after truncation.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from negcse.generators.specs.negation import OSSCSE_COLUMN as NEGATION_COLUMN
from negcse.generators.specs.osscse_paraphrase import COLUMN as PARAPHRASE_COLUMN
from negcse.losses import info_nce, recall_loss, two_way_margin_loss
from negcse.methods.base import (
    Column,
    LossOutput,
    Method,
    MethodParams,
    StepContext,
    View,
    identical_prompt_pairs,
)
from negcse.methods.params import bounded
from negcse.methods.registry import register
from negcse.runtime.lazy import torch

if TYPE_CHECKING:
    from torch import Tensor

logger = logging.getLogger(__name__)

ANCHOR_PROMPT = "prompt_osscse_anchor"
POSITIVE_PROMPT = "prompt_osscse_positive"


@dataclass(frozen=True)
class OssCSEParams(MethodParams):
    alpha: float = 0.05  # lower margin: sim(h, h_p) - sim(h, h_n) >= alpha
    beta: float = 0.2  # upper margin: sim(h, h_p) - sim(h, h_n) <= beta
    margin_weight: float = bounded(1e-3, ge=0)  # lambda
    recall_weight: float = bounded(2e-3, ge=0)  # gamma
    #: sentence (PromptBERT) or prompt (whole prompt in max_seq_len)
    truncate: Literal["sentence", "prompt"] = "sentence"
    mask_fallback: bool = False  # drop rows whose paraphrase is the sentence itself from l_m
    recall: Literal["loss", "decoupled"] = "loss"  # loss (eq. 4, Adam) or RecAdam's update


@register
class OssCSE(Method[OssCSEParams]):
    name = "osscse"
    papers = ("osscse",)
    Params = OssCSEParams
    columns = (NEGATION_COLUMN, PARAPHRASE_COLUMN)
    eval_pooler = ANCHOR_PROMPT

    def __init__(self, params: MethodParams, backbone: str) -> None:
        super().__init__(params, backbone)
        self._theta: list[Tensor] = []
        self._theta0: list[Tensor] = []
        self._fallback: np.ndarray | None = None  # per corpus line: paraphrase == sentence
        fit = "" if getattr(params, "truncate", "sentence") == "sentence" else "_fit"
        self.anchor_prompt, self.positive_prompt = ANCHOR_PROMPT + fit, POSITIVE_PROMPT + fit

    def views(self, step: int) -> list[View]:
        return [
            View("anchor", "sentence", self.anchor_prompt),
            View("positive", "sentence", self.positive_prompt),
            View("negation", NEGATION_COLUMN, self.positive_prompt),
            View("paraphrase", PARAPHRASE_COLUMN, self.positive_prompt),
        ]

    def prepare(
        self, columns: dict[str, Column], tokenizer: Any, max_length: int
    ) -> dict[str, float]:
        """Count the paraphrase fallback rows and the negations identical to their positive."""
        sentences = columns["sentence"]
        self._fallback = np.array(
            [p.strip() == s.strip() for s, p in zip(sentences, columns[PARAPHRASE_COLUMN],
                                                     strict=True)]
        )
        pooler = self.pooler(self.positive_prompt, tokenizer)
        same = identical_prompt_pairs(
            pooler, tokenizer, sentences, columns[NEGATION_COLUMN], max_length
        )
        n, fallback = len(sentences), int(self._fallback.sum())
        logger.info(
            "OssCSE: %d of %d paraphrases are the sentence itself (no back-translation in the MER "
            "band)%s; %d negations are token-identical to their positive after truncation",
            fallback,
            n,
            ", masked from the margin loss" if self.params.mask_fallback else "",
            same,
        )
        return {"sentences": n, "paraphrase_fallback": fallback, "identical_negations": same}

    def attach(self, model: torch.nn.Module) -> None:
        """Remember theta0: a detached copy of every trainable encoder parameter, same device."""
        encoder = getattr(model, "backbone", model)
        self._theta = [p for p in encoder.parameters() if p.requires_grad]
        self._theta0 = [p.detach().clone() for p in self._theta]

    def loss(self, emb: dict[str, Tensor], ctx: StepContext) -> LossOutput:
        p = self.params
        if not self._theta0:
            raise RuntimeError("OssCSE.attach(model) must run before the loss (recall loss)")
        contrastive = info_nce(emb["anchor"], emb["positive"], p.temperature)
        recall = recall_loss(self._theta, self._theta0, p.recall_weight)
        keep = slice(None)
        if p.mask_fallback:
            rows = ctx.rows
            if rows is None or self._fallback is None:
                raise RuntimeError("mask_fallback needs prepare() and the batch rows (trainer)")
            keep = torch.from_numpy(~self._fallback[rows]).to(emb["anchor"].device)
        if p.mask_fallback and not bool(keep.any()):
            margin = emb["anchor"].sum() * 0.0
        else:
            margin = two_way_margin_loss(
                emb["anchor"][keep], emb["paraphrase"][keep], emb["negation"][keep], p.alpha, p.beta
            )
        loss = contrastive + p.margin_weight * margin
        if p.recall == "loss":
            loss = loss + recall
        logs = {
            "infonce": contrastive.detach(),
            "recall": recall.detach(),
            "margin": margin.detach(),
        }
        return LossOutput(loss, logs)

    def after_step(self, lr: float) -> None:
        """RecAdam's decoupled penalty: theta -= lr * gamma * (theta - theta0)."""
        p = self.params
        if p.recall == "decoupled":
            with torch.no_grad():
                for theta, theta0 in zip(self._theta, self._theta0, strict=True):
                    theta.sub_(lr * p.recall_weight * (theta - theta0))
