"""Small file helpers: atomic writes so a failed command leaves no partial output."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO


@contextlib.contextmanager
def atomic_open(
    path: str | os.PathLike[str], mode: str = "w", encoding: str = "utf-8"
) -> Iterator[TextIO]:
    """Write to a temporary file beside ``path``; rename into place only on success."""
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, encoding=encoding, newline="\n") as fh:
            yield fh
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_json(path: str | os.PathLike[str], data: Any) -> None:
    with atomic_open(path) as fh:
        json.dump(data, fh, indent=2, sort_keys=False)
        fh.write("\n")


def write_lines(path: str | os.PathLike[str], lines: list[str]) -> None:
    with atomic_open(path) as fh:
        for line in lines:
            fh.write(line.replace("\n", " ") + "\n")


def read_lines(path: str | os.PathLike[str]) -> list[str]:
    """Lines split on "\n" only (not on Unicode line breaks such as U+2028), "\r" dropped,
    so files written line by line stay aligned with each other."""
    with open(path, encoding="utf-8", newline="") as fh:
        text = fh.read()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Build a folder under a temporary name; it replaces ``path`` only on success."""
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}."))
    try:
        yield tmp
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
