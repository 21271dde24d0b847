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

import logging
from pathlib import Path

import pandas as pd

from negcse.errors import UserError
from negcse.published_csv import CSVSpec, PublishedTable, Row, Score, parse_frame

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


SPEC = CSVSpec(
    columns=COLUMNS,
    text=TEXT_COLUMNS,
    choices={"paper": PAPERS, "scale": SCALES},
    scores={**{task: Score(empty_is_nan=True) for task in TASKS}, "avg": Score()},
    error=PublishedDataError,
)


def parse_published(text: str, source: str = RESOURCE) -> pd.DataFrame:
    """Validate and type the CSV text; errors read ``<source>:<line>: column '<name>': ...``."""
    return parse_frame(text, SPEC, source, _check_method)


_TABLE = PublishedTable(RESOURCE, parse_published)


def load_published(path: str | Path | None = None) -> pd.DataFrame:
    """All published rows (columns :data:`COLUMNS`; scores float64 with NaN where not printed).

    ``path`` reads another file in the same format; by default the packaged resource.
    """
    return _TABLE.load(path)


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
