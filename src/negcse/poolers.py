"""Poolers: how a sentence becomes one vector.

A pooler may rewrite the text before tokenization (prompt poolers wrap the sentence in a
template) and then reduces the encoder output to one vector per sentence. ``POOLERS`` maps a
name to a factory; methods add their own (e.g. prompt pooling) without touching the trainer.
"""

from __future__ import annotations

import functools
import logging
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from negcse.lazy import torch

if TYPE_CHECKING:
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


TRUNCATIONS = ("prompt", "sentence")
MAX_POSITIONS = 512  # the prompt never exceeds the position embeddings of BERT / RoBERTa


@dataclass(frozen=True)
class _PromptIds:
    """A template tokenized for one tokenizer."""

    prefix: list[int]
    suffix: list[int]
    mask_offset: int  # position of the mask token inside ``suffix``
    head: int  # special tokens the tokenizer puts before a sequence ([CLS] / <s>)
    lead: str  # text put before the sentence (the template's space, if any)


class PromptPooler(Pooler):
    """The hidden state at the mask token of a prompt that wraps the sentence (PromptBERT style).

    ``template`` holds ``{sentence}`` and ``{mask}`` (the tokenizer's own mask token goes in).
    The prompt is built at token level, as SNCSE's released trainer does: the template pieces are
    tokenized once, the sentence on its own (literal special-token text inside it stays plain
    text) and cut so that ``[CLS] prefix sentence suffix [SEP]`` fits ``max_length``; the
    template is never cut. A space before ``{sentence}`` is tokenized with the sentence, so
    byte-level BPE (RoBERTa) gets ``Ġword`` as in the untruncated full text. ``punctuate`` adds
    `` .`` to a sentence whose last character is not ASCII punctuation (SNCSE's released code
    does so in training and evaluation). The mask position of each row goes in ``mask_index``.

    ``truncate`` sets the sentence's token budget: ``prompt`` (SNCSE's released trainer) cuts the
    sentence so the whole prompt fits ``max_length``; ``sentence`` (PromptBERT's ``train.py``,
    which OssCSE follows) cuts the sentence alone to ``max_length`` tokens and then adds the
    template, so the prompt may exceed ``max_length`` (never the model's 512 positions).
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
        if truncate not in TRUNCATIONS:
            raise ValueError(f"truncate must be one of {TRUNCATIONS}, got {truncate!r}")
        self.truncate = truncate
        super().__init__(tokenizer)
        if template.count("{sentence}") != 1 or template.count("{mask}") != 1:
            raise ValueError(
                f"a prompt template needs one {{sentence}} and one {{mask}}: {template!r}"
            )
        if template.index("{mask}") < template.index("{sentence}"):
            raise ValueError(f"the mask must follow the sentence in the template: {template!r}")
        self.name = name
        self.template = template
        self.punctuate = punctuate
        self._cached: tuple[Any, _PromptIds] | None = None

    def template_ids(self, tokenizer: Any) -> _PromptIds:
        """The template's token ids for ``tokenizer`` (computed once per tokenizer)."""
        if self._cached is not None and self._cached[0] is tokenizer:
            return self._cached[1]
        if tokenizer.mask_token is None:
            raise ValueError(f"pooler {self.name} needs a tokenizer with a mask token")
        prefix, suffix = self.template.split("{sentence}")
        lead = " " if prefix.endswith(" ") else ""
        suffix = suffix.replace("{mask}", tokenizer.mask_token)
        pre = tokenizer(prefix.removesuffix(" "), add_special_tokens=False)["input_ids"]
        suf = tokenizer(suffix, add_special_tokens=False)["input_ids"]
        if suf.count(tokenizer.mask_token_id) != 1:
            raise ValueError(f"template suffix {suffix!r} does not give one mask token")
        head = tokenizer.build_inputs_with_special_tokens([-1]).index(-1)
        ids = _PromptIds(pre, suf, suf.index(tokenizer.mask_token_id), head, lead)
        self._cached = (tokenizer, ids)
        return ids

    def prepare(self, sentence: str) -> str:
        """The sentence as it goes into the template (stripped; `` .`` added if ``punctuate``)."""
        text = sentence.strip()
        if self.punctuate and (not text or text[-1] not in string.punctuation):
            text += " ."
        return text

    def tokenize(
        self, tokenizer: Any, sentences: Sequence[str], max_length: int
    ) -> dict[str, Tensor]:
        t = self.template_ids(tokenizer)
        overhead = tokenizer.num_special_tokens_to_add(pair=False) + len(t.prefix) + len(t.suffix)
        if self.truncate == "sentence":
            budget = min(max_length, MAX_POSITIONS - overhead)
        else:
            budget = max_length - overhead
        if budget < 1:
            raise ValueError(
                f"max_length {max_length} leaves no room for the sentence in prompt {self.name}"
            )
        texts = [t.lead + self.prepare(s) for s in sentences]
        encoded = tokenizer(texts, add_special_tokens=False, split_special_tokens=True)
        rows = [
            tokenizer.build_inputs_with_special_tokens(t.prefix + ids[:budget] + t.suffix)
            for ids in encoded["input_ids"]
        ]
        lengths = torch.tensor([len(r) for r in rows])
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        input_ids = torch.full((len(rows), int(lengths.max())), pad, dtype=torch.long)
        for i, r in enumerate(rows):
            input_ids[i, : len(r)] = torch.tensor(r)
        attention = (torch.arange(input_ids.size(1)) < lengths[:, None]).long()
        # mask position = specials before + prefix + kept sentence tokens + offset in the suffix
        body = torch.tensor([min(len(ids), budget) for ids in encoded["input_ids"]])
        batch = {"input_ids": input_ids, "attention_mask": attention}
        if "token_type_ids" in tokenizer.model_input_names:
            batch["token_type_ids"] = torch.zeros_like(input_ids)
        batch["mask_index"] = t.head + len(t.prefix) + body + t.mask_offset
        return batch

    def pool(self, outputs: Any, batch: dict[str, Tensor]) -> Tensor:
        hidden = outputs.last_hidden_state
        # a gather, not torch.arange: the lazy ``torch`` name cannot be traced by torch.compile
        index = batch["mask_index"].to(hidden.device)[:, None, None]
        return hidden.gather(1, index.expand(-1, 1, hidden.size(-1))).squeeze(1)


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
