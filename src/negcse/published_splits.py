"""OssCSE's published split statistics, split results and probe means, as data.

``resources/published_splits.csv`` is long-form, one printed number a row: ``paper, table,
method, backbone, dataset, metric, value, scale, note``. Table 2 rows (split sizes and medians
per dataset) have no method or backbone; Tables 3 and 6 give Cont./Oppn. Spearman of SimCSE's
released BERT-base models (``simcse`` = the paper's UnSup, ``simcse_sup`` = Sup) as printed
fractions; Section 5.2 gives the Appendix B probe means (SimCSE vs OssCSE, BERT-base).
"""

from __future__ import annotations

import csv
import math
from functools import cache
from importlib import resources
from pathlib import Path

import pandas as pd

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


class PublishedSplitsError(ValueError):
    """The published split table is malformed; the message names the line and column."""


def parse(text: str, source: str = RESOURCE) -> pd.DataFrame:
    """Validated, typed rows; errors read ``<source>:<line>: column '<name>': ...``."""
    reader = csv.reader(text.splitlines())
    header = next(reader, None)
    if header is None or tuple(header) != COLUMNS:
        raise PublishedSplitsError(f"{source}:1: header must be {','.join(COLUMNS)}")
    records = []
    for row in reader:
        line = reader.line_num
        if not row:
            continue
        if len(row) != len(COLUMNS):
            raise PublishedSplitsError(f"{source}:{line}: expected {len(COLUMNS)} fields")
        rec: dict[str, object] = dict(zip(COLUMNS, row, strict=True))
        metric = str(rec["metric"])
        if metric not in METRICS:
            raise PublishedSplitsError(f"{source}:{line}: column 'metric': unknown {metric!r}")
        if rec["scale"] != METRICS[metric]:
            raise PublishedSplitsError(
                f"{source}:{line}: column 'scale': {metric} is a {METRICS[metric]}"
            )
        needs_model = METRICS[metric] in ("fraction", "cosine")
        if needs_model and not (rec["method"] and rec["backbone"]):
            raise PublishedSplitsError(f"{source}:{line}: column 'method': empty for {metric}")
        try:
            value = float(str(rec["value"]))
        except ValueError:
            raise PublishedSplitsError(
                f"{source}:{line}: column 'value': {rec['value']!r} is not a number"
            ) from None
        if not math.isfinite(value) or value < 0 or (METRICS[metric] != "count" and value > 5):
            raise PublishedSplitsError(f"{source}:{line}: column 'value': {value} out of range")
        rec["value"] = value
        records.append(rec)
    return pd.DataFrame.from_records(records, columns=list(COLUMNS))


@cache
def _default() -> pd.DataFrame:
    return parse(resources.files("negcse.resources").joinpath(RESOURCE).read_text("utf-8"))


def load(path: str | Path | None = None) -> pd.DataFrame:
    """All rows (the packaged resource, or ``path`` in the same format)."""
    if path is None:
        return _default().copy()
    return parse(Path(path).read_text("utf-8"), str(path))


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
