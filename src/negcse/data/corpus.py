"""Read a one-sentence-per-line corpus, screening bad lines.

Bad lines: empty (or whitespace only), not valid UTF-8, longer than ``max_chars`` characters,
and a last line with no final newline (a cut-off download, as in the mirror's wiki1m prefix).
``on_bad_line="skip"`` drops them and logs a count per reason; ``"fail"`` raises naming the
file and line.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from negcse.errors import UserError

logger = logging.getLogger(__name__)

#: the corpus's column in a training's data (each other column is aligned with it)
CORPUS_COLUMN = "sentence"
#: column names no generator makes and no ``negcse train --column`` gives: the corpus's
RESERVED_COLUMNS = frozenset({CORPUS_COLUMN})


class CorpusError(UserError, ValueError):
    """A bad corpus line under ``on_bad_line="fail"``; the message names file and line."""


@dataclass
class CorpusStats:
    lines_read: int = 0
    kept: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, object]:
        return {"lines_read": self.lines_read, "kept": self.kept, "skipped": dict(self.skipped)}


def _problem(raw: bytes, is_last_unterminated: bool, max_chars: int) -> tuple[str | None, str]:
    if is_last_unterminated:
        return "cut off (last line has no final newline)", ""
    try:
        text = raw.decode("utf-8").rstrip("\r")
    except UnicodeDecodeError as exc:
        return f"not valid UTF-8 ({exc.reason} at byte {exc.start})", ""
    if not text.strip():
        return "empty", ""
    if len(text) > max_chars:
        return f"too long ({len(text)} > {max_chars} characters)", ""
    return None, text


def read_corpus(
    path: str | os.PathLike[str],
    max_sentences: int | None = None,
    max_chars: int = 2000,
    on_bad_line: str = "skip",
) -> tuple[list[str], CorpusStats]:
    """The good sentences (at most ``max_sentences``) and what was skipped."""
    if on_bad_line not in ("skip", "fail"):
        raise ValueError(f"on_bad_line must be 'skip' or 'fail', not '{on_bad_line}'")
    data = Path(path).read_bytes()
    raw_lines = data.split(b"\n")
    unterminated_last = raw_lines[-1] != b""
    if not unterminated_last:
        raw_lines.pop()
    stats = CorpusStats()
    sentences: list[str] = []
    for line_no, raw in enumerate(raw_lines, start=1):
        if max_sentences is not None and len(sentences) >= max_sentences:
            break
        stats.lines_read += 1
        last = unterminated_last and line_no == len(raw_lines)
        reason, text = _problem(raw, last, max_chars)
        if reason is None:
            sentences.append(text.strip())
            continue
        if on_bad_line == "fail":
            raise CorpusError(f"{path}:{line_no}: bad corpus line: {reason}")
        stats.skipped[reason.split(" (")[0]] += 1
        logger.debug("%s:%d skipped: %s", path, line_no, reason)
    stats.kept = len(sentences)
    if stats.skipped:
        logger.warning(
            "%s: skipped %d bad line(s): %s",
            path,
            sum(stats.skipped.values()),
            ", ".join(f"{k}: {v}" for k, v in sorted(stats.skipped.items())),
        )
    if not sentences:
        raise CorpusError(f"{path}: no usable sentence")
    return sentences, stats
