"""Frozen guide models: loaded once, never trained or saved, encoding a method's columns per step.

A method declares its guides (:class:`negcse.methods.base.Guide`); ``negcse train --guide
NAME=PATH`` says which model each one is. The trainer loads them here and hands their
embeddings to the loss (``StepContext.guides``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from negcse.data.sources import resolve_model
from negcse.encoders.poolers import POOLER_WEIGHT, Pooler, get_pooler
from negcse.errors import UserError
from negcse.methods.base import Column, Guide
from negcse.training.batching import TokenRows, collate, to_device, tokenize_rows
from negcse.training.model import SentenceEncoder

logger = logging.getLogger(__name__)

class GuideError(UserError, ValueError):
    """A guide without a model, a model for no declared guide, or a model that cannot serve."""


@dataclass
class FrozenGuide:
    """A guide model in eval mode without gradients, with its pooler and its token rows."""

    spec: Guide
    path: str
    model: SentenceEncoder
    pooler: Pooler
    use_mlp: bool
    rows: dict[str, TokenRows] = field(default_factory=dict)
    #: the encoding function (``compile`` swaps in torch.compile's) and static padding
    embed: Callable[..., Tensor] | None = None
    static_padding: bool = False

    def compile(self, mode: str | None, static_padding: bool) -> None:
        """Encode through ``torch.compile(mode=mode)`` (None: eager), padding each batch to its
        group's longest row where ``static_padding``."""
        self.embed = self.model.compiled_embed(mode, static_padding)
        self.static_padding = static_padding

    @classmethod
    def load(cls, spec: Guide, path: str, device: torch.device) -> FrozenGuide:
        """The model folder ``path`` frozen on ``device``. Pooler ``"cls"`` is [CLS] + the
        dense + tanh head stored as the backbone's pooler (where the suite saves its MLP)."""
        model = SentenceEncoder.from_pretrained(path, dropout=0.0)
        use_mlp = spec.pooler == "cls"
        if use_mlp:
            if not model.has_saved_head():
                raise GuideError(
                    f"guide '{spec.name}': pooler 'cls' needs the dense + tanh head saved with "
                    f"the model ({POOLER_WEIGHT}); {path} has none: give a model trained by "
                    "the suite, or a guide pooler without the head"
                )
            model.load_saved_head()
        pooler_name = "cls_before_pooler" if use_mlp else spec.pooler
        pooler = get_pooler(pooler_name, tokenizer=model.tokenizer)
        model.to(device).eval()
        model.requires_grad_(False)
        logger.info("guide %s: %s (pooler %s), frozen", spec.name, path, spec.pooler)
        return cls(spec, path, model, pooler, use_mlp)

    @torch.no_grad()
    def encode(
        self,
        columns: Mapping[str, Column],
        idx: np.ndarray,
        max_len: int,
        device: torch.device,
    ) -> dict[str, Tensor]:
        """Embeddings of rows ``idx`` of each text the guide encodes (``Guide.encoded``: a
        column, or a column wrapped by a prompt; tokenized on first use) under its key, all in
        one forward pass, as the trainer groups its views."""
        encoded = self.spec.encoded()
        for key, column, prompt in encoded:
            if key not in self.rows:  # a text column (the trainer refuses numeric ones)
                tokenizer = self.model.tokenizer
                wrap = self.pooler if prompt is None else get_pooler(prompt, tokenizer=tokenizer)
                self.rows[key] = tokenize_rows(wrap, tokenizer, list(columns[column]), max_len)
        parts = [self.rows[key] for key, _, _ in encoded]
        pad_to = max(r.longest for r in parts) if self.static_padding else None
        host = collate(parts, idx, pad_to)
        n = len(idx)
        types = dict(self.spec.token_types)
        if types and "token_type_ids" in host:  # models without token types: no change
            for k, (key, _, _) in enumerate(encoded):
                host["token_type_ids"][k * n : (k + 1) * n].fill_(types.get(key, 0))
        batch = to_device(host, device)
        emb = (self.embed or self.model.embed_batch)(batch, self.pooler, self.use_mlp)
        return {key: emb[k * n : (k + 1) * n] for k, (key, _, _) in enumerate(encoded)}


def _check_declared(specs: Sequence[Guide], names: Mapping[str, str]) -> None:
    declared = {g.name for g in specs}
    unknown = sorted(set(names) - declared)
    if unknown:
        raise GuideError(
            f"--guide {', '.join(unknown)}: the method declares no such guide; "
            f"its guides: {', '.join(sorted(declared)) or 'none'}"
        )


def guide_paths(
    specs: Sequence[Guide], given: Mapping[str, str], mirror: str | None = None
) -> dict[str, str]:
    """A local model folder for each declared guide: ``given[name]`` (``--guide NAME=PATH``) or
    the guide's default, resolved like a backbone (path, mirror, package, cache, hub).

    A guide without a model, or a model for a guide the method does not declare, is an error."""
    _check_declared(specs, given)
    paths: dict[str, str] = {}
    for spec in specs:
        name = given.get(spec.name, spec.default)
        if name is None:
            raise GuideError(
                f"guide '{spec.name}' needs a model: pass --guide {spec.name}=PATH "
                "(a trained model folder or a backbone name)"
            )
        paths[spec.name] = resolve_model(name, mirror)
    return paths


def load_guides(
    specs: Sequence[Guide], paths: Mapping[str, str], device: torch.device
) -> dict[str, FrozenGuide]:
    """Each declared guide loaded frozen from its folder ``paths[name]`` (see
    :func:`guide_paths`); a declared guide without a folder is an error."""
    _check_declared(specs, paths)
    missing = [g.name for g in specs if g.name not in paths]
    if missing:
        raise GuideError(
            f"guide(s) {', '.join(missing)} need a model: pass --guide NAME=PATH for each"
        )
    return {g.name: FrozenGuide.load(g, paths[g.name], device) for g in specs}
