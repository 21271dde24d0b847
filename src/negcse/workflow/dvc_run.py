"""The command of dvc.yaml's stage: ``snakemake --profile <workflow.profile> [ARGS]``.

The profile is read from params.yaml here and handed to Snakemake as one argument, never
pasted into a shell line (``${workflow.profile}`` in dvc.yaml would run ``$(...)``, backticks
or ``;`` in it, before Snakemake could check the config). It must match the schema's pattern
(a relative path of names: no spaces, quotes or shell characters, no absolute path, no
``..``) and be a folder.

    python src/negcse/workflow/dvc_run.py [--params params.yaml] [-- SNAKEMAKE ARGS]

Run by its path (dvc.yaml), so the checkout's own copy runs whatever package is installed: it
reads only yaml and the checkout's schema.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

SCHEMA = Path(__file__).resolve().parents[1] / "schemas" / "config.schema.yaml"


class ProfileError(ValueError):
    """``workflow.profile`` is not a safe folder name; the message names the file and key."""


def _profile_schema() -> dict[str, Any]:
    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
    return schema["properties"]["workflow"]["properties"]["profile"]


def profile(params: Path) -> str:
    """``workflow.profile`` of ``params`` (the schema's default when unset), checked."""
    with params.open(encoding="utf-8") as fh:
        config = yaml.safe_load(fh) or {}
    spec = _profile_schema()
    workflow = (config.get("workflow") if isinstance(config, dict) else None) or {}
    if not isinstance(workflow, dict):
        raise ProfileError(f"{params}: workflow: expected a mapping, got {workflow!r}")
    value = workflow.get("profile", spec["default"])
    where = f"{params}: workflow.profile"
    if not isinstance(value, str) or not re.search(spec["pattern"], value):
        raise ProfileError(f"{where}: {value!r} is not allowed ({spec['description']})")
    if not Path(value).is_dir():
        raise ProfileError(f"{where}: '{value}' is not a folder (e.g. profiles/local)")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dvc_run.py", description=__doc__.splitlines()[0])
    parser.add_argument("--params", type=Path, default=Path("params.yaml"))
    parser.add_argument("snakemake_args", nargs="*", help="more arguments for snakemake")
    args = parser.parse_args(argv)
    try:
        chosen = profile(args.params)
    except (ProfileError, OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        print(f"negcse.workflow.dvc_run: error: {exc}", file=sys.stderr)
        return 2  # a user error, as negcse's commands
    command = ["snakemake", "--profile", chosen, *args.snakemake_args]
    print(shlex.join(command), file=sys.stderr, flush=True)
    os.execvp(command[0], command)
    return 0  # not reached


if __name__ == "__main__":
    raise SystemExit(main())
