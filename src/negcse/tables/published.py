"""The papers' published numbers, as data: one CSV per kind in ``negcse.resources``.

Every printed number is a row with the paper and table (or section) it is printed in; each
file is validated on load (:mod:`negcse.tables.published_csv`: errors name file, line and
column). Scores are x100 (fractions the papers print are stored converted, ``scale ==
"fraction"``); a cell is empty where the paper has no number.

- ``published_sts.csv``: every row of every STS table of the SNCSE, UNA, SAN+HiNCE, GCSE and
  OssCSE papers (main, ablation and combination tables, baselines quoted in them included), in
  printed order. Rows that print only an average (ablations, seed tables, numbers read from
  the text) fill only ``avg`` and say where the number comes from in ``note``. Headline rule
  of :func:`published_avg`: the method's own paper (:data:`OWN_PAPER`), or ``paper`` when
  given; within it, rows with all seven scores win over average-only rows, then file order.
  So SNCSE BERT-base is 78.97 (sncse Table 2), SimCSE is SimCSE's own number as quoted in
  sncse Table 2, GCSE is its first printed LLM (ChatGLM3-6B, the LLM of all its analyses), and
  ``paper="san-hince"`` gives the SAN authors' reproduced baseline (SimCSE BERT-base 76.64).
- ``published_transfer.csv``: GCSE Table 7 and OssCSE Table 5, accuracy on MR, CR, SUBJ, MPQA,
  SST2, TREC, MRPC and the printed average. ``status`` is ``sts_numbers`` for the SimCSE,
  DiffCSE, PCL and RankCSE rows of GCSE Table 7, which repeat those methods' STS row of GCSE
  Table 2 number for number: kept, flagged, never a reference. :func:`published_transfer`:
  ``transfer`` rows only, the method's own paper first, the first row in file order; for a
  subset of tasks the mean of that row's accuracies on them.
- ``published_splits.csv``: OssCSE's split statistics (Table 2: sizes and medians per dataset,
  no method), Cont./Oppn. Spearman of SimCSE's released BERT-base models (Tables 3, 6:
  ``simcse`` = UnSup, ``simcse_sup`` = Sup; printed as fractions) and the Appendix B probe
  means (Section 5.2), one number a row.
- ``published_mteb.csv``: GCSE Table 6 (reranking MAP per task and average, four backbones) and
  SAN Table 4 (average accuracy over ten classification tasks; backbone not stated, filed under
  BERT-base and said in ``note``). SAN Figure 2 (reranking) is a bar chart: not entered.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from negcse.data.mteb_tasks import GROUP_METRICS, GROUPS, HEADLINE
from negcse.data.sts import STS_TASKS
from negcse.errors import UserError
from negcse.tables.published_csv import CSVSpec, PublishedTable, Row, Score, parse_frame

logger = logging.getLogger(__name__)

# STS (published_sts.csv)

TASKS: tuple[str, ...] = STS_TASKS
SCORE_COLUMNS: tuple[str, ...] = (*TASKS, "avg")
TEXT_COLUMNS: tuple[str, ...] = ("paper", "table", "label", "method", "backbone")
COLUMNS: tuple[str, ...] = (*TEXT_COLUMNS, *SCORE_COLUMNS, "scale", "note")
PAPERS: tuple[str, ...] = ("sncse", "una", "san-hince", "gcse", "osscse")
SCALES: tuple[str, ...] = ("percent", "fraction")
STS_RESOURCE = "published_sts.csv"

# The paper whose number is a method's headline when no paper is named. SimCSE is not one of
# the five papers: its own published numbers are quoted (Gao et al., 2021) in sncse Table 2.
OWN_PAPER: dict[str, str] = {
    "simcse": "sncse",
    "sncse": "sncse",
    "sncse_pl": "sncse",
    "sncse_nl": "sncse",
    "sncse_infonce": "sncse",
    "una": "una",
    "una_paraphrase": "una",
    "una_both": "una",
    "una_random_select": "una",
    "una_random_replace": "una",
    "una_random_both": "una",
    "simcse_san": "san-hince",
    "sncse_san": "san-hince",
    # RankCSE and RLRD are quoted only by the SAN and GCSE papers: the SAN authors' reproduced
    # runs (Table 3) are the reference for their +SAN rows; Table 9 keeps the original figures
    "rankcse": "san-hince",
    "rankcse_san": "san-hince",
    "rlrd": "san-hince",
    "rlrd_san": "san-hince",
    "san_scale10": "san-hince",
    "san_scale30": "san-hince",
    "san_scale40": "san-hince",
    "gcse": "gcse",
    "osscse": "osscse",
}


class PublishedDataError(UserError, ValueError):
    """The published-results table is malformed; the message names the line and column."""


def _check_method(row: Row) -> None:
    method = row.raw["method"]
    if method != method.lower() or not method.replace("_", "").isalnum():
        raise row.error("method", f"{method!r} is not a lowercase slug")


STS_SPEC = CSVSpec(
    columns=COLUMNS,
    text=TEXT_COLUMNS,
    choices={"paper": PAPERS, "scale": SCALES},
    scores={**{task: Score(empty_is_nan=True) for task in TASKS}, "avg": Score()},
    error=PublishedDataError,
)


def parse_published(text: str, source: str = STS_RESOURCE) -> pd.DataFrame:
    """Validate and type the CSV text; errors read ``<source>:<line>: column '<name>': ...``."""
    return parse_frame(text, STS_SPEC, source, _check_method)


_STS = PublishedTable(STS_RESOURCE, parse_published)


def load_published(path: str | Path | None = None) -> pd.DataFrame:
    """All published rows (columns :data:`COLUMNS`; scores float64 with NaN where not printed).

    ``path`` reads another file in the same format; by default the packaged resource.
    """
    return _STS.load(path)


# A released checkpoint's row (config/defaults.yaml `released`) -> the printed row it reproduces
# (paper, method, label; None: the method's headline row in that paper), the method being the
# one of our grid it is a checkpoint of. GCSE's aleversn/GCSE-* model cards match Table 2's
# Deepseek-V3 rows; SimCSE's princeton-nlp/unsup-simcse-* are SimCSE's own numbers (quoted in
# sncse Table 2); the community RankCSE checkpoint (perceptiveshawty, ListMLE) is compared with
# the original RankCSE number (quoted in san-hince Table 9; no official checkpoint exists).
CHECKPOINT_ROWS: dict[str, tuple[str, str, str | None]] = {
    "gcse_checkpoint": ("gcse", "gcse", "GCSE (Deepseek-V3-0324)"),
    "simcse_checkpoint": ("sncse", "simcse", None),
    "rankcse_community": ("san-hince", "rankcse", "RankCSE"),
}


def published_rows(method: str, backbone: str, paper: str | None = None) -> pd.DataFrame:
    """Rows for ``method`` x ``backbone`` in ``paper`` (default: the method's own paper,
    else every paper), in headline order: complete rows first, then file order. A released
    checkpoint's name (:data:`CHECKPOINT_ROWS`) gives the one row it reproduces."""
    frame = load_published()
    if method in CHECKPOINT_ROWS:
        own, method, label = CHECKPOINT_ROWS[method]
        paper = paper or own
        if label is not None:
            frame = frame[frame["label"] == label]
    if paper is not None and paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; known: {', '.join(PAPERS)}")
    paper = paper or OWN_PAPER.get(method)
    hit = frame[(frame["method"] == method) & (frame["backbone"] == backbone)]
    if paper is not None:
        hit = hit[hit["paper"] == paper]
    else:  # a baseline without an own paper: papers in PAPERS order
        hit = hit.assign(_p=hit["paper"].map(PAPERS.index)).sort_values("_p", kind="stable")
        hit = hit.drop(columns="_p")
    complete = hit[list(TASKS)].notna().all(axis=1)
    return pd.concat([hit[complete], hit[~complete]])


def published_avg(method: str, backbone: str, paper: str | None = None) -> float | None:
    """The headline 7-task average (x100) for ``method`` x ``backbone``, or None if unprinted.

    See the module docstring (published_sts.csv) for which row wins when several print one.
    """
    rows = published_rows(method, backbone, paper)
    if rows.empty:
        return None
    return float(rows["avg"].iloc[0])


# Transfer (published_transfer.csv)

TRANSFER_TASKS: tuple[str, ...] = ("MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC")
TRANSFER_SCORES: tuple[str, ...] = (*TRANSFER_TASKS, "avg")
TRANSFER_COLUMNS: tuple[str, ...] = (*TEXT_COLUMNS, *TRANSFER_SCORES, "status", "note")
TRANSFER_PAPERS: tuple[str, ...] = ("gcse", "osscse")
STATUSES: tuple[str, ...] = ("transfer", "sts_numbers")
TRANSFER_RESOURCE = "published_transfer.csv"
TRANSFER_OWN_PAPER: dict[str, str] = {"gcse": "gcse", "osscse": "osscse"}


TRANSFER_SPEC = CSVSpec(
    columns=TRANSFER_COLUMNS,
    text=TEXT_COLUMNS,
    choices={"paper": TRANSFER_PAPERS, "status": STATUSES},
    scores={col: Score() for col in TRANSFER_SCORES},
    error=PublishedDataError,
)


def parse_published_transfer(text: str, source: str = TRANSFER_RESOURCE) -> pd.DataFrame:
    """Validate and type the CSV; errors read ``<source>:<line>: column '<name>': ...``."""
    return parse_frame(text, TRANSFER_SPEC, source)


_TRANSFER = PublishedTable(TRANSFER_RESOURCE, parse_published_transfer)


def load_published_transfer(path: str | Path | None = None) -> pd.DataFrame:
    """All printed rows (columns :data:`TRANSFER_COLUMNS`), flagged rows included."""
    return _TRANSFER.load(path)


def published_transfer(
    method: str, backbone: str, tasks: Sequence[str] = TRANSFER_TASKS, paper: str | None = None
) -> float | None:
    """The published transfer average of ``method`` x ``backbone`` over ``tasks``, or None;
    from ``paper`` only when given (a baseline as the compared method's paper prints it)."""
    unknown = [t for t in tasks if t not in TRANSFER_TASKS]
    if unknown or not tasks:
        raise ValueError(f"tasks must be a non-empty subset of {TRANSFER_TASKS}, got {tasks}")
    frame = _TRANSFER.default
    hit = frame[
        (frame["method"] == method)
        & (frame["backbone"] == backbone)
        & (frame["status"] == "transfer")
    ]
    if paper is not None:
        hit = hit[hit["paper"] == paper]
    own = TRANSFER_OWN_PAPER.get(method)
    if own is not None and (hit["paper"] == own).any():
        hit = hit[hit["paper"] == own]
    if hit.empty:
        return None
    row = hit.iloc[0]
    if sorted(tasks) == sorted(TRANSFER_TASKS):
        return float(row["avg"])
    value = sum(float(row[t]) for t in tasks) / len(tasks)
    return None if math.isnan(value) else value


# OssCSE splits and probe (published_splits.csv)

SPLITS_RESOURCE = "published_splits.csv"
SPLITS_COLUMNS: tuple[str, ...] = (
    "paper", "table", "method", "backbone", "dataset", "metric", "value", "scale", "note"
)
SPLITS_METRICS = {
    "n_cont": "count",
    "n_oppn": "count",
    "median_score": "score",
    "median_mer": "mer",
    "cont": "fraction",
    "oppn": "fraction",
    "paraphrase": "cosine",
    "negation": "cosine",
}


class PublishedSplitsError(UserError, ValueError):
    """The published split table is malformed; the message names the line and column."""


def _check_split(row: Row) -> None:
    metric = row.raw["metric"]
    kind = SPLITS_METRICS[metric]
    if row.raw["scale"] != kind:
        raise row.error("scale", f"{metric} is a {kind}")
    if kind in ("fraction", "cosine") and not (row.raw["method"] and row.raw["backbone"]):
        raise row.error("method", f"empty for {metric}")
    value = row.scores["value"]
    if kind != "count" and value > 5:
        raise row.error("value", f"{value} is outside the 0-5 range of a {kind}")


SPLITS_SPEC = CSVSpec(
    columns=SPLITS_COLUMNS,
    choices={"metric": tuple(SPLITS_METRICS)},
    scores={"value": Score(high=math.inf)},
    error=PublishedSplitsError,
)


def parse_published_splits(text: str, source: str = SPLITS_RESOURCE) -> pd.DataFrame:
    """Validated, typed rows; errors read ``<source>:<line>: column '<name>': ...``."""
    return parse_frame(text, SPLITS_SPEC, source, _check_split)


_SPLITS = PublishedTable(SPLITS_RESOURCE, parse_published_splits)


def load_published_splits(path: str | Path | None = None) -> pd.DataFrame:
    """All rows (the packaged resource, or ``path`` in the same format)."""
    return _SPLITS.load(path)


def splits_table2() -> dict[str, dict[str, float]]:
    """Table 2: dataset -> {n_cont, n_oppn, median_score, median_mer}, in printed order."""
    rows = load_published_splits().query("table == '2'")
    out: dict[str, dict[str, float]] = {}
    for _, r in rows.iterrows():
        value = r["value"]
        out.setdefault(r["dataset"], {})[r["metric"]] = (
            int(value) if r["scale"] == "count" else value
        )
    return out


def published_split_value(
    method: str, backbone: str, metric: str, dataset: str, table: str | None = None
) -> float | None:
    """A printed number for ``method`` x ``backbone`` (first matching row), or None.

    Spearman fractions come back x100, the project's scale; cosines as printed.
    """
    frame = load_published_splits()
    hit = frame[
        (frame["method"] == method)
        & (frame["backbone"] == backbone)
        & (frame["metric"] == metric)
        & (frame["dataset"] == dataset)
    ]
    if table is not None:
        hit = hit[hit["table"] == table]
    if hit.empty:
        return None
    row = hit.iloc[0]
    return float(row["value"]) * (100.0 if row["scale"] == "fraction" else 1.0)


def published_split_models(metric: str, dataset: str) -> list[tuple[str, str]]:
    """(method, backbone) pairs with a printed ``metric`` on ``dataset``, in file order."""
    frame = load_published_splits()
    hit = frame[(frame["metric"] == metric) & (frame["dataset"] == dataset)]
    return list(dict.fromkeys(zip(hit["method"], hit["backbone"], strict=True)))


# MTEB (published_mteb.csv)

MTEB_RESOURCE = "published_mteb.csv"
MTEB_COLUMNS: tuple[str, ...] = (*TEXT_COLUMNS, "group", "task", "metric", "value", "scale", "note")
# Where a method's MTEB headline comes from when its own paper prints none.
MTEB_PAPER: dict[str, dict[str, str]] = {
    "reranking": {"simcse": "gcse"},
    "classification": {"simcse": "san-hince", "sncse": "san-hince"},
}


def _check_mteb(row: Row) -> None:
    group = row.raw["group"]
    tasks = (*(spec.name for spec in GROUPS[group]), "avg")
    if row.raw["task"] not in tasks:
        raise row.error("task", f"{row.raw['task']!r} is not one of {tasks}")
    if row.raw["metric"] not in GROUP_METRICS[group]:
        raise row.error("metric", f"{row.raw['metric']!r} is not a {group} metric")


MTEB_SPEC = CSVSpec(
    columns=MTEB_COLUMNS,
    text=TEXT_COLUMNS,
    choices={"paper": PAPERS, "scale": SCALES, "group": tuple(GROUPS)},
    scores={"value": Score()},
    error=PublishedDataError,
)


def parse_published_mteb(text: str, source: str = MTEB_RESOURCE) -> pd.DataFrame:
    """Validate and type the CSV text; errors read ``<source>:<line>: column '<name>': ...``."""
    return parse_frame(text, MTEB_SPEC, source, _check_mteb)


_MTEB = PublishedTable(MTEB_RESOURCE, parse_published_mteb)


def load_published_mteb(path: str | Path | None = None) -> pd.DataFrame:
    """All published MTEB numbers (the packaged resource, or another file in its format)."""
    return _MTEB.load(path)


def published_mteb_avg(
    method: str, backbone: str, group: str, paper: str | None = None
) -> float | None:
    """The printed average of the group's headline metric (MAP, accuracy), or None.

    From ``paper`` if given, else the method's own paper (:data:`OWN_PAPER`),
    else the paper that reports the method for this group (:data:`MTEB_PAPER`); the first
    matching row in file order.
    """
    frame = load_published_mteb()
    hit = frame[
        (frame["method"] == method)
        & (frame["backbone"] == backbone)
        & (frame["group"] == group)
        & (frame["task"] == "avg")
        & (frame["metric"] == HEADLINE[group])
    ]
    sources = [paper] if paper else [OWN_PAPER.get(method), MTEB_PAPER[group].get(method)]
    for source in sources:
        rows = hit[hit["paper"] == source]
        if source and not rows.empty:
            return float(rows["value"].iloc[0])
    return None
