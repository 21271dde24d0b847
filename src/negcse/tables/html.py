"""The HTML twin of a table or a paper's page: its Markdown rendered by markdown-it-py
(CommonMark with tables) as one standalone page, which the Snakemake report
(``snakemake --report``) shows inline and a browser opens as it is.

Raw HTML in the Markdown is escaped, never passed through; links and images keep their relative
paths, so a page under ``results/`` shows the figures beside it. Numbers stay on one line; text
cells and headers wrap, so that a wide table (the verdicts' Note and Verdict columns) fits a
1280-pixel window.
"""

from __future__ import annotations

import html

from markdown_it import MarkdownIt

_STYLE = (
    "body{font-family:sans-serif;font-size:14px;margin:1em;max-width:75em}"
    "table{border-collapse:collapse;margin:0.5em 0 1.5em}"
    # numbers stay on one line; text columns (left-aligned: methods, verdicts, notes) and the
    # headers wrap, so a wide table fits a 1280-pixel window
    "th,td{padding:2px 8px;white-space:nowrap;vertical-align:top}"
    "th{white-space:normal;vertical-align:bottom}"
    'td[style*="left"]{white-space:normal;min-width:7em}'
    "table{max-width:100%}"
    "th{border-bottom:1px solid #333}tbody tr:nth-child(even){background:#f3f3f3}"
    "p,li{max-width:60em}img{max-width:100%;height:auto;margin:0 1em 1em 0}"
)

_MD = MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table")


def markdown_body(markdown: str) -> str:
    """The HTML of ``markdown`` (CommonMark and pipe tables; raw HTML escaped)."""
    return _MD.render(markdown)


def markdown_html(markdown: str, title: str) -> str:
    """A standalone HTML page of ``markdown``."""
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>\n<body>\n"
        f"{markdown_body(markdown)}</body></html>\n"
    )
