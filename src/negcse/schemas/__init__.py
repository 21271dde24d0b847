"""The config schema (``config.schema.yaml``), parsed once per process."""

from __future__ import annotations

import copy
from functools import cache
from importlib import resources
from typing import Any

from negcse.io_utils import yaml_value


@cache
def _config_schema() -> dict[str, Any]:
    text = resources.files(__name__).joinpath("config.schema.yaml").read_text("utf-8")
    return yaml_value(text)


def config_schema() -> dict[str, Any]:
    """``config.schema.yaml``'s value, a copy of its own (callers fill it in)."""
    return copy.deepcopy(_config_schema())
