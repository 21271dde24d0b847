"""Training curves from a model folder's ``train_log.json``: STS-B dev Spearman against steps,
and the training loss with each part the method logs.

The trainer's ``curve`` list holds ``{step, stsb_dev}`` at every evaluation, ``{step, loss,
parts}`` every ``log_steps`` steps (:mod:`negcse.training.loss_log`) and other entries
(``{step, seconds}`` when training ends), which are skipped.
"""

from __future__ import annotations

import itertools
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from negcse.errors import UserError
from negcse.finite import finite
from negcse.io_utils import read_json
from negcse.text.display import family, method_name
from negcse.training.model_record import check_model_record


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
    #: "loss" and each logged part -> its (step, value) points, in step order
    losses: dict[str, list[tuple[int, float]]] = field(default_factory=dict)


def read_curve(model_dir: str | os.PathLike[str]) -> Curve:
    """The ``curve`` list ({step, stsb_dev}) and run tags of a trained model folder."""
    path = Path(model_dir) / "train_log.json"
    if not path.is_file() and not path.parent.is_file():
        raise CurveError(f"{path}: no training log (is {model_dir} a trained model?)")
    log = read_json(path)
    if "curve" not in log:
        raise CurveError(f"{path}: key 'curve' missing")
    try:  # the run's record (negcse.json's keys): method and backbone names, a seed
        check_model_record(log, path, run=True)
    except UserError as exc:
        raise CurveError(str(exc)) from None
    if not isinstance(log["curve"], list):
        raise CurveError(f"{path}: curve must be a list")
    for i, point in enumerate(log["curve"]):
        step = point.get("step") if isinstance(point, dict) else None
        if not isinstance(step, int) or isinstance(step, bool) or step < 0:
            raise CurveError(f"{path}: curve[{i}] has no 'step' (an integer >= 0)")
    # the trainer also logs other entries (e.g. {step, seconds} at the end): dev scores only
    points = sorted((p for p in log["curve"] if "stsb_dev" in p), key=lambda p: p["step"])
    if not points:
        raise CurveError(f"{path}: the curve has no 'stsb_dev' entry")
    logged = sorted((p for p in log["curve"] if "loss" in p), key=lambda p: p["step"])
    for kind, entries in (("stsb_dev", points), ("loss", logged)):
        for a, b in itertools.pairwise(entries):
            if a["step"] == b["step"]:
                raise CurveError(f"{path}: curve: two '{kind}' entries at step {a['step']}")
    losses: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for point in logged:
        parts = point.get("parts", {})
        if not isinstance(parts, dict):
            raise CurveError(
                f"{path}: curve, step {point['step']}: 'parts' must be an object of the loss's "
                f"named parts, got a {type(parts).__name__}"
            )
        for name, value in {"loss": point["loss"], **parts}.items():
            losses[name].append(
                (int(point["step"]), finite(value, f"{path}: curve, step {point['step']}, {name}"))
            )
    return Curve(
        method=str(log["method"]),
        backbone=str(log["backbone"]),
        seed=log["seed"],
        steps=[p["step"] for p in points],
        stsb_dev=[_score(p["stsb_dev"], f"{path}: curve, step {p['step']}") for p in points],
        best_step=log.get("best_step"),
        losses=dict(losses),
    )


def _score(value: object, where: str) -> float:
    """A dev score: a Spearman correlation x100, finite and from -100 to 100."""
    score = finite(value, where)
    if not -100 <= score <= 100:
        raise CurveError(
            f"{where}: stsb_dev {score!r} is no Spearman correlation x100 (-100 to 100)"
        )
    return score


CURVE_COLUMNS = ("method", "name", "family", "backbone", "seed", "step", "stsb_dev")
LOSS_COLUMNS = ("method", "name", "family", "backbone", "seed", "step", "quantity", "value")


def _runs(curves: list[Curve]) -> list[Curve]:
    """The runs ordered by method, backbone and seed; two logs of one run are an error."""
    runs = sorted(curves, key=lambda c: (c.method, c.backbone, c.seed))
    for a, b in itertools.pairwise(runs):
        if (a.method, a.backbone, a.seed) == (b.method, b.backbone, b.seed):
            raise CurveError(f"two training logs for {a.method}/{a.backbone}/seed{a.seed}")
    return runs


def _tags(c: Curve) -> dict[str, str | int]:
    return {"method": c.method, "name": method_name(c.method), "family": family(c.method).label,
            "backbone": c.backbone, "seed": c.seed}  # fmt: skip


def curve_rows(curves: list[Curve]) -> list[dict[str, str | int | float]]:
    """One row per evaluation of every run (long format: the `dvc plots` data of the STS-B dev
    training curves), ordered by method, backbone, seed and step; ``name`` is the method as
    the tables name it and ``family`` its family (:mod:`negcse.text.display`), which the plots
    facet by."""
    return [
        {**_tags(c), "step": s, "stsb_dev": d}
        for c in _runs(curves)
        for s, d in zip(c.steps, c.stsb_dev, strict=True)
    ]


def loss_rows(curves: list[Curve]) -> list[dict[str, str | int | float]]:
    """One row per logged step and quantity (the loss, each logged part) of every run: the
    `dvc plots` data of the training losses, ordered as :func:`curve_rows`."""
    return [
        {**_tags(c), "step": step, "quantity": name, "value": value}
        for c in _runs(curves)
        for name, points in c.losses.items()
        for step, value in points
    ]
