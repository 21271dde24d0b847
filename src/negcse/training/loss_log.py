"""The training loss and the method's logged parts of it, every ``log_steps`` steps.

Each record goes to the run's log (one line) and to the ``curve`` of ``train_log.json``
(``{"step", "loss", "parts": {name: value}}``), beside the STS-B dev scores, so that
:mod:`negcse.analysis.curves` can plot the loss next to the dev curve. Reading the values is the
step's one host sync; the trainer does it every ``log_steps`` steps only.
"""

from __future__ import annotations

import logging
from typing import Any

from negcse.methods.base import LossOutput

logger = logging.getLogger(__name__)


def loss_record(step: int, out: LossOutput) -> dict[str, Any]:
    """The step, the loss and each logged part as plain floats (a non-finite value stays, so a
    diverging run shows in its log)."""
    parts = {name: float(value) for name, value in out.logs.items()}
    return {"step": step, "loss": float(out.loss.detach()), "parts": parts}


def log_loss(record: dict[str, Any]) -> None:
    """``step 20: loss 1.2345 (infonce 1.2301, bml 0.0044)``: the run's log line."""
    parts = ", ".join(f"{name} {value:.4f}" for name, value in record["parts"].items())
    logger.info(
        "step %d: loss %.4f%s", record["step"], record["loss"], f" ({parts})" if parts else ""
    )
