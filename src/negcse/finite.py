"""The one check of a number that enters negcse: from a config, a file or a model's output.

A number is finite or refused: NaN passes every comparison a bound makes (``nan > 0`` and
``nan <= 0`` are both false), so a bounds check alone lets it through, and one NaN makes every
mean, rank and interval computed from it meaningless. Each check raises
:class:`NonFiniteError` (a :class:`~negcse.errors.UserError`) whose one line names where the
number came from (``file: key``, ``config key``, ``model output``).
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import numpy as np

from negcse.errors import UserError


class NonFiniteError(UserError, ValueError):
    """A number that is NaN or infinite; the message names its origin."""


def is_number(value: Any) -> bool:
    """An int or a float (a bool is no number here)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def finite(value: Any, where: str) -> float:
    """``value`` as a float when it is a finite number; else :class:`NonFiniteError` (NaN,
    infinity) or :class:`~negcse.errors.UserError` (not a number), naming ``where``."""
    if isinstance(value, np.generic) and np.issubdtype(type(value), np.number):
        value = value.item()
    if not is_number(value):
        raise UserError(f"{where}: expected a number, got {_show(value)}")
    if not math.isfinite(value):
        raise NonFiniteError(f"{where}: {value!r} is not a finite number")
    return float(value)


def finite_array(values: Any, where: str, unit: str | None = None) -> np.ndarray:
    """``values`` as a float64 array when every entry is a finite number; else an error naming
    ``where`` and the first entry that is not: ``line 2`` (its first axis counted from 1, in
    ``unit``s) or ``[3]`` (its index), and how many there are."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise UserError(f"{where}: expected numbers, got {_show(values)}") from None
    if array.ndim == 0:
        finite(float(array), where)
        return array
    bad = ~np.isfinite(array.reshape(len(array), -1)) if array.size else np.zeros((0, 0), bool)
    if bad.any():
        rows = np.flatnonzero(bad.any(axis=1))
        if unit is None:
            first = tuple(int(i) for i in np.argwhere(~np.isfinite(array))[0])
            at = f"[{first[0] if len(first) == 1 else list(first)}]"
            count = f"{int(bad.sum())} of {array.size} values"
        else:
            at, count = f"{unit} {rows[0] + 1}", f"{rows.size} such {unit}(s)"
        raise NonFiniteError(f"{where}: {at} is NaN or infinite ({count})")
    return array


def first_non_finite(data: Any, prefix: str = "") -> tuple[str, float] | None:
    """The dotted key (``details.STS12.pairs.cosine[3]``) and value of the first NaN or infinite
    float in JSON-like ``data`` (dicts, lists, numbers); None when there is none."""
    stack: list[tuple[str, Any]] = [(prefix, data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, float):
            if not math.isfinite(value):
                return where or "<top level>", value
        elif isinstance(value, Mapping):
            items = [(f"{where}.{k}" if where else str(k), v) for k, v in value.items()]
            stack.extend(reversed(items))
        elif isinstance(value, list | tuple):
            stack.extend(reversed([(f"{where}[{i}]", v) for i, v in enumerate(value)]))
    return None


def check_tree(data: Any, source: str) -> None:
    """Refuse JSON-like ``data`` holding a NaN or infinite number, naming ``source`` and the
    key."""
    found = first_non_finite(data)
    if found is not None:
        key, value = found
        raise NonFiniteError(f"{source}: {key}: {value!r} is not a finite number")


def finite_float(text: str) -> float:
    """An argparse type: a finite float (``type=float`` takes "nan" and "inf")."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"'{text}' is not a finite number")
    return value


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``minimum`` (checked before any work starts)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is below the minimum {minimum}")
        return value

    return parse


#: the largest seed: torch.manual_seed takes a seed below 2^64 (python and numpy take any)
SEED_MAX = 2**64 - 1


def seed_number(text: str) -> int:
    """An argparse type: a seed, an integer from 0 to :data:`SEED_MAX` (checked before any
    work: a negative one fails in numpy, a larger one in torch, after the data is read)."""
    value = at_least(0)(text)
    if value > SEED_MAX:
        raise argparse.ArgumentTypeError(f"{value} is above the largest seed 2^64 - 1")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a finite float above 0 (seconds, rates)."""
    value = finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value:g} is not above 0")
    return value


def is_finite_number(value: Any) -> bool:
    return is_number(value) and math.isfinite(value)


@cache
def schema_validator() -> Any:
    """JSON Schema's 2020-12 validator whose ``number`` is a finite one: ``{type: number,
    exclusiveMinimum: 0}`` refuses NaN (the plain validator's bounds let it through) and
    ``.inf``. Its message for one: "nan is not of type 'number'"; :func:`schema_message`
    words it. Its ``integer`` is a whole number written as one: ``1.0`` is not (JSON Schema
    takes it, and a seed 1.0 would name a run ``seed1.0``, a batch size 64.0 reach torch)."""
    import jsonschema  # the config checks' and the generator settings' (not every command's)

    base = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine_many(
        {
            "number": lambda _, value: is_finite_number(value),
            "integer": lambda _, value: isinstance(value, int) and not isinstance(value, bool),
        }
    )
    return jsonschema.validators.extend(base, type_checker=checker)


#: (validator, repr of the value) of every value that passed its schema in this process
_VALID: set[tuple[int, str]] = set()


def first_schema_error(validator: Any, value: Any) -> Any:
    """``validator``'s first error for ``value``, None where it has none. A value that passed
    is remembered for the process (by the validator's identity: callers cache theirs): a
    Snakemake parse builds each run's generator and train settings several times."""
    key = (id(validator), repr(value))
    if key in _VALID:
        return None
    error = next(iter(validator.iter_errors(value)), None)
    if error is None:
        _VALID.add(key)
    return error


#: text YAML 1.1 leaves a string though it reads as a number: an exponent without a dot
#: (``1e-4``; YAML 1.1 needs ``1.0e-4``), a leading zero with 8 or 9 (``08``)
_NUMBER_TEXT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def _yaml11_hint(text: str) -> str:
    """How to write the number ``text`` so that YAML 1.1 reads a number: a dot in the mantissa
    and a sign in the exponent (``1.0e-4``, ``1.0e+5``), no leading zero."""
    mantissa, _, exponent = text.lower().partition("e")
    if exponent:
        mantissa = mantissa if "." in mantissa else f"{mantissa}.0"
        exponent = exponent if exponent[0] in "+-" else f"+{exponent}"
        fix = f"{mantissa}e{exponent}"
    else:
        fix = mantissa.lstrip("0") or "0" if "." not in mantissa else mantissa
    if fix == text.lower():
        return "a quoted number is text: write it without quotes"
    return f"YAML 1.1 reads {text} as text: write {fix}"


def schema_message(error: Any) -> str:
    """A validation error's message, a non-finite number's in this module's words; a number
    that YAML 1.1 read as text gets the hint how to write it, a boolean it read from text
    (``no``) the hint to quote it."""
    value = error.instance
    if error.validator == "type" and isinstance(value, float) and not math.isfinite(value):
        return f"{value!r} is not a finite number"
    wanted = error.validator_value if error.validator == "type" else ()
    wanted = {wanted} if isinstance(wanted, str) else set(wanted)
    if isinstance(value, str) and wanted & {"number", "integer"} and _NUMBER_TEXT.fullmatch(value):
        whole = "number" not in wanted and float(value).is_integer()
        hint = f"YAML 1.1 reads {value} as text: write {int(float(value))}" if whole else None
        return f"{error.message} ({hint or _yaml11_hint(value)})"
    if isinstance(value, bool) and wanted and "boolean" not in wanted:
        return f"{error.message} ({YAML11_BOOLEANS})"
    return str(error.message)


#: what a boolean where none is expected most likely was
YAML11_BOOLEANS = "YAML 1.1 reads yes, no, on, off, true and false as booleans: quote the text"


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."
