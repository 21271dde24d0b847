"""verdicts.tex as a paper prints it (negcse.tables.verdicts_latex): five columns, the legend as
its caption, each note once as a footnote, one float at the smoke grid's size."""

from __future__ import annotations

import math
import re

import pandas as pd

from negcse.tables.verdicts_latex import LINES_PER_FLOAT, split_notes, verdicts_latex

NOTE = "backbone splade-tiny is not in the paper; reduced-scale grid"


def _row(method: str, baseline: str, **more: object) -> dict[str, object]:
    row = {"method": method, "backbone": "splade-tiny", "measure": "sts",
           "measure_text": "STS avg.", "baseline": baseline, "source": "SNCSE Table 2",
           "claim_backbone": "bert-base-uncased", "vs_baseline": -0.42,
           "vs_baseline_ci": "[-2.33, +1.49]", "paper_delta": 2.72,
           "verdict": "direction check: inconclusive", "note": NOTE}  # fmt: skip
    return row | more


def test_notes_split_outside_parentheses() -> None:
    assert split_notes("a; reduced transfer protocol (CR, TREC; 5-fold); b") == [
        "a", "reduced transfer protocol (CR, TREC; 5-fold)", "b"
    ]  # fmt: skip
    assert split_notes("") == []


def test_five_columns_and_each_note_once() -> None:
    frame = pd.DataFrame([
        _row("sncse", "simcse"),
        _row("sncse_pl", "sncse", vs_baseline=0.18, vs_baseline_ci=math.nan, paper_delta=-1.86,
             source="SNCSE Table 3", verdict="no verdict",
             note=f"{NOTE}; fewer than 3 seeds a side: no verdict"),
        _row("osscse", "simcse", measure="transfer", measure_text="transfer avg.",
             paper_delta=math.nan, note="reduced transfer protocol (CR, TREC; 5-fold)"),
    ])  # fmt: skip
    tex = verdicts_latex(frame, "tab:verdicts", 3, "Reduced-scale run: a check.")
    assert tex.count(r"\begin{table*}") == 1 and r"\label{tab:verdicts}" in tex
    assert r"Method & Baseline & $\Delta$ [95\% CI] & Paper $\Delta$ & Verdict \\" in tex
    rows = [line for line in tex.splitlines() if line.endswith(r"\\") and "parbox[t]" in line]
    assert len(rows) == 3 and all(line.count(" & ") == 4 for line in rows)
    # marks in order of first use: a the first source, b c the first row's notes
    assert r"$-$0.42 [$-$2.33, +1.49] & +2.72\raisebox{0.6ex}{a}" in rows[0]
    assert r"direction check: inconclusive\raisebox{0.6ex}{b,c}}" in rows[0]
    assert r"+0.18 & $-$1.86\raisebox{0.6ex}{d}" in rows[1]  # no interval: the estimate alone
    assert r"no verdict\raisebox{0.6ex}{b,c,e}}" in rows[1]
    # another measure named; no paper difference: no mark
    assert r"OssCSE (transfer avg.)}" in rows[2] and r"+1.49] &  & " in rows[2]
    notes = re.findall(r"\\raisebox\{0\.6ex\}\{(\w)\}~([^.]*(?:\.\d[^.]*)?)\.", tex)
    assert [m for m, _ in notes] == list("abcdef")
    assert dict(notes)["a"] == r"Paper $\Delta$: SNCSE Table 2, BERT-base"
    assert dict(notes)["b"] == "backbone splade-tiny is not in the paper"  # once for both rows
    assert dict(notes)["f"] == "reduced transfer protocol (CR, TREC; 5-fold)"
    caption = tex.split(r"\caption{")[1]
    assert caption.startswith("Reduced-scale run: a check. Do the papers' claims hold?")
    assert r"\emph{direction check: as claimed}" in caption and "no verdict" in caption
    assert "unless its method names another measure" in caption


def test_a_long_table_splits_and_each_part_has_its_own_notes() -> None:
    n = 2 * LINES_PER_FLOAT
    frame = pd.DataFrame([_row("sncse", "simcse", backbone=f"b{i // 30}") for i in range(n)])
    tex = verdicts_latex(frame, "tab:verdicts", 3)
    parts = tex.split(r"\begin{table*}")[1:]
    assert len(parts) >= 2
    for i, part in enumerate(parts, start=1):
        assert f"(part {i} of {len(parts)})" in part and f"tab:verdicts-{i}" in part
        assert part.count(r"\raisebox{0.6ex}{a}~") == 1  # its own footnotes, each once
    assert r"\multicolumn{5}{l}{\emph{b0}}" in parts[0]  # several backbones: each named


def test_no_rows_is_a_comment() -> None:
    assert verdicts_latex(pd.DataFrame(), "tab:verdicts", 3).startswith("% tab:verdicts: no claim")
