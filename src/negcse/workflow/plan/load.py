"""The config a plan is built from outside Snakemake (``negcse estimate``, tests): config/
defaults.yaml, params.yaml and the overlays merged and checked as the workflow checks them, with
the schema's defaults
filled in (:func:`with_defaults`, which rules/common.smk calls too: Snakemake's ``validate(...,
set_default=True)`` fills them the same way but reads a schema file, not the derived schema)."""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import jsonschema

from negcse.workflow.config import ConfigError, load_yaml, project_config, schema


def _set_defaults(
    validator: Any, properties: dict[str, Any], instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    if isinstance(instance, dict):
        for key, sub in properties.items():
            if "default" in sub:
                instance.setdefault(key, copy.deepcopy(sub["default"]))
    yield from jsonschema.Draft202012Validator.VALIDATORS["properties"](
        validator, properties, instance, schema
    )


_Filling = jsonschema.validators.extend(
    jsonschema.Draft202012Validator, {"properties": _set_defaults}
)


def with_defaults(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with every schema default it leaves out (config.schema.yaml and the
    evaluations' keys: :func:`negcse.workflow.config.schema`), in place."""
    for error in _Filling(schema(generators=False)).iter_errors(config):
        raise ConfigError(f"invalid config: {error.message}")
    return config


def profile_configfiles(profile: str | os.PathLike[str]) -> list[str]:
    """The ``configfile`` entries of a Snakemake profile (``<profile>/profile.yaml``)."""
    path = Path(profile) / "profile.yaml"
    try:
        profile = load_yaml(path)
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the profile ({err.strerror})") from None
    found = (profile.get("configfile") if isinstance(profile, dict) else None) or []
    return [found] if isinstance(found, str) else list(found)


def workflow_config(
    root: str | os.PathLike[str] = ".",
    overlays: Sequence[str | os.PathLike[str]] = (),
    params: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """The config of the checkout at ``root`` (config/defaults.yaml, then its params.yaml or
    ``params``) with ``overlays`` merged over it (later wins), checked, defaults filled."""
    return with_defaults(project_config(root, *overlays, params=params))
