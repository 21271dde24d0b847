"""Tables: mean +- std over seeds, the paper's value and the difference, best in bold."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from negcse.tables.eval_files import TableInputError
from negcse.tables.render import (
    PAPER_DIFF,
    Column,
    add_baseline_delta,
    collect,
    metrics,
    number,
    render_latex,
    render_markdown,
    summarize,
)
from negcse.text.latex import latex_escape

KEYS = ["STS12", "avg"]
COLUMNS = (Column("STS12", "STS12"), Column("avg", "Avg."), *PAPER_DIFF)


def _write(tmp: Path, name: str, **values) -> Path:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(values))
    return path


@pytest.fixture
def evals(tmp_path: Path) -> list[Path]:
    return [
        _write(tmp_path, "a1", method="simcse", backbone="b", seed="1", STS12=60.0, avg=70.0),
        _write(tmp_path, "a2", method="simcse", backbone="b", seed="2", STS12=62.0, avg=73.0),
        _write(tmp_path, "a3", method="simcse", backbone="b", seed="3", STS12=64.0, avg=70.0),
        _write(tmp_path, "u", method="untrained", backbone="b", STS12=65.0, avg=50.0),
    ]


def test_mean_std_and_paper_difference(evals: list[Path]) -> None:
    paper = {("simcse", "b"): 76.25}
    summary = summarize(collect(evals, KEYS), KEYS, lambda m, b: paper.get((m, b)))
    row = summary[summary.method == "simcse"].iloc[0]
    assert row["STS12_mean"] == pytest.approx(62.0)
    assert row["STS12_std"] == pytest.approx(statistics.stdev([60.0, 62.0, 64.0]))
    assert row["avg_mean"] == pytest.approx(71.0)
    assert row["seeds"] == 3
    assert row["paper"] == pytest.approx(76.25)
    assert row["diff"] == pytest.approx(71.0 - 76.25)
    base = summary[summary.method == "untrained"].iloc[0]
    assert base["STS12_std"] == 0.0 and base["seeds"] == 1


def test_latex_is_booktabs_with_best_in_bold(evals: list[Path]) -> None:
    summary = summarize(collect(evals, KEYS), KEYS, lambda m, b: 76.25 if m == "simcse" else None)
    tex = render_latex(summary, COLUMNS, "cap", "tab:x")
    assert "\\toprule" in tex and "\\midrule" in tex and "\\bottomrule" in tex
    assert "\\resizebox" not in tex and "\\footnotesize" in tex
    lines = tex.splitlines()
    # one backbone: no Backbone column, the caption names it; a rule before the reference rows
    assert lines[lines.index("\\toprule") + 1] == "Method & STS12 & Avg. & Paper & $\\Delta$ \\\\"
    simcse = lines.index(next(line for line in lines if line.startswith("SimCSE")))
    # the only trained method is the best in both columns, though the untrained STS12 is higher;
    # a true minus sign for 71 - 76.25
    assert lines[simcse] == (
        "SimCSE & \\textbf{62.00 $\\pm$ 2.00} & \\textbf{71.00 $\\pm$ 1.73} & 76.25 & $-$5.25 \\\\"
    )
    assert lines[simcse + 1 : simcse + 3] == ["\\midrule", "Untrained & 65.00 & 50.00 & -- & -- \\\\"]
    assert "\\caption{cap Backbone: b.}" in tex
    md = render_markdown(summary, COLUMNS, caption="cap")
    assert md.startswith("cap Backbone: b.\n\n| Method | STS12 | Avg. | Paper | Δ |\n")
    assert "| SimCSE | **62.00 ± 2.00** | **71.00 ± 1.73** | 76.25 | −5.25 |" in md
    assert "| Untrained | 65.00 | 50.00 | -- | -- |" in md


def test_numbers_are_formatted_once_with_true_minus_signs() -> None:
    assert number(-5.245, "{:.2f}") == "−5.25" and number(-5.245, latex=True) == "$-$5.25"
    assert number(0.125, signed=True) == "+0.12"  # round half to even, once, from the value
    assert number(-0.001, signed=True) == "0.00"  # a zero has no sign
    assert number(1.5, "{:.3f}", signed=True) == "+1.500"


def test_families_are_ruled_apart_and_empty_columns_left_out() -> None:
    summary = pd.DataFrame({
        "method": ["una", "simcse", "sncse_pl", "sncse", "untrained", "una_baseline"],
        "backbone": "bert-base-uncased",
        "avg_mean": [1.0, 2.0, -3.0, 4.0, 5.0, 6.0],
        "avg_std": 0.0,
        "seeds": [1, 1, 1, 1, 1, 1],
        "paper": np.nan,
        "note": "",
    })  # fmt: skip
    columns = (Column("avg", "Avg."), Column("paper", "Paper", kind="number"),
               Column("note", "Note", kind="text"))  # fmt: skip
    tex = render_latex(summary, columns, "cap", "tab:x")
    body = tex.split("\\toprule\n")[1].split("\\bottomrule")[0].splitlines()
    # SimCSE, then UNA (grid order within), SNCSE, and the untrained row last; Paper and Note
    # are empty in every row, so left out, and the caption says so
    assert body == [
        "Method & Avg. \\\\", "\\midrule", "SimCSE & 2.00 \\\\", "\\midrule",
        "UNA & 1.00 \\\\", "SimCSE (UNA's run) & \\textbf{6.00} \\\\", "\\midrule",
        "SNCSE (PL) & $-$3.00 \\\\", "SNCSE & 4.00 \\\\", "\\midrule", "Untrained & 5.00 \\\\",
    ]  # fmt: skip
    assert "Backbone: BERT-base. Left out, empty in every row: Paper, Note." in tex
    md = render_markdown(summary, columns)
    assert md.startswith("Backbone: BERT-base. Left out, empty in every row: Paper, Note.\n\n")


def test_an_empty_table_is_said_not_printed() -> None:
    empty = pd.DataFrame(columns=["method", "backbone", "avg_mean", "avg_std", "seeds"])
    assert render_latex(empty, (Column("avg", "Avg."),), r"No rows here, 5\%.", "tab:e") == (
        "% tab:e: no rows. No rows here, 5%.\n"
    )
    assert render_markdown(empty, (Column("avg", "Avg."),), caption="Cap.") == "Cap.\n\nNo rows.\n"


def test_missing_tag_is_a_clear_error(tmp_path: Path) -> None:
    bad = _write(tmp_path, "x", STS12=1.0, avg=1.0)
    with pytest.raises(TableInputError, match="x.json: no 'method' recorded"):
        collect([bad], KEYS)


def test_metrics_json_is_the_mean_average_per_method_and_backbone(tmp_path: Path) -> None:
    from negcse.cli import main
    from negcse.tables.published import TASKS

    def run(name: str, method: str, seed: str, avg: float) -> str:
        scores = dict.fromkeys(TASKS, 50.0)
        return str(_write(tmp_path, name, method=method, backbone="b", seed=seed, **scores, avg=avg))

    evals = [run("a1", "simcse", "1", 70.0), run("a2", "simcse", "2", 73.0)]
    evals += [run("a3", "simcse", "3", 70.0), run("u", "untrained", "", 50.0)]
    out = tmp_path / "m" / "sts.json"
    assert main(["table", "sts", "--evals", *evals, "--metrics", str(out)]) == 0
    # simcse/b: the mean of 70, 73 and 70 (by hand); untrained/b: its one value
    assert json.loads(out.read_text()) == {
        "simcse": {"b": {"avg": 71.0}},
        "untrained": {"b": {"avg": 50.0}},
    }
    with pytest.raises(KeyError, match="no metric 'STS13'"):
        metrics(summarize(collect(evals, KEYS), KEYS), "STS13")



def test_latex_escape() -> None:
    assert latex_escape(r"50% of $x_1 & {y} #2 ~ ^ \ ") == (
        r"50\% of \$x\_1 \& \{y\} \#2 \textasciitilde{} \textasciicircum{} \textbackslash{} "
    )


def test_baseline_delta_by_hand() -> None:
    summary = pd.DataFrame(
        {
            "method": ["simcse", "una_baseline", "una", "una", "osscse"],
            "backbone": ["b", "b", "b", "c", "b"],
            "avg_mean": [70.0, 71.5, 72.25, 60.0, 73.0],
            "avg_std": [0.0] * 5,
            "seeds": [2] * 5,
        }
    )
    out = add_baseline_delta(summary, "avg", {"una": "una_baseline", "osscse": "simcse"})
    # 72.25 - 71.5; 73 - 70; no una_baseline row on backbone c; simcse has no baseline set
    got = dict(zip(zip(out["method"], out["backbone"], strict=True), out["vs_baseline"], strict=True))
    assert got[("una", "b")] == pytest.approx(0.75)
    assert got[("osscse", "b")] == pytest.approx(3.0)
    assert np.isnan(got[("una", "c")]) and np.isnan(got[("simcse", "b")])
    columns = (Column("avg", "Avg."), Column("baseline", "Baseline", kind="method"),
               Column("vs_baseline", "Δ base", kind="signed"))  # fmt: skip
    md = render_markdown(out, columns)
    assert "| UNA | b | 72.25 ± 0.00 | SimCSE (UNA's run) | +0.75 |" in md
    # the best of each backbone in bold: una is alone on c
    assert "| UNA | c | **60.00 ± 0.00** | SimCSE (UNA's run) | -- |" in md


def test_a_part_explains_the_marks_of_its_own_rows() -> None:
    """Row notes are marked once per table (†, ‡, ...); each LaTeX part explains the marks its
    rows carry, with the same mark as the whole table."""
    summary = pd.DataFrame({
        "method": ["gcse", "simcse_san", "simcse"], "backbone": ["a", "b", "b"],
        "avg_mean": [1.0, 2.0, 3.0], "avg_std": 0.0, "seeds": 1,
        "llm": ["tiny-llm", "", ""], "substitute": ["", "SAN lexicon: spacy", ""],
    })  # fmt: skip
    tex = render_latex(summary, (Column("avg", "Avg."),), "cap", "tab:x")
    part_a, part_b = tex.split("\\begin{table}")[1:]
    assert "GCSE $\\dagger$ &" in part_a and "$\\dagger$ data written by the LLM tiny-llm." in part_a
    assert "SimCSE+SAN $\\ddagger$ &" in part_b and "$\\ddagger$ SAN lexicon: spacy." in part_b
    assert "tiny-llm" not in part_b
    md = render_markdown(summary, (Column("avg", "Avg."),))
    assert "† data written by the LLM tiny-llm. ‡ SAN lexicon: spacy." in md
    assert "| GCSE † | a |" in md and "| SimCSE+SAN ‡ | b |" in md
