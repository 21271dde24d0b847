"""Record a finished run in ``dvc.lock`` (``negcse dvc-lock``, ``make dvc-lock``), so that the
lock committed with the results describes them.

After ``make smoke`` (Snakemake run directly, not through ``dvc repro``) nothing has written
``dvc.lock``. This checks that the run is complete (``snakemake -n`` plans nothing with the
profile ``params.yaml`` names) and that the stage's dependencies are committed, records the
run (``dvc commit``: the hashes of every dependency, parameter and output; the heavy outputs go
into the DVC cache, ready for ``dvc push``), then checks the result as a collaborator would
see it: in a copy holding only what git would (the committed files, the new results and the new
lock), ``dvc status`` may report nothing but the heavy outputs, absent until pulled.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from negcse.errors import UserError
from negcse.workflow.config import load_yaml
from negcse.workflow.dvc_run import ProfileError, profile

STAGE = "workflow"


def _run(cmd: Sequence[str], cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise UserError(f"{' '.join(cmd)} failed ({proc.returncode}): {' | '.join(tail)}")
    return proc


def stage(root: Path) -> dict[str, Any]:
    """dvc.yaml's stage :data:`STAGE`; one line naming the file when it has none."""
    path = root / "dvc.yaml"
    data = load_yaml(path)
    stages = data.get("stages") if isinstance(data, dict) else None
    found = stages.get(STAGE) if isinstance(stages, dict) else None
    if not isinstance(found, dict):
        raise UserError(
            f"{path}: no stage 'stages.{STAGE}' (the workflow's, which dvc.lock records)"
        )
    return found


def chosen_profile(root: Path) -> str:
    """``workflow.profile`` of ``root``'s params.yaml, checked; every problem one line."""
    params = root / "params.yaml"
    load_yaml(params)  # not YAML, not UTF-8: named with the line
    try:
        return profile(params)
    except ProfileError as exc:
        raise UserError(str(exc)) from None


def _paths(entries: Sequence[Any]) -> list[str]:
    return [e if isinstance(e, str) else next(iter(e)) for e in entries]


def cached_outs(spec: dict[str, Any]) -> list[str]:
    """The stage's outputs kept in the DVC cache (not in git): what a clone pulls."""
    return [
        next(iter(e)) if isinstance(e, dict) else e
        for e in spec.get("outs", [])
        if not (isinstance(e, dict) and next(iter(e.values())).get("cache") is False)
    ]


def check_complete(root: Path) -> None:
    chosen = chosen_profile(root)
    out = _run(["snakemake", "--profile", chosen, "-n", "--quiet", "rules"], root)
    text = out.stdout + out.stderr
    if "Nothing to be done" not in text:
        raise UserError(
            f"the run is not complete: `snakemake --profile {chosen} -n` plans jobs; finish "
            "it first (`make smoke` for the smoke grid, `dvc repro`)"
        )


def check_committed(root: Path, spec: dict[str, Any]) -> None:
    """The stage's dependencies and dvc.yaml itself must match git's HEAD."""
    paths = ["dvc.yaml", "params.yaml", ".dvcignore", *_paths(spec.get("deps", []))]
    status = _run(["git", "status", "--porcelain", "--untracked-files=all", "--", *paths], root)
    if changed := status.stdout.strip():
        first = changed.splitlines()[0].strip()
        raise UserError(
            f"commit the workflow's files first ({len(changed.splitlines())} changed, e.g. "
            f"{first}): dvc.lock records their hashes"
        )


def clone_status(root: Path) -> dict[str, Any]:
    """``dvc status --json`` in a copy holding what git would: tracked and new files that are
    not ignored, the new dvc.lock among them."""
    files = _run(["git", "ls-files", "-z", "-c", "-o", "--exclude-standard"], root).stdout
    with tempfile.TemporaryDirectory(prefix="negcse-dvc-lock-") as tmp:
        copy = Path(tmp) / "clone"
        for name in filter(None, files.split("\0")):
            src = root / name
            if src.is_file():
                (copy / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, copy / name)
        _run(["git", "init", "-q"], copy)
        return json.loads(_run(["dvc", "status", "--json"], copy).stdout or "{}")


def unexpected(status: dict[str, Any], cached: Sequence[str]) -> list[str]:
    """Everything ``dvc status`` reports besides the cached outputs being absent."""
    out = []
    for name, entries in status.items():
        for entry in entries:
            if isinstance(entry, dict) and set(entry) == {"changed outs"}:
                wrong = {
                    p: why
                    for p, why in entry["changed outs"].items()
                    if p not in cached or why not in ("deleted", "not in cache")
                }
                out += [f"{name}: {p} {why}" for p, why in wrong.items()]
            else:
                out.append(f"{name}: {entry}")
    return out


def record(root: Path) -> list[str]:
    """Check, ``dvc commit`` and verify (see the module); the lines to print."""
    spec = stage(root)
    check_complete(root)
    check_committed(root, spec)
    cached = cached_outs(spec)
    for path in cached:  # folders; a grid without generators writes no features/: as the cmd
        (root / path).mkdir(parents=True, exist_ok=True)
    _run(["dvc", "commit", "--force", STAGE], root)
    if wrong := unexpected(clone_status(root), cached):
        raise UserError(
            f"dvc.lock written, but a clone's `dvc status` would report {len(wrong)} change(s) "
            f"besides the pulled outputs, e.g. {wrong[0]}"
        )
    _run(["git", "add", "dvc.lock"], root)
    return [
        f"dvc.lock records the run ({len(cached)} heavy outputs in .dvc/cache) and is staged",
        "next: git add results && git commit; dvc push (to share the heavy outputs)",
    ]
