"""LaTeX tables of the analyses: rank errors (SNCSE Table 4) and case studies (GCSE Table 8)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from negcse.latex import latex_escape, latex_table

TASK_NAMES = {"STSBenchmark": "STS-B", "SICKRelatedness": "SICK-R", "STSBenchmark-dev": "STS-B dev"}


def _rank(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def rank_error_table(sections: Mapping[str, Mapping[str, Any]], caption: str, label: str) -> str:
    """SNCSE Table 4: per task, the top pairs by (R_E - R_G)^2, with gold, cosine and ranks."""
    body = [r"ID & Sentence 1 & Sentence 2 & Gold & Cos. & $R_G$ & $R_E$ \\"]
    for task, section in sections.items():
        body += [r"\midrule", rf"\multicolumn{{7}}{{l}}{{{TASK_NAMES.get(task, task)}}} \\"]
        for i, row in enumerate(section["top"], start=1):
            body.append(
                f"{i} & {latex_escape(row['sent1'])} & {latex_escape(row['sent2'])} & "
                f"{row['gold']:.2f} & {row['cosine']:.3f} & {_rank(row['r_g'])} & "
                f"{_rank(row['r_e'])} \\\\"
            )
    return latex_table(body, r"rp{0.3\linewidth}p{0.3\linewidth}rrrr", caption, label)


def scaled(value: float, low: float, high: float) -> float:
    """A median-normalized score (0-1) back on the label scale [low, high]."""
    return low + value * (high - low)


def case_study_table(case: Mapping[str, Any], caption: str, label: str) -> str:
    """One model's largest false positives and negatives: gold, normalized score (error)."""
    low, high = case["label_range"]
    body = [r"ID & Sentence 1 & Sentence 2 & Gold & Score (error) \\"]
    for title, key in (
        ("False positives", "top_false_positives"),
        ("False negatives", "top_false_negatives"),
    ):
        body += [r"\midrule", rf"\multicolumn{{5}}{{l}}{{{title}}} \\"]
        if not case[key]:
            body.append(r"\multicolumn{5}{l}{(none)} \\")
        for i, row in enumerate(case[key], start=1):
            score = scaled(row["pred_norm"], low, high)
            err = abs(row["pred_norm"] - row["gold_norm"]) * (high - low)
            body.append(
                f"{i} & {latex_escape(row['sent1'])} & {latex_escape(row['sent2'])} & "
                f"{row['gold']:.2f} & {score:.2f} ({err:.3f}) \\\\"
            )
    return latex_table(body, r"rp{0.33\linewidth}p{0.33\linewidth}rr", caption, label)


def _fmt(value: float, spec: str) -> str:
    return "--" if value is None or math.isnan(value) else format(value, spec)


def case_comparison_table(
    cases: Sequence[tuple[str, str, float]],
    methods: Mapping[str, Mapping[str, Any]],
    low: float,
    high: float,
    caption: str,
    label: str,
) -> str:
    """GCSE Table 8 across methods: the printed pairs, then one row per method.

    ``methods[m]`` holds ``pred_norm`` (one mean normalized score per case, NaN if the pair is
    missing), ``false_positive_rate`` and ``false_negative_rate`` (percent, means over seeds).
    """
    k = len(cases)
    body = [r"ID & \multicolumn{" + str(k + 1) + r"}{l}{Sentence pair (gold)} \\", r"\midrule"]
    for i, (a, b, gold) in enumerate(cases, start=1):
        body.append(
            rf"{i} & \multicolumn{{{k + 1}}}{{p{{0.85\linewidth}}}}{{{latex_escape(a)} / "
            rf"{latex_escape(b)} ({gold:.2f})}} \\"
        )
    body += [
        r"\midrule",
        "Method & " + " & ".join(str(i) for i in range(1, k + 1)) + r" & FP / FN (\%) \\",
        r"\midrule",
    ]
    for method, stats in methods.items():
        cells = []
        for (_, _, gold), pred in zip(cases, stats["pred_norm"], strict=True):
            if pred is None or math.isnan(pred):
                cells.append("--")
                continue
            score = scaled(pred, low, high)
            cells.append(f"{score:.2f} ({abs(score - gold):.3f})")
        rates = (
            f"{_fmt(stats['false_positive_rate'], '.1f')} / "
            f"{_fmt(stats['false_negative_rate'], '.1f')}"
        )
        body.append(f"{latex_escape(method)} & " + " & ".join(cells) + f" & {rates} \\\\")
    return latex_table(body, "l" + "r" * (k + 1), caption, label)
