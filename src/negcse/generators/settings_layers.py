"""A generator's settings, layered from the workflow config, and the variants the methods use.

Every generator (``una``, ``san``, ``negation``, ``paraphrase``, ``osscse_paraphrase``) reads its
settings the same way: its defaults < ``generators.<name>`` < ``methods.<m>.generators.<name>``
(the last for the generators a method may tune). A *variant* is a settings combination named by
every setting that changes the generator's output; the modules that own the generators
(generator_settings, san_workflow, negation_workflow) define the defaults, checks and names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Settings = dict[str, Any]
Wildcards = Any


def layered_settings(
    config: dict[str, Any], generator: str, defaults: Settings, method: str | None = None
) -> Settings:
    """``defaults`` < ``generators.<generator>`` < ``methods.<method>.generators.<generator>``
    (the last only when ``method`` is given). An unknown setting raises a KeyError naming its
    place in the config and the known ones."""
    layers = [(f"generators.{generator}", (config.get("generators") or {}).get(generator))]
    if method is not None:
        entry = (config["methods"][method].get("generators") or {}).get(generator)
        layers.append((f"methods.{method}.generators.{generator}", entry))
    out = dict(defaults)
    for where, values in layers:
        unknown = sorted(set(values or {}) - set(defaults))
        if unknown:
            raise KeyError(
                f"{where}: unknown setting(s) {', '.join(map(repr, unknown))}; "
                f"known: {', '.join(sorted(defaults))}"
            )
        out.update(values or {})
    return out


def methods_reading(config: dict[str, Any], column: str) -> list[str]:
    """Configured methods whose implementation reads ``column`` (unknown implementations
    skipped: the config check reports them for the grid)."""
    from negcse.methods.registry import method_class

    found = []
    for method, entry in config["methods"].items():
        try:
            columns = method_class(entry["implementation"]).columns
        except KeyError:
            continue
        if column in columns:
            found.append(method)
    return found


def method_variants(
    config: dict[str, Any],
    column: str,
    settings: Callable[[dict[str, Any], str], Settings],
    variant: Callable[[Settings], str],
) -> dict[str, Settings]:
    """Variant name -> settings, over every configured method that reads ``column``;
    ``settings(config, method)`` gives a method's settings and ``variant`` names them."""
    out = {}
    for method in methods_reading(config, column):
        found = settings(config, method)
        out[variant(found)] = found
    return out


def per_variant(
    variants: dict[str, Settings], value: Callable[[Settings], str]
) -> Callable[[Wildcards], str]:
    """Input or params function of a rule with a ``{variant}`` wildcard: ``value`` of the
    settings of the job's variant."""

    def of(wildcards: Wildcards) -> str:
        return value(variants[wildcards.variant])

    return of
