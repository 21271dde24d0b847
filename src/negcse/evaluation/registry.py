"""Evaluations by name: each module of ``negcse.evaluation`` (but the helpers in
:data:`HELPERS`) defines one :class:`Evaluation` subclass and decorates it with
:func:`register`; ``negcse evaluate --only NAME,...`` runs them on one loaded model."""

from __future__ import annotations

import importlib
import pkgutil
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from negcse.vectors import SentenceCache

#: modules of the package that are not evaluations
HELPERS = frozenset({"registry", "cache", "embedder", "transfer_classifier", "mteb_runner"})

#: option name -> argparse keywords (``Evaluation.options``)
Options = dict[str, dict[str, Any]]

#: settings every evaluation receives besides its own options
COMMON_SETTINGS = ("model", "pooler", "mirror", "batch_size", "tags")


class Evaluation(ABC):
    """One evaluation of a frozen model, as mteb's evaluators and sentence-transformers'
    ``SequentialEvaluator`` parts: ``run(encoder, settings)`` returns a JSON-able dict.

    ``options`` maps an option name to argparse keywords; ``negcse evaluate`` offers each as
    ``--NAME-OPTION`` (underscores as dashes) and passes its value as ``settings[OPTION]``, with
    :data:`COMMON_SETTINGS` beside them; ``"required": True`` means required when selected. ``--NAME-out`` (the JSON file of the result) is always
    there; ``outputs`` names the options of other files the evaluation writes, checked writable
    before the model loads.
    """

    name: ClassVar[str]
    help: ClassVar[str]
    options: ClassVar[Options] = {}
    outputs: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def run(self, encoder: SentenceCache, settings: dict[str, Any]) -> dict[str, Any]:
        """The result; ``encoder(sentences)`` gives their embeddings (cached across evaluations)."""

    def check(self, settings: dict[str, Any]) -> None:  # noqa: B027 (optional hook)
        """Fail on bad settings here, before the model loads and any evaluation runs."""

    def summary(self, result: dict[str, Any]) -> str:
        """One line for the log."""
        return ""


_REGISTRY: dict[str, type[Evaluation]] = {}


def register(cls: type[Evaluation]) -> type[Evaluation]:
    """Class decorator: make ``cls`` runnable as ``negcse evaluate --only cls.name``."""
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise ValueError(f"evaluation '{cls.name}' is registered twice")
    if "out" in cls.options:
        raise ValueError(f"evaluation '{cls.name}': option 'out' is reserved (its JSON file)")
    _REGISTRY[cls.name] = cls
    return cls


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


def evaluations() -> dict[str, type[Evaluation]]:
    """Every evaluation: the package's modules (imported here) and any registered elsewhere."""
    import negcse.evaluation as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name not in HELPERS:
            importlib.import_module(f"negcse.evaluation.{info.name}")
    return dict(_REGISTRY)


def select(only: str) -> list[type[Evaluation]]:
    """``sts,transfer`` -> those evaluations in that order; an unknown name is an error."""
    known = evaluations()
    names = [n.strip() for n in only.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise ValueError(
            f"--only {only!r}: unknown evaluation {', '.join(unknown) or '(none given)'}; "
            f"known: {', '.join(sorted(known))}"
        )
    if len(set(names)) != len(names):
        raise ValueError(f"--only {only!r} names an evaluation twice")
    return [known[n] for n in names]
