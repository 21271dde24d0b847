"""The fingerprint of a training run: everything that changes its result, recorded in the
resumable state (``last.pt``) so that a killed run never resumes under other settings.

It holds the resolved run spec (method, implementation, params, train settings, backbone,
generator settings and provenance), the seed, the sha256 of the corpus and of every column file,
each guide model (its folder and a digest of its files), the backbone folder's digest, the STS
protocol of the dev evaluation that selects the best step, and the environment's lock
(``docs/resume.md`` lists them). :func:`differences` names what changed between two
fingerprints, one dotted key each (``params.temperature changed 0.05 -> 0.1``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from negcse.data.sources import folder_digest, sha256_of
from negcse.lock_record import lock_record

Fingerprint = dict[str, Any]


def _model(path: str) -> dict[str, str | None]:
    """A model by its folder and the digest of its files (None: not a local folder)."""
    return {"path": path, "sha256": folder_digest(path) if Path(path).is_dir() else None}


def run_fingerprint(
    spec: Mapping[str, Any],
    seed: int,
    files: Mapping[str, str],
    guides: Mapping[str, str],
    backbone_path: str | None = None,
    eval_protocol: str = "senteval",
) -> Fingerprint:
    """The fingerprint of a run: ``spec`` (the resolved run, ``negcse train --run``), ``seed``,
    ``files`` (column -> its file, the corpus as ``sentence``), ``guides`` (name -> model folder),
    the folder the backbone was loaded from and the STS protocol of the dev evaluation (its
    curve and best step). Plain JSON data (``last.pt`` loads with ``weights_only``)."""
    found = {
        **spec,
        "seed": seed,
        "data": {column: sha256_of(Path(path)) for column, path in sorted(files.items())},
        "guides": {name: _model(path) for name, path in sorted(guides.items())},
        "backbone_files": _model(backbone_path) if backbone_path else None,
        "eval_protocol": eval_protocol,
        "lock": lock_record(),
    }
    return json.loads(json.dumps(found))


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping) and value:
        out: dict[str, Any] = {}
        for key, inner in value.items():
            out.update(_flatten(inner, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def _show(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 24 else f"{text[:13]}..."


def differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What changed from ``old`` to ``new``, one phrase per dotted key, in key order."""
    before, after = _flatten(old), _flatten(new)
    out = []
    for key in sorted(before.keys() | after.keys()):
        if key not in after:
            out.append(f"{key} removed (was {_show(before[key])})")
        elif key not in before:
            out.append(f"{key} added ({_show(after[key])})")
        elif before[key] != after[key]:
            out.append(f"{key} changed {_show(before[key])} -> {_show(after[key])}")
    return out
