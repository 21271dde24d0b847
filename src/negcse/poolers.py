"""Poolers: how a sentence becomes one vector.

A pooler may rewrite the text before tokenization (prompt poolers wrap the sentence in a
template) and then reduces the encoder output to one vector per sentence. ``POOLERS`` maps a
name to a factory; methods add their own (e.g. prompt pooling) without touching the trainer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from torch import Tensor

logger = logging.getLogger(__name__)


class Pooler:
    """Base pooler: text unchanged, tokens through the tokenizer as they are."""

    name = "base"
    #: the sentence-transformers Pooling mode that reproduces this pooler, if any
    st_mode: str | None = None

    def __init__(self, tokenizer: Any = None, **_: Any) -> None:
        self.tokenizer = tokenizer

    def tokenize(
        self, tokenizer: Any, sentences: Sequence[str], max_length: int
    ) -> dict[str, Tensor]:
        return tokenizer(
            list(sentences),
            padding=True,
            truncation=True,
            max_length=max_length,
            return_tensors="pt",
        )

    def pool(self, outputs: Any, batch: dict[str, Tensor]) -> Tensor:
        raise NotImplementedError


class ClsBeforePooler(Pooler):
    """The raw hidden state of the first token ([CLS] / <s>)."""

    name = "cls_before_pooler"
    st_mode = "cls"

    def pool(self, outputs: Any, batch: dict[str, Tensor]) -> Tensor:
        return outputs.last_hidden_state[:, 0]


class ClsPooler(Pooler):
    """[CLS] through the model's pooler layer (dense + tanh), i.e. ``pooler_output``.

    negcse saves the trained MLP head as the model's pooler weights, so for a checkpoint trained
    with ``mlp_only_train`` this is [CLS] + the trained MLP, as in SimCSE's ``cls`` pooler.
    """

    name = "cls"
    st_mode = "cls"

    def pool(self, outputs: Any, batch: dict[str, Tensor]) -> Tensor:
        pooled = getattr(outputs, "pooler_output", None)
        if pooled is None:
            raise ValueError(
                "pooler 'cls' needs a model with a pooler layer; use 'cls_before_pooler'"
            )
        return pooled


class MeanPooler(Pooler):
    """Mean of the last hidden states over non-padding tokens."""

    name = "mean"
    st_mode = "mean"

    def pool(self, outputs: Any, batch: dict[str, Tensor]) -> Tensor:
        mask = batch["attention_mask"].unsqueeze(-1).to(outputs.last_hidden_state.dtype)
        return (outputs.last_hidden_state * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)


POOLERS: dict[str, Callable[..., Pooler]] = {
    "cls": ClsPooler,
    "cls_before_pooler": ClsBeforePooler,
    "mean": MeanPooler,
}


def get_pooler(name: str, **kwargs: Any) -> Pooler:
    if name not in POOLERS:
        raise KeyError(f"unknown pooler '{name}'; known: {', '.join(sorted(POOLERS))}")
    return POOLERS[name](**kwargs)


def register_pooler(name: str, factory: Callable[..., Pooler]) -> None:
    POOLERS[name] = factory
