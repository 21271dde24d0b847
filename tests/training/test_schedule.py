"""The learning-rate schedule the trainer builds from TrainSettings: warmup in steps or as a
ratio, linear decay to a fixed horizon or to the run's end, checked against the formula; GCSE's
stage 1 as its released trainer (``cse_trainer.py`` L95-96)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from negcse.training.settings import TrainSettings
from negcse.training.trainer import make_scheduler
from negcse.workflow.config import project_config, resolve_method

BASE = dict(
    epochs=2,
    batch_size=128,
    learning_rate=1.0e-5,
    max_seq_len=64,
    dropout=0.1,
    scheduler="linear",
    warmup_ratio=0.0,
    weight_decay=0.0,
    max_grad_norm=None,
    max_steps=None,
    eval_steps=125,
    checkpoint_steps=125,
    precision="fp32",
)


def _lrs(settings: TrainSettings, total: int, steps: list[int]) -> dict[int, float]:
    """The LR the optimizer uses at each of ``steps`` (after that many scheduler steps)."""
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=settings.learning_rate)
    sched = make_scheduler(opt, settings, total)
    out = {}
    for step in range(max(steps) + 1):
        if step in steps:
            out[step] = opt.param_groups[0]["lr"]
        opt.step()
        sched.step()
    return out


def test_released_gcse_schedule_warmup_190_horizon_80000():
    """Released stage 2 (gcse_trainer L108): 190 warmup steps, then linear decay over a fixed
    80,000 steps, whatever the run's length (here 1,000 steps)."""
    s = TrainSettings(**BASE, warmup_steps=190, schedule_horizon=80_000)
    lr = _lrs(s, 1000, [0, 95, 190, 500, 999])
    # by hand: step < 190: 1e-5 * step / 190; after: 1e-5 * (80000 - step) / (80000 - 190)
    assert lr[0] == 0.0
    assert lr[95] == pytest.approx(0.5e-5)
    assert lr[190] == pytest.approx(1e-5)
    assert lr[500] == pytest.approx(1e-5 * 79_500 / 79_810)  # 0.99612e-5: nearly constant
    assert lr[999] == pytest.approx(1e-5 * 79_001 / 79_810)


def test_default_schedule_decays_over_the_run():
    s = TrainSettings(**{**BASE, "warmup_ratio": 0.1})
    lr = _lrs(s, 1000, [50, 100, 550, 999])
    assert lr[50] == pytest.approx(0.5e-5)  # warmup: 10% of 1,000 steps
    assert lr[100] == pytest.approx(1e-5)
    assert lr[550] == pytest.approx(0.5e-5)  # (1000 - 550) / 900
    assert lr[999] == pytest.approx(1e-5 / 900)
    constant = TrainSettings(**{**BASE, "scheduler": "constant"}, warmup_steps=10)
    assert _lrs(constant, 1000, [5, 10, 900]) == pytest.approx({5: 0.5e-5, 10: 1e-5, 900: 1e-5})


def test_unset_schedule_keys_stay_out_of_run_specs():
    assert "warmup_steps" not in TrainSettings(**BASE).to_dict()
    spec = TrainSettings(**BASE, warmup_steps=190, schedule_horizon=80_000).to_dict()
    assert (spec["warmup_steps"], spec["schedule_horizon"]) == (190, 80_000)


STAGE1 = ("gcse_stage1", "gcse_wo_stage2", "gcse_stage1_wo_general", "gcse_stage1_wo_domain")


@pytest.fixture(scope="module")
def params() -> dict:
    return project_config(Path(__file__).resolve().parents[2])


@pytest.mark.parametrize("backbone", ["bert-base-uncased", "roberta-large"])
def test_stage1_trains_as_the_released_cse_trainer(params: dict, backbone: str) -> None:
    """cse_trainer.py L95-96: Adam (weight decay 0) and get_linear_schedule_with_warmup(opt,
    190, 80000), whatever the run's length; no autocast, no clipping; README: lr 2e-5, batch
    64, 3 epochs, 32 tokens. On wiki1m a run is 3 x 15,625 = 46,875 steps, so the LR never
    gets near 0: by hand lr(t) = 2e-5 t / 190 below 190, else 2e-5 (80000 - t) / 79810."""
    for method in STAGE1:
        spec = resolve_method(params, method, backbone)
        assert spec["implementation"] == "gcse_stage1"
        assert spec["params"]["augmentation"] == "word_doubling"
        s = TrainSettings.from_dict(spec["train"])
        assert (s.batch_size, s.learning_rate, s.epochs, s.max_seq_len) == (64, 2e-5, 3, 32)
        assert (s.precision, s.max_grad_norm, s.weight_decay, s.data_order) == (
            "fp32",
            None,
            0.0,
            "fixed",
        )
    s = TrainSettings.from_dict(resolve_method(params, "gcse_stage1", backbone)["train"])
    total = 3 * math.ceil(1_000_000 / 64)
    lr = _lrs(s, total, [0, 95, 189, 190, 15_625, total - 1])
    assert lr[0] == 0.0
    assert lr[95] == pytest.approx(1e-5)
    assert lr[189] == pytest.approx(2e-5 * 189 / 190)
    assert lr[190] == pytest.approx(2e-5)
    assert lr[15_625] == pytest.approx(2e-5 * 64_375 / 79_810)  # end of epoch 1: 0.8066 of peak
    assert lr[total - 1] == pytest.approx(2e-5 * 33_126 / 79_810)  # last step: 0.4151 of peak
