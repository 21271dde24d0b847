"""Builders: a :class:`~negcse.tables.table_spec.TableSpec` and its evaluation files -> a :class:`Table`.

:func:`summary_table` builds any spec from its columns alone; the others adapt a spec to what the
files hold first (the transfer tasks evaluated, the split datasets used, the MTEB groups) or
lay out another shape (the case study).
"""

from __future__ import annotations

import logging
import math
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import pandas as pd

from negcse.analysis.latex import scaled
from negcse.data.mteb_tasks import GROUP_METRICS, GROUPS, HEADLINE, METRIC_LABELS, SHORT
from negcse.runtime.lazy import LazyModule
from negcse.tables.dvc_metrics import Nested
from negcse.tables.eval_files import (
    TableInputError,
    check_comparable,
    number,
    read_result,
    tags,
)
from negcse.tables.html import markdown_html
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
    Rendered,
    add_baseline_delta,
    collect,
    metrics,
    render,
    summarize,
)
from negcse.tables.table_spec import Options, Table
from negcse.text.display import task_name
from negcse.text.latex import latex_escape

if TYPE_CHECKING:
    from negcse.analysis import run as analysis_run
    from negcse.evaluation import splits
    from negcse.tables.table_spec import PaperColumn, TableSpec
else:  # scipy: only the splits note and the GCSE cases need them, not the parse (table specs)
    splits = LazyModule("negcse.evaluation.splits")
    analysis_run = LazyModule("negcse.analysis.run")

logger = logging.getLogger(__name__)


def _read(path: str | os.PathLike[str]) -> dict:
    """An evaluation file, checked as a whole (:func:`negcse.tables.eval_files.read_result`)."""
    return read_result(path)


def check_evaluations(paths: Sequence[str | os.PathLike[str]], group: str | None = None) -> None:
    """A table averages one evaluation per (method, backbone, seed), all of a row under one STS
    protocol (``protocol``: SentEval's processed files or MTEB's raw text); two files of one run,
    or a row that mixes protocols, is an error naming both files. ``group``: only the files of
    that MTEB group."""
    runs: dict[tuple[str, str, str], str] = {}
    protocols: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    results = []
    for path in paths:
        result = _read(path)
        if group is not None and result.get("group") != group:
            continue
        results.append((str(path), result))
        method, backbone = str(result.get("method")), str(result.get("backbone"))
        seed = str(result.get("seed", ""))
        run = (method, backbone, seed)
        if run in runs:
            raise TableInputError(
                f"{runs[run]} and {path}: two evaluations of {method} on {backbone}, "
                f"{f'seed {seed}' if seed else 'no seed'}; a row averages one per seed "
                "(remove one)"
            )
        runs[run] = str(path)
        protocol = result.get("protocol")
        if protocol is not None:
            row = protocols[(method, backbone)]
            row.setdefault(str(protocol), str(path))
            if len(row) > 1:
                (p1, f1), (p2, f2) = list(row.items())[:2]
                raise TableInputError(
                    f"{f1} ({p1} protocol) and {f2} ({p2} protocol): the row {method} on "
                    f"{backbone} mixes STS protocols; evaluate every seed under one "
                    "(evaluation.protocol)"
                )
    check_comparable(results)  # and across the rows: one protocol, one classifier


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
        rows["trained"] = False
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
    check_evaluations(evals)
    means = [c for c in spec.columns if c.kind == "mean"]
    keys = [c.key for c in means]
    long = collect(evals, [c.source or c.key for c in means])
    for col in means:
        if col.source:
            long.loc[long["metric"] == col.source, "value"] *= col.scale
            long["metric"] = long["metric"].replace({col.source: col.key})
    headline = spec.metric if spec.metric in keys else None
    summary = summarize(
        long, keys, paper_value=spec.paper, released=options.released, per_seed=headline
    )
    if spec.published:
        summary = _with_published(summary, spec.published)
    if spec.baseline:
        summary = add_baseline_delta(summary, keys[-1], dict(options.baselines))
    return summary


def summary_table(
    spec: TableSpec, evals: Sequence[str], options: Options, summary: pd.DataFrame | None = None
) -> Table:
    """The spec's columns, one row per method x backbone (then published-only models); the
    spec's summary unless one is given."""
    if summary is None:
        summary = summarize_spec(spec, evals, options)
    out = render(summary, spec.columns, spec.caption, spec.label, spec.fmt, options.baselines)
    return Table(
        tex=out.tex,
        frame=summary,
        md=out.md,
        metrics=metrics(summary, spec.metric) if spec.metric else None,
        html=markdown_html(out.md, spec.name),
    )


# Transfer: the columns are the tasks the files hold; the caption states the protocol.


def transfer_protocol(paths: Sequence[str]) -> tuple[list[str], set[int]]:
    """Tasks evaluated (in SentEval's order; every file must have them) and the fold counts."""
    tasks: list[str] | None = None
    folds: set[int] = set()
    check_evaluations(paths)  # one classifier, SentEval seed and fold count
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
    columns = [Column(t, task_name(t), std=False) for t in tasks]
    if "MRPC" in tasks:
        columns.append(Column("MRPC-F1", task_name("MRPC_f1"), source="MRPC_f1", std=False))
    columns.append(Column("avg", task_name("avg")))
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
    used: set[str] = set()
    for path in evals:
        datasets = _read(path).get("datasets")
        if not isinstance(datasets, list) or not all(isinstance(d, str) for d in datasets):
            raise TableInputError(f"{path}: datasets: expected a list of names, got {datasets!r}")
        used.update(datasets)
    if used >= set(splits.TABLE2_DATASETS):
        return ""
    names = ", ".join(d for d in splits.TABLE2_DATASETS if d in used)
    return (
        f" REDUCED protocol: only {len(used & set(splits.TABLE2_DATASETS))} of Table 2's 16 datasets "
        f"({names}), so the paper's numbers are not comparable."
    )


def splits_table(spec: TableSpec, evals: Sequence[str], options: Options) -> Table:
    """The splits table; where the median rule picks the same datasets (the reduced protocol),
    its columns equal Cont. and Oppn. in every row and are left out, the caption says so."""
    caption = spec.caption + splits_protocol_note(evals)
    summary = summarize_spec(spec, evals, options)
    trained = summary[summary["seeds"] > 0]
    same = all(
        (trained[f"{key}_rule_mean"] - trained[f"{key}_mean"]).abs().max() < 1e-9
        for key in ("cont", "oppn")
    )
    columns = spec.columns
    if same and len(trained):
        columns = tuple(c for c in columns if not c.key.endswith("_rule"))
        caption += " The rule picks the same datasets here: its columns equal Cont. and Oppn."
    return summary_table(replace(spec, columns=columns, caption=caption), evals, options, summary)


# MTEB: one table per group present in the files, into the same three files.

MTEB_CAPTIONS = {
    "reranking": (
        "MTEB reranking test sets (AskUbuntuDupQuestions, MindSmallReranking, SciDocsRR, "
        "StackOverflowDupQuestions), cosine similarity, mteb {version}: MAP $\\times$100 per "
        "task, averages of MRR@10 and MAP; mean $\\pm$ std over seeds. Paper: the published "
        "average MAP (GCSE Table 6); $\\Delta$ = ours $-$ paper; the best mean per column "
        "and backbone in bold."
    ),
    "classification": (
        "MTEB classification, the ten tasks of SAN Table 4 (English subsets, test sets), "
        "accuracy $\\times$100 of mteb {version}'s logistic regression on frozen embeddings; "
        "mean $\\pm$ std over seeds. Paper: the published average accuracy (SAN Table 4; "
        "backbone not stated, filed under BERT-base); $\\Delta$ = ours $-$ paper; the best "
        "mean per column and backbone in bold."
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
        tags(result, path, "method", "backbone")
        for key, (task, metric) in source.items():
            scores = result.get(task)
            if not isinstance(scores, dict):
                raise TableInputError(f"{path}: no scores for {task!r}")
            value = number(scores, metric, f"{path}: {task}")
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
    latex: list[str] = []
    markdown: list[str] = []
    dvc: dict[str, Nested] = {}
    for group in GROUPS:
        keys, shown, _ = mteb_keys(group)
        check_evaluations(evals, group)
        long = collect_mteb(evals, group)
        if long.empty:
            continue
        summary = summarize(
            long, keys, paper_value=lambda m, b, g=group: published_mteb_avg(m, b, g)
        )
        summaries[group] = summary
        columns = (*[Column(k, k, std=k.startswith("Avg.")) for k in shown], *PAPER_DIFF)
        caption = spec.caption + MTEB_CAPTIONS[group].format(version=version)  # spec: a note
        out = render(summary, columns, caption, f"tab:mteb-{group}", baselines=options.baselines)
        latex.append(out.tex)
        markdown.append(f"## MTEB {group}\n\n{out.md}")
        dvc[group] = metrics(summary, shown[-1])
    if not summaries:
        raise TableInputError(f"no MTEB evaluation among {len(evals)} file(s)")
    frame = pd.concat([s.assign(group=g) for g, s in summaries.items()], ignore_index=True)
    frame = frame[["group", *[c for c in frame.columns if c != "group"]]]
    md = "\n".join(markdown)
    return Table(
        tex="\n".join(latex), frame=frame, md=md, metrics=dvc, html=markdown_html(md, spec.name)
    )


# Case study: GCSE Table 8's pairs x methods, one backbone.


def case_study_frame(
    cases: Sequence[tuple[str, str, float]], methods: Mapping[str, Mapping], low: float,
    high: float, backbone: str,
) -> pd.DataFrame:
    """One row per method: each pair's score on the label scale and its absolute error, then
    the false-positive / false-negative rates (the CSV twin of the case-study table)."""
    rows = []
    for method, stats in methods.items():
        row: dict[str, object] = {"method": method, "backbone": backbone}
        for i, ((_, _, gold), pred) in enumerate(zip(cases, stats["pred_norm"], strict=True), 1):
            score = scaled(pred, low, high)
            row[f"pair{i}_score"], row[f"pair{i}_error"] = score, abs(score - gold)
        row["false_positive_rate"] = stats["false_positive_rate"]
        row["false_negative_rate"] = stats["false_negative_rate"]
        rows.append(row)
    return pd.DataFrame(rows)


def _num(value: float, spec: str) -> str:
    return "" if math.isnan(value) else format(value, spec)


def case_study_render(
    cases: Sequence[tuple[str, str, float]], frame: pd.DataFrame, caption: str, label: str
) -> Rendered:
    """The case-study table as every table is laid out (:func:`render`): per pair the score
    and, in parentheses, its error (GCSE Table 8's "4.37 (1.372)"), then FP / FN; the pairs
    and their gold scores in the caption."""
    shown = frame[["method", "backbone"]].copy()
    for i in range(1, len(cases) + 1):
        scores, errors = frame[f"pair{i}_score"], frame[f"pair{i}_error"]
        shown[f"pair{i}"] = [
            "" if math.isnan(s) else f"{s:.2f} ({e:.3f})" for s, e in zip(scores, errors, strict=True)
        ]
    shown["rates"] = [
        f"{_num(fp, '.1f') or '--'} / {_num(fn, '.1f') or '--'}"
        for fp, fn in zip(frame["false_positive_rate"], frame["false_negative_rate"], strict=True)
    ]
    columns = [Column(f"pair{i}", str(i), kind="text") for i in range(1, len(cases) + 1)]
    columns.append(Column("rates", "FP / FN (%)", kind="text"))
    pairs = "; ".join(
        f"({i}) {latex_escape(a)} / {latex_escape(b)} ({gold:.2f})"
        for i, (a, b, gold) in enumerate(cases, start=1)
    )
    return render(shown, columns, f"{caption} Pairs (gold score): {pairs}.", label)


def _case_study(result: Mapping, path: str) -> dict:
    """An analysis file's ``case_study`` record: one entry (or null) per case, the two rates,
    the label range; a missing or mistyped part is named."""
    study = result.get("case_study")
    where = f"{path}: case_study"
    if not isinstance(study, dict):
        raise TableInputError(f"{where}: missing or not an object")
    cases = study.get("gcse_cases")
    if not isinstance(cases, list) or len(cases) != len(analysis_run.GCSE_CASES):
        raise TableInputError(
            f"{where}.gcse_cases: expected {len(analysis_run.GCSE_CASES)} entries"
        )
    for i, case in enumerate(cases):
        if case is not None and not isinstance(case, dict):
            raise TableInputError(f"{where}.gcse_cases[{i}]: expected an object or null")
        if case:
            number(case, "pred_norm", f"{where}.gcse_cases[{i}]")
    for key in ("false_positive_rate", "false_negative_rate"):
        number(study, key, where)
    span = study.get("label_range")
    if not isinstance(span, list) or len(span) != 2:
        raise TableInputError(f"{where}.label_range: expected [low, high]")
    return study


def case_study_table(spec: TableSpec, evals: Sequence[str], options: Options) -> Table:
    check_evaluations(evals)
    per_method: dict[str, list[dict]] = defaultdict(list)
    backbones = set()
    for path in evals:
        result = _read(path)
        tags(result, path, "method")
        per_method[result["method"]].append(_case_study(result, path))
        backbones.add(result.get("backbone", "?"))
    if len(backbones) != 1:
        raise TableInputError(f"{spec.name} takes one backbone's analyses, got {sorted(backbones)}")
    methods = {}
    for method, cases in per_method.items():
        preds = []
        for j in range(len(analysis_run.GCSE_CASES)):
            values = [c["gcse_cases"][j]["pred_norm"] for c in cases if c["gcse_cases"][j]]
            preds.append(sum(values) / len(values) if values else math.nan)
        methods[method] = {
            "pred_norm": preds,
            "false_positive_rate": sum(c["false_positive_rate"] for c in cases) / len(cases),
            "false_negative_rate": sum(c["false_negative_rate"] for c in cases) / len(cases),
        }
    low, high = next(iter(per_method.values()))[0]["label_range"]
    backbone = backbones.pop()
    caption = spec.caption.format(backbone=latex_escape(backbone))
    frame = case_study_frame(analysis_run.GCSE_CASES, methods, low, high, backbone)
    out = case_study_render(analysis_run.GCSE_CASES, frame, caption, "tab:cases")
    return Table(
        tex=out.tex, frame=frame, md=out.md, html=markdown_html(out.md, f"{spec.name} {backbone}")
    )
