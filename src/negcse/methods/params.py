"""Typed, bounded method parameters: every field of a params dataclass is checked against its
annotation (``float``, ``int``, ``bool``, ``str``, a ``Literal`` of choices, ``X | None``) and the
bounds its field declares (:func:`bounded`), so that a value no method can use (a temperature of
0, -0.05 or ``"0.05"``) fails when the config is checked, naming the key.

A subclass that redeclares a field (another default) keeps the bounds of the class that
declared them first.
"""

from __future__ import annotations

import math
import types
import typing
from dataclasses import Field, field, fields
from functools import cache
from typing import Any, Literal

_BOUNDS = "negcse.bounds"


class ParamError(ValueError):
    """A parameter that fails its type or bounds. ``key`` (None: several keys together) and
    ``where`` (``methods.<m>.params``) name it; ``str()`` is the one-line message."""

    def __init__(self, key: str | None, reason: str, where: str = "") -> None:
        place = ".".join(p for p in (where, key) if p)
        super().__init__(f"{place}: {reason}" if place else reason)
        self.key, self.reason, self.where = key, reason, where

    def at(self, where: str) -> ParamError:
        return ParamError(self.key, self.reason, where)


def bounded(
    default: Any,
    *,
    gt: float | None = None,
    ge: float | None = None,
    lt: float | None = None,
    le: float | None = None,
) -> Any:
    """A dataclass field whose numeric value must satisfy the given bounds (None passes where
    the annotation allows it)."""
    bounds = {k: v for k, v in (("gt", gt), ("ge", ge), ("lt", lt), ("le", le)) if v is not None}
    return field(default=default, metadata={_BOUNDS: bounds})


def field_bounds(cls: type, name: str) -> dict[str, float]:
    """The bounds of ``cls``'s field ``name``: those of the first class in the MRO that declares
    any ({} for none)."""
    for klass in cls.__mro__:
        found: Field | None = getattr(klass, "__dataclass_fields__", {}).get(name)
        if found is not None and _BOUNDS in found.metadata:
            return dict(found.metadata[_BOUNDS])
    return {}


def _describe(bounds: dict[str, float]) -> str:
    low = ("(", bounds["gt"]) if "gt" in bounds else ("[", bounds["ge"]) if "ge" in bounds else None
    high = (
        (")", bounds["lt"]) if "lt" in bounds else ("]", bounds["le"]) if "le" in bounds else None
    )
    if low and high:
        return f"in {low[0]}{low[1]:g}, {high[1]:g}{high[0]}"
    if low:
        return f"{'>' if low[0] == '(' else '>='} {low[1]:g}"
    assert high is not None
    return f"{'<' if high[0] == ')' else '<='} {high[1]:g}"


def _within(value: float, bounds: dict[str, float]) -> bool:
    return (
        ("gt" not in bounds or value > bounds["gt"])
        and ("ge" not in bounds or value >= bounds["ge"])
        and ("lt" not in bounds or value < bounds["lt"])
        and ("le" not in bounds or value <= bounds["le"])
    )


def _type_error(kind: Any, value: Any) -> str | None:
    """Why ``value`` is not of the annotated ``kind``; None when it is."""
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        members = typing.get_args(kind)
        if value is None and type(None) in members:
            return None
        (inner,) = [m for m in members if m is not type(None)]  # X | None only
        return _type_error(inner, value)
    if origin is Literal:
        choices = typing.get_args(kind)
        return None if value in choices else f"must be one of {', '.join(choices)}"
    got = f"got {value!r}" + (" (a string)" if isinstance(value, str) else "")
    if kind is bool:
        return None if isinstance(value, bool) else f"must be true or false, {got}"
    if kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return None if ok else f"must be an integer, {got}"
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"must be a number, {got}"
        return None if math.isfinite(value) else f"must be a finite number, {got}"
    if kind is str:
        return None if isinstance(value, str) else f"must be a string, {got}"
    raise TypeError(f"params field of unsupported type {kind!r}")


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def check_value(cls: type, name: str, value: Any) -> str | None:
    """Why ``value`` cannot be field ``name`` of the params class ``cls`` (its annotation, its
    bounds); None when it can."""
    why = _type_error(_hints(cls)[name], value)
    if why is None and value is not None and not isinstance(value, (bool, str)):
        bounds = field_bounds(cls, name)
        if bounds and not _within(value, bounds):
            why = f"must be {_describe(bounds)}, got {value!r}"
    if why is not None and why.startswith("must be one of"):
        why += f", got {value!r}"
    return why


def check_params(params: Any) -> None:
    """Raise :class:`ParamError` for the first field of the dataclass ``params`` whose value
    fails its annotation or its bounds."""
    for f in fields(params):
        why = check_value(type(params), f.name, getattr(params, f.name))
        if why is not None:
            raise ParamError(f.name, why)
