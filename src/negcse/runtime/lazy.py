"""``torch`` and ``torch.nn.functional``, imported on their first attribute access.

The methods, poolers and losses use these names, so that importing them does not import torch
(~3 CPU-s). The Snakefile's parse reads the method registry (each method's params, columns and
guides) for every config, in every Snakemake process: on a SLURM cluster each job runs two.
Type checkers see the real modules. ``tests/workflow/test_dry_runs.py`` checks the parse does not
import torch.

A negcse module that imports torch, spaCy, mteb or matplotlib and that only one path needs is
bound the same way at the top of the module that uses it, not imported inside a function::

    if TYPE_CHECKING:
        from negcse.generators import san
    else:  # torch: imported when the command runs, not for --help
        san = LazyModule("negcse.generators.san")

so that ``negcse <command> --help`` and the Snakefile's parse stay fast and the dependency stays
visible: ``tests/test_layers.py`` reads such a binding as an import of that module.

The commands that need torch, transformers or nltk only in ``run()`` (``train``, the paraphrase
and TF-IDF generators) hold those modules as ``LazyModule("negcse....")`` under that
``if TYPE_CHECKING: import ... else: ... = LazyModule(...)`` pattern, so ``negcse <command>
--help`` imports none of them (``tests/test_cli_help.py``).
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any


class LazyModule:
    """Stands for the module ``name``: every attribute is read from it, imported on first use.
    (``__getattribute__``, not ``__getattr__``: no failed lookup first, ~0.2 µs an access.)"""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)

    def __getattribute__(self, attr: str) -> Any:
        name = object.__getattribute__(self, "_name")
        return getattr(sys.modules.get(name) or importlib.import_module(name), attr)

    def __repr__(self) -> str:
        return f"<lazy module {object.__getattribute__(self, '_name')!r}>"


if TYPE_CHECKING:
    import torch as torch
    import torch.nn.functional as F
else:
    torch = LazyModule("torch")
    F = LazyModule("torch.nn.functional")

__all__ = ["F", "LazyModule", "torch"]
