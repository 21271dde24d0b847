"""A trained model folder's record, ``negcse.json`` (what ``negcse train`` saves beside the
weights: the run spec, the seed, the evaluation pooler, the selected step and score, the corpus,
the versions), read and checked in one place for every reader: ``negcse export``, the model card,
``negcse evaluate`` (its pooler and table notes) and a resumed or guided run.

:func:`load_model_record` reads it (valid UTF-8 JSON, an object, every number finite) and checks
the type of every key a reader uses (a score in a Spearman correlation's range, the selected step
within the run's); ``run=True`` also requires the run's identity (method,
backbone, seed). Any failure is one :class:`~negcse.errors.UserError` naming the file and the
key. Keys it does not know are kept unchecked (a newer negcse's)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from negcse.errors import UserError
from negcse.finite import SEED_MAX
from negcse.io_utils import read_json
from negcse.text.names import BACKBONE, NAME, is_name

RECORD = "negcse.json"
#: what makes a record a training run's: the card's title and the evaluations' tags
RUN_KEYS = ("method", "backbone", "seed")


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


#: key -> (what it must be, the check)
CHECKS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "method": ("a name (letters, digits and _ . + -)", lambda v: is_name(v, NAME)),
    "implementation": ("a name (letters, digits and _ . + -)", lambda v: is_name(v, NAME)),
    "backbone": (
        "a name or org/name (letters, digits and _ . + -)",
        lambda v: is_name(v, BACKBONE),
    ),
    "seed": ("a seed (an integer from 0 to 2^64 - 1)", lambda v: _count(v) and v <= SEED_MAX),
    "params": ("an object", lambda v: isinstance(v, dict)),
    "train": ("an object", lambda v: isinstance(v, dict)),
    "generators": ("an object", lambda v: isinstance(v, dict)),
    "guides": ("an object", lambda v: isinstance(v, dict)),
    "llm": ("an object", lambda v: isinstance(v, dict)),
    "versions": ("an object", lambda v: isinstance(v, dict)),
    "substitutes": (
        "a list of text",
        lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    ),
    "best_stsb_dev": (
        "a Spearman correlation x100 (a number from -100 to 100) or null",
        lambda v: (
            v is None
            or (isinstance(v, int | float) and not isinstance(v, bool) and -100 <= v <= 100)
        ),
    ),
    "best_step": ("an integer >= 0 or null", lambda v: v is None or _count(v)),
    "steps": ("an integer >= 0", _count),
    "corpus_sentences": ("an integer >= 0", _count),
    "eval_pooler": ("a pooler's name (text)", lambda v: isinstance(v, str)),
    "eval_protocol": ("text", lambda v: isinstance(v, str)),
    "corpus": ("text", lambda v: isinstance(v, str)),
    "corpus_file": ("text", lambda v: isinstance(v, str)),
    "device": ("text", lambda v: isinstance(v, str)),
    "device_setting": ("text", lambda v: isinstance(v, str)),
}


def check_model_record(
    record: Mapping[str, Any], where: str | os.PathLike[str], run: bool = False
) -> dict[str, Any]:
    """``record`` (a ``negcse.json``'s object, read from ``where``) checked as the module says."""
    if run:
        missing = [key for key in RUN_KEYS if key not in record]
        if missing:
            raise UserError(
                f"{where}: no {', '.join(missing)} recorded: not the record of a training run "
                "(negcse train writes method, backbone and seed)"
            )
    for key, (expected, ok) in CHECKS.items():
        if key in record and not ok(record[key]):
            raise UserError(f"{where}: {key}: expected {expected}, got {record[key]!r:.60}")
    best, steps = record.get("best_step"), record.get("steps")
    if isinstance(best, int) and isinstance(steps, int) and best > steps:
        raise UserError(f"{where}: best_step: {best} is after the run's last step (steps {steps})")
    return dict(record)


def load_model_record(folder: str | os.PathLike[str], run: bool = False) -> dict[str, Any]:
    """The checked record of the model in ``folder``; {} when it has none (a model trained
    elsewhere), unless ``run`` (then its absence is the error)."""
    path = Path(folder) / RECORD
    if not path.is_file():
        if run:
            raise UserError(f"{folder}: not a trained model folder (no {RECORD})")
        return {}
    return check_model_record(read_json(path), path, run)
