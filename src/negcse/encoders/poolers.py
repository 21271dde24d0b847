"""Poolers: how a sentence becomes one vector.

A pooler may rewrite the text before tokenization (prompt poolers wrap the sentence in a
template) and then reduces the encoder output to one vector per sentence. ``POOLERS`` maps a
name to a factory; methods add their own (e.g. prompt pooling) without touching the trainer.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from negcse.encoders import prompt_template
from negcse.runtime.lazy import torch

if TYPE_CHECKING:
    from torch import Tensor


logger = logging.getLogger(__name__)


#: the backbone's pooler layer (dense + tanh), where the suite saves its MLP head
POOLER_WEIGHT = "pooler.dense.weight"


class Pooler:
    """Base pooler: text unchanged, tokens through the tokenizer as they are."""

    name = "base"
    #: the sentence-transformers Pooling mode that reproduces this pooler, if any
    st_mode: str | None = None
    #: the parameters of the model it reads beyond the encoder's (the pooler layer)
    reads: tuple[str, ...] = ()

    def __init__(self, tokenizer: Any = None, **_: Any) -> None:
        self.tokenizer = tokenizer

    def tokenize(
        self, tokenizer: Any, sentences: Sequence[str], max_length: int
    ) -> dict[str, Tensor]:
        # numpy, then torch.from_numpy: the same int64 tensors as return_tensors="pt", whose
        # conversion of nested lists costs ~25% of the tokenizer call (benchmarks/smoke.md)
        encoded = tokenizer(
            list(sentences),
            padding=True,
            truncation=True,
            max_length=max_length,
            return_tensors="np",
        )
        return {k: torch.from_numpy(v) for k, v in encoded.items()}

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
    reads = (POOLER_WEIGHT, "pooler.dense.bias")

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


class PromptPooler(Pooler):
    """The hidden state at the mask token of a prompt that wraps the sentence (PromptBERT style):
    ``template`` (``{sentence}`` and ``{mask}``), ``punctuate`` and ``truncate`` as
    :mod:`negcse.encoders.prompt_template` builds the prompt at token level (as SNCSE's released trainer
    does; ``truncate="sentence"`` as PromptBERT's, which OssCSE follows). The mask position of
    each row goes in ``mask_index``. A model saved with it carries that module, so
    sentence-transformers builds the same inputs without negcse (``negcse.encoders.st_prompt``).
    """

    st_mode = None

    def __init__(
        self,
        tokenizer: Any = None,
        *,
        name: str,
        template: str,
        punctuate: bool = False,
        truncate: str = "prompt",
        **_: Any,
    ) -> None:
        prompt_template.check_template(template, truncate)
        super().__init__(tokenizer)
        self.truncate = truncate
        self.name = name
        self.template = template
        self.punctuate = punctuate
        self._cached: tuple[Any, prompt_template.PromptIds] | None = None

    def template_ids(self, tokenizer: Any) -> prompt_template.PromptIds:
        """The template's token ids for ``tokenizer`` (computed once per tokenizer)."""
        if self._cached is not None and self._cached[0] is tokenizer:
            return self._cached[1]
        ids = prompt_template.template_ids(tokenizer, self.template)
        self._cached = (tokenizer, ids)
        return ids

    def prepare(self, sentence: str) -> str:
        """The sentence as it goes into the template (stripped; `` .`` added if ``punctuate``)."""
        return prompt_template.prepare(sentence, self.punctuate)

    def tokenize(
        self, tokenizer: Any, sentences: Sequence[str], max_length: int
    ) -> dict[str, Tensor]:
        try:
            return prompt_template.prompt_batch(
                tokenizer,
                self.template_ids(tokenizer),
                sentences,
                max_length,
                self.truncate,
                self.punctuate,
            )
        except ValueError as exc:
            raise ValueError(f"pooler {self.name}: {exc}") from None

    def pool(self, outputs: Any, batch: dict[str, Tensor]) -> Tensor:
        return prompt_template.pool_at_mask(outputs.last_hidden_state, batch["mask_index"])


# Prompts of SNCSE's released code (anchor, and positive / soft negative; it evaluates with the
# anchor prompt; the whole prompt fits max_length) and of OssCSE's paper, which follows
# PromptBERT: its `"X" means [MASK].` spacing and its truncation (the sentence to max_length
# tokens, then the template). Name -> (template, punctuate, truncate).
PROMPTS: dict[str, tuple[str, bool, str]] = {
    "prompt_sncse_anchor": ('This sentence : " {sentence} " means {mask} .', True, "prompt"),
    "prompt_sncse_positive": ('This sentence of " {sentence} " means {mask} .', True, "prompt"),
    "prompt_osscse_anchor": ('This sentence : "{sentence}" means {mask}.', False, "sentence"),
    "prompt_osscse_positive": ('This sentence of "{sentence}" means {mask}.', False, "sentence"),
    # the whole-prompt budget for OssCSE's templates (the suite's earlier behaviour)
    "prompt_osscse_anchor_fit": ('This sentence : "{sentence}" means {mask}.', False, "prompt"),
    "prompt_osscse_positive_fit": ('This sentence of "{sentence}" means {mask}.', False, "prompt"),
}


POOLERS: dict[str, Callable[..., Pooler]] = {
    "cls": ClsPooler,
    "cls_before_pooler": ClsBeforePooler,
    "mean": MeanPooler,
}
for _name, (_template, _punctuate, _truncate) in PROMPTS.items():
    POOLERS[_name] = functools.partial(
        PromptPooler, name=_name, template=_template, punctuate=_punctuate, truncate=_truncate
    )


def get_pooler(name: str, **kwargs: Any) -> Pooler:
    if name not in POOLERS:
        raise KeyError(f"unknown pooler '{name}'; known: {', '.join(sorted(POOLERS))}")
    return POOLERS[name](**kwargs)


def register_pooler(name: str, factory: Callable[..., Pooler]) -> None:
    POOLERS[name] = factory
