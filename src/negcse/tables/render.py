"""Long-form metrics -> mean +- std over seeds -> LaTeX, Markdown, CSV and DVC metrics.

:func:`collect` reads evaluation JSON files into one row per (method, backbone, seed, metric);
:func:`summarize` gives mean, std (ddof=1) and n per method x backbone; :func:`cells` turns the
summary into rows of cells described by :class:`Column` (best mean in bold), which
:func:`latex_table` (booktabs) and :func:`markdown_table` lay out. :func:`latex_escape` is the
one escaper of the package.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import pandas as pd

_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}

CellKind = Literal["mean", "number", "signed", "text", "count"]
#: evaluation JSON keys shown in a row's name: the LLM that wrote the model's data (GCSE), a
#: resource substituted where the run was planned (SAN's lexicon); a CSV column each where set
ROW_NOTES = ("llm", "substitute")


def latex_escape(text: str) -> str:
    """Text safe inside a LaTeX table cell (every special character escaped)."""
    return "".join(_ESCAPES.get(c, c) for c in text)


@dataclass(frozen=True)
class Column:
    """One column after Method and Backbone.

    ``key`` is the summary column: ``{key}_mean``/``{key}_std`` for a ``mean`` column (read
    from the evaluation JSON's ``source`` key, default ``key``, times ``scale``), ``key``
    itself otherwise. ``number`` prints the table's format, ``signed`` a +/- difference,
    ``count`` an integer, ``text`` escaped text ("--" in Markdown when empty). ``bold`` marks the
    max or min mean of the rows with seeds. ``latex`` is the LaTeX header when it is not the
    escaped ``label``.
    """

    key: str
    label: str
    kind: CellKind = "mean"
    bold: Literal["max", "min"] | None = "max"
    align: str = "r"
    latex: str | None = None
    source: str | None = None
    scale: float = 1.0

    def header(self, latex: bool) -> str:
        if not latex:
            return self.label
        return self.latex if self.latex is not None else latex_escape(self.label)


#: The columns ``summarize(..., paper_value)`` adds: the published headline and our difference.
PAPER_DIFF = (
    Column("paper", "Paper", kind="number"),
    Column("diff", "Δ", kind="signed", latex=r"$\Delta$"),
)


def collect(paths: Sequence[str | os.PathLike[str]], keys: Sequence[str]) -> pd.DataFrame:
    """One row per (method, backbone, seed, metric) from evaluation JSON files."""
    rows = []
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            result = json.load(fh)
        for field in ("method", "backbone"):
            if field not in result:
                raise KeyError(f"{path}: no '{field}' recorded (evaluate with --tag {field}=...)")
        for key in keys:
            if key not in result:
                raise KeyError(f"{path}: metric '{key}' missing")
            rows.append(
                {
                    "method": result["method"],
                    "backbone": result["backbone"],
                    "seed": result.get("seed", ""),
                    "metric": key,
                    "value": float(result[key]),
                    **{note: result.get(note, "") for note in ROW_NOTES},
                }
            )
    return pd.DataFrame(rows)


def summarize(
    long: pd.DataFrame,
    keys: Sequence[str],
    paper_value: Callable[[str, str], float | None] | None = None,
) -> pd.DataFrame:
    """Mean, std (sample, ddof=1; 0 for one seed) and n per method x backbone x metric; with
    ``paper_value``, columns ``paper`` and ``diff`` (our mean of the last key minus it)."""
    grouped = long.groupby(["method", "backbone", "metric"], sort=False)["value"]
    stats = grouped.agg(mean="mean", std=lambda v: float(v.std(ddof=1)) if len(v) > 1 else 0.0,
                        n="count").reset_index()
    wide = stats.pivot_table(index=["method", "backbone"], columns="metric",
                             values=["mean", "std", "n"], sort=False)
    out = pd.DataFrame(index=wide.index)
    for key in keys:
        out[f"{key}_mean"] = wide[("mean", key)]
        out[f"{key}_std"] = wide[("std", key)]
    out["seeds"] = wide[("n", keys[-1])].astype(int)
    out = out.reset_index()
    for note in ROW_NOTES:  # over the seeds, shown in the row's name
        if note in long.columns and long[note].astype(bool).any():
            notes = long.groupby(["method", "backbone"], sort=False)[note].agg(
                lambda v: ", ".join(sorted({str(x) for x in v if x}))
            )
            out[note] = [notes.get((m, b), "") for m, b in zip(out["method"], out["backbone"],
                                                               strict=True)]
    if paper_value is not None:
        out["paper"] = [paper_value(m, b) for m, b in zip(out["method"], out["backbone"], strict=True)]
        out["paper"] = out["paper"].astype(float)
        out["diff"] = out[f"{keys[-1]}_mean"] - out["paper"]
    return out


def add_baseline_delta(summary: pd.DataFrame, key: str, baselines: dict[str, str]) -> pd.DataFrame:
    """Columns ``baseline`` (the method the paper compared with) and ``vs_baseline`` (our mean
    of ``key`` minus the baseline's, same backbone; NaN where the baseline has no row)."""
    means = {
        (m, b): float(v)
        for m, b, v in zip(summary["method"], summary["backbone"], summary[f"{key}_mean"],
                           strict=True)
    }
    out = summary.copy()
    out["baseline"] = [baselines.get(m, "") for m in out["method"]]
    out["vs_baseline"] = [
        means[(m, b)] - means[(baselines[m], b)] if (baselines.get(m), b) in means else math.nan
        for m, b in zip(out["method"], out["backbone"], strict=True)
    ]
    return out


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _best(summary: pd.DataFrame, col: Column) -> float | None:
    if col.kind != "mean" or col.bold is None:
        return None
    values = summary.loc[summary["seeds"] > 0, f"{col.key}_mean"].dropna()
    if values.empty:
        return None
    return float(values.max() if col.bold == "max" else values.min())


def _mean_cell(row: pd.Series, col: Column, fmt: str, best: float | None, latex: bool) -> str:
    n = int(row["seeds"])
    mean = row.get(f"{col.key}_mean")
    if n == 0 or _missing(mean):
        return "--"
    text = fmt.format(mean)
    if n > 1:
        text += (r" $\pm$ " if latex else " ± ") + fmt.format(row[f"{col.key}_std"])
    if best is not None and math.isclose(float(mean), best):
        return rf"\textbf{{{text}}}" if latex else f"**{text}**"
    return text


def _cell(row: pd.Series, col: Column, fmt: str, best: float | None, latex: bool) -> str:
    if col.kind == "mean":
        return _mean_cell(row, col, fmt, best, latex)
    value = row[col.key]
    if col.kind == "text":
        return latex_escape(str(value)) if latex else (str(value) or "--")
    if col.kind == "count":
        return str(int(value))
    if _missing(value):
        return "--"
    return ("{:+.2f}" if col.kind == "signed" else fmt).format(value)


def cells(
    summary: pd.DataFrame, columns: Sequence[Column], fmt: str, latex: bool
) -> list[list[str]]:
    """Method, backbone and one cell per column for every summary row."""
    best = {col.key: _best(summary, col) for col in columns}
    out = []
    for _, row in summary.iterrows():
        notes = [n for n in (row.get(key) for key in ROW_NOTES) if isinstance(n, str) and n]
        method = f"{row['method']} ({'; '.join(notes)})" if notes else str(row["method"])
        names = [method, str(row["backbone"])]
        out.append(
            [latex_escape(n) if latex else n for n in names]
            + [_cell(row, col, fmt, best[col.key], latex) for col in columns]
        )
    return out


def latex_table(body: Sequence[str], cols: str, caption: str, label: str) -> str:
    """A booktabs ``table*`` around ``body`` (its lines, header and midrules included)."""
    return "\n".join(
        [
            r"\begin{table*}[t]",
            r"\centering",
            r"\small",
            rf"\begin{{tabular}}{{{cols}}}",
            r"\toprule",
            *body,
            r"\bottomrule",
            r"\end{tabular}",
            rf"\caption{{{caption}}}",
            rf"\label{{{label}}}",
            r"\end{table*}",
            "",
        ]
    )


def render_latex(
    summary: pd.DataFrame, columns: Sequence[Column], caption: str, label: str, fmt: str = "{:.2f}"
) -> str:
    header = ["Method", "Backbone", *[c.header(latex=True) for c in columns]]
    body = [" & ".join(header) + r" \\", r"\midrule"]
    body += [" & ".join(r) + r" \\" for r in cells(summary, columns, fmt, latex=True)]
    return latex_table(body, "ll" + "".join(c.align for c in columns), caption, label)


def render_markdown(summary: pd.DataFrame, columns: Sequence[Column], fmt: str = "{:.2f}") -> str:
    header = ["Method", "Backbone", *[c.header(latex=False) for c in columns]]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in cells(summary, columns, fmt, latex=False)]
    return "\n".join(lines) + "\n"


def to_csv(frame: pd.DataFrame) -> str:
    """The CSV twin: every column, floats with four decimals."""
    return frame.to_csv(index=False, float_format="%.4f")


def metrics(summary: pd.DataFrame, key: str, prefix: str = "") -> dict[str, float]:
    """The mean of ``key`` per method x backbone, keyed ``[prefix]method/backbone`` (4
    decimals, as in the CSV): what `dvc metrics show` / `dvc metrics diff` list."""
    column = f"{key}_mean"
    if column not in summary:
        raise KeyError(f"no metric '{key}' in the table (columns: {', '.join(summary.columns)})")
    seeded = summary[summary["seeds"] > 0]
    return {
        f"{prefix}{method}/{backbone}": round(float(value), 4)
        for method, backbone, value in zip(
            seeded["method"], seeded["backbone"], seeded[column], strict=True
        )
    }
