"""Training curves: STS-B dev Spearman against steps, from a model folder's ``train_log.json``.

The trainer's ``curve`` list holds ``{step, stsb_dev}`` at every evaluation and other entries
(``{step, seconds}`` when training ends), which are skipped.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from pathlib import Path

from negcse.errors import UserError
from negcse.finite import finite
from negcse.io_utils import read_json


class CurveError(UserError, ValueError):
    """A training log that cannot be drawn; the message names the file and key."""


@dataclass(frozen=True)
class Curve:
    method: str
    backbone: str
    seed: int
    steps: list[int]
    stsb_dev: list[float]
    best_step: int | None


def read_curve(model_dir: str | os.PathLike[str]) -> Curve:
    """The ``curve`` list ({step, stsb_dev}) and run tags of a trained model folder."""
    path = Path(model_dir) / "train_log.json"
    if not path.is_file() and not path.parent.is_file():
        raise CurveError(f"{path}: no training log (is {model_dir} a trained model?)")
    log = read_json(path)
    for key in ("curve", "method", "backbone", "seed"):
        if key not in log:
            raise CurveError(f"{path}: key '{key}' missing")
    if not isinstance(log["curve"], list) or not isinstance(log["seed"], int):
        raise CurveError(f"{path}: curve must be a list and seed an integer")
    for i, point in enumerate(log["curve"]):
        if not isinstance(point, dict) or not isinstance(point.get("step"), int):
            raise CurveError(f"{path}: curve[{i}] has no integer 'step'")
    # the trainer also logs other entries (e.g. {step, seconds} at the end): dev scores only
    points = sorted((p for p in log["curve"] if "stsb_dev" in p), key=lambda p: p["step"])
    if not points:
        raise CurveError(f"{path}: the curve has no 'stsb_dev' entry")
    return Curve(
        method=str(log["method"]),
        backbone=str(log["backbone"]),
        seed=log["seed"],
        steps=[p["step"] for p in points],
        stsb_dev=[finite(p["stsb_dev"], f"{path}: curve, step {p['step']}") for p in points],
        best_step=log.get("best_step"),
    )


CURVE_COLUMNS = ("method", "backbone", "seed", "step", "stsb_dev")


def curve_rows(curves: list[Curve]) -> list[dict[str, str | int | float]]:
    """One row per evaluation of every run (long format: the `dvc plots` data of the STS-B dev
    training curves), ordered by method, backbone, seed and step."""
    runs = sorted(curves, key=lambda c: (c.method, c.backbone, c.seed))
    for a, b in itertools.pairwise(runs):
        if (a.method, a.backbone, a.seed) == (b.method, b.backbone, b.seed):
            raise CurveError(f"two training logs for {a.method}/{a.backbone}/seed{a.seed}")
    return [
        {"method": c.method, "backbone": c.backbone, "seed": c.seed, "step": s, "stsb_dev": d}
        for c in runs
        for s, d in zip(c.steps, c.stsb_dev, strict=True)
    ]
