"""SQLite cache of completions keyed by backend, model, prompt and generation settings.

The key's ``identity`` is the backend's: a local model by the digest of its files (the
weights' content, whatever the folder is called), an endpoint by its URL and model name.

Every completion is committed as it arrives, so a killed run resumes without asking again, and
a rerun with unchanged settings asks only what was not stored (below). The key never holds a secret: backends give an
``identity()`` without their API key.

Only answers that respect the request and parse for their prompt are stored. An empty answer,
one longer than the request's ``max_new_tokens`` allows
(:func:`~negcse.llm.backend.answer_problem`) or one the backend refused
(:class:`~negcse.llm.backend.BadAnswer`: the API key echoed back, a token count over the limit)
is returned as ``""`` (which parses as failed, so the caller takes its fallback); one the
caller's ``accept`` rejects (it does not parse) is returned as it is. Neither is stored: both
are counted in :attr:`CacheStats.failed` by kind and asked again on the next run. A stored
answer that breaks these rules (a cache written before them) is asked again too.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from negcse.io_utils import open_sqlite
from negcse.llm.backend import Backend, BadAnswer, GenerationSettings, LLMError, answer_problem

logger = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    identity TEXT NOT NULL,
    settings TEXT NOT NULL,
    prompt TEXT NOT NULL,
    completion TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def cache_key(
    backend: str, identity: dict[str, Any], settings: GenerationSettings, prompt: str
) -> str:
    blob = json.dumps(
        {
            "backend": backend,
            "identity": identity,
            "settings": settings.as_dict(),
            "prompt": prompt,
        },
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    calls: int = 0  # completions asked of the backend
    failed: Counter[str] = field(default_factory=Counter)  # answers not cached, by kind


class CachedLLM:
    """A backend behind a response cache (``path`` None: no cache, every prompt is a call)."""

    def __init__(self, backend: Backend, path: str | Path | None) -> None:
        self.backend = backend
        self.path = Path(path) if path is not None else None
        self.stats = CacheStats()
        self._db: sqlite3.Connection | None = None
        if self.path is not None:
            self._db = open_sqlite(self.path, _SCHEMA, wal=True)

    def _damaged(self, err: sqlite3.DatabaseError) -> LLMError:
        return LLMError(
            f"{self.path}: not a usable response cache ({err}); move it aside to start an "
            "empty one (its answers are asked again)"
        )

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> CachedLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _lookup(self, key: str, settings: GenerationSettings) -> str | None:
        if self._db is None:
            return None
        try:
            row = self._db.execute(
                "SELECT completion FROM completions WHERE key = ?", (key,)
            ).fetchone()
        except sqlite3.DatabaseError as err:  # a damaged page: found when it is read
            raise self._damaged(err) from None
        if row is None or answer_problem(str(row[0]), settings) is not None:
            return None
        return str(row[0])

    def _store(
        self, key: str, identity: str, settings: GenerationSettings, prompt: str, text: str
    ) -> None:
        if self._db is None:
            return
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO completions VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    self.backend.name,
                    identity,
                    json.dumps(settings.as_dict()),
                    prompt,
                    text,
                    time.time(),
                ),
            )
            self._db.commit()
        except sqlite3.DatabaseError as err:
            raise self._damaged(err) from None

    def generate(
        self,
        prompts: Sequence[str],
        settings: GenerationSettings,
        accept: Callable[[int, str], bool] | None = None,
    ) -> list[str]:
        """One completion per prompt, in order; cached ones are not asked again. ``accept(i,
        answer)``: whether an answer to ``prompts[i]`` parses for its prompt; one that does not
        is returned but not cached (counted ``unparsable``), so the next run asks again."""
        identity = self.backend.identity()
        identity_json = json.dumps(identity, sort_keys=True)
        keys = [cache_key(self.backend.name, identity, settings, p) for p in prompts]
        out: list[str | None] = [self._lookup(k, settings) for k in keys]
        if accept is not None:  # a cache written before answers were checked
            out = [t if t is None or accept(i, t) else None for i, t in enumerate(out)]
        todo: dict[str, list[int]] = {}
        for i, (k, got) in enumerate(zip(keys, out, strict=True)):
            if got is None:
                todo.setdefault(k, []).append(i)
        hits = len(prompts) - sum(len(v) for v in todo.values())
        self.stats.hits += hits
        self.stats.misses += len(prompts) - hits
        logger.info(
            "LLM cache %s: %d hits, %d misses (%d distinct prompts to ask %s)",
            self.path or "(off)",
            hits,
            len(prompts) - hits,
            len(todo),
            self.backend.name,
        )
        if todo:
            unique = list(todo)
            first = [todo[k][0] for k in unique]
            asked = [prompts[i] for i in first]
            failed: Counter[str] = Counter()
            for j, answer in self.backend.stream(asked, settings):
                self.stats.calls += 1
                key = unique[j]
                bad = answer if isinstance(answer, BadAnswer) else answer_problem(answer, settings)
                if bad is not None:
                    failed[bad.kind] += 1
                    logger.debug("prompt %d: bad answer (%s: %s)", first[j], bad.kind, bad.detail)
                    answer = ""
                elif accept is not None and not accept(first[j], str(answer)):
                    failed["unparsable"] += 1
                else:
                    self._store(key, identity_json, settings, asked[j], str(answer))
                for i in todo[key]:
                    out[i] = str(answer)
            if failed:
                self.stats.failed.update(failed)
                logger.warning(
                    "%d answers of %s not cached (%s); they fall back now and are asked again "
                    "on the next run",
                    sum(failed.values()),
                    self.backend.name,
                    ", ".join(f"{kind}: {n}" for kind, n in sorted(failed.items())),
                )
        missing = [i for i, t in enumerate(out) if t is None]
        if missing:
            raise RuntimeError(
                f"backend {self.backend.name} returned no completion for {len(missing)} prompts"
            )
        return [t for t in out if t is not None]
