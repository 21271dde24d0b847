"""The evaluation files a table reads, each checked as a whole before any number is used.

:func:`read_result` reads one file (``negcse evaluate``'s JSON): valid UTF-8 JSON, an object,
every number finite (:mod:`negcse.finite`), and every number it derives from records it also
holds agreeing with them:

- STS (STS tasks in ``details``): each task's number is its ``details`` entry's
  ``all``; with per-pair records (``details.<task>.pairs``) it is their Spearman x100
  (recomputed); ``avg`` is the mean of the test tasks.
- transfer (transfer tasks in ``details``): the tasks scored at the top level
  are those of ``details``, each number its entry's ``acc``, which its per-example record
  (``details.<task>.test``) gives back; ``avg`` is the mean of the task accuracies.

:func:`check_comparable` refuses files evaluated under different STS protocols or transfer
classifiers, seeds or folds in one table. Every failure is a :class:`TableInputError` naming the
file and the key.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from negcse.analysis import transfer_bootstrap
from negcse.analysis.bootstrap import TaskPairs, split_keys
from negcse.analysis.transfer_bootstrap import FoldedExamples
from negcse.data.sts import STS_TASKS
from negcse.data.transfer import TRANSFER_TASKS
from negcse.errors import UserError
from negcse.finite import finite, finite_array
from negcse.io_utils import read_json, read_text
from negcse.text.names import check_tag

#: a recorded Spearman x100 and the one recomputed from the file's pairs (full precision)
SPEARMAN_TOLERANCE = 1e-6
#: a recorded transfer accuracy x100 and the one its record gives back (rounding of the folds
#: and of their mean: 0.01)
ACCURACY_TOLERANCE = 0.0101
#: ``avg`` and the mean of the task numbers it averages (transfer: rounded to 0.01)
AVERAGE_TOLERANCE = 0.0051


class TableInputError(UserError, ValueError):
    """The evaluation files cannot make the table; the message names the file."""


def read_result(path: str | os.PathLike[str]) -> dict[str, Any]:
    """One evaluation file, checked as the module says."""
    try:
        result = read_json(path)
    except UserError as exc:
        raise TableInputError(str(exc)) from None
    details = result.get("details")
    if "details" in result and not isinstance(details, dict):
        raise TableInputError(f"{path}: details: expected an object, got {_kind(details)}")
    if isinstance(details, dict) and any(t in details for t in STS_TASKS):
        _check_sts(result, details, str(path))
    if isinstance(details, dict) and any(t in details for t in TRANSFER_TASKS):
        _check_transfer(result, details, str(path))
    return result


def number(result: Mapping[str, Any], key: str, path: str | os.PathLike[str]) -> float:
    """``result[key]`` as a finite number; a missing key or another type names both."""
    if key not in result:
        raise TableInputError(f"{path}: no '{key}' recorded")
    try:
        return finite(result[key], f"{path}: {key}")
    except UserError as exc:
        raise TableInputError(str(exc)) from None


def tags(result: Mapping[str, Any], path: str | os.PathLike[str], *names: str) -> None:
    """The run's tags (method, backbone) are recorded, as text; a method or backbone as a name
    (:mod:`negcse.text.names`: no ``|``, line break or markup reaches a table)."""
    for name in names:
        if name not in result:
            raise TableInputError(f"{path}: no '{name}' recorded (evaluate with --tag {name}=...)")
        if not isinstance(result[name], str | int) or isinstance(result[name], bool):
            raise TableInputError(f"{path}: {name}: expected text, got {_kind(result[name])}")
        try:
            check_tag(name, result[name], f"{path}: {name}")
        except UserError as exc:
            raise TableInputError(str(exc)) from None


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _entry(details: Mapping[str, Any], task: str, path: str) -> Mapping[str, Any]:
    entry = details[task]
    if not isinstance(entry, dict):
        raise TableInputError(f"{path}: details.{task}: expected an object, got {_kind(entry)}")
    return entry


def _agree(recorded: float, derived: float, tolerance: float, where: str, what: str) -> None:
    if not abs(recorded - derived) <= tolerance:
        raise TableInputError(
            f"{where}: the file says {recorded:.4f}, {what} gives {derived:.4f} (an edited or "
            "mixed file; rerun this evaluation)"
        )


# STS.


def sts_pairs(
    result: Mapping[str, Any], task: str, path: str
) -> tuple[np.ndarray, TaskPairs] | None:
    """A task's per-pair record (``details.<task>.pairs``): the cosines and the test pairs
    (gold scores, subset sizes, pair keys), checked; None when the file keeps none."""
    details = result.get("details")
    entry = details.get(task) if isinstance(details, dict) else None
    pairs = entry.get("pairs") if isinstance(entry, dict) else None
    if pairs is None:
        return None
    where = f"{path}: details.{task}.pairs"
    if not isinstance(pairs, dict) or not {"cosine", "gold", "subset_sizes"} <= pairs.keys():
        raise TableInputError(f"{where}: expected an object of cosine, gold and subset_sizes")
    try:
        cosine = finite_array(pairs["cosine"], f"{where}.cosine")
        gold = finite_array(pairs["gold"], f"{where}.gold")
    except UserError as exc:
        raise TableInputError(str(exc)) from None
    if cosine.ndim != 1 or gold.ndim != 1 or len(cosine) != len(gold):
        raise TableInputError(f"{where}: {cosine.size} cosines for {gold.size} gold scores")
    if len(cosine) < 2:
        raise TableInputError(f"{where}: {len(cosine)} pair(s); a Spearman needs two or more")
    sizes = pairs["subset_sizes"]
    if (
        not isinstance(sizes, list)
        or not sizes
        or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in sizes)
    ):
        raise TableInputError(f"{where}.subset_sizes: expected positive integers, got {sizes!r}")
    if sum(sizes) != len(gold):
        raise TableInputError(
            f"{where}.subset_sizes: {sizes} sum to {sum(sizes)}, not the {len(gold)} pairs"
        )
    keys: tuple[str, ...] = ()
    if "key" in pairs:
        if not isinstance(pairs["key"], str):
            raise TableInputError(f"{where}.key: expected the pairs' keys as one string")
        try:
            keys = tuple(split_keys(pairs["key"]))
        except (TypeError, ValueError) as exc:
            raise TableInputError(f"{where}: {exc}") from None
        if len(keys) != len(gold):
            raise TableInputError(f"{where}.key: {len(keys)} pair keys for {len(gold)} pairs")
    return cosine, TaskPairs(gold, tuple(sizes), keys)


def _spearman100(cosine: np.ndarray, gold: np.ndarray) -> float:
    from scipy.stats import spearmanr  # tables read at the workflow's parse: scipy on first use

    return float(spearmanr(cosine, gold).statistic * 100.0)


def _scored(result: Mapping[str, Any], tasks: list[str], known: Sequence[str], path: str) -> bool:
    """Whether the file scores tasks at the top level; if it does, exactly those it details."""
    scored = [t for t in known if t in result]
    if scored and scored != tasks:
        raise TableInputError(
            f"{path}: tasks scored {scored} but detailed {tasks} (details.<task>); an "
            "edited or mixed file"
        )
    return bool(scored)


def _check_sts(result: dict[str, Any], details: dict[str, Any], path: str) -> None:
    tasks = [t for t in STS_TASKS if t in details]
    scored = _scored(result, tasks, STS_TASKS, path)
    values = []
    for task in tasks:
        entry = _entry(details, task, path)
        found: list[tuple[float, str]] = []  # (a value of the task, where it is from)
        if scored:
            found.append((number(result, task, path), task))
        if "all" in entry:
            found.append((number(entry, "all", f"{path}: details.{task}"), f"details.{task}.all"))
        pairs = sts_pairs(result, task, path)
        if pairs is not None:
            derived = _spearman100(pairs[0], pairs[1].gold)
            if not math.isfinite(derived):
                raise TableInputError(
                    f"{path}: details.{task}.pairs: the Spearman of its cosines is undefined "
                    "(all cosines equal: a collapsed model?)"
                )
            found.append((derived, f"the Spearman of details.{task}.pairs"))
        for other, what in found[1:]:
            _agree(found[0][0], other, SPEARMAN_TOLERANCE, f"{path}: {task}", what)
        if found:
            values.append(found[0][0])
    if "avg" in result and values and len(values) == len(tasks):
        _agree(number(result, "avg", path), float(np.mean(values)), 1e-6, f"{path}: avg",
               f"the mean of {', '.join(tasks)}")  # fmt: skip


# Transfer.


def transfer_records(
    result: Mapping[str, Any], path: str
) -> tuple[dict[str, np.ndarray], dict[str, FoldedExamples]]:
    """Each task's per-example record (``details.<task>.test``): correctness and folds."""
    details = result.get("details")
    tasks = [t for t in TRANSFER_TASKS if isinstance(details, dict) and t in details]
    if not tasks:
        raise TableInputError(f"{path}: no transfer task in 'details'")
    correct, tested = {}, {}
    for task in tasks:
        entry = _entry(details, task, path)  # type: ignore[arg-type]
        if "test" not in entry:
            raise TableInputError(
                f"{path}: no per-example record for {task} (details.{task}.test: written by "
                "negcse evaluate since the transfer bootstrap; rerun this evaluation)"
            )
        try:
            if not isinstance(entry["test"], dict):
                raise TypeError(f"expected an object, got {_kind(entry['test'])}")
            correct[task], tested[task] = transfer_bootstrap.read_record(entry["test"])
        except (KeyError, TypeError, ValueError) as exc:
            raise TableInputError(f"{path}: details.{task}.test: {exc}") from None
    return correct, tested


def _check_transfer(result: dict[str, Any], details: dict[str, Any], path: str) -> None:
    tasks = [t for t in TRANSFER_TASKS if t in details]
    scored = _scored(result, tasks, TRANSFER_TASKS, path)
    records = (
        transfer_records(result, path)
        if any(isinstance(details[t], dict) and "test" in details[t] for t in tasks)
        else None
    )
    accuracies = []
    for task in tasks:
        entry = _entry(details, task, path)
        acc = number(entry, "acc", f"{path}: details.{task}")
        kfold = entry.get("kfold")
        if kfold is not None and (
            not isinstance(kfold, int) or isinstance(kfold, bool) or kfold < 2
        ):
            raise TableInputError(
                f"{path}: details.{task}.kfold: expected null (the task's own split) or a fold "
                f"count >= 2, got {kfold!r:.40}"
            )
        if scored:
            _agree(number(result, task, path), acc, 1e-9, f"{path}: {task}", f"details.{task}.acc")
        if records is not None:
            correct, tested = records[0][task], records[1][task]
            derived = transfer_bootstrap.task_accuracy(correct, tested)
            _agree(acc, derived, ACCURACY_TOLERANCE, f"{path}: details.{task}.acc",
                   f"its record details.{task}.test")  # fmt: skip
        accuracies.append(acc)
    if accuracies and "avg" in result:
        _agree(number(result, "avg", path), float(np.mean(accuracies)), AVERAGE_TOLERANCE,
               f"{path}: avg", f"the mean of {', '.join(tasks)}")  # fmt: skip


# Comparability of the files of one table.

#: what must be equal across one table's files, by the key that marks a file's kind
SAME_ACROSS = {
    "protocol": ("protocol",),
    "classifier": ("classifier", "senteval_seed"),
}


def check_comparable(results: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
    """One STS protocol, one transfer classifier, SentEval seed and fold count per task across
    all ``(path, result)`` files of a table: numbers measured otherwise are not compared."""
    first: dict[str, tuple[str, Any]] = {}
    for path, result in results:
        for marker, keys in SAME_ACROSS.items():
            if marker not in result:
                continue
            for key in keys:
                _same(first, key, result.get(key), path)
        details = result.get("details")
        if "classifier" in result and isinstance(details, dict):
            for task in TRANSFER_TASKS:
                if isinstance(details.get(task), dict):
                    _same(first, f"details.{task}.kfold", details[task].get("kfold"), path)


def _same(first: dict[str, tuple[str, Any]], key: str, value: Any, path: str) -> None:
    seen = first.setdefault(key, (path, value))
    if seen[1] != value:
        raise TableInputError(
            f"{seen[0]} ({key} {seen[1]!r}) and {path} ({key} {value!r}): evaluated under "
            "different settings, so their numbers are not compared; evaluate every file of "
            "the table under one"
        )


# CSV twins (read back by the paper pages).


def read_csv(path: str, needed: Sequence[str], numeric: Sequence[str] = ()) -> Any:
    """A table's CSV twin with the ``needed`` columns, every line whole (ending in a line break)
    and as many fields as the header, those of the ``numeric`` columns it has numbers (an empty
    cell: none), never infinite. Every failure names the file (and the row and column)."""
    import pandas as pd

    try:
        text = read_text(path)
    except UserError as exc:
        raise TableInputError(str(exc)) from None
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows:
        raise TableInputError(f"{path}: empty file (expected a table's CSV)")
    if not text.endswith("\n"):  # the tables write every line whole
        raise TableInputError(f"{path}: the last line has no line break (a cut file?)")
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(rows[0]):
            raise TableInputError(
                f"{path}: line {number} has {len(row)} fields, the header {len(rows[0])} (a cut "
                "or edited file?)"
            )
    frame = pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""])
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise TableInputError(f"{path}: no column {', '.join(missing)}")
    for column in (c for c in numeric if c in frame.columns):
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = frame[column].notna() & (values.isna() | ~np.isfinite(values.fillna(0.0)))
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise TableInputError(
                f"{path}: column {column}, line {row + 2}: {frame[column].iloc[row]!r} is not a "
                "finite number"
            )
        frame[column] = values
    return frame
