"""Prompt inputs built at token level, and pooling at the prompt's mask token (PromptBERT style).

A template holds ``{sentence}`` and ``{mask}`` (the tokenizer's own mask token goes in). Its
pieces are tokenized once, the sentence on its own (literal special-token text inside it stays
plain text) and cut to a token budget, so the template is never cut. A space before
``{sentence}`` is tokenized with the sentence, so byte-level BPE (RoBERTa) gets ``Ġword`` as in
the untruncated full text. ``punctuate`` adds `` .`` to a sentence whose last character is not
ASCII punctuation (SNCSE's released code). ``truncate``: ``prompt`` cuts the sentence so that
the whole prompt fits ``max_length`` (SNCSE's released trainer); ``sentence`` cuts the sentence
alone to ``max_length`` tokens and then adds the template (PromptBERT's ``train.py``, which
OssCSE follows), never beyond the model's 512 positions.

This module is self-contained (the standard library, and torch inside :func:`prompt_batch`):
negcse's prompt poolers use it, and every model folder saved with a prompt pooler carries a copy
beside ``st_prompt.py``, so that sentence-transformers encodes it exactly so without negcse.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

TRUNCATIONS = ("prompt", "sentence")
MAX_POSITIONS = 512  # the prompt never exceeds the position embeddings of BERT / RoBERTa


@dataclass(frozen=True)
class PromptIds:
    """A template tokenized for one tokenizer."""

    prefix: list[int]
    suffix: list[int]
    mask_offset: int  # position of the mask token inside ``suffix``
    head: int  # special tokens the tokenizer puts before a sequence ([CLS] / <s>)
    lead: str  # text put before the sentence (the template's space, if any)


def check_template(template: str, truncate: str) -> None:
    """A ValueError unless ``template`` has one ``{sentence}`` before one ``{mask}``."""
    if truncate not in TRUNCATIONS:
        raise ValueError(f"truncate must be one of {TRUNCATIONS}, got {truncate!r}")
    if template.count("{sentence}") != 1 or template.count("{mask}") != 1:
        raise ValueError(f"a prompt template needs one {{sentence}} and one {{mask}}: {template!r}")
    if template.index("{mask}") < template.index("{sentence}"):
        raise ValueError(f"the mask must follow the sentence in the template: {template!r}")


def template_ids(tokenizer: Any, template: str) -> PromptIds:
    """The template's pieces as token ids of ``tokenizer``."""
    if tokenizer.mask_token is None:
        raise ValueError(f"prompt {template!r} needs a tokenizer with a mask token")
    prefix, suffix = template.split("{sentence}")
    lead = " " if prefix.endswith(" ") else ""
    suffix = suffix.replace("{mask}", tokenizer.mask_token)
    pre = tokenizer(prefix.removesuffix(" "), add_special_tokens=False)["input_ids"]
    suf = tokenizer(suffix, add_special_tokens=False)["input_ids"]
    if suf.count(tokenizer.mask_token_id) != 1:
        raise ValueError(f"template suffix {suffix!r} does not give one mask token")
    head = tokenizer.build_inputs_with_special_tokens([-1]).index(-1)
    return PromptIds(pre, suf, suf.index(tokenizer.mask_token_id), head, lead)


def prepare(sentence: str, punctuate: bool) -> str:
    """The sentence as it goes into the template (stripped; `` .`` added if ``punctuate``)."""
    text = sentence.strip()
    if punctuate and (not text or text[-1] not in string.punctuation):
        text += " ."
    return text


def prompt_batch(
    tokenizer: Any,
    ids: PromptIds,
    sentences: Sequence[str],
    max_length: int,
    truncate: str,
    punctuate: bool,
) -> dict[str, Any]:
    """The padded batch (torch tensors) of the sentences in the template: ``input_ids``,
    ``attention_mask``, ``token_type_ids`` where the tokenizer takes them, and ``mask_index``,
    each row's mask position."""
    import torch

    overhead = tokenizer.num_special_tokens_to_add(pair=False) + len(ids.prefix) + len(ids.suffix)
    if truncate == "sentence":
        budget = min(max_length, MAX_POSITIONS - overhead)
    else:
        budget = max_length - overhead
    if budget < 1:
        raise ValueError(f"max_length {max_length} leaves no room for the sentence in the prompt")
    texts = [ids.lead + prepare(s, punctuate) for s in sentences]
    encoded = tokenizer(texts, add_special_tokens=False, split_special_tokens=True)
    rows = [
        tokenizer.build_inputs_with_special_tokens(ids.prefix + tokens[:budget] + ids.suffix)
        for tokens in encoded["input_ids"]
    ]
    lengths = torch.tensor([len(r) for r in rows])
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    input_ids = torch.full((len(rows), int(lengths.max())), pad, dtype=torch.long)
    for i, r in enumerate(rows):
        input_ids[i, : len(r)] = torch.tensor(r)
    attention = (torch.arange(input_ids.size(1)) < lengths[:, None]).long()
    # mask position = specials before + prefix + kept sentence tokens + offset in the suffix
    body = torch.tensor([min(len(tokens), budget) for tokens in encoded["input_ids"]])
    batch = {"input_ids": input_ids, "attention_mask": attention}
    if "token_type_ids" in tokenizer.model_input_names:
        batch["token_type_ids"] = torch.zeros_like(input_ids)
    batch["mask_index"] = ids.head + len(ids.prefix) + body + ids.mask_offset
    return batch


def pool_at_mask(hidden: Any, mask_index: Any) -> Any:
    """Row i of ``hidden`` (batch, length, dim) at position ``mask_index[i]``: (batch, dim)."""
    # a gather, not an arange index: negcse's lazy ``torch`` name cannot be traced by torch.compile
    index = mask_index.to(hidden.device)[:, None, None]
    return hidden.gather(1, index.expand(-1, 1, hidden.size(-1))).squeeze(1)
