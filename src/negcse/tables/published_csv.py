"""The validation every published-results CSV shares, and the loader of the packaged copies.

:func:`parse_frame` reads CSV text against a :class:`CSVSpec`: the header must equal the
columns, empty rows are skipped, every row has one field a column, text columns are non-empty,
enumerated columns hold one of their allowed values, and score columns parse as finite floats
within their range (or NaN where empty, if allowed). Every error is an instance of the spec's
exception class and reads ``<source>:<line>: column '<name>': ...`` (``<source>:<line>: ...``
where no single column is at fault). A table's own rules (a slug, a value that depends on
another column) go in a ``check`` on each :class:`Row`, which raises ``row.error(column, ...)``.

:class:`PublishedTable` parses the copy in ``negcse.resources`` once and reads any other path
in the same format.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path

import pandas as pd


@dataclass(frozen=True)
class Score:
    """A numeric column: empty cells are NaN when ``empty_is_nan``, else an error; finite
    values must lie in ``[low, high]``."""

    empty_is_nan: bool = False
    low: float = 0.0
    high: float = 100.0

    def describe(self) -> str:
        if math.isfinite(self.high):
            return f"the {self.low:g}-{self.high:g} scale"
        return f"the range >= {self.low:g}"


@dataclass(frozen=True)
class CSVSpec:
    """The shape of one published-results CSV and the exception its errors raise."""

    columns: tuple[str, ...]
    text: tuple[str, ...] = ()
    choices: Mapping[str, Sequence[str]] = field(default_factory=dict)
    scores: Mapping[str, Score] = field(default_factory=dict)
    error: type[ValueError] = ValueError


@dataclass(frozen=True)
class Row:
    """One validated data row: ``raw`` holds every field as read, ``scores`` the parsed
    score columns."""

    source: str
    line: int
    raw: dict[str, str]
    scores: dict[str, float]
    error_type: type[ValueError]

    def error(self, column: str, message: str) -> ValueError:
        """The exception for ``column`` of this row: ``<source>:<line>: column 'c': message``."""
        return self.error_type(f"{self.source}:{self.line}: column {column!r}: {message}")

    def record(self) -> dict[str, object]:
        """The row with its score columns as floats."""
        return {**self.raw, **self.scores}


def _score(row: Row, column: str, score: Score) -> float:
    value = row.raw[column].strip()
    if value == "":
        if score.empty_is_nan:
            return math.nan
        raise row.error_type(f"{row.source}:{row.line}: column {column!r} is empty")
    try:
        number = float(value)
    except ValueError:
        raise row.error(column, f"{value!r} is not a number") from None
    if not (math.isfinite(number) and score.low <= number <= score.high):
        raise row.error(column, f"{number} is outside {score.describe()}")
    return number


def parse_rows(text: str, spec: CSVSpec, source: str) -> Iterator[Row]:
    """The validated data rows of ``text`` with their line numbers, in file order."""
    reader = csv.reader(text.splitlines())
    header = next(reader, None)
    if header is None or tuple(header) != spec.columns:
        raise spec.error(
            f"{source}:1: header must be {','.join(spec.columns)}, got {','.join(header or [])}"
        )
    for fields in reader:
        line = reader.line_num
        if not fields:
            continue
        if len(fields) != len(spec.columns):
            raise spec.error(
                f"{source}:{line}: expected {len(spec.columns)} fields, got {len(fields)}"
            )
        row = Row(source, line, dict(zip(spec.columns, fields, strict=True)), {}, spec.error)
        for col in spec.text:
            if not row.raw[col].strip():
                raise spec.error(f"{source}:{line}: column {col!r} is empty")
        for col, allowed in spec.choices.items():
            if row.raw[col] not in allowed:
                raise row.error(col, f"{row.raw[col]!r} is not one of {tuple(allowed)}")
        for col, score in spec.scores.items():
            row.scores[col] = _score(row, col, score)
        yield row


def parse_frame(
    text: str, spec: CSVSpec, source: str, check: Callable[[Row], None] | None = None
) -> pd.DataFrame:
    """A frame of the validated rows (columns ``spec.columns``, score columns float64);
    ``check`` runs on each row after the common validation."""
    records = []
    for row in parse_rows(text, spec, source):
        if check is not None:
            check(row)
        records.append(row.record())
    frame = pd.DataFrame.from_records(records, columns=list(spec.columns))
    return frame.astype({col: "float64" for col in spec.scores})


def read_resource(name: str) -> str:
    """The text of a file packaged in ``negcse.resources``."""
    return resources.files("negcse.resources").joinpath(name).read_text("utf-8")


class PublishedTable:
    """A published-results CSV: the packaged copy, parsed once, or another file."""

    def __init__(self, resource: str, parse: Callable[[str, str], pd.DataFrame]) -> None:
        self.resource = resource
        self._parse = parse

    @cached_property
    def default(self) -> pd.DataFrame:
        """The packaged copy (shared: copy before changing it)."""
        return self._parse(read_resource(self.resource), self.resource)

    def load(self, path: str | Path | None = None) -> pd.DataFrame:
        """A fresh frame of ``path``, or of the packaged copy when ``path`` is None."""
        if path is None:
            return self.default.copy()
        return self._parse(Path(path).read_text("utf-8"), str(path))
