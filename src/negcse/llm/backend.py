"""What every generation backend offers, the settings that identify a completion, and the rule
for answers that must be neither used nor cached (:func:`answer_problem`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from negcse.errors import UserError
from negcse.finite import finite


class LLMError(UserError, RuntimeError):
    """A backend that cannot produce completions (unreachable, misconfigured, over budget,
    answering something that is no chat completion): one line naming the endpoint or setting."""


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
        for name in ("temperature", "top_p"):  # NaN passes the bounds below
            finite(getattr(self, name), f"generation setting {name}")
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


#: The most UTF-8 bytes one generated token is taken to decode to, for answers whose token count
#: is not reported. Text averages about 4 bytes a token and the longest tokens of common BPE
#: vocabularies are runs of spaces or symbols well under 64 bytes, so an answer over
#: ``max_new_tokens * 64`` bytes cannot be the requested completion (a 32-token request: 2 KiB).
MAX_BYTES_PER_TOKEN = 64


@dataclass(frozen=True)
class BadAnswer:
    """A completion that came back but is neither used nor cached: ``kind`` (``empty``, ``too
    long``, ``holds the API key``) counts it in the run's report, ``detail`` says more."""

    kind: str
    detail: str = ""


def answer_problem(text: str, settings: GenerationSettings) -> BadAnswer | None:
    """Why ``text`` cannot be the answer to a request with ``settings``: empty (or blank), or
    longer than ``max_new_tokens`` tokens can be (:data:`MAX_BYTES_PER_TOKEN`); else None."""
    if not text.strip():
        return BadAnswer("empty", "the answer has no text")
    size = len(text.encode("utf-8", "surrogatepass"))
    limit = settings.max_new_tokens * MAX_BYTES_PER_TOKEN
    if size > limit:
        return BadAnswer(
            "too long",
            f"{size} bytes, over the {limit} that {settings.max_new_tokens} tokens allow",
        )
    return None


class Backend(Protocol):
    """A source of chat completions: one user turn per prompt."""

    name: str

    def identity(self) -> dict[str, Any]:
        """What distinguishes this backend's answers (model, endpoint); never a secret."""
        ...

    def stream(
        self, prompts: Sequence[str], settings: GenerationSettings
    ) -> Iterator[tuple[int, str | BadAnswer]]:
        """Yield (index into ``prompts``, completion) as each completion arrives, in any order;
        a :class:`BadAnswer` for one that came back unusable."""
        ...
