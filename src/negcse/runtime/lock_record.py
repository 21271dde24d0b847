"""The lock this environment was installed from, as models and results record it.

``make setup`` writes ``<venv>/negcse-lock.txt`` (the lock file and its sha256); the lock tools
themselves (parse, check against pyproject, the conda environment) are
``negcse.workflow.lockfile``."""

from __future__ import annotations

import re
import sys
from pathlib import Path

MARKER = "negcse-lock.txt"


def installed_lock(prefix: str | Path | None = None) -> dict[str, str] | None:
    """``{"lock": file, "lock_sha256": hex}`` recorded by ``make setup`` in this environment, or
    None where the environment was not installed from a lock."""
    marker = Path(prefix or sys.prefix) / MARKER
    if not marker.is_file():
        return None
    parts = marker.read_text("utf-8").split()
    if len(parts) != 2 or not re.fullmatch(r"[0-9a-f]{64}", parts[1]):
        raise ValueError(f"{marker}: expected '<lock file> <sha256>', got {parts!r}")
    return {"lock": parts[0], "lock_sha256": parts[1]}


def lock_record() -> dict[str, str | None]:
    """What model and result metadata record beside the package versions: this environment's
    lock file and its sha256 (both None where it was not installed from a lock)."""
    record: dict[str, str | None] = {"lock": None, "lock_sha256": None}
    record.update(installed_lock() or {})
    return record
