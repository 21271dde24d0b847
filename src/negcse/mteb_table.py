"""MTEB tables: our reranking and classification numbers beside the papers' (as data).

``resources/published_mteb.csv`` holds, in long form (one printed number a row), GCSE Table 6
(reranking MAP per task and average, four backbones) and SAN Table 4 (average accuracy over the
ten classification tasks; printed as fractions, stored x100 with ``scale == "fraction"``; the
backbone is not stated, the rows are filed under BERT-base and say so in ``note``). SAN Figure 2
(reranking) is a bar chart without numbers and is not entered.

The table of each group is built with :mod:`negcse.tables` (``summarize``, ``render_latex``,
``render_markdown``): mean +- std over seeds per column, the paper's average beside ours.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from negcse.io_utils import atomic_open
from negcse.mteb_tasks import GROUP_METRICS, GROUPS, HEADLINE, METRIC_LABELS, SHORT
from negcse.published import OWN_PAPER, PAPERS, SCALES, PublishedDataError
from negcse.published_csv import CSVSpec, PublishedTable, Row, Score, parse_frame
from negcse.tables import render_latex, render_markdown, summarize

logger = logging.getLogger(__name__)

RESOURCE = "published_mteb.csv"
TEXT_COLUMNS: tuple[str, ...] = ("paper", "table", "label", "method", "backbone")
COLUMNS: tuple[str, ...] = (*TEXT_COLUMNS, "group", "task", "metric", "value", "scale", "note")
# Where a method's MTEB headline comes from when its own paper prints none.
MTEB_PAPER: dict[str, dict[str, str]] = {
    "reranking": {"simcse": "gcse"},
    "classification": {"simcse": "san-hince", "sncse": "san-hince"},
}


def _check(row: Row) -> None:
    group = row.raw["group"]
    tasks = (*(spec.name for spec in GROUPS[group]), "avg")
    if row.raw["task"] not in tasks:
        raise row.error("task", f"{row.raw['task']!r} is not one of {tasks}")
    if row.raw["metric"] not in GROUP_METRICS[group]:
        raise row.error("metric", f"{row.raw['metric']!r} is not a {group} metric")


SPEC = CSVSpec(
    columns=COLUMNS,
    text=TEXT_COLUMNS,
    choices={"paper": PAPERS, "scale": SCALES, "group": tuple(GROUPS)},
    scores={"value": Score()},
    error=PublishedDataError,
)


def parse_published_mteb(text: str, source: str = RESOURCE) -> pd.DataFrame:
    """Validate and type the CSV text; errors read ``<source>:<line>: column '<name>': ...``."""
    return parse_frame(text, SPEC, source, _check)


_TABLE = PublishedTable(RESOURCE, parse_published_mteb)


def load_published_mteb(path: str | Path | None = None) -> pd.DataFrame:
    """All published MTEB numbers (the packaged resource, or another file in its format)."""
    return _TABLE.load(path)


def published_mteb_avg(
    method: str, backbone: str, group: str, paper: str | None = None
) -> float | None:
    """The printed average of the group's headline metric (MAP, accuracy), or None.

    From ``paper`` if given, else the method's own paper (:data:`negcse.published.OWN_PAPER`),
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


def table_keys(group: str) -> tuple[list[str], list[str], dict[str, tuple[str, str]]]:
    """(all keys, keys shown in LaTeX/Markdown, key -> (task or 'avg', metric)).

    The headline metric per task is labelled by the task alone; the averages come last, the
    headline average at the very end (the column the paper's number is compared with).
    """
    head = HEADLINE[group]
    others = [m for m in GROUP_METRICS[group] if m != head]
    source: dict[str, tuple[str, str]] = {}
    for metric in [head, *others]:
        for spec in GROUPS[group]:
            label = (
                SHORT[spec.name]
                if metric == head
                else f"{SHORT[spec.name]} {METRIC_LABELS[metric]}"
            )
            source[label] = (spec.name, metric)
    for metric in [*others, head]:
        source[f"Avg. {METRIC_LABELS[metric]}"] = ("avg", metric)
    keys = list(source)
    shown = [k for k in keys if source[k][1] == head or source[k][0] == "avg"]
    return keys, shown, source


def collect_mteb(paths: Sequence[str | os.PathLike[str]], group: str) -> pd.DataFrame:
    """Long form (method, backbone, seed, metric, value) of one group's evaluate-mteb files."""
    _, _, source = table_keys(group)
    rows = []
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            result = json.load(fh)
        if result.get("group") != group:
            continue
        for field in ("method", "backbone"):
            if field not in result:
                raise KeyError(f"{path}: no '{field}' recorded (evaluate with --tag {field}=...)")
        for key, (task, metric) in source.items():
            try:
                value = float(result[task][metric])
            except KeyError:
                raise KeyError(f"{path}: no {metric!r} for {task!r}") from None
            rows.append(
                {
                    "method": result["method"],
                    "backbone": result["backbone"],
                    "seed": result.get("seed", ""),
                    "metric": key,
                    "value": value,
                }
            )
    return pd.DataFrame(rows, columns=["method", "backbone", "seed", "metric", "value"])


def _versions(paths: Sequence[str | os.PathLike[str]]) -> str:
    found = set()
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            found.add(str(json.load(fh).get("mteb_version", "?")))
    return ", ".join(sorted(found))


CAPTIONS = {
    "reranking": (
        "MTEB reranking test sets (AskUbuntuDupQuestions, MindSmallReranking, SciDocsRR, "
        "StackOverflowDupQuestions), cosine similarity, mteb {version}: MAP $\\times$100 per "
        "task, averages of MRR@10 and MAP; mean $\\pm$ std over seeds. Paper: the published "
        "average MAP (GCSE Table 6); $\\Delta$ = ours $-$ paper; best mean per column in bold."
    ),
    "classification": (
        "MTEB classification, the ten tasks of SAN Table 4 (English subsets, test sets), "
        "accuracy $\\times$100 of mteb {version}'s logistic regression on frozen embeddings; "
        "mean $\\pm$ std over seeds. Paper: the published average accuracy (SAN Table 4; "
        "backbone not stated, filed under BERT-base); $\\Delta$ = ours $-$ paper; best mean "
        "per column in bold."
    ),
}


def build_mteb_tables(
    paths: Sequence[str | os.PathLike[str]],
    tex: str | None,
    csv_path: str | None,
    md: str | None,
) -> dict[str, pd.DataFrame]:
    """One table per group present in ``paths`` into the same three files; the summaries."""
    summaries: dict[str, pd.DataFrame] = {}
    latex, markdown = [], []
    version = _versions(paths)
    for group in GROUPS:
        keys, shown, _ = table_keys(group)
        long = collect_mteb(paths, group)
        if long.empty:
            continue
        summary = summarize(
            long, keys, paper_value=lambda m, b, g=group: published_mteb_avg(m, b, g)
        )
        summaries[group] = summary
        caption = CAPTIONS[group].format(version=version)
        latex.append(render_latex(summary, shown, caption, f"tab:mteb-{group}"))
        plain = caption.replace("$\\times$", "x").replace("$\\pm$", "+-").replace("$\\Delta$", "Δ")
        plain = plain.replace("$-$", "-")
        markdown.append(f"## MTEB {group}\n\n{plain}\n\n{render_markdown(summary, shown)}")
    if not summaries:
        raise ValueError(f"no MTEB evaluation among {len(paths)} file(s)")
    if tex:
        with atomic_open(tex) as fh:
            fh.write("\n".join(latex))
    if csv_path:
        frame = pd.concat([s.assign(group=g) for g, s in summaries.items()], ignore_index=True)
        frame = frame[["group", *[c for c in frame.columns if c != "group"]]]
        with atomic_open(csv_path) as fh:
            frame.to_csv(fh, index=False, float_format="%.4f")
    if md:
        with atomic_open(md) as fh:
            fh.write("\n".join(markdown))
    return summaries
