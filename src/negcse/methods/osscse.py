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
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from negcse.losses import info_nce, recall_loss, two_way_margin_loss
from negcse.methods.base import LossOutput, Method, MethodParams, StepContext, View
from negcse.methods.registry import register

ANCHOR_PROMPT = "prompt_osscse_anchor"
POSITIVE_PROMPT = "prompt_osscse_positive"
NEGATION_COLUMN = "negation_osscse"
PARAPHRASE_COLUMN = "paraphrase_osscse"


@dataclass(frozen=True)
class OssCSEParams(MethodParams):
    alpha: float = 0.05  # lower margin: sim(h, h_p) - sim(h, h_n) >= alpha
    beta: float = 0.2  # upper margin: sim(h, h_p) - sim(h, h_n) <= beta
    margin_weight: float = 1e-3  # lambda
    recall_weight: float = 2e-3  # gamma


@register
class OssCSE(Method):
    name = "osscse"
    Params = OssCSEParams
    columns = (NEGATION_COLUMN, PARAPHRASE_COLUMN)
    eval_pooler = ANCHOR_PROMPT

    def __init__(self, params: MethodParams, backbone: str) -> None:
        super().__init__(params, backbone)
        self._theta: list[Tensor] = []
        self._theta0: list[Tensor] = []

    def views(self, step: int) -> list[View]:
        return [
            View("anchor", "sentence", ANCHOR_PROMPT),
            View("positive", "sentence", POSITIVE_PROMPT),
            View("negation", NEGATION_COLUMN, POSITIVE_PROMPT),
            View("paraphrase", PARAPHRASE_COLUMN, POSITIVE_PROMPT),
        ]

    def attach(self, model: torch.nn.Module) -> None:
        """Remember theta0: a detached copy of every trainable encoder parameter, same device."""
        encoder = getattr(model, "backbone", model)
        self._theta = [p for p in encoder.parameters() if p.requires_grad]
        self._theta0 = [p.detach().clone() for p in self._theta]

    def loss(self, emb: dict[str, Tensor], ctx: StepContext) -> LossOutput:
        p = self.params
        assert isinstance(p, OssCSEParams)
        if not self._theta0:
            raise RuntimeError("OssCSE.attach(model) must run before the loss (recall loss)")
        contrastive = info_nce(emb["anchor"], emb["positive"], p.temperature)
        recall = recall_loss(self._theta, self._theta0, p.recall_weight)
        margin = two_way_margin_loss(
            emb["anchor"], emb["paraphrase"], emb["negation"], p.alpha, p.beta
        )
        loss = contrastive + recall + p.margin_weight * margin
        logs = {
            "infonce": contrastive.detach(),
            "recall": recall.detach(),
            "margin": margin.detach(),
        }
        return LossOutput(loss, logs)
