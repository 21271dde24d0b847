"""The one escaping of text read from files (tags, names, notes, a model's record) into Markdown:
every table cell and caption note (``negcse.tables``) and every field of a model card
(``negcse.training.model_card``). The HTML twins are rendered from this Markdown with raw HTML
off (``negcse.tables.html``); LaTeX has its own escaper, :func:`negcse.text.latex.latex_escape`, which
makes its text one line the same way (:func:`one_line`: a blank line would end a LaTeX cell).

Escaped text is one line of literal text: it cannot end a table row or start a paragraph,
heading or section, split a cell, open a code span, make a link or an image (``[text](url)``,
``![alt](url)``), or carry raw HTML (``<script>``) or an entity. It keeps what no Markdown reader
acts on as it is (``sncse_pl``, ``[+0.10, +0.20]``). Escaped text goes outside code spans (a
backslash escape does not work inside one, so an escaped backtick would close it); only names
(:mod:`negcse.text.names`: no backtick) are shown as code."""

from __future__ import annotations

import unicodedata

#: characters that end a cell (``|``), open a code span or an escape, as backslash escapes;
#: those of raw HTML and entities as entities (literal text in every Markdown reader, the
#: Hub's included)
_ESCAPES = {"\\": "\\\\", "|": "\\|", "`": "\\`", "<": "&lt;", ">": "&gt;", "&": "&amp;"}


#: the bidirectional embeddings, overrides, isolates and marks: text that shows in another order
#: than it reads ("good\u202etxt.exe" shows as "goodexe.txt")
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _line_break(char: str) -> bool:
    """A control character, a Unicode line or paragraph separator or a bidirectional control."""
    return unicodedata.category(char) in ("Cc", "Zl", "Zp") or char in _BIDI


def one_line(text: str) -> str:
    """``text`` with its line breaks and other control characters (bidirectional ones
    included) as spaces (what every escaper here and :func:`negcse.text.latex.latex_escape` start
    from)."""
    return "".join(" " if _line_break(c) else c for c in text)


def markdown_escape(text: str) -> str:
    """``text`` as one line of literal Markdown text (line breaks and other control characters
    as spaces)."""
    escaped = "".join(_ESCAPES.get(c, c) for c in one_line(text))
    return escaped.replace("](", "]\\(")  # no inline link or image: "[a](u)" stays text
