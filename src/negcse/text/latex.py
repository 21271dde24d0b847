"""LaTeX pieces the tables and the analyses share: :func:`latex_escape`, the one escaper of the
package, :func:`latex_table`, the booktabs frame, and the page a table must fit (:data:`PAGE`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from negcse.text.markup import one_line

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
#: the signs the display names and numbers use, as pdflatex (T1, no inputenc magic) sets them
SIGNS = {
    "−": "$-$",
    "±": r"$\pm$",
    "×": r"$\times$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "Δ": r"$\Delta$",
    "τ": r"$\tau$",
    "λ": r"$\lambda$",
    "σ": r"$\sigma$",
    "†": r"$\dagger$",
    "‡": r"$\ddagger$",
    "§": r"$\mathsection$",
    "¶": r"$\mathparagraph$",
}


def latex_escape(text: str) -> str:
    """Text safe inside a LaTeX table cell: one line (:func:`negcse.text.markup.one_line`), every
    special character escaped, the signs of :data:`SIGNS` set in math or as their commands."""
    return "".join(ESCAPES.get(c) or SIGNS.get(c) or c for c in one_line(text))


@dataclass(frozen=True)
class Page:
    """A two-column paper page (ACL's: 16 cm text, 7.7 cm columns, 11 pt type); tables are set
    in ``\\footnotesize`` (9 pt there) with ``tabcolsep`` points of padding each side."""

    text_width: float = 455.0
    column_width: float = 219.0
    font_size: float = 9.0
    tabcolsep: float = 3.0


PAGE = Page()


def latex_table(body: Sequence[str], cols: str, caption: str, label: str, wide: bool = True) -> str:
    """A booktabs float around ``body`` (its lines, header and midrules included), in
    ``\\footnotesize`` and never scaled: ``table*`` across both columns, or ``table`` in one
    (``wide=False``), at the top of a page or on a page of floats. A table wider than the page
    is split by its builder instead."""
    env = "table*" if wide else "table"
    return "\n".join(
        [
            rf"\begin{{{env}}}[tp]",
            r"\centering",
            r"\footnotesize",
            rf"\setlength{{\tabcolsep}}{{{PAGE.tabcolsep:g}pt}}",
            rf"\begin{{tabular}}{{{cols}}}",
            r"\toprule",
            *body,
            r"\bottomrule",
            r"\end{tabular}",
            rf"\caption{{{caption}}}",
            rf"\label{{{label}}}",
            rf"\end{{{env}}}",
            "",
        ]
    )
