"""Any OpenAI-compatible chat endpoint (vLLM, llama.cpp's server, OpenAI, DeepSeek) through the
``openai`` client: requests in flight at once, exponential backoff on 429 / 5xx / timeouts (or
the wait a ``Retry-After`` header asks, capped at ``backoff_max_s``), a request budget per run.
The API key is read from the environment variable that the settings name; it never enters a
log, a cache key or an error message (:func:`redact`).

An answer that echoes the key, or whose reported ``usage.completion_tokens`` exceeds the
request's ``max_tokens``, comes back as a :class:`~negcse.llm.backend.BadAnswer` (never cached);
so does ``content: null``. A body that is not a chat completion (invalid JSON, not UTF-8,
``choices: []``) stops the run with one line naming the endpoint.
"""

from __future__ import annotations

import email.utils
import logging
import math
import os
import random
import re
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from negcse.llm.backend import BadAnswer, GenerationSettings, LLMError

logger = logging.getLogger(__name__)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# what a pasted key tends to look like, to refuse it where a variable NAME belongs
_LOOKS_LIKE_KEY = re.compile(r"^(sk-|sk_|ghp_|hf_)|[a-z0-9]{32,}", re.IGNORECASE)
NO_KEY = "no-key"  # sent to local servers that take none


@dataclass(frozen=True)
class OpenAISettings:
    """The ``llm.openai`` settings. ``api_key_env`` is the NAME of a variable (None: no key)."""

    base_url: str
    model: str
    api_key_env: str | None = "OPENAI_API_KEY"
    max_in_flight: int = 8
    max_retries: int = 5
    backoff_s: float = 1.0
    backoff_max_s: float = 60.0
    timeout_s: float = 120.0
    request_budget: int | None = None
    setting_prefix: str = "llm.openai"  # how errors name a setting; "-": as a CLI option

    def setting(self, name: str) -> str:
        """A setting's name as the user wrote it: llm.openai.base_url, or --base-url."""
        if self.setting_prefix == "-":
            return "--" + name.replace("_", "-")
        return f"{self.setting_prefix}.{name}"

    def __post_init__(self) -> None:
        s = self.setting
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{s('base_url')} must be an http(s) URL, got {self.base_url!r}")
        if not self.model:
            raise ValueError(f"{s('model')} must name the served model")
        if self.api_key_env is not None and (
            not _ENV_NAME.match(self.api_key_env) or _LOOKS_LIKE_KEY.search(self.api_key_env)
        ):
            raise ValueError(
                f"{s('api_key_env')} must be the name of an environment variable (such as "
                "OPENAI_API_KEY), not the key itself"
            )
        if self.max_in_flight < 1:
            raise ValueError(f"{s('max_in_flight')} must be >= 1, got {self.max_in_flight}")
        if self.max_retries < 0:
            raise ValueError(f"{s('max_retries')} must be >= 0, got {self.max_retries}")
        if self.backoff_s < 0 or self.timeout_s <= 0:
            raise ValueError(f"{s('backoff_s')} must be >= 0 and {s('timeout_s')} > 0")
        if self.request_budget is not None and self.request_budget < 0:
            raise ValueError(
                f"{s('request_budget')} must be >= 0 or unset, got {self.request_budget}"
            )

    def read_key(self) -> str:
        if self.api_key_env is None:
            return NO_KEY
        key = os.environ.get(self.api_key_env, "")
        if not key:
            raise LLMError(
                f"the API key variable {self.api_key_env} (setting {self.setting('api_key_env')}) "
                "is not set or empty"
            )
        return key


def redact(text: str, secret: str) -> str:
    """``text`` with every occurrence of ``secret`` replaced (no-op for an empty secret)."""
    if not secret or secret == NO_KEY:
        return text
    return text.replace(secret, "[REDACTED]")


class RequestBudgetExceeded(LLMError):
    pass


def retry_after_s(value: str | None, now: float | None = None) -> float | None:
    """The wait a ``Retry-After`` header asks: delta-seconds (``"120"``) or an HTTP-date
    (``"Wed, 21 Oct 2015 07:28:00 GMT"``, relative to ``now``); None when absent or unreadable."""
    if not value or not value.strip():
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None  # an HTTP-date is always GMT; a date without a zone is not one
        seconds = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, seconds) if math.isfinite(seconds) else None


class OpenAIBackend:
    name = "openai"

    def __init__(self, settings: OpenAISettings) -> None:
        import openai

        self.settings = settings
        self._key = settings.read_key()
        # retries are ours (the client's would hide them from the budget)
        self._client = openai.OpenAI(
            base_url=settings.base_url, api_key=self._key, max_retries=0, timeout=settings.timeout_s
        )
        self._lock = threading.Lock()
        self.requests = 0  # HTTP requests sent, retries included

    def __repr__(self) -> str:
        return f"OpenAIBackend(base_url={self.settings.base_url!r}, model={self.settings.model!r})"

    def identity(self) -> dict[str, Any]:
        return {"base_url": self.settings.base_url, "model": self.settings.model}

    def _take_budget(self) -> None:
        with self._lock:
            budget = self.settings.request_budget
            if budget is not None and self.requests >= budget:
                raise RequestBudgetExceeded(
                    f"request budget of {budget} requests ({self.settings.setting('request_budget')}) "
                    "is spent; completions so far are cached, rerun to continue"
                )
            self.requests += 1

    def _fail(self, what: str, err: BaseException | str) -> LLMError:
        """One line naming the endpoint and its setting (an error body's text cut to 300
        characters, its line breaks flattened)."""
        s = self.settings
        detail = " ".join(redact(str(err), self._key).split())[:300]  # no key cut in two
        msg = f"{what} at {s.base_url} (setting {s.setting('base_url')}, model {s.model}): {detail}"
        return LLMError(redact(msg, self._key))

    def complete(self, prompt: str, settings: GenerationSettings) -> str | BadAnswer:
        """One chat completion, retried with exponential backoff (or as ``Retry-After`` asks)
        on 429, 5xx and timeouts."""
        import openai

        kwargs: dict[str, Any] = {"max_tokens": settings.max_new_tokens, "seed": settings.seed}
        if settings.do_sample:
            kwargs.update(temperature=settings.temperature, top_p=settings.top_p)
        else:
            kwargs["temperature"] = 0.0
        attempt = 0
        while True:
            self._take_budget()
            try:
                reply = self._client.chat.completions.create(
                    model=self.settings.model,
                    messages=[{"role": "user", "content": prompt}],
                    **kwargs,
                )
            except (
                openai.RateLimitError,
                openai.InternalServerError,
                openai.APITimeoutError,
            ) as err:
                if attempt >= self.settings.max_retries:
                    raise self._fail(f"gave up after {attempt + 1} attempts", err) from None
                time.sleep(self._delay(err, attempt))
                attempt += 1
            except openai.APIConnectionError as err:
                raise self._fail("cannot reach the OpenAI-compatible endpoint", err) from None
            except openai.APIStatusError as err:
                raise self._fail(f"the endpoint answered HTTP {err.status_code}", err) from None
            except ValueError as err:  # the client's JSON decoding of the body (or UTF-8)
                what = f"{type(err).__name__}: {err}"
                raise self._fail("the endpoint's answer is not JSON in UTF-8", what) from None
            else:
                return self._answer(reply, settings.max_new_tokens)

    def _delay(self, err: Exception, attempt: int) -> float:
        """Seconds before retry ``attempt + 1``: the header's ``Retry-After`` if any, else
        exponential backoff with jitter; both capped at ``backoff_max_s``."""
        response = getattr(err, "response", None)
        asked = retry_after_s(response.headers.get("retry-after")) if response is not None else None
        cap = self.settings.backoff_max_s
        if asked is not None:
            delay = min(cap, asked)
            logger.warning(
                "%s; the endpoint asks to wait %.1f s; retry %d in %.1f s (capped at %.0f s)",
                type(err).__name__, asked, attempt + 1, delay, cap,
            )  # fmt: skip
            return delay
        delay = min(cap, self.settings.backoff_s * 2**attempt) * (0.5 + random.random() / 2)
        logger.warning("%s; retry %d in %.1f s", type(err).__name__, attempt + 1, delay)
        return delay

    def _answer(self, reply: Any, max_tokens: int) -> str | BadAnswer:
        """The completion's text, a :class:`BadAnswer`, or an error for a body that is no chat
        completion."""
        choices = getattr(reply, "choices", None)
        if not isinstance(choices, list):
            raise self._fail("the endpoint's answer is not a chat completion", type(reply).__name__)
        if not choices:
            raise self._fail("the endpoint's answer has no choices", "choices: []")
        text = getattr(getattr(choices[0], "message", None), "content", None)
        if not isinstance(text, str) or not text:
            return BadAnswer("empty", f"content {text!r:.20}")
        usage = getattr(reply, "usage", None)
        used = getattr(usage, "completion_tokens", None)
        if isinstance(used, int) and used > max_tokens:
            return BadAnswer("too long", f"{used} completion tokens, max_tokens {max_tokens}")
        if self._key != NO_KEY and self._key in text:
            return BadAnswer("holds the API key", "the answer echoes the key")
        return text

    def stream(
        self, prompts: Sequence[str], settings: GenerationSettings
    ) -> Iterator[tuple[int, str | BadAnswer]]:
        """Completions as they arrive, at most ``max_in_flight`` requests at once."""
        pending: dict[Future[str | BadAnswer], int] = {}
        todo = iter(range(len(prompts)))
        with ThreadPoolExecutor(max_workers=self.settings.max_in_flight) as pool:
            try:
                for i in todo:
                    pending[pool.submit(self.complete, prompts[i], settings)] = i
                    if len(pending) >= self.settings.max_in_flight:
                        break
                while pending:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in done:
                        i = pending.pop(fut)
                        yield i, fut.result()
                        nxt = next(todo, None)
                        if nxt is not None:
                            pending[pool.submit(self.complete, prompts[nxt], settings)] = nxt
            finally:
                for fut in pending:
                    fut.cancel()
