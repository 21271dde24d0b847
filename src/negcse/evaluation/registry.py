"""Evaluations by name: each module of ``negcse.evaluation`` (but the helpers in
:data:`HELPERS`) defines one :class:`Evaluation` subclass and decorates it with
:func:`register`; ``negcse evaluate --only NAME,...`` runs them on one loaded model. A module
outside the package registers the same way when it is importable and named in
``$NEGCSE_EVALUATIONS`` (:data:`MODULES_ENV`; the workflow's parse and its jobs both read it),
and an installed package through the ``negcse.evaluations`` entry-point group
(:mod:`negcse.plugins`: a module, or an Evaluation subclass). An evaluation with a :class:`Job`
runs in every model's evaluation job of the workflow (negcse.workflow.plan)."""

from __future__ import annotations

import importlib
import os
import pkgutil
import shlex
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from negcse.errors import UserError
from negcse.plugins import load_plugins

if TYPE_CHECKING:
    from negcse.encoders.vectors import SentenceCache

#: modules of the package that are not evaluations
HELPERS = frozenset({"registry", "cache", "embedder", "transfer_classifier", "mteb_runner"})

#: option name -> argparse keywords (``Evaluation.options``)
Options = dict[str, dict[str, Any]]

#: settings every evaluation receives besides its own options
COMMON_SETTINGS = ("model", "pooler", "mirror", "batch_size", "tags")

#: environment variable naming modules outside the package that define evaluations
#: (comma-separated, importable: e.g. on PYTHONPATH)
MODULES_ENV = "NEGCSE_EVALUATIONS"

#: the models an evaluation job evaluates (rules/evaluate.smk): trained runs, untrained
#: backbones, released checkpoints
MODELS = ("trained", "untrained", "released")


def quoted(values: Iterable[Any]) -> str:
    """Values as shell words: spaces and metacharacters stay inert."""
    return " ".join(shlex.quote(str(v)) for v in values)


def setting(config: Mapping[str, Any], key: str | None) -> Any:
    """The config value at a dotted ``key`` (``evaluation.transfer``); None for no key."""
    value: Any = config
    for part in key.split(".") if key else ():
        value = (value or {}).get(part)
    return value if key else None


@dataclass(frozen=True)
class Job:
    """How the workflow runs an evaluation in each model's evaluation job: its place in the
    job's ``--only`` list, the config key of its settings, the options they become, the files it
    reads and writes (``{model}``: the model's part of a path, e.g. ``m/bert/seed1``).

    ``args(settings, config)`` gives the options before the files (``settings``: the value at
    ``config_key``); without it they are derived from ``schema``: ``--NAME-KEY VALUE...`` for
    each of its properties that has a value, in the schema's order. ``needs`` are input files the job waits for (input name -> path), ``reads``
    input files passed as ``--NAME-OPTION FILE`` (option -> path); ``out`` is the JSON result
    (``--NAME-out``, output named ``NAME``), ``writes`` more outputs (output name -> (option,
    path)), ``reports`` the ``report()`` keywords of some outputs (only outputs in git: the
    Snakemake report of a fresh clone needs every file it lists). ``models``: which models.

    ``schema``: the JSON schema of the value at ``config_key`` when the evaluation owns that key
    (its defaults fill the config as config.schema.yaml's do; negcse.workflow.config.schema puts
    it in its place), so a new evaluation's settings need no schema edit; None: the key is typed
    in config.schema.yaml (one several parts of the workflow read, e.g. ``analysis``).
    """

    order: int
    config_key: str | None = None
    args: Callable[[Any, Mapping[str, Any]], str] | None = None
    models: tuple[str, ...] = MODELS
    needs: Mapping[str, str] = field(default_factory=dict)
    reads: Mapping[str, str] = field(default_factory=dict)
    out: str = "results/eval/{name}/{model}.json"
    writes: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    reports: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    schema: Mapping[str, Any] | None = None

    def options(self, name: str, config: Mapping[str, Any]) -> str:
        """The options of evaluation ``name`` in a job under ``config``."""
        settings = setting(config, self.config_key)
        if self.args is not None:
            return self.args(settings, config)
        words = []
        for key in (self.schema or {}).get("properties", {}):
            value = (settings or {}).get(key)
            if value is not None:
                values = value if isinstance(value, list) else [value]
                words.append(f"--{name}-{key.replace('_', '-')} {quoted(values)}")
        return " ".join(words)


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
    #: how the workflow runs it (None: by the command only, e.g. MTEB's own rule)
    job: ClassVar[Job | None] = None

    @abstractmethod
    def run(self, encoder: SentenceCache, settings: dict[str, Any]) -> dict[str, Any]:
        """The result; ``encoder(sentences)`` gives their embeddings (cached across evaluations)."""

    def check(self, settings: dict[str, Any]) -> None:  # noqa: B027 (optional hook)
        """Fail on bad settings here, before the model loads and any evaluation runs."""

    def summary(self, result: dict[str, Any]) -> str:
        """One line for the log."""
        return ""


def command_options(cls: type[Evaluation]) -> Options:
    """``cls.options`` as ``negcse evaluate`` offers them: an option its ``job.schema`` types
    takes its default and choices from there (the config's, written once)."""
    schema = cls.job.schema if cls.job is not None else None
    props = (schema or {}).get("properties", {})
    out: dict[str, dict[str, Any]] = {}
    for option, keywords in cls.options.items():
        kwargs = dict(keywords)
        prop = props.get(option, {})
        if "default" in prop:
            kwargs.setdefault("default", prop["default"])
        choices = prop.get("enum") or prop.get("items", {}).get("enum")
        if choices is not None:
            kwargs.setdefault("choices", choices)
        out[option] = kwargs
    return out


_REGISTRY: dict[str, type[Evaluation]] = {}


def register(cls: type[Evaluation]) -> type[Evaluation]:
    """Class decorator: make ``cls`` runnable as ``negcse evaluate --only cls.name``."""
    if not (isinstance(cls, type) and issubclass(cls, Evaluation)):
        raise TypeError(f"{cls!r} is not an Evaluation subclass")
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise ValueError(f"evaluation '{cls.name}' is registered twice")
    if "out" in cls.options:
        raise ValueError(f"evaluation '{cls.name}': option 'out' is reserved (its JSON file)")
    _REGISTRY[cls.name] = cls
    return cls


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


@cache
def _import_all() -> None:
    """Import the package's evaluation modules, those ``$NEGCSE_EVALUATIONS`` names and the
    plug-ins'."""
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if info.name not in HELPERS:
            importlib.import_module(f"negcse.evaluation.{info.name}")
    for module in os.environ.get(MODULES_ENV, "").split(","):
        if module.strip():
            try:
                importlib.import_module(module.strip())
            except Exception as exc:  # the user's module: any error of its import
                first = (str(exc).strip().splitlines() or [""])[0][:200]
                raise UserError(
                    f"${MODULES_ENV}: module '{module.strip()}' does not import "
                    f"({type(exc).__name__}: {first}); fix it or remove it from the variable"
                ) from exc
    load_plugins("evaluations", register)


def evaluations() -> dict[str, type[Evaluation]]:
    """Every evaluation: the package's modules, ``$NEGCSE_EVALUATIONS``', the plug-ins' and
    any registered elsewhere."""
    _import_all()
    return dict(_REGISTRY)


def workflow_evaluations() -> list[tuple[str, Job]]:
    """(name, job) of every evaluation the workflow runs, in their :attr:`Job.order`."""
    jobs = [(name, cls.job) for name, cls in evaluations().items() if cls.job is not None]
    return sorted(jobs, key=lambda item: (item[1].order, item[0]))


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
