"""Training columns tokenized once; a step's batch is a padded gather of token rows.

The trainer used to run the tokenizer on every step, on the training loop's thread. Now each
(column, pooler) pair is tokenized once, in chunks, through the pooler's own ``tokenize`` (so
prompt templates, truncation and the mask position are exactly those of the per-step path), and
only the unpadded token rows are kept. :func:`collate` rebuilds what ``pooler.tokenize`` would
have returned for the batch's texts: right padding to the longest row (or to a fixed length,
``static_padding``), the attention mask, zero token types and any per-row extras
(``mask_index``). The tensors are equal element for element, so CPU results do not change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import torch
from torch import Tensor

from negcse.encoders.poolers import Pooler

_PADDED_KEYS = ("input_ids", "attention_mask", "token_type_ids")


@dataclass
class TokenRows:
    """The unpadded token rows of one column under one pooler."""

    tokens: np.ndarray  # every row's ids, concatenated (int32: half the memory of int64)
    offsets: np.ndarray  # row i is tokens[offsets[i] : offsets[i + 1]]
    extras: dict[str, np.ndarray]  # per-row integers the pooler adds (e.g. mask_index)
    token_types: bool  # the pooler's batches carry (all-zero) token_type_ids
    pad_id: int

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @cached_property
    def longest(self) -> int:
        """The longest row (the static padding width: a prompt template can exceed
        max_seq_len, since the sentence is cut to it before the template is added)."""
        return int(self.lengths.max()) if len(self) else 0

    def __len__(self) -> int:
        return len(self.offsets) - 1


def tokenize_rows(
    pooler: Pooler, tokenizer: Any, texts: Sequence[str], max_length: int, chunk: int = 8192
) -> TokenRows:
    """Tokenize ``texts`` with ``pooler.tokenize`` in chunks; keep the unpadded rows."""
    if getattr(tokenizer, "padding_side", "right") != "right":
        raise ValueError("pre-tokenized training needs a right-padding tokenizer")
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    pieces: list[np.ndarray] = []
    lengths: list[np.ndarray] = []
    extras: dict[str, list[np.ndarray]] = {}
    token_types = False
    for start in range(0, len(texts), chunk):
        batch = pooler.tokenize(tokenizer, list(texts[start : start + chunk]), max_length)
        mask = batch["attention_mask"].numpy().astype(bool)
        n_tok = mask.sum(axis=1)
        prefix = np.arange(mask.shape[1])[None, :] < n_tok[:, None]
        if not np.array_equal(mask, prefix):
            raise ValueError(f"pooler {pooler.name}: attention mask is not a right-padded prefix")
        pieces.append(batch["input_ids"].numpy()[mask].astype(np.int32))
        lengths.append(n_tok)
        if "token_type_ids" in batch:
            if bool(batch["token_type_ids"].any()):
                raise ValueError(f"pooler {pooler.name}: non-zero token types are not supported")
            token_types = True
        for key, value in batch.items():
            if key not in _PADDED_KEYS:
                extras.setdefault(key, []).append(value.numpy().astype(np.int64))
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    if lengths:
        np.cumsum(np.concatenate(lengths), out=offsets[1:])
    tokens = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int32)
    return TokenRows(
        tokens, offsets, {k: np.concatenate(v) for k, v in extras.items()}, token_types, pad_id
    )


def _gather(rows: TokenRows, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The concatenated tokens of rows ``idx`` and their lengths."""
    starts = rows.offsets[idx]
    lens = rows.offsets[idx + 1] - starts
    before = np.cumsum(lens) - lens  # where each row starts in the output
    positions = np.arange(int(lens.sum())) + np.repeat(starts - before, lens)
    return rows.tokens[positions], lens


def collate(
    parts: Sequence[TokenRows], idx: np.ndarray, pad_to: int | None = None
) -> dict[str, Tensor]:
    """The batch of rows ``idx`` of each part in turn, as ``pooler.tokenize`` returns it."""
    gathered = [_gather(rows, idx) for rows in parts]
    tokens = np.concatenate([g[0] for g in gathered])
    lengths = np.concatenate([g[1] for g in gathered])
    width = int(lengths.max()) if pad_to is None else pad_to
    if lengths.max() > width:
        raise ValueError(f"a row of {int(lengths.max())} tokens does not fit padding {width}")
    mask = np.arange(width)[None, :] < lengths[:, None]
    input_ids = np.full(mask.shape, parts[0].pad_id, dtype=np.int64)
    input_ids[mask] = tokens
    batch = {
        "input_ids": torch.from_numpy(input_ids),
        "attention_mask": torch.from_numpy(mask.astype(np.int64)),
    }
    if parts[0].token_types:
        batch["token_type_ids"] = torch.zeros(mask.shape, dtype=torch.long)
    for key in parts[0].extras:
        batch[key] = torch.from_numpy(np.concatenate([rows.extras[key][idx] for rows in parts]))
    return batch


def to_device(batch: dict[str, Tensor], device: torch.device) -> dict[str, Tensor]:
    """Host batch -> device; on CUDA through pinned memory without blocking the host."""
    if device.type != "cuda":
        return {k: v.to(device) for k, v in batch.items()}
    return {k: v.pin_memory().to(device, non_blocking=True) for k, v in batch.items()}
