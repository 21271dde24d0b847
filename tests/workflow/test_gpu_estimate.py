"""The dry run's GPU-hours estimate (negcse.workflow.gpu_estimate) against a hand computation, and the
shipped grid configs."""

from __future__ import annotations

from pathlib import Path

import pytest

from negcse.workflow.config import load_config
from negcse.workflow.gpu_estimate import (
    LARGE_FACTOR,
    estimate,
    format_table,
    gpu_generators,
    load_costs,
)

REPO = Path(__file__).resolve().parents[2]

COSTS = """kind,name,precision,batch_size,options,seconds,device
train_step,simcse,fp16,64,,0.02,Test GPU
train_step,simcse,fp16,64,compile+static_padding,0.01,Test GPU
train_step,simcse,fp32,64,,0.05,Test GPU
train_step,simcse_san,fp16,64,,0.03,Test GPU
train_step,sncse,fp32,256,,0.3,Test GPU
dev_eval,stsb_dev,fp16,128,,0.1,Test GPU
dev_eval,stsb_dev,fp32,128,,0.3,Test GPU
eval_job,evaluate_model,fp16,128,,60,Test GPU
generator_sentence,san_negatives,,,,0.001,Test GPU
"""


@pytest.fixture
def costs(tmp_path: Path):
    path = tmp_path / "costs.csv"
    path.write_text(COSTS)
    return load_costs(path)


def _config(methods: list[str]) -> dict:
    config = load_config(REPO / "params.yaml")
    config["grid"] = {
        "methods": methods,
        "backbones": ["bert-base-uncased", "bert-large-uncased"],
        "seeds": [1, 2],
    }
    return config


def test_estimate_matches_a_hand_computation(costs) -> None:
    rows = estimate(_config(["simcse", "sncse"]), costs, 6400, {"san_negatives": 3})
    by = {r.name: r for r in rows}
    # simcse: 100 steps of batch 64 (fp16: the eager row, not the compiled one), eval every 125
    # steps -> 1 dev evaluation (the final one); BERT-large costs LARGE_FACTOR times as much
    per_run = 100 * 0.02 + 1 * 0.1
    assert by["simcse"].train_h == pytest.approx(2 * per_run * (1 + LARGE_FACTOR) / 3600)
    assert by["simcse"].eval_h == pytest.approx(2 * 60 * (1 + LARGE_FACTOR) / 3600)
    assert by["simcse"].jobs == 8  # 2 backbones x 2 seeds x (train + evaluation)
    # sncse base: batch 256 fp32, 25 steps; large: batch 128 (params.yaml) -> half the step
    base, large = 25 * 0.3 + 0.3, 50 * 0.15 + 0.3
    assert by["sncse"].train_h == pytest.approx(2 * (base + large * LARGE_FACTOR) / 3600)
    assert by["untrained baselines"].eval_h == pytest.approx(60 * (1 + LARGE_FACTOR) / 3600)
    assert by["generator: san_negatives"].train_h == pytest.approx(0.001 * 6400 * 3 / 3600)
    table = format_table(rows, costs, 6400, "costs.csv")
    assert "Test GPU" in table and table.splitlines()[-2].startswith("total")
    total = sum(r.total_h for r in rows)
    assert f"{total:.1f}" in table.splitlines()[-2]


def test_unmeasured_precision_is_priced_by_simcse_ratio_and_unmeasured_method_flagged(
    costs,
) -> None:
    # simcse_san on bert-large runs fp32 (params.yaml); only fp16 was measured for it
    assert costs.step_seconds("simcse_san", "fp32", 64) == pytest.approx(0.03 * 0.05 / 0.02)
    assert costs.step_seconds("simcse_san", "fp16", 128) == pytest.approx(0.06)
    assert costs.step_seconds("osscse", "fp16", 64) is None
    # SNCSE's ablations keep its prompt views: priced as sncse
    assert costs.step_seconds("sncse_nl", "fp32", 256) == pytest.approx(0.3)
    rows = estimate(_config(["osscse"]), costs, 6400, {})
    assert rows[0].unpriced and "no measured cost" in format_table(rows, costs, 6400, "x")


def test_bad_cost_row_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "costs.csv"
    path.write_text(COSTS.replace("0.3,Test GPU\ndev_eval", "fast,Test GPU\ndev_eval"))
    with pytest.raises(ValueError, match=r"costs.csv, line 6: bad cost row"):
        load_costs(path)


def test_generator_outputs_are_counted_once_per_distinct_file() -> None:
    config = {"generators": {"osscse_paraphrase": {"source": "backtranslation"}}}
    paths = [("san", "a"), ("san", "a"), ("san", "b"), ("paraphrase_osscse", "c"), ("x", "d")]
    assert gpu_generators(config, paths) == {"san_negatives": 2, "back_translation": 1}
    config = {"generators": {"osscse_paraphrase": {"source": "surface_edits"}}}
    assert gpu_generators(config, paths) == {"san_negatives": 2}


def test_default_grid_is_every_configured_method_and_configfiles_select() -> None:
    config = load_config(REPO / "params.yaml")
    grid = config["grid"]["methods"]
    # every configured method is in the grid, but a stage-1 run that is only another's guide
    guided = {
        g["method"]
        for m in grid
        for g in (config["methods"][m].get("guides") or {}).values()
        if "method" in g
    }
    assert grid == [m for m in config["methods"] if m in grid or m not in guided]
    assert set(config["methods"]) - set(grid) == {
        "gcse_stage1",
        "gcse_stage1_wo_general",
        "gcse_stage1_wo_domain",
    }
    assert len(config["grid"]["backbones"]) == 4
    for name in ("simcse-only", "main-methods"):
        small = load_config(REPO / "params.yaml", REPO / "config" / f"{name}.yaml")
        assert set(small["grid"]["methods"]) < set(config["methods"])


def test_unmeasured_evaluation_job_is_said(tmp_path: Path) -> None:
    path = tmp_path / "costs.csv"
    path.write_text("\n".join(line for line in COSTS.splitlines() if "eval_job" not in line))
    costs = load_costs(path)
    rows = estimate(_config(["simcse"]), costs, 6400, {})
    assert rows[0].eval_h == 0.0
    assert "the evaluation jobs (eval h = 0" in format_table(rows, costs, 6400, "x")
