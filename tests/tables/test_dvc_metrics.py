"""The DVC metrics layout: nested per table, and the headline file DVC lists by default."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml

from negcse.cli import main
from negcse.tables.dvc_metrics import headline, headline_files, metric_key, nest, read_nested
from workflow_copy import committed_copy, set_param, sh

STS = {"simcse": {"b": {"avg": 70.0}}, "una": {"b": {"avg": 71.5}, "c": {"avg": 60.0}}}
VERDICTS = {
    "una": {
        "b": {"sts": {"vs_una_baseline": {"delta": 1.5, "verdict": "reproduced"}}},
        "c": {"sts": {"vs_una_baseline": {"delta": -0.2, "verdict": "no verdict"}}},
    },
    "sncse": {
        "b": {
            "sts": {"vs_simcse": {"delta": 0.3, "verdict": "inconclusive"}},
            "transfer": {"vs_simcse": {"delta": -0.4, "verdict": "smaller than claimed"}},
        }
    },
}


def test_metric_key_and_nest() -> None:
    assert [metric_key(k) for k in ("avg", "FP", "Avg. MAP", "training_gap")] == [
        "avg", "fp", "avg_map", "training_gap",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="no letter or digit"):
        metric_key(" . ")
    assert nest([("m", "b", {"x": 1.0}), ("m", "c", {"x": 2.0})]) == {
        "m": {"b": {"x": 1.0}, "c": {"x": 2.0}}
    }
    with pytest.raises(ValueError, match="two metrics rows for m/b"):
        nest([("m", "b", {"x": 1.0}), ("m", "b", {"x": 2.0})])


def test_headline_keeps_each_sts_average_and_each_claim() -> None:
    out = headline(STS, VERDICTS)
    # every STS row; only the verdict rows that judge a claim (una/c: no verdict)
    assert out == {
        "sts": STS,
        "claims": {
            "una": {"b": {"sts": {"vs_una_baseline": {"delta": 1.5, "verdict": "reproduced"}}}},
            "sncse": VERDICTS["sncse"],
        },
    }

    def flat(tree: dict, prefix: str = "") -> list[str]:
        return [k for key, v in tree.items()
                for k in (flat(v, f"{prefix}{key}.") if isinstance(v, dict) else [prefix + key])]  # fmt: skip

    # DVC's flattened names: sts.<m>.<b>.avg, claims.<m>.<b>.<measure>.vs_<baseline>.<leaf>
    names = sorted(flat(out))
    assert names[:2] == ["claims.sncse.b.sts.vs_simcse.delta", "claims.sncse.b.sts.vs_simcse.verdict"]
    assert "sts.una.c.avg" in names and len(names) == 3 + 6
    assert headline(STS, {}) == {"sts": STS}  # no claim: no claims key


def test_command_writes_the_headline_and_names_a_bad_file(tmp_path: Path) -> None:
    files = {}
    for name, data in (("sts", STS), ("verdicts", VERDICTS)):
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(json.dumps(data))
    out = tmp_path / "headline.json"
    args = ["headline-metrics", "--sts", str(files["sts"]), "--verdicts", str(files["verdicts"])]
    assert main([*args, "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == headline(STS, VERDICTS)
    # the old flat layout ({"method/backbone": value}) is refused, naming the file and row
    files["sts"].write_text(json.dumps({"simcse/b": 70.0}))
    with pytest.raises(ValueError, match=r"sts\.json: simcse/b: no 'avg'"):
        read_nested(files["sts"], "avg")
    bad = tmp_path / "bad" / "headline.json"
    assert main([*args, "--out", str(bad)]) == 2
    assert not bad.exists()
    # a verdicts row without its delta: named
    files["sts"].write_text(json.dumps(STS))
    files["verdicts"].write_text(json.dumps({"una": {"b": {"sts": {"vs_x": {"verdict": "y"}}}}}))
    with pytest.raises(ValueError, match=r"verdicts\.json: una\.b\.sts\.vs_x: no 'delta'"):
        headline_files(files["sts"], files["verdicts"])


def test_dvc_exp_show_lists_tens_of_columns_and_an_override(tmp_path: Path) -> None:
    """`dvc exp show` on the committed results: the headline metrics, params.yaml's keys (the
    experiment's settings, never config/defaults.yaml's hundreds) and the stage's dependencies,
    at most 60 columns; an override written into params.yaml is a column of its own."""
    ws = committed_copy(tmp_path)
    header = next(csv.reader(io.StringIO(sh(["dvc", "exp", "show", "--csv"], ws).stdout)))
    assert len(header) <= 60, (len(header), header)
    metrics = json.loads((ws / "results/headline.json").read_text())
    params = yaml.safe_load((ws / "params.yaml").read_text())
    assert set(flat(metrics)) | set(flat(params)) <= set(header)
    assert not {"train.epochs", "methods.simcse.params.temperature"} & set(header)
    set_param(ws, "methods.simcse.params.temperature", 0.1)
    rows = list(csv.reader(io.StringIO(sh(["dvc", "exp", "show", "--csv"], ws).stdout)))
    column = rows[0].index("methods.simcse.params.temperature")
    workspace = next(r for r in rows[1:] if r[1] == "workspace")
    assert workspace[column] == "0.1"


def flat(tree: dict, prefix: str = "") -> list[str]:
    """Dotted keys of a nested mapping's leaves (an empty mapping has none)."""
    out = []
    for key, value in tree.items():
        if isinstance(value, dict):
            out += flat(value, f"{prefix}{key}.")
        else:
            out.append(f"{prefix}{key}")
    return out


def test_a_grid_without_a_claim_has_a_headline_of_its_sts_rows(tmp_path: Path) -> None:
    files = {name: tmp_path / f"{name}.json" for name in ("sts", "verdicts")}
    files["sts"].write_text(json.dumps(STS))
    # a grid without a claim writes an empty verdicts file: the headline holds the STS rows;
    # an empty STS file is still refused, naming it
    files["verdicts"].write_text("{}")
    assert headline_files(files["sts"], files["verdicts"]) == {"sts": STS}
    files["sts"].write_text("{}")
    with pytest.raises(ValueError, match=r"sts\.json: no rows"):
        headline_files(files["sts"], files["verdicts"])
