"""Tolerant parsing of JSON-shaped completions, with per-prompt counts of what happened.

Small models copy the paper's examples, which are not JSON (unquoted keys, single quotes,
missing commas). A completion is ``parsed`` if strict JSON of the expected shape is found in it,
``repaired`` if ``json_repair`` (or, for one-field text prompts, the plain answer) gives that
shape, and ``failed`` otherwise; the caller then takes the paper's fallback.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import json_repair

PARSED, REPAIRED, FAILED = "parsed", "repaired", "failed"


class Status(StrEnum):
    PARSED = PARSED
    REPAIRED = REPAIRED
    FAILED = FAILED


@dataclass(frozen=True)
class ParseResult:
    status: Status
    value: dict[str, Any] | None
    reason: str = ""


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def _candidates(text: str, as_list: bool = False) -> list[str]:
    """Substrings that may hold the value: fenced blocks, then first '{' to last '}' (or '['
    to ']' for a list), or to the end when the completion was cut off before closing it."""
    found = [m.group(1).strip() for m in _FENCE.finditer(text)]
    opening, closing = ("[", "]") if as_list else ("{", "}")
    start, end = text.find(opening), text.rfind(closing)
    if start != -1:
        found.append(text[start : end + 1] if end > start else text[start:])
    return found


def _shape(
    value: Any, required: Sequence[str], aliases: Mapping[str, str], as_list: bool = False
) -> dict | None:
    """``value`` as a dict with every required key (aliases renamed), else None; a list (for
    ``as_list``) becomes {"items": list}."""
    if as_list:
        return {"items": value} if isinstance(value, list) else None
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if not isinstance(value, dict):
        return None
    out = {aliases.get(k, k): v for k, v in value.items()} if aliases else dict(value)
    if any(k not in out for k in required):
        return None
    return out


def _plain_text(text: str) -> str | None:
    """A one-line answer without braces, quotes trimmed: usable as {"text": ...}."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    if len(lines) != 1 or "{" in lines[0] or "}" in lines[0]:
        return None
    answer = lines[0].strip().strip('"').strip()
    return answer or None


def parse_completion(
    text: str,
    required: Sequence[str],
    aliases: Mapping[str, str] | None = None,
    text_field: str | None = None,
    as_list: bool = False,
) -> ParseResult:
    """Find a JSON object with the ``required`` keys in ``text``.

    ``aliases`` renames keys first (e.g. the released prompt's ``suject`` -> ``subject``).
    ``text_field``: for prompts whose answer is one string field, a non-empty string there is
    required, and a plain one-line answer is accepted as that field (counted as repaired).
    ``as_list``: the answer is a JSON list, returned as {"items": [...]}.
    """
    aliases = dict(aliases or {})
    pieces = _candidates(text, as_list)

    def valid(obj: dict | None) -> bool:
        if obj is None:
            return False
        if text_field is None:
            return True
        v = obj.get(text_field)
        return isinstance(v, str) and bool(v.strip())

    for piece in pieces:
        try:
            obj = _shape(json.loads(piece), required, {}, as_list)
        except (json.JSONDecodeError, ValueError):
            continue
        if valid(obj):
            return ParseResult(Status.PARSED, obj)
    for piece in pieces:
        try:
            repaired = json_repair.loads(piece)
        except Exception:  # json_repair raises assorted errors on odd input
            continue
        obj = _shape(repaired, required, aliases, as_list)
        if valid(obj):
            return ParseResult(Status.REPAIRED, obj, "json_repair")
    if text_field is not None and not pieces:
        answer = _plain_text(text)
        if answer is not None:
            return ParseResult(Status.REPAIRED, {text_field: answer}, "plain text")
    reason = "no JSON object" if not pieces else f"no object with keys {list(required)}"
    return ParseResult(Status.FAILED, None, reason)


@dataclass
class ParseReport:
    """Counts per prompt name of parsed / repaired / failed (fell back) completions."""

    counts: dict[str, Counter[str]] = field(default_factory=dict)

    def add(self, prompt: str, status: Status) -> None:
        self.counts.setdefault(prompt, Counter())[status.value] += 1

    def as_dict(self) -> dict[str, dict[str, int]]:
        return {
            name: {key: int(c[key]) for key in (PARSED, REPAIRED, FAILED)}
            for name, c in sorted(self.counts.items())
        }

    def totals(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        for c in self.counts.values():
            total.update(c)
        return {key: int(total[key]) for key in (PARSED, REPAIRED, FAILED)}
