"""Local LLM through vLLM's offline engine: every prompt handed to one ``LLM.generate`` call.

vLLM schedules the requests itself (continuous batching: a finished sequence's slot takes the
next request at once), so the backend has no batch size; it submits ``chunk`` prompts per call
only so that the cache stores answers as they come. The prompts are the transformers
backend's (the model's chat template, one user turn, the generation prompt appended,
:func:`chat_text`), the stop tokens too (:func:`stop_token_ids`), and the sampling settings the
same: temperature and top-p, greedy (temperature 0) where sampling is off, ``max_new_tokens``,
``min_new_tokens``, one seed per request (the settings' seed plus the prompt's index, so an
answer does not depend on which prompts share its call). The answers differ from the
transformers backend's (another sampler, another kernel order): the cache keys them under the
backend's name, ``vllm``.

vLLM needs a CUDA GPU and pins its own torch and transformers: it lives in an environment of
its own (``envs/vllm.yaml``), imported only when an engine is built (:meth:`VLLMBackend.load`).
The same server runs as an OpenAI-compatible endpoint (``vllm serve``) for the ``openai``
backend (docs/gcse.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from negcse.data.sources import folder_digest
from negcse.llm.backend import BadAnswer, GenerationSettings, LLMError
from negcse.llm.chat import chat_text, stop_token_ids

logger = logging.getLogger(__name__)

#: prompts per ``LLM.generate`` call (the cache stores each call's answers)
CHUNK = 4096


class VLLMBackend:
    """Chat completions from a vLLM engine (``vllm.LLM``) and its ``SamplingParams`` class;
    :meth:`load` builds both from a model folder or hub name."""

    name = "vllm"

    def __init__(
        self,
        engine: Any,
        sampling_params: Callable[..., Any],
        label: str,
        digest: str,
        chunk: int = CHUNK,
    ) -> None:
        if chunk < 1:
            raise ValueError(f"chunk must be >= 1, got {chunk}")
        self.engine = engine
        self.sampling_params = sampling_params
        self.label = label
        self.content_digest = digest
        self.chunk = chunk
        tokenizer = engine.get_tokenizer()
        if getattr(tokenizer, "chat_template", None) is None:
            raise LLMError(f"vllm backend: {label} has no chat template")
        self.tokenizer = tokenizer
        self.stop_ids = stop_token_ids(tokenizer)

    @classmethod
    def load(
        cls, model: str | Path, max_model_len: int = 4096, gpu_memory_utilization: float = 0.9
    ) -> VLLMBackend:
        """A vLLM engine of ``model`` (bf16, the whole GPU's memory share given): the ``vllm``
        package of envs/vllm.yaml, imported here."""
        try:
            import vllm
        except ImportError:
            raise LLMError(
                "backend vllm: the vllm package is not installed (its environment: "
                "envs/vllm.yaml; it needs a CUDA GPU)"
            ) from None
        path = Path(model)
        engine = vllm.LLM(
            model=str(model),
            dtype="bfloat16",
            max_model_len=max_model_len,
            gpu_memory_utilization=gpu_memory_utilization,
            seed=0,
        )
        digest = folder_digest(path) if path.is_dir() else str(model)
        return cls(engine, vllm.SamplingParams, path.name if path.is_dir() else str(model), digest)

    def identity(self) -> dict[str, Any]:
        """The model's label and the digest of its folder (a hub name: the name)."""
        return {"model": self.label, "sha256": self.content_digest}

    def request(self, index: int, settings: GenerationSettings) -> Any:
        """The sampling parameters of prompt ``index`` (its own seed)."""
        sample = settings.do_sample and settings.temperature > 0
        return self.sampling_params(
            n=1,
            temperature=settings.temperature if sample else 0.0,
            top_p=settings.top_p if sample else 1.0,
            max_tokens=settings.max_new_tokens,
            min_tokens=settings.min_new_tokens,
            seed=settings.seed + index,
            stop_token_ids=self.stop_ids,
            skip_special_tokens=True,
        )

    def stream(
        self, prompts: Sequence[str], settings: GenerationSettings
    ) -> Iterator[tuple[int, str | BadAnswer]]:
        for start in range(0, len(prompts), self.chunk):
            texts = [chat_text(self.tokenizer, p) for p in prompts[start : start + self.chunk]]
            params = [self.request(start + k, settings) for k in range(len(texts))]
            outputs = self.engine.generate(texts, params, use_tqdm=False)
            if len(outputs) != len(texts):
                raise LLMError(
                    f"vllm backend: {len(outputs)} outputs for {len(texts)} prompts ({self.label})"
                )
            for k, (text, out) in enumerate(zip(texts, outputs, strict=True)):
                if out.prompt != text:  # generate keeps the input order; say so if not
                    raise LLMError(f"vllm backend: output {start + k} answers another prompt")
                if not out.outputs:
                    yield start + k, BadAnswer("empty", "vLLM returned no completion")
                    continue
                yield start + k, out.outputs[0].text.strip()
