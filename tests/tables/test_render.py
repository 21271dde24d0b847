"""Tables: mean +- std over seeds, the paper's value and the difference, best in bold."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from negcse.latex import latex_escape
from negcse.tables.eval_files import TableInputError
from negcse.tables.render import (
    PAPER_DIFF,
    Column,
    add_baseline_delta,
    collect,
    metrics,
    render_latex,
    render_markdown,
    summarize,
)
from negcse.tables.specs import table_spec

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
    simcse = next(line for line in tex.splitlines() if line.startswith("simcse"))
    untrained = next(line for line in tex.splitlines() if line.startswith("untrained"))
    # the only trained method is the best in both columns, though the untrained STS12 is higher
    assert simcse.startswith("simcse & b & \\textbf{62.00}$_{\\pm 2.00}$ & ")
    assert "\\textbf{71.00}$_{\\pm 1.73}$" in simcse  # avg: mean, std of 70, 73, 70
    assert "76.25 & -5.25" in simcse
    assert untrained == "untrained & b & 65.00 & 50.00 & -- & -- \\\\"
    md = render_markdown(summary, COLUMNS)
    assert "**71.00 ± 1.73**" in md and "| untrained | b | 65.00 | 50.00 |" in md


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
    sts = table_spec("sts").columns
    md = render_markdown(out, [c for c in sts if c.key in ("avg", "baseline", "vs_baseline")])
    assert "| una | b | 72.25 ± 0.00 | una_baseline | +0.75 |" in md
    # the best of each backbone in bold: una is alone on c
    assert "| una | c | **60.00 ± 0.00** | una_baseline | -- |" in md
