"""Published SentEval transfer results (GCSE Table 7, OssCSE Table 5), as data.

``resources/published_transfer.csv`` holds every printed row with the paper and table it comes
from: accuracy x100 on MR, CR, SUBJ, MPQA, SST2, TREC, MRPC and the printed average.

``status`` is ``transfer`` for transfer accuracies and ``sts_numbers`` for rows that are not: the
SimCSE, DiffCSE, PCL and RankCSE rows of GCSE Table 7 (marked as quoted from Liu et al. 2023)
repeat, number for number, the same methods' STS row of GCSE Table 2 (STS12-16, STS-B, SICK-R,
avg), checked in ``tests/test_published_transfer.py``. They are kept, flagged, and never used as
a reference.

Headline rule (:func:`published_transfer`): only ``transfer`` rows; the method's own paper
(gcse, osscse) first, otherwise any paper; the first such row in file order (GCSE: its first
LLM, ChatGLM3-6B, as for STS). For the seven tasks the printed average is returned; for a subset
of tasks, the mean of that row's printed accuracies on those tasks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from negcse.published import PublishedDataError
from negcse.published_csv import CSVSpec, PublishedTable, Score, parse_frame

TRANSFER_TASKS: tuple[str, ...] = ("MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC")
SCORE_COLUMNS: tuple[str, ...] = (*TRANSFER_TASKS, "avg")
TEXT_COLUMNS: tuple[str, ...] = ("paper", "table", "label", "method", "backbone")
COLUMNS: tuple[str, ...] = (*TEXT_COLUMNS, *SCORE_COLUMNS, "status", "note")
PAPERS: tuple[str, ...] = ("gcse", "osscse")
STATUSES: tuple[str, ...] = ("transfer", "sts_numbers")
RESOURCE = "published_transfer.csv"
OWN_PAPER: dict[str, str] = {"gcse": "gcse", "osscse": "osscse"}


SPEC = CSVSpec(
    columns=COLUMNS,
    text=TEXT_COLUMNS,
    choices={"paper": PAPERS, "status": STATUSES},
    scores={col: Score() for col in SCORE_COLUMNS},
    error=PublishedDataError,
)


def parse_published_transfer(text: str, source: str = RESOURCE) -> pd.DataFrame:
    """Validate and type the CSV; errors read ``<source>:<line>: column '<name>': ...``."""
    return parse_frame(text, SPEC, source)


_TABLE = PublishedTable(RESOURCE, parse_published_transfer)


def load_published_transfer(path: str | Path | None = None) -> pd.DataFrame:
    """All printed rows (columns :data:`COLUMNS`), flagged rows included."""
    return _TABLE.load(path)


def published_transfer(
    method: str, backbone: str, tasks: Sequence[str] = TRANSFER_TASKS
) -> float | None:
    """The published transfer average of ``method`` x ``backbone`` over ``tasks``, or None."""
    unknown = [t for t in tasks if t not in TRANSFER_TASKS]
    if unknown or not tasks:
        raise ValueError(f"tasks must be a non-empty subset of {TRANSFER_TASKS}, got {tasks}")
    frame = _TABLE.default
    hit = frame[
        (frame["method"] == method)
        & (frame["backbone"] == backbone)
        & (frame["status"] == "transfer")
    ]
    own = OWN_PAPER.get(method)
    if own is not None and (hit["paper"] == own).any():
        hit = hit[hit["paper"] == own]
    if hit.empty:
        return None
    row = hit.iloc[0]
    if sorted(tasks) == sorted(TRANSFER_TASKS):
        return float(row["avg"])
    value = sum(float(row[t]) for t in tasks) / len(tasks)
    return None if math.isnan(value) else value
