"""Builders: a :class:`~negcse.tables.specs.TableSpec` and its evaluation files -> a :class:`Table`.

:func:`summary_table` builds any spec from its columns alone; the others adapt a spec to what the
files hold first (the transfer tasks evaluated, the split datasets used, the MTEB groups) or
lay out another shape (the case study).
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import pandas as pd

from negcse.data.mteb_tasks import GROUP_METRICS, GROUPS, HEADLINE, METRIC_LABELS, SHORT
from negcse.errors import UserError
from negcse.tables.published import (
    TRANSFER_TASKS,
    published_mteb_avg,
    published_split_models,
    published_split_value,
    published_transfer,
)
from negcse.tables.render import (
    PAPER_DIFF,
    ROW_NOTES,
    Column,
    add_baseline_delta,
    collect,
    latex_escape,
    metrics,
    render_latex,
    render_markdown,
    summarize,
)

if TYPE_CHECKING:
    from negcse.tables.specs import PaperColumn, TableSpec

logger = logging.getLogger(__name__)


class TableInputError(UserError, ValueError):
    """The evaluation files cannot make the table; the message names the file."""


@dataclass(frozen=True)
class Options:
    """Settings from the workflow: ``baselines`` maps a method to the one its paper compared
    it with (params.yaml ``methods.<m>.baseline``)."""

    baselines: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Table:
    """A built table: LaTeX, the frame its CSV twin is written from, Markdown, DVC metrics."""

    tex: str
    frame: pd.DataFrame | None = None
    md: str | None = None
    metrics: dict[str, float] | None = None


def _read(path: str | os.PathLike[str]) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _with_published(summary: pd.DataFrame, published: Sequence[PaperColumn]) -> pd.DataFrame:
    """Rows for published models we do not train (seeds 0), and a ``paper_{metric}`` column
    per :class:`PaperColumn`."""
    ours = set(zip(summary["method"], summary["backbone"], strict=True))
    extra: list[tuple[str, str]] = []
    for p in published:
        for model in published_split_models(p.metric, p.dataset):
            if model not in ours and model not in extra:
                extra.append(model)
    if extra:
        rows = pd.DataFrame({"method": [m for m, _ in extra], "backbone": [b for _, b in extra]})
        rows["seeds"] = 0
        summary = pd.concat([summary, rows], ignore_index=True)
    for p in published:
        summary[f"paper_{p.metric}"] = [
            published_split_value(m, b, p.metric, p.dataset, p.table)
            for m, b in zip(summary["method"], summary["backbone"], strict=True)
        ]
        summary[f"paper_{p.metric}"] = summary[f"paper_{p.metric}"].astype(float)
    summary["seeds"] = summary["seeds"].astype(int)
    return summary


def summarize_spec(spec: TableSpec, evals: Sequence[str], options: Options) -> pd.DataFrame:
    """Mean/std/seeds of the spec's mean columns, then its published and baseline columns."""
    means = [c for c in spec.columns if c.kind == "mean"]
    keys = [c.key for c in means]
    long = collect(evals, [c.source or c.key for c in means])
    for col in means:
        if col.source:
            long.loc[long["metric"] == col.source, "value"] *= col.scale
            long["metric"] = long["metric"].replace({col.source: col.key})
    summary = summarize(long, keys, paper_value=spec.paper)
    if spec.published:
        summary = _with_published(summary, spec.published)
    if spec.baseline:
        summary = add_baseline_delta(summary, keys[-1], dict(options.baselines))
    return summary


def summary_table(spec: TableSpec, evals: Sequence[str], options: Options) -> Table:
    """The spec's columns, one row per method x backbone (then published-only models)."""
    summary = summarize_spec(spec, evals, options)
    return Table(
        tex=render_latex(summary, spec.columns, spec.caption, spec.label, spec.fmt),
        frame=summary,
        md=render_markdown(summary, spec.columns, spec.fmt),
        metrics=metrics(summary, spec.metric) if spec.metric else None,
    )


# Transfer: the columns are the tasks the files hold; the caption states the protocol.


def transfer_protocol(paths: Sequence[str]) -> tuple[list[str], set[int]]:
    """Tasks evaluated (in SentEval's order; every file must have them) and the fold counts."""
    tasks: list[str] | None = None
    folds: set[int] = set()
    for path in paths:
        result = _read(path)
        found = [t for t in TRANSFER_TASKS if t in result]
        if tasks is None:
            tasks = found
        elif found != tasks:
            raise TableInputError(f"{path}: tasks {found} differ from {tasks} of {paths[0]}")
        folds |= {d["kfold"] for d in result.get("details", {}).values() if d.get("kfold")}
    if not tasks:
        raise TableInputError(
            f"{paths[0]}: no transfer task scores (keys {', '.join(TRANSFER_TASKS)})"
        )
    return tasks, folds


def transfer_table(spec: TableSpec, evals: Sequence[str], options: Options) -> Table:
    tasks, folds = transfer_protocol(evals)
    columns = [Column(t, t) for t in tasks]
    if "MRPC" in tasks:
        columns.append(Column("MRPC-F1", "MRPC-F1", source="MRPC_f1"))
    columns.append(Column("avg", "Avg."))
    if sorted(tasks) == sorted(TRANSFER_TASKS) and folds <= {10}:
        protocol = "SentEval test mode (10-fold CV where a task has no split)"
    else:
        protocol = (
            f"REDUCED protocol (evaluation.transfer): tasks {', '.join(tasks)} only, "
            f"{'/'.join(str(k) for k in sorted(folds)) or '--'}-fold CV"
        )
        logger.warning("transfer table from a reduced protocol: %s", protocol)
    adapted = replace(
        spec,
        columns=(*columns, *PAPER_DIFF),
        paper=lambda m, b: published_transfer(m, b, tasks),
        caption=spec.caption.format(protocol=protocol),
    )
    return summary_table(adapted, evals, options)


# Splits: a caption sentence when the evaluations used fewer datasets than OssCSE Table 2's.


def splits_protocol_note(evals: Sequence[str]) -> str:
    from negcse.evaluation.splits import TABLE2_DATASETS

    used: set[str] = set()
    for path in evals:
        used.update(_read(path)["datasets"])
    if used >= set(TABLE2_DATASETS):
        return ""
    names = ", ".join(d for d in TABLE2_DATASETS if d in used)
    return (
        f" REDUCED protocol: only {len(used & set(TABLE2_DATASETS))} of Table 2's 16 datasets "
        f"({names}), so the paper's numbers are not comparable."
    )


def splits_table(spec: TableSpec, evals: Sequence[str], options: Options) -> Table:
    caption = spec.caption + splits_protocol_note(evals)
    return summary_table(replace(spec, caption=caption), evals, options)


# MTEB: one table per group present in the files, into the same three files.

MTEB_CAPTIONS = {
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


def mteb_keys(group: str) -> tuple[list[str], list[str], dict[str, tuple[str, str]]]:
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
    _, _, source = mteb_keys(group)
    rows = []
    for path in paths:
        result = _read(path)
        if result.get("group") != group:
            continue
        for name in ("method", "backbone"):
            if name not in result:
                raise KeyError(f"{path}: no '{name}' recorded (evaluate with --tag {name}=...)")
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
                    **{note: result.get(note, "") for note in ROW_NOTES},
                }
            )
    return pd.DataFrame(rows, columns=["method", "backbone", "seed", "metric", "value", *ROW_NOTES])


def mteb_table(spec: TableSpec, evals: Sequence[str], options: Options) -> Table:
    """Per group: our MAP/accuracy per task and the averages beside the paper's average."""
    version = ", ".join(sorted({str(_read(p).get("mteb_version", "?")) for p in evals}))
    summaries: dict[str, pd.DataFrame] = {}
    latex, markdown, dvc = [], [], {}
    for group in GROUPS:
        keys, shown, _ = mteb_keys(group)
        long = collect_mteb(evals, group)
        if long.empty:
            continue
        summary = summarize(
            long, keys, paper_value=lambda m, b, g=group: published_mteb_avg(m, b, g)
        )
        summaries[group] = summary
        columns = (*[Column(k, k) for k in shown], *PAPER_DIFF)
        caption = MTEB_CAPTIONS[group].format(version=version)
        latex.append(render_latex(summary, columns, caption, f"tab:mteb-{group}"))
        plain = caption.replace("$\\times$", "x").replace("$\\pm$", "+-").replace("$\\Delta$", "Δ")
        plain = plain.replace("$-$", "-")
        markdown.append(f"## MTEB {group}\n\n{plain}\n\n{render_markdown(summary, columns)}")
        dvc.update(metrics(summary, shown[-1], prefix=f"{group}/"))
    if not summaries:
        raise TableInputError(f"no MTEB evaluation among {len(evals)} file(s)")
    frame = pd.concat([s.assign(group=g) for g, s in summaries.items()], ignore_index=True)
    frame = frame[["group", *[c for c in frame.columns if c != "group"]]]
    return Table(tex="\n".join(latex), frame=frame, md="\n".join(markdown), metrics=dvc)


# Case study: GCSE Table 8's pairs x methods, one backbone.


def case_study_table(spec: TableSpec, evals: Sequence[str], options: Options) -> Table:
    from negcse.analysis.latex import case_comparison_table
    from negcse.analysis.run import GCSE_CASES

    per_method: dict[str, list[dict]] = defaultdict(list)
    backbones = set()
    for path in evals:
        result = _read(path)
        per_method[result["method"]].append(result["case_study"])
        backbones.add(result.get("backbone", "?"))
    if len(backbones) != 1:
        raise TableInputError(f"{spec.name} takes one backbone's analyses, got {sorted(backbones)}")
    methods = {}
    for method, cases in per_method.items():
        preds = []
        for j in range(len(GCSE_CASES)):
            values = [c["gcse_cases"][j]["pred_norm"] for c in cases if c["gcse_cases"][j]]
            preds.append(sum(values) / len(values) if values else math.nan)
        methods[method] = {
            "pred_norm": preds,
            "false_positive_rate": sum(c["false_positive_rate"] for c in cases) / len(cases),
            "false_negative_rate": sum(c["false_negative_rate"] for c in cases) / len(cases),
        }
    low, high = next(iter(per_method.values()))[0]["label_range"]
    caption = spec.caption.format(backbone=latex_escape(backbones.pop()))
    return Table(tex=case_comparison_table(GCSE_CASES, methods, low, high, caption, "tab:cases"))
