"""The verdicts table as a paper prints it (``verdicts.tex``): five columns, Method, Baseline,
Δ [95% CI], Paper Δ and Verdict, a short legend as the caption and each note once, as a
footnote under the table.

The CSV, Markdown and HTML twins keep every column (p-values, both verdicts, Δ paper and its
interval, the notes in full); this one is for a paper's page: one float where the rows fit it
(the smoke grid's), else one per :data:`LINES_PER_FLOAT` lines of rows, each part with the
footnotes of its own rows. The wrapped columns take the widths their text needs within the text
width (:func:`widths`). A row's notes (its Note, split at "; ") are marked on its verdict, the
source of the paper's difference (``SNCSE Table 2, BERT-base``) on that number: lower-case
letters, raised, at the table's size; a note's letter the same wherever it recurs in a part.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from negcse.tables.render import text_width
from negcse.text.display import BACKBONE_NAMES, backbone_name, method_name
from negcse.text.latex import PAGE, latex_escape

#: lines of rows in one float: with its header, its caption (the legend, ~11 lines) and its
#: footnotes it stays within a page (ACL's: 23 cm of text)
LINES_PER_FLOAT = 31
HEADER = r"Method & Baseline & $\Delta$ [95\% CI] & Paper $\Delta$ & Verdict \\"
LEGEND = (
    r"Do the papers' claims hold? $\Delta$: the method $-$ its baseline on the claim's "
    r"measure, mean over seeds, with its 95\% interval over seeds and test set (none below "
    r"{min_seeds} seeds a side: \emph{{no verdict}}); Paper $\Delta$: the paper's difference. "
    r"Verdict, after Holm's correction over the table's hypotheses: \emph{{reproduced}} (the "
    r"interval past 0 and reaching the paper's difference), \emph{{smaller than claimed}} "
    r"(past 0, short of it), \emph{{not reproduced}} (holding 0, short of it), "
    r"\emph{{reversed}} (past 0 the other way), \emph{{inconclusive}} (holding 0 and the "
    r"paper's difference). Where the run is not the paper's comparison (its backbone, LLM, "
    r"protocol and scale) only the sign is checked: \emph{{direction check: as claimed}} (past "
    r"0 on the claim's side), \emph{{opposite}} or \emph{{inconclusive}} (the interval holds "
    r"0). $p$-values, the verdict before Holm's correction and our mean against the paper's "
    r"number: verdicts.csv (docs/statistics.md)."
)


def _letters(i: int) -> str:
    """a, b, ..., z, aa, ab, ...: the ``i``-th footnote mark."""
    text = ""
    i += 1
    while i:
        i, rest = divmod(i - 1, 26)
        text = chr(ord("a") + rest) + text
    return text


def _text(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _signed(value: Any) -> str:
    """A difference with its sign (a true minus), two decimals; empty when missing."""
    if _text(value) == "":
        return ""
    text = f"{float(value):+.2f}"
    return "0.00" if float(text) == 0 else text.replace("-", "−")


def _shown(text: str) -> str:
    """Text as the tables show it: true minus signs, backbones by their display names."""
    for backbone, name in BACKBONE_NAMES.items():
        text = text.replace(backbone, name)
    return text


def _marks(marks: Sequence[str]) -> str:
    return rf"\raisebox{{0.6ex}}{{{','.join(marks)}}}" if marks else ""


def _cell(text: str, width: float, marks: Sequence[str] = ()) -> str:
    """Text wrapped within ``width`` points, its footnote marks inside."""
    return rf"\parbox[t]{{{width:g}pt}}{{\raggedright {latex_escape(text)}{_marks(marks)}}}"


def split_notes(note: str) -> list[str]:
    """A row's Note as its parts: split at "; " outside parentheses ("reduced transfer
    protocol (CR, TREC; 5-fold)" stays one)."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(note):
        depth += (c == "(") - (c == ")")
        if c == ";" and depth == 0:
            parts.append(note[start:i])
            start = i + 1
    parts.append(note[start:])
    return [p.strip() for p in parts if p.strip()]


@dataclass(frozen=True)
class Row:
    """One claim as printed: its backbone and five cells of plain text, the notes of its Paper
    Δ (the source) and of its verdict (its Note's parts)."""

    backbone: str
    method: str
    baseline: str
    delta: str
    paper: str
    verdict: str
    paper_notes: tuple[str, ...]
    verdict_notes: tuple[str, ...]


def rows_of(frame: pd.DataFrame) -> list[Row]:
    """The frame's rows as printed (grid order, by backbone)."""
    many_measures = "measure" in frame and frame["measure"].nunique() > 1
    out = []
    for row in frame.to_dict("records"):
        name = method_name(str(row["method"]))
        if many_measures and row.get("measure") != "sts":
            name += f" ({_text(row.get('measure_text'))})"
        ci = _text(row.get("vs_baseline_ci")).replace("-", "−")
        delta = " ".join(t for t in (_signed(row.get("vs_baseline")), ci) if t) or "--"
        paper = _signed(row.get("paper_delta"))
        source = _shown(_text(row.get("source")))
        if source and _text(row.get("claim_backbone")):
            source += f", {backbone_name(str(row['claim_backbone']))}"
        out.append(
            Row(
                backbone=str(row["backbone"]),
                method=name,
                baseline=method_name(str(row["baseline"])),
                delta=delta,
                paper=paper,
                verdict=_text(row.get("verdict")) or "--",
                paper_notes=(f"Paper Δ: {source}",) if paper and source else (),
                verdict_notes=tuple(_shown(n) for n in split_notes(_text(row.get("note")))),
            )
        )
    order = list(dict.fromkeys(r.backbone for r in out))
    return sorted(out, key=lambda r: order.index(r.backbone))


#: points a footnote mark adds: a letter and a comma, raised, at the table's size (no text of a
#: table is smaller than \footnotesize)
MARK_WIDTH = 7.0


def widths(rows: Sequence[Row], marks: int = 3) -> dict[str, float]:
    """Points of the wrapped columns: the verdict's longest text with ``marks`` marks, the rest
    of the text width shared by the method and the baseline (each no wider than its longest
    name); the Δ and Paper Δ columns take their longest text."""
    verdict = min(max(text_width(r.verdict) for r in rows) + marks * MARK_WIDTH, 150.0)
    fixed = max(text_width(r.delta) for r in rows) + max(text_width(r.paper) for r in rows)
    room = PAGE.text_width - 10 * PAGE.tabcolsep - 4 - verdict - fixed - MARK_WIDTH
    method = min(max(text_width(r.method) for r in rows), max(room * 0.6, 60.0))
    baseline = min(max(text_width(r.baseline) for r in rows), max(room - method, 60.0))
    return {"method": round(method, 1), "baseline": round(baseline, 1), "verdict": round(verdict, 1)}


def lines(row: Row, width: Mapping[str, float]) -> int:
    """Lines the row takes (its longest wrapped cell)."""
    return max(
        math.ceil(text_width(row.method) / width["method"]),
        math.ceil(text_width(row.baseline) / width["baseline"]),
        math.ceil((text_width(row.verdict) + MARK_WIDTH * len(row.verdict_notes))
                  / width["verdict"]),
    )  # fmt: skip


def _float(rows: Sequence[Row], width: Mapping[str, float], caption: str, label: str,
           many_backbones: bool) -> str:  # fmt: skip
    marks: dict[str, str] = {}

    def mark(notes: Sequence[str]) -> list[str]:
        return [marks.setdefault(n, _letters(len(marks))) for n in notes]

    body: list[str] = []
    backbone = None
    for row in rows:
        if many_backbones and row.backbone != backbone:
            backbone = row.backbone
            if body:
                body.append(r"\midrule")
            name = latex_escape(backbone_name(backbone))
            body.append(rf"\multicolumn{{5}}{{l}}{{\emph{{{name}}}}} \\")
        paper_marks = mark(row.paper_notes)
        cells = [
            _cell(row.method, width["method"]),
            _cell(row.baseline, width["baseline"]),
            latex_escape(row.delta),
            latex_escape(row.paper) + _marks(paper_marks),
            _cell(row.verdict, width["verdict"], mark(row.verdict_notes)),
        ]
        body.append(" & ".join(cells) + r" \\")
    footnotes = " ".join(
        rf"{_marks([m])}~{latex_escape(note)}." for note, m in marks.items()
    )
    below = (
        [r"\par\smallskip", rf"\parbox{{{PAGE.text_width:g}pt}}{{\raggedright {footnotes}}}"]
        if footnotes
        else []
    )
    return "\n".join(
        [
            r"\begin{table*}[tp]",
            r"\centering",
            r"\footnotesize",
            rf"\setlength{{\tabcolsep}}{{{PAGE.tabcolsep:g}pt}}",
            r"\begin{tabular}{lllrl}",
            r"\toprule",
            HEADER,
            r"\midrule",
            *body,
            r"\bottomrule",
            r"\end{tabular}",
            *below,
            rf"\caption{{{caption}}}",
            rf"\label{{{label}}}",
            r"\end{table*}",
            "",
        ]
    )


def verdicts_latex(
    frame: pd.DataFrame, label: str, min_seeds: int, scale_note: str = "", more: str = ""
) -> str:
    """``verdicts.tex``: the rows of :func:`negcse.tables.verdicts.verdict_table` (grid
    order, by backbone) as one float or, past :data:`LINES_PER_FLOAT` lines of rows, several,
    with ``more`` (plain text) after the legend; a table without rows is a comment saying
    so."""
    legend = LEGEND.format(min_seeds=min_seeds) + (f" {latex_escape(more)}" if more else "")
    if "measure" in frame and frame["measure"].nunique() > 1:
        legend += " A row is on the STS average unless its method names another measure."
    if scale_note:
        legend = f"{latex_escape(scale_note)} {legend}"
    if frame.empty:
        return f"% {label}: no claim of the papers has both its methods in the grid.\n"
    rows = rows_of(frame)
    width = widths(rows, max(len(r.verdict_notes) for r in rows))
    many_backbones = len({r.backbone for r in rows}) > 1
    parts: list[list[Row]] = [[]]
    used = 0
    for row in rows:
        n = lines(row, width)
        if parts[-1] and used + n > LINES_PER_FLOAT:
            parts.append([])
            used = 0
        parts[-1].append(row)
        used += n
    if len(parts) == 1:
        return _float(parts[0], width, legend, label, many_backbones)
    floats = [
        _float(part, width, f"{legend} (part {i} of {len(parts)})", f"{label}-{i}",
               many_backbones)
        for i, part in enumerate(parts, start=1)
    ]  # fmt: skip
    return "\n".join(floats)
