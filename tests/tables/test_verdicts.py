"""The verdict and released-checkpoint tables (negcse.tables.verdicts) from STS evaluation
files that carry their per-pair cosines, as `negcse evaluate` writes them."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from negcse.analysis.bootstrap import Interval
from negcse.cli import main
from negcse.tables.build import Options, TableInputError
from negcse.tables.published import TASKS
from negcse.tables.specs import table_spec
from negcse.tables.verdicts import checkpoint_frame, claim, verdict, verdict_frame

SIZES = {task: (60, 40) if task.startswith("STS1") else (80,) for task in TASKS}
GOLD = {t: np.random.default_rng(i).uniform(0, 5, sum(s)) for i, (t, s) in enumerate(SIZES.items())}


def _write(tmp: Path, method: str, seed: int, noise: float, backbone: str = "tiny") -> str:
    """An STS evaluation whose cosines are gold plus noise of this scale (seeded)."""
    rng = np.random.default_rng([seed, int(noise * 100)])
    details = {
        task: {
            "pairs": {
                "cosine": (GOLD[task] + rng.normal(0, noise, len(GOLD[task]))).tolist(),
                "gold": GOLD[task].tolist(),
                "subset_sizes": list(SIZES[task]),
            }
        }
        for task in TASKS
    }
    path = tmp / f"{method}-{backbone}-{seed}.json"
    tags = {"method": method, "backbone": backbone, "seed": str(seed)}
    path.write_text(json.dumps({**tags, "details": details}))
    return str(path)


def test_verdict_rules() -> None:
    gain, loss, zero = Interval(1.0, 0.2, 1.8), Interval(-1.0, -1.8, -0.2), Interval(0.1, -0.5, 0.7)
    assert verdict(gain, 2.72) == "reproduced" and verdict(loss, -1.86) == "reproduced"
    assert verdict(loss, 2.72) == "reversed" and verdict(gain, -1.86) == "reversed"
    assert verdict(zero, 2.72) == "not significant"
    assert verdict(gain, None) == ""


def test_claims_are_the_papers_own_differences() -> None:
    # SNCSE Table 2: SNCSE 78.97, SimCSE (quoted) 76.25
    assert claim("sncse", "simcse", "bert-base-uncased") == (pytest.approx(2.72), "bert-base-uncased")
    # a backbone no paper used borrows the sign of the first paper backbone
    assert claim("sncse", "simcse", "tiny") == (pytest.approx(2.72), "bert-base-uncased")
    # SNCSE Table 3: PL 77.11 vs SNCSE 78.97 (a loss); UNA Table 1 vs UNA's own SimCSE 75.32
    assert claim("sncse_pl", "sncse", "bert-base-uncased")[0] == pytest.approx(-1.86)
    assert claim("una", "una_baseline", "bert-base-uncased")[0] == pytest.approx(0.82)
    # SAN Table 3: the SAN authors' SimCSE 76.64 -> 77.05
    assert claim("simcse_san", "simcse_dropout15", "bert-base-uncased")[0] == pytest.approx(0.41)
    assert claim("una_baseline", "simcse", "bert-base-uncased") == (None, None)


@pytest.fixture
def evals(tmp_path: Path) -> list[str]:
    files = []
    for seed in (1, 2):
        files += [
            _write(tmp_path, "simcse", seed, 1.5),
            _write(tmp_path, "sncse", seed, 0.5),  # far better: the claim holds
            _write(tmp_path, "osscse", seed, 3.0),  # far worse: reversed
            _write(tmp_path, "una_baseline", seed, 1.5),
            _write(tmp_path, "una", seed, 1.5),  # the same files as its baseline
        ]
    files.append(_write(tmp_path, "untrained", 0, 2.0))
    return files


BASELINES = {"sncse": "simcse", "osscse": "simcse", "una": "una_baseline", "una_baseline": "simcse"}


def test_verdict_frame(evals: list[str]) -> None:
    frame = verdict_frame(evals, Options(BASELINES)).set_index("method")
    assert "untrained" not in frame.index and "simcse" not in frame.index  # no baseline, paper
    assert frame.loc["sncse", "verdict"] == "reproduced"
    assert frame.loc["sncse", "vs_baseline_low"] > 0
    assert frame.loc["sncse", "paper_delta_text"] == "+2.72 (bert-base-uncased)"
    assert frame.loc["sncse", "paper_delta_inside"] == ""  # another backbone's number
    assert frame.loc["osscse", "verdict"] == "reversed"
    una = frame.loc["una"]  # identical cosines, the same seeds: exactly zero
    assert (una["vs_baseline"], una["vs_baseline_low"], una["vs_baseline_high"]) == (0, 0, 0)
    assert una["verdict"] == "not significant" and una["vs_baseline_ci"] == "[+0.00, +0.00]"
    assert frame.loc["una_baseline", "verdict"] == ""  # UNA prints no such difference
    assert (frame["seeds"] == 2).all()


def test_mixed_test_pairs_are_refused(evals: list[str], tmp_path: Path) -> None:
    other = json.loads(Path(evals[0]).read_text())
    other["details"]["STS12"]["pairs"]["gold"][0] += 1.0
    other["method"] = "sncse_pl"
    bad = tmp_path / "other.json"
    bad.write_text(json.dumps(other))
    with pytest.raises(TableInputError, match=r"other\.json: its STS test pairs differ"):
        verdict_frame([*evals, str(bad)], Options(BASELINES))
    other["details"]["STS12"]["pairs"]["cosine"].pop()
    bad.write_text(json.dumps(other))
    with pytest.raises(TableInputError, match=r"other\.json: details\.STS12\.pairs: 99 cos"):
        verdict_frame([str(bad)], Options(BASELINES))
    other["details"]["STS12"]["pairs"]["cosine"].append(0.0)
    del other["details"]["STS13"]["pairs"]
    bad.write_text(json.dumps(other))
    with pytest.raises(TableInputError, match=r"other\.json: no per-pair cosines for STS13"):
        verdict_frame([str(bad)], Options(BASELINES))


def test_command_writes_every_twin(evals: list[str], tmp_path: Path) -> None:
    out = {ext: tmp_path / f"verdicts.{ext}" for ext in ("tex", "csv", "md")}
    metrics = tmp_path / "metrics.json"
    baselines = [f"{m}={b}" for m, b in BASELINES.items()]
    args = ["table", "verdicts", "--evals", *evals, "--baselines", *baselines]
    args += [f"--{ext}={path}" for ext, path in out.items()] + [f"--metrics={metrics}"]
    assert main(args) == 0
    md = out["md"].read_text()
    assert "| sncse | tiny | 2 | simcse |" in md and "reproduced" in md and "reversed" in md
    assert "Seeds are resampled first" in out["tex"].read_text()
    assert r"95\% CI" in out["tex"].read_text()
    rows = {r["method"]: r for r in csv.DictReader(out["csv"].open())}
    assert rows["una"]["verdict"] == "not significant"
    dvc = json.loads(metrics.read_text())
    assert dvc["una"]["tiny"] == {"delta": 0.0, "verdict": "not significant"}
    assert {r["method"] for r in rows.values() if r["verdict"]} == {
        m for m, by in dvc.items() if "verdict" in by["tiny"]
    }


def test_one_seed_caption_names_the_overlay(tmp_path: Path) -> None:
    files = [_write(tmp_path, "simcse", 42, 1.5), _write(tmp_path, "sncse", 42, 0.5)]
    table = table_spec("verdicts").build(table_spec("verdicts"), files, Options(BASELINES))
    assert "config/three-seeds.yaml" in table.tex and "test-set sampling only" in table.tex


def test_released_checkpoint_gaps(tmp_path: Path) -> None:
    """Released minus paper (evaluation gap) and ours minus released (training gap)."""
    files = [
        _write(tmp_path, "simcse", 1, 1.5, "bert-base-uncased"),
        _write(tmp_path, "simcse", 2, 1.5, "bert-base-uncased"),
        _write(tmp_path, "simcse_checkpoint", 0, 0.5, "bert-base-uncased"),
    ]
    row = checkpoint_frame(files).iloc[0]
    assert (row["method"], row["ours_method"], row["seeds"]) == ("simcse_checkpoint", "simcse", 2)
    assert row["paper"] == 76.25  # SimCSE's own BERT-base number
    assert row["eval_gap"] == pytest.approx(row["released"] - 76.25)
    assert row["training_gap"] == pytest.approx(row["ours"] - row["released"])
    assert row["training_gap"] < 0 and row["training_gap_ci"].endswith("]")
    empty = table_spec("checkpoints").build(table_spec("checkpoints"), files[:2], Options())
    assert "No released checkpoint was evaluated" in empty.tex
