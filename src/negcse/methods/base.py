"""What a method is: the views it encodes, its loss, its poolers, its guides and its parameters.

The trainer knows nothing about any method. The contract, per step:

1. ``views(step)``: the *views* to encode (a view = a text column, an optional prompt pooler,
   an optional dropout); the trainer encodes them with the trained model (gradients on).
2. ``guides()``: frozen models the method reads (:class:`Guide`: a name, the columns it encodes,
   its pooler). The user gives each a model (``negcse train --guide NAME=PATH``: a trained model
   folder of the suite or a backbone name; ``Guide.default`` when not given). The trainer loads
   each once, frozen (eval mode, ``requires_grad`` False, on the training device, under the
   training autocast) and never saves it (``last.pt`` holds the trained model only; a resumed
   run reloads the guides). Each step it encodes the guide's columns for the batch rows under
   ``no_grad``: ``ctx.guides[guide.name][column]`` is a (batch, dim) tensor.
3. ``loss(emb, ctx)``: ``emb`` maps view names to embeddings; :class:`StepContext` carries the
   batch's corpus rows (``ctx.rows``) and the batch rows of every column in ``columns``
   (``ctx.columns``): a text column as ``list[str]``, a numeric column (a ``.npy`` or
   one-number-per-line ``.tsv`` aligned with the corpus: scores, weights, labels) as a tensor on
   the training device (float32, int64 or bool; shape (batch,) or (batch, k)).

4. ``after_step(lr)`` after each optimizer step. A method that trains something of its own besides
   the model (RLRD's agent: its networks, optimisers and stored steps) updates it there and
   returns it from ``state_dict()`` (tensors and plain data); the trainer saves it in every
   checkpoint and gives it back to ``load_state_dict()`` when a run resumes. Build such state in
   ``attach(model)``, called once before training, not in ``__init__``.

5. ``augmentations()``: text columns the method rewrites anew at every epoch, each with a
   function (text, rng) -> text (GCSE stage 1's released word doubling). The trainer applies it
   to every row at the start of each epoch, drawing from a stream seeded by (seed, column,
   epoch), and trains that epoch on the result (every view and guide reading the column), so a
   resumed run draws the same texts.

Columns come from generator artifacts (or any file) aligned line by line with the corpus;
``prepare`` sees them whole once before training. A new method subclasses ``Method[P]`` with
its params dataclass ``P`` (``self.params: P``) and calls ``registry.register``. The workflow
builds every configured method when it parses (params, columns, guides), in every Snakemake
process: a method module imports no torch at its top (``negcse.runtime.lazy``'s ``torch`` and ``F``
load it on first use; ``Tensor`` is for annotations under ``TYPE_CHECKING``).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeAlias, TypeVar

import numpy as np

from negcse.encoders.poolers import Pooler, get_pooler
from negcse.methods.params import ParamError, bounded, check_params
from negcse.runtime.lazy import torch

if TYPE_CHECKING:
    from torch import Tensor

#: a column of the training data: text lines, or a numeric array whose first axis is the line
Column = list[str] | np.ndarray
#: a data augmentation: (text, rng) -> the text trained on (``Method.augmentations``)
Augmentation = Callable[[str, random.Random], str]
#: a column's batch rows as the loss gets them
BatchColumn: TypeAlias = "list[str] | Tensor"


@dataclass(frozen=True)
class View:
    """One encoding of a batch: ``column`` feeds ``pooler``; ``dropout`` overrides the model's;
    ``token_type`` fills the batch's token_type_ids (for models that take them)."""

    name: str
    column: str = "sentence"
    pooler: str = "train"
    dropout: float | None = None
    token_type: int = 0


@dataclass(frozen=True)
class GuideInput:
    """One text a guide encodes each step: ``ctx.guides[guide][key]`` is ``column`` wrapped by
    the registered prompt pooler ``prompt`` (its tokenization; the guide's pooler pools)."""

    key: str
    column: str
    prompt: str


@dataclass(frozen=True)
class Guide:
    """A frozen model a method reads: ``name`` (``--guide NAME=PATH``, key of ``ctx.guides``),
    the text ``columns`` it encodes each step and its ``pooler`` (a registered pooler name;
    ``"cls"`` is [CLS] + the dense + tanh head saved with the model). ``default``: the model
    used when no ``--guide`` names it (None: required). ``inputs``: empty, each column is
    encoded as it is under its own name (tokenized by the pooler); else what the guide encodes
    instead (:class:`GuideInput`, each of ``columns``, prompt-wrapped: RLRD's teachers)."""

    name: str
    columns: tuple[str, ...] = ("sentence",)
    pooler: str = "cls_before_pooler"
    default: str | None = None
    inputs: tuple[GuideInput, ...] = ()
    #: (key, token type) of encoded texts whose token_type_ids are not 0 (models without
    #: token types ignore it): GCSE's frozen model gets its negatives as the trained views
    token_types: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        keys = [i.key for i in self.inputs]
        stray = sorted({i.column for i in self.inputs} - set(self.columns))
        if len(set(keys)) != len(keys) or stray:
            raise ValueError(
                f"guide {self.name}: inputs need distinct keys and columns among "
                f"{self.columns}; got keys {keys}, other columns {stray}"
            )
        typed = sorted({k for k, _ in self.token_types} - {k for k, _, _ in self.encoded()})
        if typed:
            raise ValueError(
                f"guide {self.name}: token_types name keys it does not encode: {typed}"
            )

    def encoded(self) -> tuple[tuple[str, str, str | None], ...]:
        """(key, column, prompt pooler or None) of every text the guide encodes."""
        if self.inputs:
            return tuple((i.key, i.column, i.prompt) for i in self.inputs)
        return tuple((c, c, None) for c in self.columns)


@dataclass
class StepContext:
    """What a loss may look at beyond the embeddings (see the module docstring)."""

    step: int
    model: torch.nn.Module
    backbone: str
    #: corpus line numbers of the batch, in batch order
    rows: np.ndarray | None = None
    #: batch rows of every column the method declared
    columns: dict[str, BatchColumn] = field(default_factory=dict)
    #: guide name -> column -> (batch, dim) embeddings from the frozen guide (no gradient)
    guides: dict[str, dict[str, Tensor]] = field(default_factory=dict)


@dataclass
class LossOutput:
    """The loss and named parts of it; parts stay (detached) tensors, so that building the logs
    never waits for the GPU (``float(value)`` when one is read)."""

    loss: Tensor
    logs: dict[str, Tensor | float] = field(default_factory=dict)


PT = TypeVar("PT", bound="MethodParams")
#: a method's params type (``Method[P]``)
P = TypeVar("P", bound="MethodParams")


@dataclass(frozen=True)
class MethodParams:
    """Base for a method's hyperparameters; subclasses add fields (all with defaults), typed
    and bounded (:mod:`negcse.methods.params`). A subclass with checks across fields overrides
    ``__post_init__``, calls ``super().__post_init__()`` first and raises ``ParamError``."""

    temperature: float = bounded(0.05, gt=0)

    def __post_init__(self) -> None:
        check_params(self)

    @classmethod
    def from_dict(cls: type[PT], values: dict[str, Any], where: str) -> PT:
        """The params of ``values``; an unknown key is a KeyError, a value of the wrong type or
        out of bounds a :class:`ParamError`, each naming ``where`` and the key."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            keys = ", ".join(f"{where}.{key}" for key in unknown)
            raise KeyError(
                f"{keys}: unknown parameter(s) of {cls.__name__}; known: "
                f"{', '.join(sorted(known))}"
            )
        try:
            return cls(**values)
        except ParamError as exc:
            raise exc.at(where) from None


class Method(ABC, Generic[P]):
    """A training method. Subclasses set ``name``, ``Params`` (the class of ``P``) and implement
    ``loss``."""

    name: ClassVar[str]
    Params: ClassVar[type[MethodParams]] = MethodParams
    #: columns (generator artifacts, text or numeric) the method needs besides the corpus
    columns: ClassVar[tuple[str, ...]] = ()
    #: pooler of training views whose ``View.pooler`` is "train"
    train_pooler: ClassVar[str] = "cls_before_pooler"
    #: the MLP head (dense + tanh) on top of training views (SimCSE's mlp_only_train)
    use_mlp: ClassVar[bool] = True
    #: pooler used for evaluation and saved with the checkpoint
    eval_pooler: ClassVar[str] = "cls_before_pooler"
    #: a column whose file replaces the workflow's corpus as the training sentences (a
    #: generator makes it, aligned with the method's other columns); None: the corpus
    corpus_column: ClassVar[str | None] = None
    #: a guide whose model (with its saved MLP head) the trained model starts from instead of
    #: the backbone (GCSE: stage 2 copies the stage-1 model); None: the backbone
    init_guide: ClassVar[str | None] = None
    #: the papers the implementation comes from (ids of resources/papers.bib: ``sncse``,
    #: ``san-hince``, ...), cited with SimCSE in its models' cards (negcse.training.model_card)
    papers: ClassVar[tuple[str, ...]] = ()
    #: the BibTeX of a method from elsewhere (a plug-in's own paper), cited in its models' cards
    citation: ClassVar[str | None] = None

    def __init__(self, params: P, backbone: str) -> None:
        self.params: P = params
        self.backbone = backbone

    def views(self, step: int) -> list[View]:
        """Views to encode at ``step``; the default is SimCSE's two dropout views."""
        return [View("anchor"), View("positive")]

    def pooler(self, key: str, tokenizer: Any) -> Pooler:
        """The pooler of a view (``View.pooler``): "train" or a registered pooler name."""
        return get_pooler(self.train_pooler if key == "train" else key, tokenizer=tokenizer)

    def attach(self, model: torch.nn.Module) -> None:
        """Called once before training (e.g. to remember initial weights)."""

    def prepare(
        self, columns: dict[str, Column], tokenizer: Any, max_length: int
    ) -> dict[str, float]:
        """Called once before training with the whole corpus and its columns; returns counts
        for the log and the training metadata (``train_log.json``: ``data_stats``)."""
        return {}

    def after_step(self, lr: float) -> None:
        """Called after each optimizer step with the learning rate of that step (a method that
        owns trainable state, e.g. RLRD's agent, updates it here)."""

    def state_dict(self) -> dict[str, Any]:
        """Trainable state the method owns outside the model (its own networks, optimisers,
        buffers): tensors and plain data, saved in the training checkpoint (``last.pt``) so a
        resumed run continues exactly. None by default."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned, when a run resumes (before its next step)."""
        if state:
            raise ValueError(
                f"method '{self.name}' owns no state; the checkpoint has {sorted(state)}"
            )

    def guides(self) -> tuple[Guide, ...]:
        """Frozen models the loss reads (none by default)."""
        return ()

    def augmentations(self) -> dict[str, Augmentation]:
        """Text column -> the augmentation its rows get anew at each epoch (none by default)."""
        return {}

    @abstractmethod
    def loss(self, emb: dict[str, Tensor], ctx: StepContext) -> LossOutput: ...


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
