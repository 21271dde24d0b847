"""The one escaping of text read from files (tags, names, notes, a model's record) into Markdown:
every table cell and caption note (``negcse.tables``) and every field of a model card
(``negcse.training.model_card``). The HTML twins are rendered from this Markdown with raw HTML
off (``negcse.tables.html``); LaTeX has its own escaper, :func:`negcse.text.latex.latex_escape`, which
makes its text one line the same way (:func:`one_line`: a blank line would end a LaTeX cell).

Escaped text is one line of literal text: it cannot end a table row or start a paragraph,
heading or section, split a cell, open a code span, or carry raw HTML (``<script>``) or an
entity. It keeps what no Markdown reader acts on as it is (``sncse_pl``, ``[+0.10, +0.20]``)."""

from __future__ import annotations

import unicodedata

#: characters that end a cell (``|``), open a code span or an escape, as backslash escapes;
#: those of raw HTML and entities as entities (literal text in every Markdown reader, the
#: Hub's included)
_ESCAPES = {"\\": "\\\\", "|": "\\|", "`": "\\`", "<": "&lt;", ">": "&gt;", "&": "&amp;"}


def _line_break(char: str) -> bool:
    """A control character or a Unicode line or paragraph separator."""
    return unicodedata.category(char) in ("Cc", "Zl", "Zp")


def one_line(text: str) -> str:
    """``text`` with its line breaks and other control characters as spaces (what every
    escaper here and :func:`negcse.text.latex.latex_escape` start from)."""
    return "".join(" " if _line_break(c) else c for c in text)


def markdown_escape(text: str) -> str:
    """``text`` as one line of literal Markdown text (line breaks and other control characters
    as spaces)."""
    return "".join(_ESCAPES.get(c, c) for c in one_line(text))
