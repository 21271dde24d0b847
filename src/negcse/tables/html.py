"""The HTML twin of a table: its Markdown (and caption) as one standalone page, which the
Snakemake report (``snakemake --report``) shows inline as a rendered table.

:func:`markdown_html` reads the small Markdown the table builders write: ``## `` headings,
``1. `` numbered lists, pipe tables (header, separator, rows; ``**cell**`` in bold) and
paragraphs, blocks separated by blank lines. Everything else is escaped text.
"""

from __future__ import annotations

import html
import re

_STYLE = (
    "body{font-family:sans-serif;font-size:14px;margin:1em}"
    "table{border-collapse:collapse;margin:0.5em 0 1.5em}"
    "th,td{padding:2px 8px;text-align:right;white-space:nowrap}"
    "th{border-bottom:1px solid #333}tbody tr:nth-child(even){background:#f3f3f3}"
    "td:first-child,th:first-child,td:nth-child(2),th:nth-child(2){text-align:left}"
    "p{max-width:60em}"
)
_NUMBERED = re.compile(r"^\d+\. ")


def _inline(text: str) -> str:
    """Escaped text, a cell wrapped in ``**`` bold."""
    text = text.strip()
    if len(text) > 4 and text.startswith("**") and text.endswith("**"):
        return f"<b>{html.escape(text[2:-2])}</b>"
    return html.escape(text)


def _row(line: str, tag: str) -> str:
    cells = line.strip().strip("|").split("|")
    return "<tr>" + "".join(f"<{tag}>{_inline(c)}</{tag}>" for c in cells) + "</tr>"


def _block(lines: list[str]) -> str:
    if lines[0].startswith("## "):
        head = f"<h2>{html.escape(lines[0][3:].strip())}</h2>"
        return head + (_block(lines[1:]) if lines[1:] else "")
    if all(line.startswith("|") for line in lines):
        if len(lines) < 2 or not set(lines[1]) <= set("|-: "):
            raise ValueError(f"a Markdown table needs a header and a separator: {lines[0]!r}")
        body = "".join(_row(line, "td") for line in lines[2:])
        return f"<table><thead>{_row(lines[0], 'th')}</thead><tbody>{body}</tbody></table>"
    if all(_NUMBERED.match(line) for line in lines):
        items = "".join(f"<li>{html.escape(_NUMBERED.sub('', line))}</li>" for line in lines)
        return f"<ol>{items}</ol>"
    return f"<p>{html.escape(' '.join(lines))}</p>"


def markdown_html(markdown: str, title: str) -> str:
    """A standalone HTML page of ``markdown`` (see the module doc)."""
    blocks: list[list[str]] = [[]]
    for line in markdown.splitlines():
        if line.strip():
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    body = "\n".join(_block(b) for b in blocks if b)
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}'
        f"</title><style>{_STYLE}</style></head>\n<body>\n{body}\n</body></html>\n"
    )
