"""LaTeX tables of one model's analyses: rank errors (SNCSE Table 4) and its case study (GCSE
Appendix J). GCSE Table 8 across methods is a results table (:mod:`negcse.tables.build`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from negcse.text.display import task_name
from negcse.text.latex import latex_escape, latex_table


def _rank(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def rank_error_table(sections: Mapping[str, Mapping[str, Any]], caption: str, label: str) -> str:
    """SNCSE Table 4: per task, the top pairs by (R_E - R_G)^2, with gold, cosine and ranks."""
    body = [r"ID & Sentence 1 & Sentence 2 & Gold & Cos. & Gold rank & Est. rank \\"]
    for task, section in sections.items():
        body += [r"\midrule", rf"\multicolumn{{7}}{{l}}{{{task_name(task)}}} \\"]
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
