"""Where models run: the ``device`` setting (``auto`` | ``cuda`` | ``cpu``), never a silent fallback.

The setting comes from the argument, else ``$NEGCSE_DEVICE`` (the workflow exports the config's
``device`` key to every job: params.yaml ``device``, ``--config device=...``; the GPU profiles
set ``cuda``), else ``auto``. ``cuda`` where torch sees no CUDA GPU is a :class:`DeviceError`
whose one line says why (a CPU build of torch, no GPU visible) and what to run; ``auto`` takes
CUDA when torch sees a GPU, else the CPU, and logs which and why. The choice is recorded with a
trained model (``negcse.json``: ``device``, ``device_setting``).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

import torch

from negcse.errors import UserError

logger = logging.getLogger(__name__)

DEVICE_ENV = "NEGCSE_DEVICE"
SETTINGS = ("auto", "cuda", "cpu")


class DeviceError(UserError):
    """The setting asks for a device this process cannot use (one line: why, and the fix)."""


@dataclass(frozen=True)
class DeviceChoice:
    device: torch.device
    setting: str  # auto | cuda | cpu, as requested
    reason: str  # one phrase: why this device


def requested(setting: str | None = None) -> str:
    """The setting in force: ``setting``, else ``$NEGCSE_DEVICE``, else ``auto``."""
    value = (setting or os.environ.get(DEVICE_ENV) or "auto").strip().lower()
    base, _, index = value.partition(":")  # cuda:1 names one GPU
    if base not in SETTINGS or (index and (base != "cuda" or not index.isdigit())):
        where = "the device setting" if setting else f"${DEVICE_ENV}"
        raise DeviceError(f"{where}: '{value}' is not one of {', '.join(SETTINGS)}")
    return value


def cuda_missing() -> str | None:
    """Why torch cannot use a CUDA GPU here (one phrase), or None when it can."""
    if torch.cuda.is_available():
        return None
    if torch.version.cuda is None:
        return (
            f"torch {torch.__version__} is a CPU build (the CUDA lock installs the GPU one: "
            "make setup LOCK=locks/cuda.txt)"
        )
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    hidden = f"; CUDA_VISIBLE_DEVICES='{visible}'" if visible is not None else ""
    return (
        f"torch {torch.__version__} (CUDA {torch.version.cuda}) sees no GPU{hidden} (no GPU "
        "on this machine, or its NVIDIA driver is missing or older than the CUDA build needs)"
    )


def choose(setting: str | None = None) -> DeviceChoice:
    """The device for ``setting`` (see the module doc); ``cuda`` without CUDA raises."""
    want = requested(setting)
    if want == "cpu":
        return DeviceChoice(torch.device("cpu"), want, "the setting says cpu")
    missing = cuda_missing()
    if want.startswith("cuda"):
        if missing is not None:
            raise DeviceError(
                f"device '{want}' is required (the device setting: a GPU profile, params.yaml "
                f"device or ${DEVICE_ENV}) but {missing}; check with `python -m negcse doctor`, "
                "or run on the CPU with device: cpu"
            )
        return DeviceChoice(torch.device(want), want, "the setting says cuda")
    if missing is None:
        return DeviceChoice(torch.device("cuda"), want, "auto: torch sees a CUDA GPU")
    return DeviceChoice(torch.device("cpu"), want, f"auto: no CUDA GPU: {missing}")


def resolve_device(setting: str | None = None) -> torch.device:
    """:func:`choose`'s device; an ``auto`` choice is logged with its reason."""
    choice = choose(setting)
    if choice.setting == "auto":
        logger.info("device %s (%s)", choice.device.type, choice.reason)
    return choice.device
