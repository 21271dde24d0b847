"""Name -> method class. A new method is a module that calls ``register``; nothing else changes.

Built-in methods are the modules of this package; an installed package adds its own through the
``negcse.methods`` entry-point group (:mod:`negcse.plugins`), loaded after them."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import negcse.methods as pkg
from negcse.methods.base import Method
from negcse.plugins import load_plugins

METHODS: dict[str, type[Method]] = {}


def register(cls: type[Method]) -> type[Method]:
    if not (isinstance(cls, type) and issubclass(cls, Method)):
        raise TypeError(f"{cls!r} is not a Method subclass")
    if cls.name in METHODS and METHODS[cls.name] is not cls:
        raise ValueError(f"method '{cls.name}' registered twice")
    METHODS[cls.name] = cls
    return cls


_loaded = False
#: the package's modules that register no method (teacher_agent: RLRD's torch networks, imported
#: when a run builds its agent, not with the registry at the Snakefile's parse)
NOT_METHODS = ("base", "params", "registry", "teacher_agent")


def _load_all() -> None:
    """Import every method module once (each registers its classes), then the plug-ins'."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name not in NOT_METHODS:
            importlib.import_module(f"negcse.methods.{info.name}")
    load_plugins("methods", register)


def method_class(name: str) -> type[Method]:
    _load_all()
    if name not in METHODS:
        raise KeyError(
            f"unknown method implementation '{name}'; known: {', '.join(sorted(METHODS))}"
        )
    return METHODS[name]


def build_method(name: str, params: dict[str, Any], backbone: str, where: str = "params") -> Method:
    cls = method_class(name)
    return cls(cls.Params.from_dict(params, where), backbone)
