"""The resumable state of a training (``last.pt``) and its best weights (``best.pt``): loaded
without unpickling objects, then validated as a whole before any of it is used.

A file that does not load (damaged: ``corrupt``; holding objects other than tensors and plain
data: ``refused``) or that loads but cannot resume this run (``invalid``: a key missing or
unexpected, a tensor of another shape, a NaN weight, malformed RNG state, a step beyond the
run's length) is moved beside the checkpoint folder (``<folder>.<reason>.pt``, best weights
``<folder>.best-<reason>.pt``) with one logged line saying why, and training starts from scratch.
A state recorded under other settings is not invalid: the trainer compares its fingerprint
(:mod:`negcse.training.fingerprint`) first.
"""

from __future__ import annotations

import logging
import math
import os
import pickle
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import torch

from negcse.runtime.seed import rng_state, set_rng_state

logger = logging.getLogger(__name__)

#: what the trainer writes into ``last.pt``
STATE_KEYS = frozenset(
    {"model", "optimizer", "scheduler", "scaler", "rng", "method", "state", "settings", "seed",
     "fingerprint"}
)  # fmt: skip


class Unloadable(Exception):
    """A checkpoint file that cannot be used: ``reason`` names the kind (corrupt, refused,
    invalid), ``why`` says what is wrong, in one line."""

    def __init__(self, reason: str, why: str) -> None:
        super().__init__(reason, why)
        self.reason, self.why = reason, why


_GLOBAL = re.compile(r"Unsupported global: GLOBAL ([\w.]+)")


def load_plain(path: Path) -> Any:
    """``torch.load`` of tensors and plain data only; :class:`Unloadable` says why not, in
    one line (never torch's advice to load with ``weights_only=False``)."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        found = _GLOBAL.search(str(exc))
        what = f" (it would call {found.group(1)})" if found else ""
        why = f"it holds objects other than tensors and plain data{what}"
        raise Unloadable("refused", why) from None
    except Exception as exc:  # torch raises several unrelated types for a damaged archive
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        raise Unloadable("corrupt", f"{type(exc).__name__}: {first}") from None


def set_aside(path: Path, exc: Unloadable, tag: str = "") -> None:
    """Move an unusable checkpoint file beside its folder (``<folder>.<tag><reason>.pt``)."""
    aside = path.parent.with_name(f"{path.parent.name}.{tag}{exc.reason}.pt")
    os.replace(path, aside)
    logger.error(
        "checkpoint %s not loaded (%s): %s; moved to %s, training starts from scratch",
        path,
        exc.reason,
        exc.why,
        aside,
    )


def load_checkpoint(path: Path) -> dict[str, Any] | None:
    """The resumable state in ``path`` (tensors and plain data only: never unpickles an object,
    so a checkpoint received through DVC cannot run code). A file that is corrupt, or that holds
    anything else, is reported and moved aside (``<checkpoint folder>.<reason>.pt``); None is
    returned and training starts from scratch."""
    try:
        payload = load_plain(path)
        if not isinstance(payload, dict) or not {"settings", "seed", "rng"} <= payload.keys():
            raise Unloadable("corrupt", "ValueError: not a negcse training state")
        return payload
    except Unloadable as exc:
        set_aside(path, exc)
        return None


# -- validation: each check returns why the part cannot be used, or None ------------------------


def check_weights(weights: Any, expected: Mapping[str, torch.Tensor]) -> str | None:
    """A state dict with exactly the ``expected`` keys, each a tensor of its shape and dtype
    kind, every floating value finite."""
    if not isinstance(weights, Mapping):
        return f"the weights are a {type(weights).__name__}, not a state dict"
    missing, extra = expected.keys() - weights.keys(), weights.keys() - expected.keys()
    if missing or extra:
        parts = [f"missing {sorted(missing)[:3]}" if missing else "",
                 f"unexpected {sorted(extra)[:3]}" if extra else ""]  # fmt: skip
        return "weights of another model: " + ", ".join(p for p in parts if p)
    for key, want in expected.items():
        got = weights[key]
        if not isinstance(got, torch.Tensor):
            return f"weight {key} is a {type(got).__name__}, not a tensor"
        if got.shape != want.shape:
            return f"weight {key} has shape {tuple(got.shape)}, the model {tuple(want.shape)}"
        if got.is_floating_point() != want.is_floating_point():
            return f"weight {key} is {got.dtype}, the model {want.dtype}"
        if got.is_floating_point() and not bool(torch.isfinite(got).all()):
            return f"weight {key} holds NaN or infinite values"
    return None


def _check_optimizer(
    saved: Any, current: Mapping[str, Any], params: list[torch.Tensor]
) -> str | None:
    """The optimizer's groups hold the model's parameters as now; each parameter's state
    tensors (moments) have its shape and finite values."""
    if not isinstance(saved, Mapping) or not {"state", "param_groups"} <= saved.keys():
        return "the optimizer state is malformed"
    groups, now = saved["param_groups"], current["param_groups"]
    if not isinstance(groups, list) or len(groups) != len(now):
        return "the optimizer state has another number of parameter groups"
    for group, want in zip(groups, now, strict=True):
        if not isinstance(group, Mapping) or group.get("params") != want["params"]:
            return "the optimizer state holds other parameters than the model's"
        for key in ("lr", "weight_decay"):
            if not _finite_number(group.get(key)):
                return f"the optimizer's {key} is {group.get(key)!r}"
    state = saved["state"]
    if not isinstance(state, Mapping):
        return "the optimizer state is malformed"
    for index, entry in state.items():
        if (
            not isinstance(index, int)
            or not 0 <= index < len(params)
            or not isinstance(entry, Mapping)
        ):
            return f"the optimizer state has an entry for no parameter ({index!r})"
        for name, value in entry.items():
            if not isinstance(value, torch.Tensor):
                continue
            if value.numel() > 1 and value.shape != params[index].shape:
                return (
                    f"the optimizer's {name} of parameter {index} has shape "
                    f"{tuple(value.shape)}, the parameter {tuple(params[index].shape)}"
                )
            if value.is_floating_point() and not bool(torch.isfinite(value).all()):
                return f"the optimizer's {name} of parameter {index} holds NaN or infinite values"
    return None


def _finite_number(value: Any) -> bool:
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_progress(
    state: Any, state_fields: set[str], step_of_scheduler: Any, total: int, every: CurveSteps
) -> str | None:
    """The trainer's progress: a step within the run, a best step at or before it with a finite
    score (or none yet), a curve of finite numbers holding what the run logged up to its step
    (:func:`_check_curve`), the scheduler at the same step."""
    if not isinstance(state, Mapping) or set(state) != state_fields:
        return "the progress record (state) has other keys than the trainer's"
    step, best_step, best = state["step"], state["best_step"], state["best_score"]
    if not isinstance(step, int) or not 0 <= step <= total:
        return f"its step {step!r} is beyond this run's {total} steps"
    if not isinstance(best_step, int) or not -1 <= best_step <= step:
        return f"its best step {best_step!r} is not between -1 and its step {step}"
    if best_step >= 0 and not _finite_number(best):
        return f"its best score {best!r} is not a finite number"
    curve = state["curve"]
    if not isinstance(curve, list) or not all(
        isinstance(p, Mapping) and all(_finite_entry(v) for v in p.values()) for p in curve
    ):
        return "its curve is not a list of finite numbers"
    why = _check_curve(curve, step, every, best_step, best)
    if why is not None:
        return why
    if step_of_scheduler != step:
        return f"its scheduler is at step {step_of_scheduler!r}, its training at {step}"
    return None


@dataclass(frozen=True)
class CurveSteps:
    """How often a run logs its loss and scores its dev set (its ``log_steps``, ``eval_steps``)."""

    log: int
    dev: int

    def expected(self, step: int) -> list[tuple[int, str]]:
        """(step, kind) of every curve entry a run writes up to ``step``, in order: the loss
        every ``log`` steps, then the dev score every ``dev`` steps."""
        out = []
        for at in range(1, step + 1):
            out += [(at, "loss")] * (at % self.log == 0) + [(at, "stsb_dev")] * (at % self.dev == 0)
        return out


def _check_curve(
    curve: list[Mapping[str, Any]], step: int, every: CurveSteps, best_step: int, best: Any
) -> str | None:
    """The curve holds exactly the entries the run wrote up to ``step`` (none lost, none beyond
    it, none twice), and its best dev score is the recorded best at the best step."""
    kinds = ("stsb_dev", "loss")
    found = [(p.get("step"), next((k for k in kinds if k in p), "other")) for p in curve]
    wanted = every.expected(step)
    if found != wanted:
        beyond = [at for at, _ in found if not isinstance(at, int) or at > step]
        if beyond:
            return f"its curve has entries beyond its step {step} (at {beyond[0]!r})"
        return (
            f"its curve holds {len(found)} entries where the run wrote {len(wanted)} up to step "
            f"{step} (log every {every.log}, dev every {every.dev} steps)"
        )
    scores = [(p["stsb_dev"], p["step"]) for p in curve if "stsb_dev" in p]
    top = max(scores, key=lambda s: s[0], default=None)  # the first of equal scores
    if (top is not None or best_step >= 0) and (top is None or top != (best, best_step)):
        return f"its best score {best!r} at step {best_step} is not its curve's best {top!r}"
    return None


def _check_rng(saved: Any) -> str | None:
    """The random generators' state restores (tried, then the current state put back)."""
    if not isinstance(saved, Mapping) or not {"python", "numpy", "torch"} <= saved.keys():
        return "its random-generator state is malformed"
    before = rng_state()
    try:
        set_rng_state(dict(saved))
    except Exception as exc:  # torch, numpy and random raise unrelated types
        return f"its random-generator state does not restore ({type(exc).__name__})"
    finally:
        set_rng_state(before)
    return None


def _finite_entry(value: Any) -> bool:
    """A curve entry's value: a finite number, or a group of them (a logged loss's parts)."""
    if isinstance(value, Mapping):
        return all(_finite_number(v) for v in value.values())
    return _finite_number(value)


def resume_problem(
    payload: Mapping[str, Any],
    *,
    model: Mapping[str, torch.Tensor],
    optimizer: torch.optim.Optimizer,
    scheduler: Any,
    scaler: Any,
    state_type: type,
    total_steps: int,
    every: CurveSteps,
) -> str | None:
    """Why ``payload`` (a loaded ``last.pt``) cannot resume the run whose model state dict,
    optimizer, scheduler, grad scaler (None: none), progress dataclass and length are given;
    None when every part can be used as it is."""
    if set(payload) != STATE_KEYS:
        extra, missing = sorted(set(payload) - STATE_KEYS), sorted(STATE_KEYS - set(payload))
        return f"not this trainer's state (unexpected keys {extra}, missing {missing})"
    params = [p for group in optimizer.param_groups for p in group["params"]]
    scheduler_state = payload["scheduler"]
    if not isinstance(scheduler_state, Mapping) or set(scheduler_state) != set(
        scheduler.state_dict()
    ):
        return "the scheduler state is malformed"
    if (payload["scaler"] is None) != (scaler is None) or (
        scaler is not None and not isinstance(payload["scaler"], Mapping)
    ):
        return "the grad-scaler state does not match this run's precision"
    if not isinstance(payload["method"], Mapping):
        return "the method's state is malformed"
    progress = {f.name for f in fields(state_type)}
    return (
        check_weights(payload["model"], model)
        or _check_optimizer(payload["optimizer"], optimizer.state_dict(), params)
        or _check_progress(
            payload["state"], progress, scheduler_state.get("last_epoch"), total_steps, every
        )
        or _check_rng(payload["rng"])
    )


def best_weights_usable(path: Path, expected: Mapping[str, torch.Tensor]) -> bool:
    """Whether the best weights ``path`` of a resumed state load as a state dict of the model
    (``expected``: keys, shapes, finite values). If not (tampered, damaged, missing) the run
    cannot re-derive them: the file is moved aside (``<checkpoint folder>.best-<reason>.pt``)
    and training restarts."""
    if not path.is_file():
        logger.error("checkpoint %s is missing; training starts from scratch", path)
        return False
    try:
        why = check_weights(load_plain(path), expected)
        if why is not None:
            raise Unloadable("corrupt", f"not the state dict of this model ({why})")
        return True
    except Unloadable as exc:
        set_aside(path, exc, "best-")
        return False
