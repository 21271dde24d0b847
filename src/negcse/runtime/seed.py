"""The one seed helper: every random draw in negcse goes through here."""

from __future__ import annotations

import os
import random
from typing import Any

import numpy as np

from negcse.runtime.lazy import torch


def seed_everything(seed: int, deterministic: bool = True) -> None:
    """Seed python, numpy and torch (CPU and CUDA); optionally ask torch for determinism."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    os.environ.setdefault("PYTHONHASHSEED", str(seed))
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def numpy_rng(seed: int, *stream: int) -> np.random.Generator:
    """An independent numpy generator for a named sub-stream (e.g. data order, negatives)."""
    return np.random.default_rng([seed, *stream])


def python_rng(seed: int, *stream: int | str) -> random.Random:
    """An independent Python generator for a named sub-stream (the ``random`` API: randrange,
    sample; what the released data augmentations draw from), seeded from ``seed`` and the
    stream's names (a str seed: hashed with SHA-512, the same on every machine and process)."""
    return random.Random(":".join(str(part) for part in (seed, *stream)))


def rng_state() -> dict[str, Any]:
    """Everything needed to continue every random stream exactly where it stopped, as tensors
    and plain Python values only, so a checkpoint loads with ``torch.load(weights_only=True)``."""
    version, internal, gauss = random.getstate()
    name, keys, pos, has_gauss, cached = np.random.get_state(legacy=True)
    state: dict[str, Any] = {
        "python": [version, torch.tensor(internal, dtype=torch.int64), gauss],
        "numpy": [name, torch.from_numpy(keys.astype(np.int64)), pos, has_gauss, cached],
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(int(v) for v in internal.tolist()), gauss))
    name, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((name, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
