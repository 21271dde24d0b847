"""The training loss and the method's logged parts of it, every ``log_steps`` steps.

Each record goes to the run's log (one line) and to the ``curve`` of ``train_log.json``
(``{"step", "loss", "parts": {name: value}}``), beside the STS-B dev scores, so that
:mod:`negcse.analysis.curves` can plot the loss next to the dev curve. Reading the values is the
step's one host sync; the trainer does it every ``log_steps`` steps only.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from negcse.errors import UserError
from negcse.methods.base import LossOutput

logger = logging.getLogger(__name__)


def loss_record(step: int, out: LossOutput) -> dict[str, Any]:
    """The step, the loss and each logged part as plain floats (a non-finite value stays, so a
    diverging run shows in its log)."""
    parts = {name: float(value) for name, value in out.logs.items()}
    return {"step": step, "loss": float(out.loss.detach()), "parts": parts}


class NonFiniteLoss(UserError):
    """A logged loss (or a part of it) that is NaN or infinite: the run stops where it shows."""


def check_finite(record: dict[str, Any], method: str) -> None:
    """The logged loss and each of its parts is finite, else :class:`NonFiniteLoss` naming the
    step, the method and every value that is not (a run trained on it would end with no model,
    or with weights of NaN)."""
    values = {"loss": record["loss"], **record["parts"]}
    bad = [f"{name} {value}" for name, value in values.items() if not math.isfinite(value)]
    if bad:
        raise NonFiniteLoss(
            f"method '{method}': the loss is not finite at step {record['step']} "
            f"({', '.join(bad)}); stopped, no model written (the resumable state holds the last "
            "checkpoint before it)"
        )


def log_loss(record: dict[str, Any]) -> None:
    """``step 20: loss 1.2345 (infonce 1.2301, bml 0.0044)``: the run's log line."""
    parts = ", ".join(f"{name} {value:.4f}" for name, value in record["parts"].items())
    logger.info(
        "step %d: loss %.4f%s", record["step"], record["loss"], f" ({parts})" if parts else ""
    )
