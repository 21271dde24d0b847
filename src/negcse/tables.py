"""Result tables: long-form metrics -> mean +- std over seeds, beside the papers' numbers.

Each table comes in three twins built from one DataFrame: LaTeX (booktabs, best mean per column
in bold), CSV (machine-readable, with std and n) and Markdown; and, for DVC (`dvc metrics`), a
flat JSON of one summary column: ``{"<method>/<backbone>": mean}``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from negcse.io_utils import atomic_open, write_json

SHORT = {
    "STS12": "STS12",
    "STS13": "STS13",
    "STS14": "STS14",
    "STS15": "STS15",
    "STS16": "STS16",
    "STSBenchmark": "STS-B",
    "SICKRelatedness": "SICK-R",
    "avg": "Avg.",
}


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
                }
            )
    return pd.DataFrame(rows)


def summarize(
    long: pd.DataFrame,
    keys: Sequence[str],
    paper_value: Callable[[str, str], float | None] | None = None,
) -> pd.DataFrame:
    """Mean, std (sample, ddof=1; 0 for one seed) and n per method x backbone x metric."""
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


def _best(summary: pd.DataFrame, keys: Sequence[str]) -> dict[str, float]:
    return {k: float(np.nanmax(summary[f"{k}_mean"].to_numpy(dtype=float))) for k in keys}


def _cell(mean: float, std: float, n: int, bold: bool, latex: bool) -> str:
    text = f"{mean:.2f}" if n <= 1 else (
        f"{mean:.2f} $\\pm$ {std:.2f}" if latex else f"{mean:.2f} ± {std:.2f}"
    )
    if bold:
        return f"\\textbf{{{text}}}" if latex else f"**{text}**"
    return text


def _opt(value: float | None, fmt: str = "{:.2f}", signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "--"
    return ("{:+.2f}" if signed else fmt).format(value)


def _latex_escape(text: str) -> str:
    return text.replace("_", r"\_").replace("&", r"\&").replace("%", r"\%")


def render_latex(summary: pd.DataFrame, keys: Sequence[str], caption: str, label: str) -> str:
    best = _best(summary, keys)
    has_paper = "paper" in summary
    has_base = "vs_baseline" in summary
    cols = "ll" + "r" * len(keys) + ("rr" if has_paper else "") + ("lr" if has_base else "")
    header = ["Method", "Backbone", *[_latex_escape(SHORT.get(k, k)) for k in keys]]
    if has_paper:
        header += ["Paper", r"$\Delta$"]
    if has_base:
        header += ["Baseline", r"$\Delta_{\mathrm{base}}$"]
    lines = [
        r"\begin{table*}[t]",
        r"\centering",
        r"\small",
        rf"\begin{{tabular}}{{{cols}}}",
        r"\toprule",
        " & ".join(header) + r" \\",
        r"\midrule",
    ]
    for _, row in summary.iterrows():
        cells = [_latex_escape(str(row["method"])), _latex_escape(str(row["backbone"]))]
        for k in keys:
            mean = float(row[f"{k}_mean"])
            cells.append(_cell(mean, float(row[f"{k}_std"]), int(row["seeds"]),
                               math.isclose(mean, best[k]), latex=True))
        if has_paper:
            cells += [_opt(row["paper"]), _opt(row["diff"], signed=True)]
        if has_base:
            cells += [_latex_escape(str(row["baseline"])), _opt(row["vs_baseline"], signed=True)]
        lines.append(" & ".join(cells) + r" \\")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{caption}}}",
        rf"\label{{{label}}}",
        r"\end{table*}",
    ]
    return "\n".join(lines) + "\n"


def render_markdown(summary: pd.DataFrame, keys: Sequence[str]) -> str:
    best = _best(summary, keys)
    has_paper = "paper" in summary
    has_base = "vs_baseline" in summary
    header = ["Method", "Backbone", *[SHORT.get(k, k) for k in keys]]
    if has_paper:
        header += ["Paper", "Δ"]
    if has_base:
        header += ["Baseline", "Δ base"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, row in summary.iterrows():
        cells = [str(row["method"]), str(row["backbone"])]
        for k in keys:
            mean = float(row[f"{k}_mean"])
            cells.append(_cell(mean, float(row[f"{k}_std"]), int(row["seeds"]),
                               math.isclose(mean, best[k]), latex=False))
        if has_paper:
            cells += [_opt(row["paper"]), _opt(row["diff"], signed=True)]
        if has_base:
            cells += [str(row["baseline"]) or "--", _opt(row["vs_baseline"], signed=True)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def metrics(summary: pd.DataFrame, key: str) -> dict[str, float]:
    """The mean of ``key`` per method x backbone, keyed ``method/backbone`` (4 decimals, as in
    the CSV): what `dvc metrics show` / `dvc metrics diff` list, one row per table row."""
    column = f"{key}_mean"
    if column not in summary:
        raise KeyError(f"no metric '{key}' in the table (columns: {', '.join(summary.columns)})")
    out: dict[str, float] = {}
    for method, backbone, value in zip(
        summary["method"], summary["backbone"], summary[column], strict=True
    ):
        out[f"{method}/{backbone}"] = round(float(value), 4)
    return out


def write_metrics(summary: pd.DataFrame, key: str, path: str | os.PathLike[str]) -> None:
    write_json(path, metrics(summary, key))


def write_table(
    summary: pd.DataFrame,
    keys: Sequence[str],
    tex: str | None,
    csv: str | None,
    md: str | None,
    caption: str,
    label: str,
) -> None:
    if tex:
        with atomic_open(tex) as fh:
            fh.write(render_latex(summary, keys, caption, label))
    if csv:
        with atomic_open(csv) as fh:
            summary.to_csv(fh, index=False, float_format="%.4f")
    if md:
        with atomic_open(md) as fh:
            fh.write(render_markdown(summary, keys))
