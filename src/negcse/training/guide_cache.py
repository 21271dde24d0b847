"""Frozen guides encoded once: every text a guide encodes, over the whole corpus, in a ``.npy``.

A frozen guide (eval mode, no dropout, no gradient) encodes a given text the same way at every
step, so its per-step forward can be replaced by one pass over the corpus. The pass
(:func:`write_guide_cache`, ``negcse encode-guide``) writes a folder keyed by the guide's model
and the corpus; every student sharing that guide (its methods, seeds and epochs) reads it,
memory-mapped (``negcse train --guide-cache NAME=DIR``, :class:`CachedGuide`). One file per
encoded text (:func:`text_file`: the guide's pooler, the column, its prompt, its token type), so
students whose guides encode more or fewer texts share the files they have in common.

The files hold float32: the embedding of an fp16 autocast encoding is stored exactly, while fp16
storage would round the fp32 encodings (CPU, fp32 and tf32 runs) by about 1e-3.
``guide.json`` records the model, the rows, ``max_seq_len`` and the autocast dtype of the pass;
a student reads a cache only at its own ``max_seq_len`` and autocast dtype, over as many rows as
its corpus has.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from negcse.io_utils import atomic_dir, read_json, write_json
from negcse.methods.base import Column, Guide
from negcse.training.guides import FrozenGuide, GuideError

logger = logging.getLogger(__name__)

META = "guide.json"
#: rows per forward pass of the encoding (no gradient: a larger batch than training's)
ENCODE_BATCH = 512


def text_file(pooler: str, column: str, prompt: str | None, token_type: int = 0) -> str:
    """The file name of one encoded text: ``{pooler}.{column}[.{prompt}][.tt{n}].npy``."""
    parts = [
        pooler,
        column,
        *([prompt] if prompt else []),
        *([f"tt{token_type}"] * bool(token_type)),
    ]
    return ".".join(parts) + ".npy"


def guide_files(spec: Guide) -> dict[str, str]:
    """Key of ``ctx.guides[spec.name]`` -> the file holding that text's encoding."""
    types = dict(spec.token_types)
    return {
        key: text_file(spec.pooler, column, prompt, types.get(key, 0))
        for key, column, prompt in spec.encoded()
    }


def dtype_name(dtype: torch.dtype | None) -> str:
    """The autocast dtype as ``guide.json`` records it ("none": no autocast)."""
    return "none" if dtype is None else str(dtype).removeprefix("torch.")


def write_guide_cache(
    guides: Sequence[Guide],
    model: str,
    columns: Mapping[str, Column],
    out: str | Path,
    max_len: int,
    device: torch.device,
    dtype: torch.dtype | None,
    batch_size: int = ENCODE_BATCH,
) -> dict[str, Any]:
    """Encode every text of ``guides`` (guide specs of one model ``model``: a student's view of
    it, or several students' poolers and texts) over all rows of ``columns``, through the
    guide's own per-step forward (:meth:`FrozenGuide.encode`) under autocast ``dtype``, and
    write the folder ``out`` atomically; returns its ``guide.json``."""
    rows = len(columns["sentence"])
    texts: dict[str, dict[str, Any]] = {}
    with atomic_dir(out) as tmp:
        for spec in guides:
            guide = FrozenGuide.load(spec, model, device)
            files = guide_files(spec)
            todo = {k: f for k, f in files.items() if f not in texts}
            if not todo:
                continue
            arrays: dict[str, np.ndarray] = {}
            autocast = torch.autocast(device.type, dtype=dtype) if dtype else nullcontext()
            for start in range(0, rows, batch_size):
                idx = np.arange(start, min(start + batch_size, rows))
                with autocast:
                    emb = guide.encode(columns, idx, max_len, device)
                for key, file in todo.items():
                    if key not in arrays:
                        arrays[key] = np.lib.format.open_memmap(
                            tmp / file, mode="w+", dtype=np.float32, shape=(rows, emb[key].shape[1])
                        )
                    arrays[key][start : start + len(idx)] = emb[key].float().cpu().numpy()
            for key, file in todo.items():
                arrays[key].flush()
                column, prompt = next((c, p) for k, c, p in spec.encoded() if k == key)
                texts[file] = {"pooler": spec.pooler, "column": column, "prompt": prompt}
            logger.info("guide %s: %d texts of %d rows encoded", spec.name, len(todo), rows)
        meta = {
            "model": model,
            "rows": rows,
            "max_seq_len": max_len,
            "autocast": dtype_name(dtype),
            "texts": texts,
        }
        write_json(tmp / META, meta)
    return meta


@dataclass
class CachedGuide:
    """A guide whose encodings are read from its cache folder instead of a forward pass."""

    spec: Guide
    path: str
    arrays: dict[str, np.ndarray]

    @classmethod
    def open(
        cls, spec: Guide, folder: str | Path, rows: int, max_len: int, dtype: str
    ) -> CachedGuide:
        """The cache of ``spec`` in ``folder`` for a corpus of ``rows`` rows at ``max_len``
        tokens under autocast ``dtype`` (:func:`dtype_name`); a missing file, or a cache made
        for other rows, length or autocast is a :class:`GuideError` naming the folder."""
        root = Path(folder)
        if not (root / META).is_file():
            raise GuideError(
                f"{root}: no {META} (not a guide cache: negcse encode-guide writes one)"
            )
        meta = read_json(root / META)
        want = {"rows": rows, "max_seq_len": max_len, "autocast": dtype}
        for key, value in want.items():
            if meta.get(key) != value:
                raise GuideError(
                    f"{root / META}: '{key}' is {meta.get(key)!r}, the run needs {value!r} "
                    f"(encode guide '{spec.name}' again for this run)"
                )
        arrays: dict[str, np.ndarray] = {}
        for key, file in guide_files(spec).items():
            if not (root / file).is_file():
                raise GuideError(f"{root}: no {file} (guide '{spec.name}' encodes it)")
            arrays[key] = np.load(root / file, mmap_mode="r")
            if arrays[key].shape[0] != rows:
                raise GuideError(f"{root / file}: {arrays[key].shape[0]} rows, the corpus {rows}")
        logger.info("guide %s: read from its cache %s", spec.name, root)
        return cls(spec, str(root), arrays)

    def compile(self, mode: str | None, static_padding: bool) -> None:
        """Nothing to compile: no forward pass."""

    def encode(
        self, columns: Mapping[str, Column], idx: np.ndarray, max_len: int, device: torch.device
    ) -> dict[str, Tensor]:
        """The cached embeddings of rows ``idx``, as float32 tensors on ``device``."""
        return {
            key: torch.from_numpy(np.ascontiguousarray(arr[idx])).to(device, non_blocking=True)
            for key, arr in self.arrays.items()
        }
