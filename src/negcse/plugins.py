"""Plug-ins: methods, generators, evaluations and tables from installed packages.

A package outside negcse (your own repository, ``pip install -e .``) declares Python entry
points in one of four groups (:data:`GROUPS`); each registry loads its group after its built-in
modules, in every process that reads it (the Snakefile's parse, every job, ``negcse ...``)::

    [project.entry-points."negcse.methods"]
    my_method = "my_package.method"        # a module: importing it registers (``@register``)
    [project.entry-points."negcse.generators"]
    my_negatives = "my_package.negatives:SPEC"   # or the object itself: a GeneratorSpec
    [project.entry-points."negcse.evaluations"]
    my_eval = "my_package.evaluation:MyEvaluation"   # an Evaluation subclass
    [project.entry-points."negcse.tables"]
    my_table = "my_package.tables:TABLE"             # a TableSpec (or a list of them)

An entry point naming a module is imported (its ``register`` calls do the work); one naming an
object is handed to the registry's ``register``. A plug-in that fails to import (whatever it
raises, ``SystemExit`` included; a ``KeyboardInterrupt`` stops the process), that the registry
refuses or cannot read (not its kind, a name the package already has, an attribute missing), stops
the process with one error naming the entry point and the distribution it comes from.
"""

from __future__ import annotations

import contextlib
import io
import logging
import sys
import types
from collections.abc import Callable, Iterable
from functools import cache
from importlib.metadata import EntryPoint, distributions
from typing import Any

from negcse.errors import UserError

logger = logging.getLogger(__name__)

#: registry -> its entry-point group
GROUPS: dict[str, str] = {
    "methods": "negcse.methods",
    "generators": "negcse.generators",
    "evaluations": "negcse.evaluations",
    "tables": "negcse.tables",
}


class PluginError(UserError):
    """A plug-in entry point cannot be loaded or registered (the message names it)."""


def describe(ep: EntryPoint) -> str:
    """``name = value`` of an entry point, its group and the distribution that declares it."""
    dist = getattr(ep, "dist", None)
    where = f" (distribution {dist.name} {dist.version})" if dist is not None else ""
    return f"entry point '{ep.name} = {ep.value}' of group {ep.group}{where}"


@cache
def _installed() -> dict[str, tuple[EntryPoint, ...]]:
    """Group -> its installed entry points, sorted by name (one scan of the installed
    distributions per process, ~30 ms)."""
    found: dict[str, dict[tuple[str, str], EntryPoint]] = {g: {} for g in GROUPS.values()}
    for dist in distributions():
        for ep in dist.entry_points:
            if ep.group in found:  # a distribution seen twice on the path counts once
                found[ep.group].setdefault((ep.name, ep.value), ep)
    return {g: tuple(eps[key] for key in sorted(eps)) for g, eps in found.items()}


def plugin_entry_points(kind: str) -> tuple[EntryPoint, ...]:
    """The installed entry points of registry ``kind`` (:data:`GROUPS`), sorted by name."""
    return _installed()[GROUPS[kind]]


def distribution_of(top: str) -> str | None:
    """``name version`` of the installed distribution declaring a plug-in in the top-level
    package ``top``; None when no plug-in comes from it."""
    for eps in _installed().values():
        for ep in eps:
            dist = getattr(ep, "dist", None)
            if dist is not None and ep.module.split(".")[0] == top:
                return f"{dist.name} {dist.version}"
    return None


def load_plugins(kind: str, register: Callable[[Any], Any]) -> list[str]:
    """Load every entry point of ``kind``: a module is imported, any other object (or each of a
    list or tuple of them) goes to ``register``. Returns the entry points loaded (described)."""
    loaded = []
    for ep in plugin_entry_points(kind):
        obj = _load(ep)
        try:
            for item in _objects(obj):
                register(item)
        except Exception as exc:  # a registry's refusal, or an object lacking what it reads
            own = isinstance(exc, ValueError | TypeError | KeyError) and exc.args
            message = exc.args[0] if own else f"cannot register it ({type(exc).__name__}: {exc})"
            raise PluginError(f"plug-in {describe(ep)}: {message}") from exc
        loaded.append(describe(ep))
        logger.debug("loaded %s", describe(ep))
    return loaded


def _load(ep: EntryPoint) -> Any:
    """``ep.load()``; any exception, a ``SystemExit`` (``sys.exit()`` or an argument parser run
    at import) and any other ``BaseException`` but ``KeyboardInterrupt`` (the user's Ctrl-C:
    it stops the process as anywhere else) is one :class:`PluginError` naming the entry point.
    What the import writes to stderr (argparse's usage) is held back and its last line quoted
    when it fails."""
    held = io.StringIO()
    try:
        with contextlib.redirect_stderr(held):
            obj = ep.load()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        said = [line for line in held.getvalue().splitlines() if line.strip()]
        if isinstance(exc, SystemExit):
            what = f"it exits at import (SystemExit({exc.code!r})"
            what += f": {said[-1].strip()})" if said else ")"
        else:
            what = f"cannot import it ({type(exc).__name__}: {exc})"
        raise PluginError(f"plug-in {describe(ep)}: {what}") from exc
    sys.stderr.write(held.getvalue())
    return obj


def _objects(obj: Any) -> Iterable[Any]:
    if isinstance(obj, types.ModuleType):
        return ()  # importing it registered what it defines
    if isinstance(obj, list | tuple):
        return obj
    return (obj,)
