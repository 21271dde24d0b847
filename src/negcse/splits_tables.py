"""The Cont./Oppn. splits table and the Appendix B probe table, beside OssCSE's numbers.

Rows are method x backbone (mean +- std over seeds via :mod:`negcse.tables`), then the
published models we do not train (e.g. supervised SimCSE) with only their printed numbers.
Each table comes as LaTeX (booktabs), CSV and Markdown.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from negcse.io_utils import atomic_open
from negcse.published_splits import published_models, published_value
from negcse.tables import collect, summarize


@dataclass(frozen=True)
class Column:
    key: str  # metric key in the evaluation JSON
    label: str
    bold: str | None = None  # "max" or "min": mark the best mean of our rows


@dataclass(frozen=True)
class PaperColumn:
    metric: str  # metric in published_splits.csv
    dataset: str
    label: str
    table: str | None = None


def build_summary(
    evals: Sequence[str | os.PathLike[str]],
    columns: Sequence[Column],
    paper: Sequence[PaperColumn],
) -> pd.DataFrame:
    """Our mean/std/seeds per method x backbone, the paper's values, and paper-only rows."""
    keys = [c.key for c in columns]
    summary = summarize(collect(evals, keys), keys)
    ours = set(zip(summary["method"], summary["backbone"], strict=True))
    extra = []
    for p in paper:
        for method, backbone in published_models(p.metric, p.dataset):
            if (method, backbone) not in ours and (method, backbone) not in extra:
                extra.append((method, backbone))
    if extra:
        rows = pd.DataFrame({"method": [m for m, _ in extra], "backbone": [b for _, b in extra]})
        rows["seeds"] = 0
        summary = pd.concat([summary, rows], ignore_index=True)
    for p in paper:
        summary[f"paper_{p.metric}"] = [
            published_value(m, b, p.metric, p.dataset, p.table)
            for m, b in zip(summary["method"], summary["backbone"], strict=True)
        ]
        summary[f"paper_{p.metric}"] = summary[f"paper_{p.metric}"].astype(float)
    summary["seeds"] = summary["seeds"].astype(int)
    return summary


def _num(value: object, fmt: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "--"
    return fmt.format(value)


def _best(summary: pd.DataFrame, col: Column) -> float | None:
    if col.bold is None:
        return None
    values = summary.loc[summary["seeds"] > 0, f"{col.key}_mean"].dropna()
    if values.empty:
        return None
    return float(values.max() if col.bold == "max" else values.min())


def _rows(
    summary: pd.DataFrame,
    columns: Sequence[Column],
    paper: Sequence[PaperColumn],
    fmt: str,
    latex: bool,
) -> list[list[str]]:
    pm = r" $\pm$ " if latex else " ± "
    best = {c.key: _best(summary, c) for c in columns}
    out = []
    for _, row in summary.iterrows():
        cells = [str(row["method"]), str(row["backbone"])]
        if latex:
            cells = [c.replace("_", r"\_") for c in cells]
        for col in columns:
            mean = row.get(f"{col.key}_mean")
            if int(row["seeds"]) == 0 or mean is None or math.isnan(float(mean)):
                cells.append("--")
                continue
            text = fmt.format(mean)
            if int(row["seeds"]) > 1:
                text += pm + fmt.format(row[f"{col.key}_std"])
            b = best[col.key]
            if b is not None and math.isclose(float(mean), b):
                text = rf"\textbf{{{text}}}" if latex else f"**{text}**"
            cells.append(text)
        cells += [_num(row[f"paper_{p.metric}"], fmt) for p in paper]
        cells.append(str(int(row["seeds"])))
        out.append(cells)
    return out


def render_latex(
    summary: pd.DataFrame,
    columns: Sequence[Column],
    paper: Sequence[PaperColumn],
    fmt: str,
    caption: str,
    label: str,
) -> str:
    header = ["Method", "Backbone", *[c.label for c in columns], *[p.label for p in paper], "Seeds"]
    lines = [
        r"\begin{table*}[t]",
        r"\centering",
        r"\small",
        rf"\begin{{tabular}}{{ll{'r' * (len(header) - 2)}}}",
        r"\toprule",
        " & ".join(header) + r" \\",
        r"\midrule",
    ]
    lines += [" & ".join(r) + r" \\" for r in _rows(summary, columns, paper, fmt, latex=True)]
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{caption}}}",
        rf"\label{{{label}}}",
        r"\end{table*}",
    ]
    return "\n".join(lines) + "\n"


def render_markdown(
    summary: pd.DataFrame,
    columns: Sequence[Column],
    paper: Sequence[PaperColumn],
    fmt: str,
) -> str:
    header = ["Method", "Backbone", *[c.label for c in columns], *[p.label for p in paper], "Seeds"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in _rows(summary, columns, paper, fmt, False)]
    return "\n".join(lines) + "\n"


def write_tables(
    summary: pd.DataFrame,
    columns: Sequence[Column],
    paper: Sequence[PaperColumn],
    fmt: str,
    tex: str | None,
    csv: str | None,
    md: str | None,
    caption: str,
    label: str,
) -> None:
    if tex:
        with atomic_open(tex) as fh:
            fh.write(render_latex(summary, columns, paper, fmt, caption, label))
    if csv:
        with atomic_open(csv) as fh:
            summary.to_csv(fh, index=False, float_format="%.4f")
    if md:
        with atomic_open(md) as fh:
            fh.write(render_markdown(summary, columns, paper, fmt))


SPLIT_COLUMNS = (
    Column("cont", "Cont.", "max"),
    Column("oppn", "Oppn.", "max"),
    Column("cont_rule", "Cont. (rule)", "max"),
    Column("oppn_rule", "Oppn. (rule)", "max"),
)
SPLIT_PAPER = (
    PaperColumn("cont", "weighted_average", "Paper Cont.", "3"),
    PaperColumn("oppn", "weighted_average", "Paper Oppn.", "3"),
)
PROBE_COLUMNS = (
    Column("paraphrase", "Paraphrase", "max"),
    Column("negation", "Negation", "min"),
    Column("gap", "Gap", "max"),
)
PROBE_PAPER = (
    PaperColumn("paraphrase", "probe", "Paper paraphrase"),
    PaperColumn("negation", "probe", "Paper negation"),
)
