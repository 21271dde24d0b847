"""Published STS results of the five papers, as data.

``resources/published_sts.csv`` holds every row of every STS table of the SNCSE, UNA,
SAN+HiNCE, GCSE and OssCSE papers (main, ablation and combination tables, baselines quoted
in them included), one row per printed row, with the paper and table it is printed in.

Scores are Spearman x100. UNA prints fractions (.7614); those rows are stored converted
(76.14) and carry ``scale == "fraction"``. A cell is empty where the paper has no number;
rows that print only an average (ablations, seed tables, numbers read from the text) fill
only ``avg`` and say where the number comes from in ``note``.

Headline rule of :func:`published_avg`: the number is taken from the method's own paper
(:data:`OWN_PAPER`), or from ``paper`` when given; within that paper, rows with all seven
scores win over average-only rows, then the first row in file order (the CSV keeps each
paper's tables and rows in printed order). So SNCSE BERT-base is 78.97 (sncse Table 2),
SimCSE is SimCSE's own published number as quoted in sncse Table 2, GCSE is its first
printed LLM (ChatGLM3-6B, the LLM of all its analyses), and ``paper="san-hince"`` gives the
SAN authors' reproduced baseline (SimCSE BERT-base 76.64), the reference for their combos.
"""

from __future__ import annotations

import csv
import logging
import math
from functools import cache
from importlib import resources
from pathlib import Path

import pandas as pd

logger = logging.getLogger(__name__)

TASKS: tuple[str, ...] = (
    "STS12",
    "STS13",
    "STS14",
    "STS15",
    "STS16",
    "STSBenchmark",
    "SICKRelatedness",
)
SCORE_COLUMNS: tuple[str, ...] = (*TASKS, "avg")
TEXT_COLUMNS: tuple[str, ...] = ("paper", "table", "label", "method", "backbone")
COLUMNS: tuple[str, ...] = (*TEXT_COLUMNS, *SCORE_COLUMNS, "scale", "note")
PAPERS: tuple[str, ...] = ("sncse", "una", "san-hince", "gcse", "osscse")
SCALES: tuple[str, ...] = ("percent", "fraction")
RESOURCE = "published_sts.csv"

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
    "rankcse_san": "san-hince",
    "rlrd_san": "san-hince",
    "san_scale10": "san-hince",
    "san_scale30": "san-hince",
    "san_scale40": "san-hince",
    "gcse": "gcse",
    "osscse": "osscse",
}


class PublishedDataError(ValueError):
    """The published-results table is malformed; the message names the line and column."""


def _parse_score(value: str, where: str) -> float:
    if value == "":
        return math.nan
    try:
        score = float(value)
    except ValueError:
        raise PublishedDataError(f"{where}: {value!r} is not a number") from None
    if not 0.0 <= score <= 100.0:
        raise PublishedDataError(f"{where}: {score} is outside the 0-100 scale")
    return score


def parse_published(text: str, source: str = RESOURCE) -> pd.DataFrame:
    """Validate and type the CSV text; errors read ``<source>:<line>: column '<name>': ...``."""
    reader = csv.reader(text.splitlines())
    header = next(reader, None)
    if header is None or tuple(header) != COLUMNS:
        raise PublishedDataError(
            f"{source}:1: header must be {','.join(COLUMNS)}, got {','.join(header or [])}"
        )
    records: list[dict[str, object]] = []
    for row in reader:
        line = reader.line_num
        if not row:
            continue
        if len(row) != len(COLUMNS):
            raise PublishedDataError(
                f"{source}:{line}: expected {len(COLUMNS)} fields, got {len(row)}"
            )
        raw = dict(zip(COLUMNS, row, strict=True))
        for col in TEXT_COLUMNS:
            if not raw[col].strip():
                raise PublishedDataError(f"{source}:{line}: column {col!r} is empty")
        if raw["paper"] not in PAPERS:
            raise PublishedDataError(
                f"{source}:{line}: column 'paper': {raw['paper']!r} is not one of {PAPERS}"
            )
        if raw["scale"] not in SCALES:
            raise PublishedDataError(
                f"{source}:{line}: column 'scale': {raw['scale']!r} is not one of {SCALES}"
            )
        method = raw["method"]
        if method != method.lower() or not method.replace("_", "").isalnum():
            raise PublishedDataError(
                f"{source}:{line}: column 'method': {method!r} is not a lowercase slug"
            )
        record: dict[str, object] = {col: raw[col] for col in (*TEXT_COLUMNS, "scale", "note")}
        for col in SCORE_COLUMNS:
            record[col] = _parse_score(raw[col].strip(), f"{source}:{line}: column {col!r}")
        if math.isnan(float(record["avg"])):  # type: ignore[arg-type]
            raise PublishedDataError(f"{source}:{line}: column 'avg' is empty")
        records.append(record)
    frame = pd.DataFrame.from_records(records, columns=list(COLUMNS))
    return frame.astype({col: "float64" for col in SCORE_COLUMNS})


@cache
def _load_default() -> pd.DataFrame:
    text = resources.files("negcse.resources").joinpath(RESOURCE).read_text("utf-8")
    return parse_published(text, RESOURCE)


def load_published(path: str | Path | None = None) -> pd.DataFrame:
    """All published rows (columns :data:`COLUMNS`; scores float64 with NaN where not printed).

    ``path`` reads another file in the same format; by default the packaged resource.
    """
    if path is None:
        return _load_default().copy()
    return parse_published(Path(path).read_text("utf-8"), str(path))


def published_rows(method: str, backbone: str, paper: str | None = None) -> pd.DataFrame:
    """Rows for ``method`` x ``backbone`` in ``paper`` (default: the method's own paper,
    else every paper), in headline order: complete rows first, then file order."""
    frame = load_published()
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

    See the module docstring for which row wins when several print one.
    """
    rows = published_rows(method, backbone, paper)
    if rows.empty:
        return None
    return float(rows["avg"].iloc[0])
