"""The fingerprint of a training run: everything that changes its result, recorded in the
resumable state (``last.pt``) so that a killed run never resumes under other settings.

It holds the resolved run spec (method, implementation, params, train settings, backbone,
generator settings and provenance), the seed, the sha256 of the corpus and of every column file,
each guide model (its folder and a digest of its files), the backbone folder's digest, the STS
protocol of the dev evaluation that selects the best step, the environment's lock and the
method's code (:func:`method_code`: the distribution and source digest of the method's package
and of its columns' generators'; ``docs/reliability.md`` lists them). :func:`differences`
names what changed between two fingerprints, one dotted key each (``params.temperature changed
0.05 -> 0.1``).
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from negcse.data.corpus import CORPUS_COLUMN
from negcse.data.sources import folder_digest, sha256_of
from negcse.generators.registry import producer
from negcse.plugins import distribution_of
from negcse.runtime.lock_record import lock_record

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


def _sources(top: str) -> Iterable[Path]:
    """The Python files of the top-level module or package ``top``, sorted."""
    module = importlib.import_module(top)
    roots = [Path(p) for p in getattr(module, "__path__", ())]
    if not roots:  # a single-file module
        return [Path(module.__file__)] if getattr(module, "__file__", None) else []
    return sorted(f for root in roots for f in root.rglob("*.py"))


@cache  # a scan of the installed distributions (~0.4 s); their versions hold for the process
def _distribution(top: str) -> str | None:
    """``name version`` of the installed distribution that holds ``top``: a plug-in's, one
    named as the package, else the one listing it (a scan of every distribution); None: none."""
    found = distribution_of(top)
    if found is not None:
        return found
    names = [top, *(metadata.packages_distributions().get(top) or [])]
    for name in dict.fromkeys(names):
        try:
            return f"{name} {metadata.version(name)}"
        except metadata.PackageNotFoundError:
            continue
    return None


def package_code(top: str) -> dict[str, str | None]:
    """What the code of the top-level package ``top`` is: its distribution's name and version
    and the sha256 of its Python files (their paths and contents): an edited editable install
    keeps its version but not its digest."""
    digest = hashlib.sha256()
    for path in _sources(top):
        data = path.read_bytes()
        digest.update(f"{path.name}\0{len(data)}\0".encode())
        digest.update(data)
    return {"distribution": _distribution(top), "source_sha256": digest.hexdigest()}


def method_code(method: Any) -> dict[str, dict[str, str | None]]:
    """The code that makes a run's result, by top-level package (:func:`package_code`): the
    method's (its loss, views and state) and that of the generators of the columns it reads
    (their files' digests are in ``data`` too)."""
    tops = {type(method).__module__.split(".")[0]}
    for column in getattr(method, "columns", ()):
        if column == CORPUS_COLUMN:
            continue
        try:
            tops.add(producer(column).settings.__module__.split(".")[0])
        except KeyError:  # a column no generator makes (given by hand)
            continue
    return {top: package_code(top) for top in sorted(tops)}


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
