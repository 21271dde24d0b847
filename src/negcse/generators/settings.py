"""A generator's settings: one frozen dataclass whose fields carry default, bounds and help.

``setting(default, help, **bounds)`` declares a field; from the class come the config schema
(``schema``), the defaults (``defaults``), the command's argparse options (``add_options``),
the command line a job passes (``options``) and the check of an instance (a ``GeneratorSettings``
subclass validates itself on construction). No default or bound is written twice.

A field's command-line form: ``--name value`` (``_`` -> ``-``); a boolean is a flag word set
by ``flag=(word, value)``: ``("--reference-quirks", True)`` passes the word when the setting
is true, ``("--no-fallback", False)`` when false; a list is its option once per item.
``cli=False``: a workflow-only setting (it chooses inputs or names files; the command never
sees it); ``option="--seed"`` renames it; ``when=predicate`` (of all the values): passed only
when the command reads it (GCSE: the endpoint's options with ``backend: openai`` only).

The command's default is the field's, except where a job's command line passes nothing: a
null value, a flag's other value. There the option's absence must mean that value, so it is
the command's default, and its help names the field's (the config's) default. A step whose
command takes some of a generator's settings, in its own order, with options of its own
besides, declares them as a ``view`` (GCSE's synthesis and denoising).
"""

from __future__ import annotations

import argparse
import copy
import json
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING, dataclass, field, fields, make_dataclass
from functools import cache
from typing import Any, ClassVar, cast

import jsonschema

from negcse.finite import first_schema_error, schema_message, schema_validator

_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string"}
_PY_TYPES = {"integer": int, "number": float, "string": str}


def setting(
    default: Any,
    help: str,
    *,
    choices: Iterable[Any] | None = None,
    schema: Mapping[str, Any] | None = None,
    cli: bool = True,
    option: str | None = None,
    flag: tuple[str, bool] | None = None,
    fmt: Callable[[Any], str] = str,
    when: Callable[[Mapping[str, Any]], bool] | None = None,
    **bounds: Any,
) -> Any:
    """A settings field. Its JSON schema: ``schema`` if given, else the type of ``default``
    (or ``choices`` as an enum) with ``bounds`` (JSON-schema keywords: minimum, maximum,
    exclusiveMinimum, minLength, pattern...). A list or dict default is copied per instance."""
    if schema is None:
        if choices is not None:
            schema = {"enum": list(choices)}
        else:
            schema = {"type": _JSON_TYPES[type(default)]}
    meta = {
        "help": help,
        "schema": {**schema, **bounds},
        "cli": cli,
        "option": option,
        "flag": flag,
        "fmt": fmt,
        "when": when,
    }
    if isinstance(default, list | dict):
        return field(default_factory=lambda: copy.deepcopy(default), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class GeneratorSettings:
    """Base of every generator's settings: an instance checks each value against its field's
    schema, then ``check`` (what a schema cannot say); each raises ValueError naming the key."""

    GENERATOR: ClassVar[str] = ""

    def __post_init__(self) -> None:
        error = first_schema_error(_validator(type(self)), as_dict(self))
        if error is not None:
            key = ".".join(str(p) for p in error.absolute_path)
            raise ValueError(f"{key}: {schema_message(error)}")
        self.check()

    def check(self) -> None:
        """Cross-field checks; ValueError."""


@cache
def _validator(cls: type[GeneratorSettings]) -> jsonschema.Draft202012Validator:
    """The settings' schema; a number must be finite (a NaN passes every bound)."""
    return schema_validator()({"type": "object", "properties": schema(cls)})


def as_dict(settings: GeneratorSettings) -> dict[str, Any]:
    return {f.name: getattr(settings, f.name) for f in fields(settings)}


def defaults(cls: type[GeneratorSettings]) -> dict[str, Any]:
    """Field -> default (a fresh copy of list and dict defaults)."""
    return {f.name: _default(f) for f in fields(cls)}


def schema(cls: type[GeneratorSettings]) -> dict[str, Any]:
    """Field -> its JSON schema, its help as the description."""
    return {
        f.name: {**f.metadata["schema"], "description": f.metadata["help"]} for f in fields(cls)
    }


def _option(f: Any) -> str:
    return f.metadata["option"] or "--" + f.name.replace("_", "-")


def _passed(f: Any, chosen: set[str] | None) -> bool:
    return bool(f.metadata["cli"]) and (chosen is None or f.name in chosen)


def options(
    settings: Mapping[str, Any] | GeneratorSettings,
    cls: type[GeneratorSettings],
    only: Iterable[str] | None = None,
) -> str:
    """The command line of ``settings``: its command-line fields (or those named in ``only``,
    for a step that takes some) in declaration order, every value shell-quoted."""
    values = settings if isinstance(settings, Mapping) else as_dict(settings)
    chosen = None if only is None else set(only)
    words = []
    for f in fields(cls):
        meta = f.metadata
        if not _passed(f, chosen) or (meta["when"] is not None and not meta["when"](values)):
            continue
        value = values[f.name]
        if meta["flag"] is not None:
            word, when = meta["flag"]
            if bool(value) == when:
                words.append(word)
        elif isinstance(value, list | tuple):
            words += [f"{_option(f)} {shlex.quote(meta['fmt'](v))}" for v in value]
        elif value is not None:
            words.append(f"{_option(f)} {shlex.quote(meta['fmt'](value))}")
    return " ".join(words)


def _default(f: Any) -> Any:
    return f.default_factory() if f.default is MISSING else f.default


def command_default(f: Any) -> Any:
    """``f``'s default as a command option: what the option's absence means in a job's command
    line (a flag's other value; null for a nullable field), else the field's default."""
    if f.metadata["flag"] is not None:
        return not f.metadata["flag"][1]
    kinds = f.metadata["schema"].get("type", [])
    return None if "null" in ([kinds] if isinstance(kinds, str) else kinds) else _default(f)


def add_options(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    cls: type[GeneratorSettings],
    only: Iterable[str] | None = None,
) -> None:
    """The argparse options of ``cls``'s command-line fields (or those in ``only``), help from
    the fields, defaults ``command_default`` (the help names the field's where it differs)."""
    chosen = None if only is None else set(only)
    for f in fields(cls):
        if not _passed(f, chosen):
            continue
        meta, dest, default = f.metadata, f.name, command_default(f)
        config = _default(f)
        note = "" if default == config else f"; the config's: {json.dumps(config)}"
        if meta["flag"] is not None:
            word, when = meta["flag"]
            action = "store_true" if when else "store_false"
            help = meta["help"] + (f" (config default: {json.dumps(config)})" if note else "")
            parser.add_argument(word, dest=dest, action=action, help=help)
            continue
        spec, repeated = meta["schema"], isinstance(default, list)
        if repeated:  # the option once per item
            spec = spec["items"]
        kinds = spec.get("type", [])
        kind = next(
            (k for k in ([kinds] if isinstance(kinds, str) else kinds) if k != "null"), None
        )
        option = _option(f)
        metavar = option.lstrip("-").replace("-", "_").upper()
        help = meta["help"]
        if repeated and "enum" in spec:
            help += f"; repeatable, one of: {', '.join(spec['enum'])}"
        parser.add_argument(
            option,
            dest=dest,
            action="append" if repeated else "store",
            metavar=metavar if repeated or "enum" not in spec else None,
            type=_PY_TYPES.get(kind or "", str),
            choices=spec.get("enum"),
            default=default,
            help=f"{help} (default: {repr(default) if default == '' else default}{note})",
        )


def view(
    name: str,
    cls: type[GeneratorSettings],
    names: Iterable[str],
    extra: Iterable[tuple[str, Any, Any]] = (),
    check: Callable[[Mapping[str, Any]], None] | None = None,
) -> type[GeneratorSettings]:
    """A step's settings: ``cls``'s fields ``names`` in that order (their defaults, bounds and
    help ``cls``'s own), then ``extra`` fields (name, type, ``setting(...)``) of the step's
    command alone; ``check`` (of the values) is its cross-field check."""
    by_name = {f.name: f for f in fields(cls)}
    shared = [
        (n, by_name[n].type, field(default=by_name[n].default,
                                   default_factory=by_name[n].default_factory,
                                   metadata=by_name[n].metadata))
        for n in names
    ]  # fmt: skip
    namespace = {} if check is None else {"check": lambda self: check(as_dict(self))}
    made = make_dataclass(
        name, [*shared, *extra], bases=(GeneratorSettings,), frozen=True, namespace=namespace
    )
    return cast(type[GeneratorSettings], made)


def from_args(args: argparse.Namespace, cls: type[GeneratorSettings], **extra: Any) -> Any:
    """An instance of ``cls`` from parsed options (the fields the parser lacks from ``extra``
    or their defaults); bad values raise ValueError naming the option."""
    values = {f.name: getattr(args, f.name) for f in fields(cls) if hasattr(args, f.name)}
    try:
        return cls(**{**values, **extra})
    except ValueError as err:
        raise ValueError(f"--{str(err).replace('_', '-')}") from None
