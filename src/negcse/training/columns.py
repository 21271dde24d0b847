"""Training columns read from files aligned line by line with the corpus.

A ``.npy`` file (shape (lines,) or (lines, k)) or a ``.tsv`` file (one number per line) is a
*numeric* column (scores, weights, labels); any other file is a text column, one line per corpus
line. Numeric columns are validated (numbers only, no NaN or infinity, one row per corpus line),
and every error names the file (and the line, for TSV).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from negcse.errors import UserError
from negcse.finite import finite_array
from negcse.io_utils import read_lines
from negcse.methods.base import Column, Method

NUMERIC_SUFFIXES = (".npy", ".tsv")


class ColumnError(UserError, ValueError):
    """A column file that cannot be used (its message names the file, and the line)."""


def _check_numeric(values: np.ndarray, source: str) -> np.ndarray:
    if values.ndim not in (1, 2):
        raise ColumnError(f"{source}: shape {values.shape}; expected (lines,) or (lines, k)")
    if values.dtype == np.bool_:
        return values
    if not (np.issubdtype(values.dtype, np.integer) or np.issubdtype(values.dtype, np.floating)):
        raise ColumnError(f"{source}: dtype {values.dtype} is not numeric (int, float or bool)")
    if np.issubdtype(values.dtype, np.floating):
        finite_array(values, source, unit="line")
        return values.astype(np.float32)
    return values.astype(np.int64)


def _read_tsv(path: Path) -> np.ndarray:
    values: list[float] = []
    for number, line in enumerate(read_lines(path), start=1):
        try:
            values.append(float(line))
        except ValueError:
            raise ColumnError(
                f"{path}:{number}: '{line[:40]}' is not a number (one number per line)"
            ) from None
    return np.asarray(values, dtype=np.float64)


def read_column(path: str | Path) -> Column:
    """A column file: text lines, or a validated numeric array (float32, int64 or bool)."""
    path = Path(path)
    if path.suffix not in NUMERIC_SUFFIXES:
        return read_lines(path)
    if path.suffix == ".tsv":
        values = _read_tsv(path)
    else:
        try:
            values = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:  # EOFError: an empty or cut file
            if isinstance(exc, FileNotFoundError | IsADirectoryError):
                raise
            raise ColumnError(f"{path}: not a numeric .npy array ({exc or 'empty'})") from exc
    return _check_numeric(values, str(path))


def check_aligned(columns: dict[str, Column], sources: dict[str, str]) -> None:
    """The corpus (``columns["sentence"]``) has a line, and every column as many as it."""
    n = len(columns["sentence"])
    if n == 0:
        where = sources.get("sentence", "the corpus")
        raise ColumnError(f"{where}: the corpus has no sentence; nothing to train on")
    for name, values in columns.items():
        if len(values) != n:
            where = f"{sources[name]} (column '{name}')" if name in sources else f"column '{name}'"
            raise ColumnError(
                f"{where} has {len(values)} lines but the corpus has {n}; "
                "columns must be aligned line by line with the corpus"
            )


def columns_read(method: Method) -> list[str]:
    """The columns a method reads, its own then its guides' (each once, in that order): what
    the data must hold, and all that ``negcse train --column`` may give besides the corpus."""
    return list(dict.fromkeys([*method.columns, *(c for g in method.guides() for c in g.columns)]))
