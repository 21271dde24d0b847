"""The DVC metrics layout: nested per table, and the headline file DVC lists by default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from negcse.cli import main
from negcse.tables.dvc_metrics import headline, metric_key, nest, read_nested

STS = {"simcse": {"b": {"avg": 70.0}}, "una": {"b": {"avg": 71.5}, "c": {"avg": 60.0}}}
VERDICTS = {
    "una": {"b": {"delta": 1.5, "verdict": "reproduced"}, "c": {"delta": -0.2}},
    "sncse": {"b": {"delta": 0.3, "verdict": "not significant"}},
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
    out = headline(STS, VERDICTS, {"una": {"b": {"delta": 0.1}}})
    # every STS row; only the verdict rows that judge a claim (una/c has no verdict); no
    # transfer claim at all: no transfer_claims key
    assert out == {
        "sts": STS,
        "claims": {
            "una": {"b": {"delta": 1.5, "verdict": "reproduced"}},
            "sncse": {"b": {"delta": 0.3, "verdict": "not significant"}},
        },
    }
    # DVC's flattened names: sts.<method>.<backbone>.avg, claims.<m>.<b>.{delta,verdict}
    flat = sorted(
        ".".join((part, m, b, leaf))
        for part, rows in out.items()
        for m, by in rows.items()
        for b, leaves in by.items()
        for leaf in leaves
    )
    assert flat[:2] == ["claims.sncse.b.delta", "claims.sncse.b.verdict"]
    assert "sts.una.c.avg" in flat and len(flat) == 3 + 4


def test_command_writes_the_headline_and_names_a_bad_file(tmp_path: Path) -> None:
    files = {}
    for name, data in (("sts", STS), ("verdicts", VERDICTS), ("transfer", {})):
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(json.dumps(data))
    out = tmp_path / "headline.json"
    args = ["headline-metrics", "--sts", str(files["sts"]), "--verdicts", str(files["verdicts"])]
    assert main([*args, "--transfer-verdicts", str(files["transfer"]), "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == headline(STS, VERDICTS, {})
    # the old flat layout ({"method/backbone": value}) is refused, naming the file and row
    files["sts"].write_text(json.dumps({"simcse/b": 70.0}))
    with pytest.raises(ValueError, match=r"sts\.json: simcse/b: no 'avg'"):
        read_nested(files["sts"], "avg")
    bad = tmp_path / "bad" / "headline.json"
    assert main([*args, "--transfer-verdicts", str(files["transfer"]), "--out", str(bad)]) == 1
    assert not bad.exists()
