"""Per-seed scores: the summary tables' ``<key>_seed<n>`` CSV columns and the strip plot drawn
from them (``negcse plot-seeds``)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from PIL import Image

from negcse.cli import main
from negcse.commands.plot_seeds import seed_rows
from negcse.tables.render import summarize, to_csv

SCORES = {  # (method, backbone, seed) -> the headline score
    ("simcse", "bert-base-uncased", "42"): 76.1,
    ("simcse", "bert-base-uncased", "43"): 75.5,
    ("simcse", "bert-base-uncased", "44"): 76.6,
    ("sncse", "bert-base-uncased", "42"): 78.9,
    ("sncse", "bert-base-uncased", "43"): 79.4,
    ("una", "bert-base-uncased", "42"): 77.0,
}


def _long() -> pd.DataFrame:
    rows = [
        {"method": m, "backbone": b, "seed": s, "metric": metric, "value": v + offset}
        for (m, b, s), v in SCORES.items()
        for metric, offset in (("STS12", -5.0), ("avg", 0.0))
    ]
    rows.append({"method": "untrained", "backbone": "bert-base-uncased", "seed": "",
                 "metric": "avg", "value": 30.0})  # fmt: skip
    rows.append({"method": "untrained", "backbone": "bert-base-uncased", "seed": "",
                 "metric": "STS12", "value": 25.0})  # fmt: skip
    return pd.DataFrame(rows)


def test_each_seed_of_the_headline_has_a_column() -> None:
    out = summarize(_long(), ["STS12", "avg"]).set_index("method")
    assert [c for c in out.columns if "_seed" in c] == ["avg_seed42", "avg_seed43", "avg_seed44"]
    assert out.loc["simcse", ["avg_seed42", "avg_seed43", "avg_seed44"]].tolist() == [
        76.1, 75.5, 76.6,
    ]  # fmt: skip
    assert out.loc["sncse", "avg_seed43"] == 79.4 and math.isnan(out.loc["sncse", "avg_seed44"])
    assert math.isnan(out.loc["untrained", "avg_seed42"])  # no seed: no per-seed score
    assert (
        out.loc["simcse", "avg_mean"]
        == sum(SCORES[("simcse", "bert-base-uncased", s)] for s in ("42", "43", "44")) / 3
    )


def test_the_strip_plot_shows_the_rows_with_two_seeds(tmp_path: Path) -> None:
    table = tmp_path / "sts.csv"
    table.write_text(to_csv(summarize(_long(), ["STS12", "avg"])))
    frame = pd.read_csv(table)
    labels, values = seed_rows(frame, "avg", 2)
    assert values == [[76.1, 75.5, 76.6], [78.9, 79.4]] and len(labels) == 2
    out = tmp_path / "figures" / "seeds.png"
    out.parent.mkdir()
    assert main(["plot-seeds", "--table", str(table), "--out", str(out)]) == 0
    assert Image.open(out).size[0] > 300 and out.with_suffix(".pdf").stat().st_size > 0
    assert main(["plot-seeds", "--table", str(table), "--key", "STS12", "--out", str(out)]) == 2
