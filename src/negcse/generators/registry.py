"""Generator specs: what each generator makes, from which settings, with which models.

A generator is declared once, as ``SPEC = GeneratorSpec(...)`` in its own module under
``negcse.generators.specs``; the rules, the train jobs' inputs (``column_file``), the config
schema (``settings_schema``) and ``prefetch`` (``config_models``) read it from here. Settings
layer as defaults < ``generators.<name>`` < ``methods.<m>.generators.<name>`` (the last for
generators a method may tune). A *variant* names every setting that changes the output, so each
combination gets its own file and a change reruns exactly the jobs that read it.

Specs are imported when the Snakefile is parsed: a spec module imports no torch, spaCy or
numpy (the implementation modules import the spec, not the other way round).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema

Settings = dict[str, Any]

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


def _no_check(settings: Settings) -> None:
    return None


def _no_args(settings: Settings) -> str:
    return ""


def _no_models(settings: Settings) -> tuple[str, ...]:
    return ()


def _no_gpu(settings: Settings) -> str | None:
    return None


def _as_configured(settings: Settings, mirror: str | None) -> Settings:
    return settings


@dataclass(frozen=True)
class GeneratorSpec:
    """One generator: the columns it produces and everything the workflow needs to make them.

    ``output`` is the pattern of a column's file, with ``{corpus}`` and, where the generator
    has them, ``{variant}`` (``variant(settings, column)`` names it), ``{seed}`` (one file per
    training seed) and ``{backbone}`` (one per backbone: GCSE's denoising by a trained model). A generator with no rule file of its own gives ``command``: a shell template
    (``{input.corpus:q}``, ``{output:q}``, ``{wildcards.seed}``, ``{threads}``,
    ``{params.settings}``: ``args`` of the variant's settings, each value ``shlex.quote``-d by
    ``args``) run by the rule ``rules/generators/generic.smk`` makes for it, with ``threads``,
    ``resources`` and the conda env ``envs/<conda>.yaml``. ``args`` quotes every free-text
    value; names that become paths are constrained by the schema (:data:`NAME`)."""

    name: str
    columns: tuple[str, ...]
    output: str
    defaults: Mapping[str, Any]
    schema: Mapping[str, Any]  # JSON schema of each setting (no defaults: those are above)
    per_method: bool = False
    variant: Callable[[Settings, str], str] | None = None
    check: Callable[[Settings], None] = _no_check  # what the schema cannot say; ValueError
    args: Callable[[Settings], str] = _no_args  # command-line options of a variant
    models: Callable[[Settings], Iterable[str]] = _no_models  # models to prefetch
    #: the GPU rule whose measured per-sentence cost (benchmarks/gpu_costs.csv) prices one
    #: output in the dry run's estimate; None: no GPU job
    gpu_rule: Callable[[Settings], str | None] = _no_gpu
    #: what a model trained on the columns records of how they were made (its run spec, so its
    #: negcse.json, evaluations and table rows): e.g. GCSE's LLM; {} for nothing
    provenance: Callable[[Settings], dict[str, Any]] = lambda _settings: {}
    #: the settings this machine can make (given the config's mirror): a resource found nowhere
    #: here (no mirror or cache copy, offline or unreachable) replaced by its documented fallback
    #: when the workflow is planned, logged, so every file name and record says what was used;
    #: the provenance then lists it under ``substitutes``
    plan: Callable[[Settings, str | None], Settings] = _as_configured
    command: str | None = None
    threads: int = 1
    resources: Mapping[str, int] = field(default_factory=dict)  # gpu, mem_mb, runtime
    conda: str = "negcse"  # the rule's environment: envs/<conda>.yaml

    def __post_init__(self) -> None:
        missing = sorted(set(self.defaults) ^ set(self.schema))
        if missing:
            raise ValueError(f"generator {self.name}: defaults and schema differ on {missing}")
        if ("{variant}" in self.output) != (self.variant is not None):
            raise ValueError(f"generator {self.name}: {{variant}} in output needs variant()")


SPECS: dict[str, GeneratorSpec] = {}


def register(spec: GeneratorSpec) -> GeneratorSpec:
    """Add ``spec``; a name or column another spec already holds is an error."""
    old = SPECS.get(spec.name)
    if old is not None and old != spec:
        raise ValueError(f"generator '{spec.name}' registered twice")
    for other in SPECS.values():
        taken = set(other.columns) & set(spec.columns)
        if other.name != spec.name and taken:
            raise ValueError(f"column(s) {sorted(taken)} of '{spec.name}' made by '{other.name}'")
    SPECS[spec.name] = spec
    return spec


def specs() -> dict[str, GeneratorSpec]:
    """Every generator: the modules of ``negcse.generators.specs`` register theirs on import."""
    import negcse.generators.specs as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"{pkg.__name__}.{info.name}")
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
    validator = jsonschema.Draft202012Validator({"properties": dict(gen.schema)})
    out = dict(gen.defaults)
    for where, values in layers:
        unknown = sorted(set(values or {}) - set(gen.defaults))
        if unknown:
            raise KeyError(
                f"{where}: unknown setting(s) {', '.join(map(repr, unknown))}; "
                f"known: {', '.join(sorted(gen.defaults))}"
            )
        for error in validator.iter_errors(values or {}):
            key = ".".join(str(p) for p in error.absolute_path)
            raise ValueError(f"{where}.{key}: {error.message}")
        out.update(values or {})
    try:
        gen.check(out)
    except ValueError as err:
        where = " < ".join(w for w, values in layers if values) or f"generators.{name}"
        raise ValueError(f"{where}: {err}") from None
    return gen.plan(out, config.get("mirror") or None)


def methods_reading(config: Mapping[str, Any], columns: Iterable[str]) -> list[str]:
    """Configured methods whose implementation reads one of ``columns`` (unknown
    implementations skipped: the config check reports them)."""
    from negcse.methods.registry import method_class

    wanted, found = set(columns), []
    for method, entry in config["methods"].items():
        try:
            if wanted & set(method_class(entry["implementation"]).columns):
                found.append(method)
        except KeyError:
            continue
    return found


def provenance(config: Mapping[str, Any], method: str) -> dict[str, Any]:
    """What the generators of ``method``'s columns record of how they made them (merged over
    the generators it reads, in registration order; their ``substitutes`` lists joined)."""
    from negcse.methods.registry import method_class

    reads = set(method_class(config["methods"][method]["implementation"]).columns)
    out: dict[str, Any] = {}
    for gen in specs().values():
        if reads & set(gen.columns):
            found = settings(config, gen.name, method if gen.per_method else None)
            record = gen.provenance(found)
            substitutes = out.get("substitutes", []) + record.pop("substitutes", [])
            out.update(record, **({"substitutes": substitutes} if substitutes else {}))
    return out


def variants(config: Mapping[str, Any], name: str) -> dict[str, Settings]:
    """Variant name -> settings, over every configured method that reads the generator's
    columns (a method-independent generator has one, named by its generator-level settings)."""
    gen = spec(name)
    if gen.variant is None:
        return {}
    from negcse.methods.registry import method_class

    out = {}
    for method in methods_reading(config, gen.columns):
        found = settings(config, name, method)
        impl = method_class(config["methods"][method]["implementation"])
        for column in set(impl.columns) & set(gen.columns):
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


def config_models(config: Mapping[str, Any]) -> list[str]:
    """Every model the generators need under ``config``: each generator's own settings and
    every configured method's override, in order, without repeats."""
    names: list[str] = []
    for name, gen in specs().items():
        names += gen.models(settings(config, name))
        if gen.per_method:
            for method in methods_reading(config, gen.columns):
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
                "properties": dict(gen.schema),
            }
            for name, gen in specs().items()
            if gen.per_method or not per_method
        },
    }
