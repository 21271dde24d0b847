"""Shared test fixtures: the offline mirror (../shared/mirror) and offline mode everywhere."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MIRROR = Path(os.environ.get("NEGCSE_MIRROR") or REPO.parent / "shared" / "mirror").resolve()

# Subprocesses (snakemake, python -m negcse) inherit these (no mirror setting where there is none).
if MIRROR.is_dir():
    os.environ["NEGCSE_MIRROR"] = str(MIRROR)
else:
    os.environ.pop("NEGCSE_MIRROR", None)
os.environ["NEGCSE_OFFLINE"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# each dvc command would otherwise fork a `dvc daemon analytics` process (0.4 CPU-s) that tries
# to reach DVC's server; what the commands do is the same either way
os.environ.setdefault("DVC_NO_ANALYTICS", "1")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not MIRROR.is_dir():
        skip = pytest.mark.skip(reason=f"offline mirror not found at {MIRROR}")
        for item in items:
            if "mirror" in item.keywords:
                item.add_marker(skip)
    try:
        import torch

        has_gpu = torch.cuda.is_available()
    except ImportError:
        has_gpu = False
    if not has_gpu:
        skip_gpu = pytest.mark.skip(reason="needs a CUDA device")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip_gpu)


@pytest.fixture(scope="session")
def mirror() -> Path:
    if not MIRROR.is_dir():
        pytest.skip(f"offline mirror not found at {MIRROR}")
    return MIRROR


@pytest.fixture(scope="session")
def splade_tiny(mirror: Path) -> Path:
    return mirror / "models" / "splade-tiny"
