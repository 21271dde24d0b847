"""What every generation backend offers, and the settings that identify a completion."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol


class LLMError(RuntimeError):
    """A backend that cannot produce completions (unreachable, misconfigured, over budget)."""


@dataclass(frozen=True)
class GenerationSettings:
    """Sampling settings; together with backend, model and prompt they key the cache.

    Defaults are the released pipeline's (max_new_tokens 512, temperature 0.6, top_p 0.95).
    """

    max_new_tokens: int = 512
    temperature: float = 0.6
    top_p: float = 0.95
    do_sample: bool = True
    seed: int = 0
    min_new_tokens: int = 0  # > 0 only for timing runs that need a fixed length

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if not 0 <= self.min_new_tokens <= self.max_new_tokens:
            raise ValueError(
                f"min_new_tokens must be in [0, max_new_tokens], got {self.min_new_tokens}"
            )
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Backend(Protocol):
    """A source of chat completions: one user turn per prompt."""

    name: str

    def identity(self) -> dict[str, Any]:
        """What distinguishes this backend's answers (model, endpoint); never a secret."""
        ...

    def stream(
        self, prompts: Sequence[str], settings: GenerationSettings
    ) -> Iterator[tuple[int, str]]:
        """Yield (index into ``prompts``, completion) as each completion arrives, in any order."""
        ...
