"""Long-form metrics -> mean +- std over seeds -> LaTeX, Markdown, CSV and DVC metrics.

:func:`collect` reads evaluation JSON files into one row per (method, backbone, seed, metric);
:func:`summarize` gives mean, std (ddof=1) and n per method x backbone; :func:`cells` turns the
summary into rows of cells described by :class:`Column` (per backbone, the best trained
method's mean in bold, in the direction the metric improves), which :func:`render_latex`
(booktabs ``table*``, shrunk to the page width, one per backbone and family when large) and
:func:`render_markdown` lay out (with ``negcse.latex``'s escaper and table frame).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from negcse.analysis.groups import method_groups
from negcse.latex import ESCAPES, latex_escape, latex_table
from negcse.tables.dvc_metrics import Nested, metric_key, nest
from negcse.tables.eval_files import TableInputError, number, read_result, tags

CellKind = Literal["mean", "number", "signed", "text", "count"]
#: evaluation JSON keys shown in a row's name: the LLM that wrote the model's data (GCSE), a
#: resource substituted where the run was planned (SAN's lexicon); a CSV column each where set
ROW_NOTES = ("llm", "substitute")

#: The method name of an untrained backbone's evaluation (negcse.workflow.plan.evaluate).
UNTRAINED = "untrained"
#: At most this many trained methods per LaTeX table; more are split by method family
#: (negcse.analysis.groups), each part repeating the reference rows.
MAX_ROWS = 30


_PLAIN = {
    r"$\Delta_{\mathrm{base}}$": "Δ base",
    r"$\Delta$": "Δ",
    r"$\times$": "×",
    r"$\pm$": "±",
    r"$-$": "−",
    r"$\geq$": "≥",
    "``": '"',
    "''": '"',
    "~": " ",
    **{v: k for k, v in ESCAPES.items() if k not in "~^\\"},
}


def plain_caption(latex: str) -> str:
    """A caption's LaTeX as plain text (for Markdown and HTML)."""
    for code, text in _PLAIN.items():
        latex = latex.replace(code, text)
    return latex


@dataclass(frozen=True)
class Column:
    """One column after Method and Backbone.

    ``key`` is the summary column: ``{key}_mean``/``{key}_std`` for a ``mean`` column (read
    from the evaluation JSON's ``source`` key, default ``key``, times ``scale``), ``key``
    itself otherwise. ``number`` prints the table's format, ``signed`` a +/- difference,
    ``count`` an integer, ``text`` escaped text ("--" in Markdown when empty). ``bold`` is the
    direction the metric improves in: the max or min mean of the trained rows of a backbone is
    in bold (None: no best, e.g. a spread or a position). ``latex`` is the LaTeX header when it
    is not the escaped ``label``.
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
        result = read_result(path)  # checked as a whole: derived numbers agree with records
        tags(result, path, "method", "backbone")
        for key in keys:
            if key not in result:
                raise TableInputError(f"{path}: metric '{key}' missing")
            rows.append(
                {
                    "method": result["method"],
                    "backbone": result["backbone"],
                    "seed": result.get("seed", ""),
                    "metric": key,
                    # null: not computed (an analysis without such pairs), shown as none
                    "value": math.nan if result[key] is None else number(result, key, path),
                    **{note: result.get(note, "") for note in ROW_NOTES},
                }
            )
    return pd.DataFrame(rows)


def summarize(
    long: pd.DataFrame,
    keys: Sequence[str],
    paper_value: Callable[[str, str], float | None] | None = None,
    released: Collection[str] = (),
) -> pd.DataFrame:
    """Mean, std (sample, ddof=1; 0 for one seed) and n per method x backbone x metric; with
    ``paper_value``, columns ``paper`` and ``diff`` (our mean of the last key minus it).
    Column ``trained``: False for the untrained backbone's rows and the ``released``
    checkpoints' (reference rows, never in bold)."""
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
    out["trained"] = ~out["method"].isin([UNTRAINED, *released])
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


def _trained(rows: pd.DataFrame | pd.Series) -> pd.Series | bool:
    """The ``trained`` column; a frame without one: every row but the untrained backbone's."""
    if "trained" in rows:
        return rows["trained"].astype(bool) if isinstance(rows, pd.DataFrame) else rows["trained"]
    return rows["method"] != UNTRAINED


def _best(summary: pd.DataFrame, col: Column) -> dict[str, float]:
    """Per backbone: the best mean of the trained rows in the column's direction."""
    if col.kind != "mean" or col.bold is None:
        return {}
    rows = summary[(summary["seeds"] > 0) & _trained(summary)]
    values = rows.groupby("backbone", sort=False)[f"{col.key}_mean"]
    best = values.max() if col.bold == "max" else values.min()
    return {str(b): float(v) for b, v in best.dropna().items()}


def _mean_cell(row: pd.Series, col: Column, fmt: str, best: float | None, latex: bool) -> str:
    n = int(row["seeds"])
    mean = row.get(f"{col.key}_mean")
    if n == 0 or _missing(mean):
        return "--"
    text = fmt.format(mean)
    is_best = best is not None and bool(_trained(row)) and math.isclose(mean, best)
    if latex:  # the std as a subscript: narrower than "mean $\pm$ std"
        text = rf"\textbf{{{text}}}" if is_best else text
        return text + (rf"$_{{\pm {fmt.format(row[f'{col.key}_std'])}}}$" if n > 1 else "")
    if n > 1:
        text += " ± " + fmt.format(row[f"{col.key}_std"])
    return f"**{text}**" if is_best else text


def _cell(row: pd.Series, col: Column, fmt: str, best: float | None, latex: bool) -> str:
    if col.kind == "mean":
        return _mean_cell(row, col, fmt, best, latex)
    value = row[col.key]
    if col.kind == "text":  # a column read back from CSV with no value at all is float NaN
        text = "" if _missing(value) else str(value)
        return latex_escape(text) if latex else (text or "--")
    if col.kind == "count":
        return str(int(value))
    if _missing(value):
        return "--"
    return ("{:+.2f}" if col.kind == "signed" else fmt).format(value)


def cells(
    summary: pd.DataFrame,
    columns: Sequence[Column],
    fmt: str,
    latex: bool,
    best: Mapping[str, Mapping[str, float]] | None = None,
) -> list[list[str]]:
    """Method, backbone and one cell per column for every summary row; ``best`` (column key
    -> backbone -> best mean) from the whole table when these rows are a part of it."""
    if best is None:
        best = {col.key: _best(summary, col) for col in columns}
    out = []
    for _, row in summary.iterrows():
        notes = [n for n in (row.get(key) for key in ROW_NOTES) if isinstance(n, str) and n]
        method = f"{row['method']} ({'; '.join(notes)})" if notes else str(row["method"])
        names = [method, str(row["backbone"])]
        backbone = str(row["backbone"])
        out.append(
            [latex_escape(n) if latex else n for n in names]
            + [_cell(row, col, fmt, best[col.key].get(backbone), latex) for col in columns]
        )
    return out


def _parts(
    summary: pd.DataFrame, baselines: Mapping[str, str]
) -> list[tuple[str, pd.DataFrame]]:
    """(backbone or "", rows) per LaTeX table: one per backbone of the trained rows when there
    are several, each split into method families of at most :data:`MAX_ROWS` trained methods.
    Every part has its backbone's reference rows (untrained, released, published) and those of
    the backbones nothing was trained on (e.g. a paper's BERT-base numbers)."""
    is_trained = _trained(summary) & (summary["seeds"] > 0)
    backbones = list(dict.fromkeys(summary.loc[is_trained, "backbone"]))
    others = summary[~summary["backbone"].isin(backbones)]
    parts = []
    for backbone in backbones:
        rows = summary[summary["backbone"] == backbone]
        name = backbone if len(backbones) > 1 else ""
        trained = rows[is_trained[rows.index]]
        reference = pd.concat([rows.drop(trained.index), others])
        methods = list(dict.fromkeys(trained["method"]))
        if len(methods) <= MAX_ROWS:
            parts.append((name, pd.concat([rows, others])))
            continue
        by_method = {m: trained[trained["method"] == m] for m in methods}
        for group in method_groups(methods, baselines, MAX_ROWS):
            parts.append((name, pd.concat([*(by_method[m] for m in group.methods), reference])))
    return parts or [("", summary)]


def render_latex(
    summary: pd.DataFrame,
    columns: Sequence[Column],
    caption: str,
    label: str,
    fmt: str = "{:.2f}",
    baselines: Mapping[str, str] | None = None,
) -> str:
    """One table (see :func:`_parts` for when it is several), bold per backbone."""
    header = ["Method", "Backbone", *[c.header(latex=True) for c in columns]]
    cols = "ll" + "".join(c.align for c in columns)
    best = {col.key: _best(summary, col) for col in columns}
    parts = _parts(summary, baselines or {})
    tables = []
    for i, (backbone, rows) in enumerate(parts, start=1):
        body = [" & ".join(header) + r" \\", r"\midrule"]
        body += [" & ".join(r) + r" \\" for r in cells(rows, columns, fmt, True, best)]
        part_caption, part_label = caption, label
        if len(parts) > 1:
            where = f"{latex_escape(backbone)}, " if backbone else ""
            part_caption = rf"{caption} ({where}part {i} of {len(parts)})"
            part_label = f"{label}-{i}"
        tables.append(latex_table(body, cols, part_caption, part_label))
    return "\n".join(tables)


def render_markdown(summary: pd.DataFrame, columns: Sequence[Column], fmt: str = "{:.2f}") -> str:
    header = ["Method", "Backbone", *[c.header(latex=False) for c in columns]]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in cells(summary, columns, fmt, latex=False)]
    return "\n".join(lines) + "\n"


def to_csv(frame: pd.DataFrame) -> str:
    """The CSV twin: every column, floats with ten decimals. The paper pages print its numbers
    rounded to the tables' two: from four, a mean such as 59.19499 would be rounded twice
    (59.1950, then 59.20, where its table prints 59.19)."""
    return frame.to_csv(index=False, float_format="%.10f")


def metrics(summary: pd.DataFrame, key: str) -> Nested:
    """The mean of ``key`` per method x backbone as ``{method: {backbone: {leaf: mean}}}`` (4
    decimals, as in the CSV; ``leaf``: :func:`metric_key` of ``key``): what `dvc metrics show`
    / `dvc metrics diff` list, as ``method.backbone.leaf``."""
    column = f"{key}_mean"
    if column not in summary:
        raise KeyError(f"no metric '{key}' in the table (columns: {', '.join(summary.columns)})")
    seeded = summary[summary["seeds"] > 0]
    leaf = metric_key(key)
    return nest(
        (method, backbone, {leaf: round(float(value), 4)})
        for method, backbone, value in zip(
            seeded["method"], seeded["backbone"], seeded[column], strict=True
        )
        if not math.isnan(value)  # none computed: no metric (a metrics file holds no NaN)
    )
