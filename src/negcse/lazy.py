"""``torch`` and ``torch.nn.functional``, imported on their first attribute access.

The methods, poolers and losses use these names, so that importing them does not import torch
(~3 CPU-s). The Snakefile's parse reads the method registry (each method's params, columns and
guides) for every config, in every Snakemake process: on a SLURM cluster each job runs two.
Type checkers see the real modules. ``tests/workflow/test_dry_runs.py`` checks the parse does not
import torch.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any


class LazyModule(ModuleType):
    """Stands for the module ``name``; each attribute is read from it, imported on first use."""

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.__name__), attr)


if TYPE_CHECKING:
    import torch as torch
    import torch.nn.functional as F
else:
    torch = LazyModule("torch")
    F = LazyModule("torch.nn.functional")

__all__ = ["F", "LazyModule", "torch"]
