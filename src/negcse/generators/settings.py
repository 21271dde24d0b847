"""A generator's settings: one frozen dataclass whose fields carry default, bounds and help.

``setting(default, help, **bounds)`` declares a field; from the class come the config schema
(``schema``), the defaults (``defaults``), the command's argparse options (``add_options``),
the command line a job passes (``options``) and the check of an instance (a ``GeneratorSettings``
subclass validates itself on construction). No default or bound is written twice.

A field's command-line form: ``--name value`` (``_`` -> ``-``); a boolean is a flag word set
by ``flag=(word, value)``: ``("--reference-quirks", True)`` passes the word when the setting
is true, ``("--no-fallback", False)`` when false. ``cli=False``: a workflow-only setting (it
chooses inputs or names files; the command never sees it); ``option="--seed"`` renames it.
"""

from __future__ import annotations

import argparse
import copy
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from functools import cache
from typing import Any, ClassVar

import jsonschema

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
        for error in _validator(type(self)).iter_errors(as_dict(self)):
            key = ".".join(str(p) for p in error.absolute_path)
            raise ValueError(f"{key}: {error.message}")
        self.check()

    def check(self) -> None:
        """Cross-field checks; ValueError."""


@cache
def _validator(cls: type[GeneratorSettings]) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"type": "object", "properties": schema(cls)})


def as_dict(settings: GeneratorSettings) -> dict[str, Any]:
    return {f.name: getattr(settings, f.name) for f in fields(settings)}


def defaults(cls: type[GeneratorSettings]) -> dict[str, Any]:
    """Field -> default (a fresh copy of list and dict defaults)."""
    out = {}
    for f in fields(cls):
        out[f.name] = f.default_factory() if f.default is MISSING else f.default  # type: ignore[misc]
    return out


def schema(cls: type[GeneratorSettings]) -> dict[str, Any]:
    """Field -> its JSON schema, its help as the description."""
    return {
        f.name: {**f.metadata["schema"], "description": f.metadata["help"]} for f in fields(cls)
    }


def _option(f: Any) -> str:
    return f.metadata["option"] or "--" + f.name.replace("_", "-")


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
        if not f.metadata["cli"] or (chosen is not None and f.name not in chosen):
            continue
        value = values[f.name]
        if f.metadata["flag"] is not None:
            word, when = f.metadata["flag"]
            if bool(value) == when:
                words.append(word)
        elif value is not None:
            words.append(f"{_option(f)} {shlex.quote(f.metadata['fmt'](value))}")
    return " ".join(words)


def add_options(
    parser: argparse.ArgumentParser,
    cls: type[GeneratorSettings],
    only: Iterable[str] | None = None,
) -> None:
    """The argparse options of ``cls``'s command-line fields (or those in ``only``), defaults
    and help from the fields (a flag's absence means the opposite of its value)."""
    chosen = None if only is None else set(only)
    for f in fields(cls):
        if not f.metadata["cli"] or (chosen is not None and f.name not in chosen):
            continue
        meta, dest = f.metadata, f.name
        if meta["flag"] is not None:
            word, when = meta["flag"]
            action = "store_true" if when else "store_false"
            parser.add_argument(word, dest=dest, action=action, help=meta["help"])
            continue
        default = f.default_factory() if f.default is MISSING else f.default  # type: ignore[misc]
        spec = meta["schema"]
        kinds = spec.get("type", [])
        kind = next(
            (k for k in ([kinds] if isinstance(kinds, str) else kinds) if k != "null"), None
        )
        option = _option(f)
        parser.add_argument(
            option,
            dest=dest,
            metavar=None if "enum" in spec else option.lstrip("-").replace("-", "_").upper(),
            type=_PY_TYPES.get(kind or "", str),
            choices=spec.get("enum"),
            default=default,
            help=f"{meta['help']} (default: {default})",
        )


def from_args(args: argparse.Namespace, cls: type[GeneratorSettings], **extra: Any) -> Any:
    """An instance of ``cls`` from parsed options (the fields the parser lacks from ``extra``
    or their defaults); bad values raise ValueError naming the option."""
    values = {f.name: getattr(args, f.name) for f in fields(cls) if hasattr(args, f.name)}
    try:
        return cls(**{**values, **extra})
    except ValueError as err:
        raise ValueError(f"--{str(err).replace('_', '-')}") from None
