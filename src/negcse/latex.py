"""LaTeX pieces the tables and the analyses share: :func:`latex_escape`, the one escaper of the
package, and :func:`latex_table`, the booktabs frame."""

from __future__ import annotations

from collections.abc import Sequence

ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    """Text safe inside a LaTeX table cell (every special character escaped)."""
    return "".join(ESCAPES.get(c, c) for c in text)


def latex_table(body: Sequence[str], cols: str, caption: str, label: str) -> str:
    """A booktabs ``table*`` around ``body`` (its lines, header and midrules included), shrunk
    to the line width when it is wider (graphicx's ``\\resizebox``; never enlarged)."""
    return "\n".join(
        [
            r"\begin{table*}[t]",
            r"\centering",
            r"\small",
            r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%",
            rf"\begin{{tabular}}{{{cols}}}",
            r"\toprule",
            *body,
            r"\bottomrule",
            r"\end{tabular}}",
            rf"\caption{{{caption}}}",
            rf"\label{{{label}}}",
            r"\end{table*}",
            "",
        ]
    )
