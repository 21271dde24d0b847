"""OssCSE's published split statistics, split results and probe means, as data.

``resources/published_splits.csv`` is long-form, one printed number a row: ``paper, table,
method, backbone, dataset, metric, value, scale, note``. Table 2 rows (split sizes and medians
per dataset) have no method or backbone; Tables 3 and 6 give Cont./Oppn. Spearman of SimCSE's
released BERT-base models (``simcse`` = the paper's UnSup, ``simcse_sup`` = Sup) as printed
fractions; Section 5.2 gives the Appendix B probe means (SimCSE vs OssCSE, BERT-base).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from negcse.errors import UserError
from negcse.published_csv import CSVSpec, PublishedTable, Row, Score, parse_frame

RESOURCE = "published_splits.csv"
COLUMNS = ("paper", "table", "method", "backbone", "dataset", "metric", "value", "scale", "note")
METRICS = {
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


def _check(row: Row) -> None:
    metric = row.raw["metric"]
    kind = METRICS[metric]
    if row.raw["scale"] != kind:
        raise row.error("scale", f"{metric} is a {kind}")
    if kind in ("fraction", "cosine") and not (row.raw["method"] and row.raw["backbone"]):
        raise row.error("method", f"empty for {metric}")
    value = row.scores["value"]
    if kind != "count" and value > 5:
        raise row.error("value", f"{value} is outside the 0-5 range of a {kind}")


SPEC = CSVSpec(
    columns=COLUMNS,
    choices={"metric": tuple(METRICS)},
    scores={"value": Score(high=math.inf)},
    error=PublishedSplitsError,
)


def parse(text: str, source: str = RESOURCE) -> pd.DataFrame:
    """Validated, typed rows; errors read ``<source>:<line>: column '<name>': ...``."""
    return parse_frame(text, SPEC, source, _check)


_TABLE = PublishedTable(RESOURCE, parse)


def load(path: str | Path | None = None) -> pd.DataFrame:
    """All rows (the packaged resource, or ``path`` in the same format)."""
    return _TABLE.load(path)


def table2_stats() -> dict[str, dict[str, float]]:
    """Table 2: dataset -> {n_cont, n_oppn, median_score, median_mer}, in printed order."""
    rows = load().query("table == '2'")
    out: dict[str, dict[str, float]] = {}
    for _, r in rows.iterrows():
        value = r["value"]
        out.setdefault(r["dataset"], {})[r["metric"]] = (
            int(value) if r["scale"] == "count" else value
        )
    return out


def published_value(
    method: str, backbone: str, metric: str, dataset: str, table: str | None = None
) -> float | None:
    """A printed number for ``method`` x ``backbone`` (first matching row), or None.

    Spearman fractions come back x100, the project's scale; cosines as printed.
    """
    frame = load()
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


def published_models(metric: str, dataset: str) -> list[tuple[str, str]]:
    """(method, backbone) pairs with a printed ``metric`` on ``dataset``, in file order."""
    frame = load()
    hit = frame[(frame["metric"] == metric) & (frame["dataset"] == dataset)]
    return list(dict.fromkeys(zip(hit["method"], hit["backbone"], strict=True)))
