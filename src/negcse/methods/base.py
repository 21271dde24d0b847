"""What a method is: the views it encodes, its loss, its poolers and its parameters.

The trainer knows nothing about any method. For each step it asks the method which *views* to
encode (a view = a text column, an optional prompt pooler, an optional dropout), encodes them,
and hands the embeddings to the method's loss. Extra text columns (negations, TF-IDF negatives,
SAN samples, paraphrases) come from generator artifacts aligned line by line with the corpus.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

import torch
from torch import Tensor

from negcse.poolers import Pooler, get_pooler


@dataclass(frozen=True)
class View:
    """One encoding of a batch: ``column`` feeds ``pooler``; ``dropout`` overrides the model's."""

    name: str
    column: str = "sentence"
    pooler: str = "train"
    dropout: float | None = None


@dataclass
class StepContext:
    """What a loss may look at beyond the embeddings."""

    step: int
    model: torch.nn.Module
    backbone: str
    extras: dict[str, Any] = field(default_factory=dict)


@dataclass
class LossOutput:
    """The loss and named parts of it; parts stay (detached) tensors, so that building the logs
    never waits for the GPU (``float(value)`` when one is read)."""

    loss: Tensor
    logs: dict[str, Tensor | float] = field(default_factory=dict)


@dataclass(frozen=True)
class MethodParams:
    """Base for a method's hyperparameters; subclasses add fields (all with defaults)."""

    temperature: float = 0.05

    @classmethod
    def from_dict(cls, values: dict[str, Any], where: str) -> MethodParams:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise KeyError(
                f"{where}: unknown parameter(s) {', '.join(map(repr, unknown))} for "
                f"{cls.__name__}; known: {', '.join(sorted(known))}"
            )
        return cls(**values)


class Method(ABC):
    """A training method. Subclasses set ``name``, ``Params`` and implement ``loss``."""

    name: ClassVar[str]
    Params: ClassVar[type[MethodParams]] = MethodParams
    #: generator artifacts (name -> column) the method needs besides the corpus
    columns: ClassVar[tuple[str, ...]] = ()
    #: pooler of training views whose ``View.pooler`` is "train"
    train_pooler: ClassVar[str] = "cls_before_pooler"
    #: the MLP head (dense + tanh) on top of training views (SimCSE's mlp_only_train)
    use_mlp: ClassVar[bool] = True
    #: pooler used for evaluation and saved with the checkpoint
    eval_pooler: ClassVar[str] = "cls_before_pooler"

    def __init__(self, params: MethodParams, backbone: str) -> None:
        self.params = params
        self.backbone = backbone

    def views(self, step: int) -> list[View]:
        """Views to encode at ``step``; the default is SimCSE's two dropout views."""
        return [View("anchor"), View("positive")]

    def pooler(self, key: str, tokenizer: Any) -> Pooler:
        """The pooler of a view (``View.pooler``): "train" or a registered pooler name."""
        return get_pooler(self.train_pooler if key == "train" else key, tokenizer=tokenizer)

    def attach(self, model: torch.nn.Module) -> None:  # noqa: B027 - optional hook
        """Called once before training (e.g. to remember initial weights)."""

    def prepare(
        self, columns: dict[str, list[str]], tokenizer: Any, max_length: int
    ) -> dict[str, float]:
        """Called once before training with the whole corpus and its columns; returns counts
        for the log and the training metadata (``train_log.json``: ``data_stats``)."""
        return {}

    def after_step(self, lr: float) -> None:  # noqa: B027 - optional hook
        """Called after each optimizer step with the learning rate of that step."""


def identical_prompt_pairs(
    pooler: Pooler,
    tokenizer: Any,
    first: list[str],
    second: list[str],
    max_length: int,
    chunk: int = 4096,
) -> int:
    """Rows whose two texts give the same token ids through ``pooler`` (after truncation)."""
    same = 0
    for start in range(0, len(first), chunk):
        a = pooler.tokenize(tokenizer, first[start : start + chunk], max_length)
        b = pooler.tokenize(tokenizer, second[start : start + chunk], max_length)
        len_a, len_b = a["attention_mask"].sum(1), b["attention_mask"].sum(1)
        width = min(a["input_ids"].size(1), b["input_ids"].size(1))
        equal = (a["input_ids"][:, :width] == b["input_ids"][:, :width]) | (
            torch.arange(width) >= len_a[:, None]
        )
        same += int(((len_a == len_b) & equal.all(1)).sum())
    return same

    @abstractmethod
    def loss(self, emb: dict[str, Tensor], ctx: StepContext) -> LossOutput: ...
