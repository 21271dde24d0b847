"""Generator specs: what each generator makes, from which settings, in which steps.

A generator is declared once, as ``SPEC = GeneratorSpec(...)`` in its own module under
``negcse.generators.specs``: its settings are one dataclass (negcse.generators.settings: each
field's default, bounds and help, from which the config schema, the command's options and its
command line are derived) and its steps (negcse.generators.steps) are the rules
``rules/generators.smk`` makes. Settings layer as defaults < ``generators.<name>`` <
``methods.<m>.generators.<name>`` (the last for generators a method may tune). A *variant*
names every setting that changes the output, so each combination gets its own file and a change
reruns exactly the jobs that read it.

Specs are imported when the Snakefile is parsed: a spec module imports no torch, spaCy or
numpy (the implementation modules import the spec, not the other way round), and nothing of
negcse.methods or negcse.workflow: what the generators need to know of the configured methods
(which columns each reads) is passed in as ``readers`` (method -> columns).

An installed package adds generators through the ``negcse.generators`` entry-point group
(:mod:`negcse.plugins`): a spec module, or its ``GeneratorSpec``; loaded after the built-in specs.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import jsonschema

import negcse.generators.specs as specs_pkg
from negcse.data.corpus import RESERVED_COLUMNS
from negcse.generators.settings import GeneratorSettings, defaults, schema
from negcse.plugins import load_plugins

Settings = dict[str, Any]
Readers = Mapping[str, Iterable[str]]  # method -> the columns it reads


class StepName(Protocol):
    """What the registry reads of a step (a :class:`negcse.generators.steps.Step`, which
    imports this module): the name of its rule."""

    @property
    def name(self) -> str: ...

#: a setting that becomes part of a path (config.schema.yaml's ``$defs/name``)
NAME = {
    "type": "string",
    "pattern": r"^[A-Za-z0-9][A-Za-z0-9_.+-]*(?!\n)$",  # (?!\n): not "name\n"
    "description": "a name used in paths: letters, digits and _ . + -, a letter or digit first",
}
#: a model (hub id or folder) whose name becomes part of a file name (SAN's MLM): no spaces,
#: quotes or shell characters
MODEL_IN_PATH = {
    "type": "string",
    "pattern": r"^[A-Za-z0-9_./~][A-Za-z0-9_./~+-]*(?!\n)$",
    "description": "a model whose name is used in paths: letters, digits and _ . / ~ + -",
}


def _no_models(settings: Settings) -> tuple[str, ...]:
    return ()


def _no_gpu(settings: Settings) -> str | None:
    return None


def _as_configured(settings: Settings, mirror: str | None) -> Settings:
    return settings


class SubstituteWarning(UserWarning):
    """A generator's planned substitute (``GeneratorSpec.plan``): shown as a Python warning
    wherever the config is resolved (the workflow, ``negcse fidelity``, a script), besides the
    log line and the records (``substitutes``)."""


@dataclass(frozen=True)
class GeneratorSpec:
    """One generator: the columns it produces and everything the workflow needs to make them.

    ``output`` is the pattern of a column's file, with ``{corpus}`` and, where the generator
    has them, ``{variant}`` (``variant(settings, column)`` names it), ``{seed}`` (one file per
    training seed) and ``{backbone}`` (one per backbone: GCSE's denoising by a trained model).
    ``settings`` is the settings dataclass; ``steps`` the jobs that make the files, the last
    one writing ``output``."""

    name: str
    columns: tuple[str, ...]
    output: str
    settings: type[GeneratorSettings]
    steps: tuple[StepName, ...] = ()  # negcse.generators.steps.Step
    per_method: bool = False
    variant: Callable[[Settings, str], str] | None = None
    models: Callable[[Settings], Iterable[str]] = _no_models  # models to prefetch
    #: the GPU rule whose measured per-sentence cost (benchmarks/gpu_costs.csv) prices one
    #: output in the dry run's estimate; None: no GPU job
    gpu_rule: Callable[[Settings], str | None] = _no_gpu
    #: what a model trained on the columns records of how they were made (its run spec, so its
    #: negcse.json, evaluations and table rows): e.g. GCSE's LLM; {} for nothing
    provenance: Callable[[Settings], dict[str, Any]] = lambda _settings: {}
    #: the settings this machine can make (given the config's mirror): a resource found nowhere
    #: here (no mirror or cache copy, offline or unreachable) replaced by its documented fallback
    #: when the workflow is planned, logged and warned (``SubstituteWarning``), so every file
    #: name and record says what was used; the provenance then lists it under ``substitutes``
    plan: Callable[[Settings, str | None], Settings] = _as_configured

    def __post_init__(self) -> None:
        if ("{variant}" in self.output) != (self.variant is not None):
            raise ValueError(f"generator {self.name}: {{variant}} in output needs variant()")

    @property
    def defaults(self) -> Settings:
        return defaults(self.settings)

    @property
    def schema(self) -> dict[str, Any]:
        return schema(self.settings)


SPECS: dict[str, GeneratorSpec] = {}


def register(spec: GeneratorSpec) -> GeneratorSpec:
    """Add ``spec``; a name or column another spec already holds, or a reserved column
    (:data:`negcse.data.corpus.RESERVED_COLUMNS`), is an error."""
    if not isinstance(spec, GeneratorSpec):
        raise TypeError(f"{spec!r} is not a GeneratorSpec")
    reserved = sorted(RESERVED_COLUMNS & set(spec.columns))
    if reserved:
        raise ValueError(
            f"generator '{spec.name}' makes column(s) {reserved}, a name the corpus holds "
            "(the training reads the corpus under it): name its column otherwise"
        )
    old = SPECS.get(spec.name)
    if old is not None and old != spec:
        raise ValueError(f"generator '{spec.name}' registered twice")
    for other in SPECS.values():
        taken = set(other.columns) & set(spec.columns)
        if other.name != spec.name and taken:
            raise ValueError(f"column(s) {sorted(taken)} of '{spec.name}' made by '{other.name}'")
    SPECS[spec.name] = spec
    return spec


_LOADED: list[bool] = []


def specs() -> dict[str, GeneratorSpec]:
    """Every generator: the modules of ``negcse.generators.specs`` register theirs on import,
    then the plug-ins' (imported on the first call)."""
    if not _LOADED:
        _LOADED.append(True)
        for info in pkgutil.iter_modules(specs_pkg.__path__):
            importlib.import_module(f"{specs_pkg.__name__}.{info.name}")
        load_plugins("generators", register)
    return SPECS


def spec(name: str) -> GeneratorSpec:
    found = specs()
    if name not in found:
        raise KeyError(f"unknown generator '{name}'; known: {', '.join(sorted(found))}")
    return found[name]


def producer(column: str) -> GeneratorSpec:
    """The generator of a column."""
    for candidate in specs().values():
        if column in candidate.columns:
            return candidate
    known = sorted(c for s in SPECS.values() for c in s.columns)
    raise KeyError(f"no generator produces column '{column}'; known: {', '.join(known)}")


def settings(config: Mapping[str, Any], name: str, method: str | None = None) -> Settings:
    """``name``'s settings: defaults < ``generators.<name>`` < ``methods.<method>.generators.
    <name>`` (when the generator is per-method and ``method`` is given). An unknown key raises a
    KeyError, a bad value a ValueError, each naming its place in the config."""
    gen = spec(name)
    layers = [(f"generators.{name}", (config.get("generators") or {}).get(name))]
    if method is not None and gen.per_method:
        entry = (config["methods"][method].get("generators") or {}).get(name)
        layers.append((f"methods.{method}.generators.{name}", entry))
    out = gen.defaults
    for where, values in layers:
        unknown = sorted(set(values or {}) - set(out))
        if unknown:
            raise KeyError(
                f"{where}: unknown setting(s) {', '.join(map(repr, unknown))}; "
                f"known: {', '.join(sorted(out))}"
            )
    for _, values in layers:
        out.update(values or {})
    try:
        gen.settings(**out)  # each value's schema, then the checks a schema cannot express
    except ValueError as err:
        for where, values in layers:  # a bad value: named in the layer that sets it
            for error in _validator(gen.settings).iter_errors(values or {}):
                key = ".".join(str(p) for p in error.absolute_path)
                raise ValueError(f"{where}.{key}: {error.message}") from None
        where = " < ".join(w for w, values in layers if values) or f"generators.{name}"
        raise ValueError(f"{where}: {err}") from None
    return gen.plan(out, config.get("mirror") or None)


def methods_reading(
    config: Mapping[str, Any], columns: Iterable[str], readers: Readers
) -> list[str]:
    """Configured methods that read one of ``columns`` (``readers``: method -> columns)."""
    wanted = set(columns)
    return [m for m in config["methods"] if wanted & set(readers.get(m, ()))]


def provenance(config: Mapping[str, Any], method: str, reads: Iterable[str]) -> dict[str, Any]:
    """What the generators of ``method``'s columns (``reads``) record of how they made them
    (merged over those generators, in registration order; their ``substitutes`` lists
    joined)."""
    wanted = set(reads)
    out: dict[str, Any] = {}
    for gen in specs().values():
        if wanted & set(gen.columns):
            found = settings(config, gen.name, method if gen.per_method else None)
            record = gen.provenance(found)
            substitutes = out.get("substitutes", []) + record.pop("substitutes", [])
            out.update(record, **({"substitutes": substitutes} if substitutes else {}))
    return out


def variants(config: Mapping[str, Any], name: str, readers: Readers) -> dict[str, Settings]:
    """Variant name -> settings, over every configured method that reads the generator's
    columns (a method-independent generator has one, named by its generator-level settings)."""
    gen = spec(name)
    if gen.variant is None:
        return {}
    out = {}
    for method in methods_reading(config, gen.columns, readers):
        found = settings(config, name, method)
        for column in set(readers[method]) & set(gen.columns):
            out[gen.variant(found, column)] = found
    return out


def column_file(
    config: Mapping[str, Any],
    column: str,
    method: str,
    seed: int | str,
    corpus: str,
    backbone: str | None = None,
) -> str:
    """The file of ``column`` that a train job of ``method``, ``seed`` (and ``backbone``, for
    a generator whose output depends on it, e.g. through a trained model) reads."""
    gen = producer(column)
    values: dict[str, Any] = {"corpus": corpus, "seed": seed}
    if "{backbone}" in gen.output:
        if backbone is None:
            raise ValueError(f"column '{column}': its file depends on the backbone; give one")
        values["backbone"] = backbone
    if gen.variant is not None:
        values["variant"] = gen.variant(settings(config, gen.name, method), column)
    return gen.output.format(**values)


def config_models(config: Mapping[str, Any], readers: Readers) -> list[str]:
    """Every model the generators need under ``config``: each generator's own settings and
    every configured method's override, in order, without repeats."""
    names: list[str] = []
    for name, gen in specs().items():
        names += gen.models(settings(config, name))
        if gen.per_method:
            for method in methods_reading(config, gen.columns, readers):
                names += gen.models(settings(config, name, method))
    return list(dict.fromkeys(names))


def settings_schema(per_method: bool = False) -> dict[str, Any]:
    """The config schema of ``generators`` (or, with ``per_method``, of a method's
    ``generators``): one object per generator, its keys those of the spec."""
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            name: {
                "type": "object",
                "additionalProperties": False,
                "properties": gen.schema,
            }
            for name, gen in specs().items()
            if gen.per_method or not per_method
        },
    }


_VALIDATORS: dict[type, jsonschema.Draft202012Validator] = {}


def _validator(cls: type[GeneratorSettings]) -> jsonschema.Draft202012Validator:
    if cls not in _VALIDATORS:
        _VALIDATORS[cls] = jsonschema.Draft202012Validator({"properties": schema(cls)})
    return _VALIDATORS[cls]
