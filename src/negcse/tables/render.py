"""Long-form metrics -> mean +- std over seeds -> LaTeX, Markdown, CSV and DVC metrics.

:func:`collect` reads evaluation JSON files into one row per (method, backbone, seed, metric);
:func:`summarize` gives mean, std (ddof=1) and n per method x backbone; :func:`render` lays the
summary out as a paper prints it, described by :class:`Column`: methods and tasks by their
display names (:mod:`negcse.text.display`), rows by method family with a rule between families and
the reference rows (untrained, released, published) last, the best trained method's mean per
column and backbone in bold, true minus signs, each number formatted once from the stored value.
A column that is empty in every row is left out, and so is the Backbone column when one
backbone fills it; the caption says so. LaTeX is set in ``\\footnotesize`` and never scaled: a
table wider than the page (:data:`negcse.text.latex.PAGE`) is split by its columns, one with more
than :data:`MAX_ROWS` trained methods by family, one with several backbones per backbone, and a
table without rows is a comment. Markdown carries the same caption as LaTeX.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from negcse.analysis.groups import method_groups
from negcse.tables.dvc_metrics import Nested, metric_key, nest
from negcse.tables.eval_files import TableInputError, read_result, tags
from negcse.tables.eval_files import number as recorded_number
from negcse.text.display import BACKBONE_NAMES, UNTRAINED, backbone_name, family_order, method_name
from negcse.text.latex import ESCAPES, PAGE, latex_escape, latex_table
from negcse.text.markup import markdown_escape

CellKind = Literal["mean", "number", "signed", "text", "method", "count"]
#: evaluation JSON keys shown as a mark on a row's name, explained in the caption: the LLM that
#: wrote the model's data (GCSE), a resource substituted where the run was planned (SAN's
#: lexicon); a CSV column each where set
ROW_NOTES = ("llm", "substitute")
MARKS = ("†", "‡", "§", "¶")
#: At most this many trained methods per LaTeX table; more are split by method family
#: (negcse.analysis.groups), each part repeating the reference rows.
MAX_ROWS = 30
MINUS = "−"
EMPTY = "--"

#: LaTeX math in captions and headers, as plain signs and words
_MATH_SIGNS = {
    r"\mathrm": "",
    r"\times": "×",
    r"\pm": "±",
    r"\geq": "≥",
    r"\leq": "≤",
    r"\Delta": "Δ",
    r"\tau": "τ",
    r"\sigma": "σ",
    r"\lambda": "λ",
    r"\dagger": "†",
    r"\ddagger": "‡",
    r"\mathsection": "§",
    r"\mathparagraph": "¶",
}
#: LaTeX text in captions, as plain text
_TEXT = {
    "``": '"',
    "''": '"',
    "~": " ",
    r"\dag{}": "†",
    r"\ddag{}": "‡",
    **{v: k for k, v in ESCAPES.items() if k not in "~^\\$"},
}
_MATH = re.compile(r"(?<!\\)\$([^$]*)\$")


def _plain_math(match: re.Match[str]) -> str:
    text = match.group(1)
    for code, sign in _MATH_SIGNS.items():
        text = text.replace(code, sign)
    text = text.replace("{", "").replace("}", "").replace("_", " ").replace("-", MINUS)
    return " ".join(text.split())


def plain_caption(latex: str) -> str:
    """A caption's LaTeX as plain text (for Markdown and HTML): math such as ``$\\Delta$``,
    ``$-$`` or ``$\\Delta_{\\mathrm{base}}$`` as its sign and words, escapes and quotes undone."""
    text = _MATH.sub(_plain_math, latex)
    for code, plain in _TEXT.items():
        text = text.replace(code, plain)
    return text.replace(r"\$", "$")


@dataclass(frozen=True)
class Column:
    """One column after Method and Backbone.

    ``key`` is the summary column: ``{key}_mean``/``{key}_std`` for a ``mean`` column (read
    from the evaluation JSON's ``source`` key, default ``key``, times ``scale``; ``std``: show
    ``± std`` beside the mean when a row has several seeds), ``key`` itself otherwise.
    ``number`` prints the table's format, ``signed`` a +/- difference, ``count`` an integer,
    ``text`` text ("--" when empty), ``method`` a method by its display name. ``bold`` is the direction the metric improves in: the
    max or min mean of the trained rows of a backbone is in bold (None: no best, e.g. a spread
    or a position). ``latex`` is the LaTeX header when it is not the escaped ``label``.
    """

    key: str
    label: str
    kind: CellKind = "mean"
    bold: Literal["max", "min"] | None = "max"
    align: str = "r"
    latex: str | None = None
    source: str | None = None
    scale: float = 1.0
    std: bool = True

    @property
    def numeric(self) -> bool:
        """Its cells are numbers (a CSV twin's column holds them as such)."""
        return self.kind not in ("text", "method")

    def header(self, latex: bool) -> str:
        """The label; a line break in it (``"Soft-neg.\\npeak"``) stacks the lines in LaTeX and
        is a space in Markdown."""
        lines = self.label.split("\n")
        if not latex:
            return " ".join(lines)
        if self.latex is not None:
            return self.latex
        if len(lines) == 1:
            return latex_escape(self.label)
        stacked = r" \\ ".join(latex_escape(line) for line in lines)
        return rf"\begin{{tabular}}[b]{{@{{}}{self.align}@{{}}}}{stacked}\end{{tabular}}"


#: The columns ``summarize(..., paper_value)`` adds: the published headline and our difference.
PAPER_DIFF = (
    Column("paper", "Paper", kind="number"),
    Column("diff", "Δ", kind="signed", latex=r"$\Delta$"),
)


def collect(paths: Sequence[str | os.PathLike[str]], keys: Sequence[str]) -> pd.DataFrame:
    """One row per (method, backbone, seed, metric) from evaluation JSON files."""
    rows = []
    for path in paths:
        result = read_result(path)  # checked as a whole: derived numbers agree with records
        tags(result, path, "method", "backbone")
        for key in keys:
            if key not in result:
                raise TableInputError(f"{path}: metric '{key}' missing")
            rows.append(
                {
                    "method": result["method"],
                    "backbone": result["backbone"],
                    "seed": result.get("seed", ""),
                    "metric": key,
                    # null: not computed (an analysis without such pairs), shown as none
                    "value": math.nan if result[key] is None else recorded_number(result, key, path),
                    **{note: result.get(note, "") for note in ROW_NOTES},
                }
            )
    return pd.DataFrame(rows)


def summarize(
    long: pd.DataFrame,
    keys: Sequence[str],
    paper_value: Callable[[str, str], float | None] | None = None,
    released: Collection[str] = (),
    per_seed: str | None = None,
) -> pd.DataFrame:
    """Mean, std (sample, ddof=1; 0 for one seed) and n per method x backbone x metric, and the
    value of ``per_seed`` (the headline; default the last key) at each seed; with
    ``paper_value``, columns ``paper`` and ``diff`` (our mean of the last key minus it).
    Column ``trained``: False for the untrained backbone's rows and the ``released``
    checkpoints' (reference rows, never in bold)."""
    grouped = long.groupby(["method", "backbone", "metric"], sort=False)["value"]
    stats = grouped.agg(
        mean="mean", std=lambda v: float(v.std(ddof=1)) if len(v) > 1 else 0.0, n="count"
    ).reset_index()
    wide = stats.pivot_table(
        index=["method", "backbone"], columns="metric", values=["mean", "std", "n"], sort=False
    )
    out = pd.DataFrame(index=wide.index)
    for key in keys:
        out[f"{key}_mean"] = wide[("mean", key)]
        out[f"{key}_std"] = wide[("std", key)]
    out["seeds"] = wide[("n", keys[-1])].astype(int)
    out = out.reset_index()
    for note in ROW_NOTES:  # over the seeds, shown in the row's name
        if note in long.columns and long[note].astype(bool).any():
            notes = long.groupby(["method", "backbone"], sort=False)[note].agg(
                lambda v: ", ".join(sorted({str(x) for x in v if x}))
            )
            out[note] = [
                notes.get((m, b), "") for m, b in zip(out["method"], out["backbone"], strict=True)
            ]
    if paper_value is not None:
        out["paper"] = [
            paper_value(m, b) for m, b in zip(out["method"], out["backbone"], strict=True)
        ]
        out["paper"] = out["paper"].astype(float)
        out["diff"] = out[f"{keys[-1]}_mean"] - out["paper"]
    out["trained"] = ~out["method"].isin([UNTRAINED, *released])
    return _with_seed_columns(out, long, per_seed or keys[-1])


def _with_seed_columns(out: pd.DataFrame, long: pd.DataFrame, key: str) -> pd.DataFrame:
    """A column ``{key}_seed{s}`` per seed of the headline ``key``: each row's value at that
    seed (empty where the row did not run it), for the CSV (the per-seed scores behind
    mean ± std; the rendered tables show only the summary)."""
    if "seed" not in long.columns:
        return out
    head = long[(long["metric"] == key) & (long["seed"].astype(str) != "")]
    seeds = sorted(
        {str(s) for s in head["seed"]},
        key=lambda s: (not s.isdigit(), int(s) if s.isdigit() else 0, s),
    )
    values = {
        (m, b, str(s)): float(v)
        for m, b, s, v in zip(
            head["method"], head["backbone"], head["seed"], head["value"], strict=True
        )
    }
    rows = list(zip(out["method"], out["backbone"], strict=True))
    columns = {f"{key}_seed{s}": [values.get((m, b, s), math.nan) for m, b in rows] for s in seeds}
    return pd.concat([out, pd.DataFrame(columns, index=out.index)], axis=1)


def add_baseline_delta(summary: pd.DataFrame, key: str, baselines: dict[str, str]) -> pd.DataFrame:
    """Columns ``baseline`` (the method the paper compared with) and ``vs_baseline`` (our mean
    of ``key`` minus the baseline's, same backbone; NaN where the baseline has no row)."""
    means = {
        (m, b): float(v)
        for m, b, v in zip(
            summary["method"], summary["backbone"], summary[f"{key}_mean"], strict=True
        )
    }
    out = summary.copy()
    out["baseline"] = [baselines.get(m, "") for m in out["method"]]
    out["vs_baseline"] = [
        means[(m, b)] - means[(baselines[m], b)] if (baselines.get(m), b) in means else math.nan
        for m, b in zip(out["method"], out["backbone"], strict=True)
    ]
    return out


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _trained(rows: pd.DataFrame | pd.Series) -> pd.Series | bool:
    """The ``trained`` column; a frame without one: every row but the untrained backbone's."""
    if "trained" in rows:
        return rows["trained"].astype(bool) if isinstance(rows, pd.DataFrame) else rows["trained"]
    return rows["method"] != UNTRAINED


def _trained_rows(rows: pd.DataFrame) -> pd.Series:
    """Trained rows with a result (not the untrained, released or published-only ones)."""
    trained = _trained(rows)
    return trained & (rows["seeds"] > 0) if "seeds" in rows else trained


def _best(summary: pd.DataFrame, col: Column) -> dict[str, float]:
    """Per backbone: the best mean of the trained rows in the column's direction."""
    if col.kind != "mean" or col.bold is None:
        return {}
    rows = summary[_trained_rows(summary)]
    values = rows.groupby("backbone", sort=False)[f"{col.key}_mean"]
    best = values.max() if col.bold == "max" else values.min()
    return {str(b): float(v) for b, v in best.dropna().items()}


def number(value: float, fmt: str = "{:.2f}", latex: bool = False, signed: bool = False) -> str:
    """``value`` formatted once, with a true minus sign (a signed zero prints unsigned)."""
    text = (fmt.replace("{:", "{:+", 1) if signed else fmt).format(value)
    if signed and float(text) == 0:
        text = fmt.format(0.0)
    if text.startswith("-"):
        text = MINUS + text[1:]
    return latex_escape(text) if latex else text


#: a hyphen that is a minus sign in text: before a digit, not inside a word
_TEXT_MINUS = re.compile(r"(?<![\w.-])-(?=\d)")


def _text(value: object, latex: bool) -> str:
    """Text as shown: minus signs, backbones by their display names."""
    text = "" if _missing(value) else _TEXT_MINUS.sub(MINUS, str(value))
    for backbone, name in BACKBONE_NAMES.items():
        text = text.replace(backbone, name)
    return latex_escape(text) if latex else (text or EMPTY)


def _mean_cell(row: pd.Series, col: Column, fmt: str, best: float | None, latex: bool) -> str:
    n = int(row["seeds"])
    mean = row.get(f"{col.key}_mean")
    if n == 0 or _missing(mean):
        return EMPTY
    text = number(mean, fmt, latex)
    if n > 1 and col.std:
        text += (r" $\pm$ " if latex else " ± ") + number(row[f"{col.key}_std"], fmt, latex)
    if not (best is not None and bool(_trained(row)) and math.isclose(mean, best)):
        return text
    return rf"\textbf{{{text}}}" if latex else f"**{text}**"


def _cell(row: pd.Series, col: Column, fmt: str, best: float | None, latex: bool) -> str:
    if col.kind == "mean":
        return _mean_cell(row, col, fmt, best, latex)
    value = row[col.key]
    if col.kind == "text":  # a column read back from CSV with no value at all is float NaN
        return _text(value, latex)
    if col.kind == "method":
        return _text("" if _missing(value) or not value else method_name(str(value)), latex)
    if _missing(value):
        return EMPTY
    if col.kind == "count":
        return str(int(value))
    return number(value, fmt, latex, signed=col.kind == "signed")


#: how a row note reads in the caption, by its key
NOTE_TEXT = {"llm": "data written by the LLM {}", "substitute": "{}"}


def _notes(row: pd.Series) -> list[str]:
    return [NOTE_TEXT[k].format(v) for k in ROW_NOTES if isinstance(v := row.get(k), str) and v]


@dataclass(frozen=True)
class Notes:
    """The row notes of a table (:data:`ROW_NOTES`) and the mark each is shown by."""

    marks: dict[str, str]

    @classmethod
    def of(cls, rows: pd.DataFrame) -> Notes:
        notes = list(dict.fromkeys(n for _, row in rows.iterrows() for n in _notes(row)))
        marks = [MARKS[i % len(MARKS)] * (1 + i // len(MARKS)) for i in range(len(notes))]
        return cls(dict(zip(notes, marks, strict=True)))

    def name(self, row: pd.Series) -> str:
        """The row's method as displayed, with the marks of its notes."""
        marks = "".join(self.marks[n] for n in _notes(row))
        return method_name(str(row["method"])) + (f" {marks}" if marks else "")

    def sentence(self, rows: pd.DataFrame) -> str:
        """The caption's sentence: the mark and note of each note in ``rows``."""
        shown = {n for _, row in rows.iterrows() for n in _notes(row)}
        return " ".join(f"{mark} {note}." for note, mark in self.marks.items() if note in shown)


def cells(
    summary: pd.DataFrame,
    columns: Sequence[Column],
    fmt: str,
    latex: bool,
    best: Mapping[str, Mapping[str, float]] | None = None,
    notes: Notes | None = None,
) -> list[list[str]]:
    """Method, backbone and one cell per column for every summary row; ``best`` (column key
    -> backbone -> best mean) from the whole table when these rows are a part of it."""
    if best is None:
        best = {col.key: _best(summary, col) for col in columns}
    notes = notes or Notes.of(summary)
    out = []
    for _, row in summary.iterrows():
        names = [notes.name(row), backbone_name(str(row["backbone"]))]
        backbone = str(row["backbone"])
        out.append(
            [latex_escape(n) if latex else n for n in names]
            + [_cell(row, col, fmt, best[col.key].get(backbone), latex) for col in columns]
        )
    return out


def family_blocks(rows: pd.DataFrame) -> list[pd.DataFrame]:
    """The trained rows by method family (:func:`negcse.text.display.family_order`; grid order
    within one), then the reference rows (untrained, released, published-only)."""
    trained = _trained_rows(rows)
    order = rows["method"].map(family_order)
    blocks = [rows[trained & (order == k)] for k in sorted(set(order[trained]))]
    return [b for b in (*blocks, rows[~trained]) if len(b)]


def _parts(
    summary: pd.DataFrame, baselines: Mapping[str, str], lines: pd.Series | None = None
) -> list[tuple[str, pd.DataFrame]]:
    """(backbone or "", rows) per LaTeX table: one per backbone of the trained rows when there
    are several, each split into method families of at most :data:`MAX_ROWS` lines of trained
    rows (``lines``: each row's printed lines, 1 each by default; a method may have several
    rows, e.g. one per measure). Every part has its backbone's reference rows (untrained,
    released, published) and those of the backbones nothing was trained on (e.g. a paper's
    BERT-base numbers)."""
    lines = pd.Series(1, index=summary.index) if lines is None else lines
    is_trained = _trained_rows(summary)
    backbones = list(dict.fromkeys(summary.loc[is_trained, "backbone"]))
    others = summary[~summary["backbone"].isin(backbones)]
    parts = []
    for backbone in backbones:
        rows = summary[summary["backbone"] == backbone]
        name = backbone if len(backbones) > 1 else ""
        trained = rows[is_trained[rows.index]]
        reference = pd.concat([rows.drop(trained.index), others])
        methods = list(dict.fromkeys(trained["method"]))
        if lines[trained.index].sum() <= MAX_ROWS:
            parts.append((name, pd.concat([rows, others])))
            continue
        by_method = {m: trained[trained["method"] == m] for m in methods}
        for group in method_groups(methods, baselines, MAX_ROWS):
            # a group of methods with several rows each runs over parts of MAX_ROWS lines
            chunk: list[pd.DataFrame] = []
            for m in group.methods:
                if (
                    chunk
                    and sum(lines[c.index].sum() for c in chunk) + lines[by_method[m].index].sum()
                    > MAX_ROWS
                ):
                    parts.append((name, pd.concat([*chunk, reference])))
                    chunk = []
                chunk.append(by_method[m])
            parts.append((name, pd.concat([*chunk, reference])))
    return parts or [("", summary)]


# -- layout: which columns a (part of a) table shows, and how wide it is ---------------------

#: widths in em of Computer Modern's glyphs, roughly (digits, lower case, capitals, signs)
_EM = {**dict.fromkeys("0123456789", 0.5), **dict.fromkeys(".,:;'!|", 0.28),
       **dict.fromkeys("()[]-/", 0.39), **dict.fromkeys(" ", 0.33),
       **dict.fromkeys("±−×+=<>≥≤Δ", 0.78), **dict.fromkeys("mwMW", 0.9)}  # fmt: skip


def text_width(text: str, size: float = PAGE.font_size) -> float:
    """Points a line of plain text takes at ``size`` (bold, ``**x**``, 10% wider)."""
    bold = text.startswith("**") and text.endswith("**")
    text = text.strip("*") if bold else text
    em = sum(_EM.get(c, 0.72 if c.isupper() else 0.5) for c in text)
    return em * size * (1.1 if bold else 1.0)


@dataclass(frozen=True)
class Layout:
    """A table ready to print: the indices of the cells shown (0: method, 1: backbone, 2...:
    the columns), its row blocks, and what the caption adds (the backbone when one fills the
    column, the columns left out as empty, the notes' marks)."""

    shown: list[int]
    blocks: list[pd.DataFrame]
    note: str

    @staticmethod
    def of(rows: pd.DataFrame, columns: Sequence[Column], fmt: str,
           best: Mapping[str, Mapping[str, float]], notes: Notes,
           keep_order: bool = False) -> Layout:  # fmt: skip
        """``keep_order``: the rows as given, in one block (a table ordered by its numbers)."""
        blocks = [rows] if keep_order else family_blocks(rows)
        ordered = pd.concat(blocks) if blocks else rows
        plain = cells(ordered, columns, fmt, False, best, notes)
        empty = [j for j in range(2, len(columns) + 2) if all(r[j] in ("", EMPTY) for r in plain)]
        backbones = list(dict.fromkeys(ordered["backbone"]))
        shown = [0] + [1] * (len(backbones) > 1)
        shown += [j for j in range(2, len(columns) + 2) if j not in empty]
        sentences = []
        if len(backbones) == 1:
            sentences.append(f"Backbone: {backbone_name(str(backbones[0]))}.")
        if empty:
            left = ", ".join(columns[j - 2].label for j in empty)
            sentences.append(f"Left out, empty in every row: {left}.")
        if marks := notes.sentence(rows):
            sentences.append(marks)
        return Layout(shown, blocks, " ".join(sentences))

    def widths(self, columns: Sequence[Column], fmt: str, best: Mapping[str, Mapping[str, float]],
               notes: Notes) -> dict[int, float]:  # fmt: skip
        """Points each shown column takes, its padding included; a text column at most
        :data:`WRAP` wide (its longer cells wrap: :func:`_wrapped`)."""
        plain = cells(pd.concat(self.blocks), columns, fmt, False, best, notes)
        header = [["Method"], ["Backbone"], *(c.label.split("\n") for c in columns)]
        out = {}
        for j in self.shown:
            width = max(text_width(x) for x in [*header[j], *(r[j] for r in plain)])
            if j >= 2 and columns[j - 2].kind in WRAPPED_KINDS:
                width = min(width, WRAP)
            out[j] = width + 2 * PAGE.tabcolsep
        return out


#: a text column is at most this wide (points); a longer cell wraps in a ragged-right box
WRAP = 140.0
WRAPPED_KINDS = ("text", "method")


def _lines(summary: pd.DataFrame, columns: Sequence[Column], fmt: str,
           best: Mapping[str, Mapping[str, float]]) -> pd.Series:  # fmt: skip
    """The lines each row prints in LaTeX: its longest wrapped cell's (:func:`_wrapped`)."""
    plain = cells(summary, columns, fmt, False, best)
    wraps = [j + 2 for j, c in enumerate(columns) if c.kind in WRAPPED_KINDS]
    counts = [max([1, *(math.ceil(text_width(row[j]) / WRAP) for j in wraps)]) for row in plain]
    return pd.Series(counts, index=summary.index)


def _wrapped(cell: str, plain: str) -> str:
    """A LaTeX cell wider than :data:`WRAP` as a top-aligned, ragged-right box of that width."""
    if text_width(plain) <= WRAP:
        return cell
    return rf"\parbox[t]{{{WRAP:g}pt}}{{\raggedright {cell}}}"


def _column_parts(widths: dict[int, float], fixed: int) -> list[list[int]]:
    """The shown columns in as few parts as fit the page's text width, the first ``fixed`` (the
    row names) repeated in each; of those splits, the one whose widest part is narrowest."""
    head, rest = list(widths)[:fixed], list(widths)[fixed:]
    room = PAGE.text_width - sum(widths[j] for j in head)
    w = [widths[j] for j in rest]

    @functools.cache
    def split(start: int, parts: int) -> tuple[float, tuple[int, ...]]:
        """(widest part, cut points) of rest[start:] in ``parts`` parts."""
        if parts == 1:
            return sum(w[start:]), ()
        best: tuple[float, tuple[int, ...]] = (math.inf, ())
        for cut in range(start + 1, len(w) - parts + 2):
            widest, cuts = split(cut, parts - 1)
            best = min(best, (max(sum(w[start:cut]), widest), (cut, *cuts)))
        return best

    for parts in range(1, len(w) + 1):
        widest, cuts = split(0, parts)
        if widest <= room or parts == len(w):
            bounds = [0, *cuts, len(w)]
            return [head + rest[a:b] for a, b in itertools.pairwise(bounds)]
    return [head]


def _latex_body(layout: Layout, shown: list[int], columns: Sequence[Column], fmt: str,
                best: Mapping[str, Mapping[str, float]], notes: Notes) -> list[str]:  # fmt: skip
    header = ["Method", "Backbone", *(c.header(latex=True) for c in columns)]
    wraps = {j for j in shown if j >= 2 and columns[j - 2].kind in WRAPPED_KINDS}
    body = [" & ".join(header[j] for j in shown) + r" \\"]
    for block in layout.blocks:
        body.append(r"\midrule")
        rows = cells(block, columns, fmt, True, best, notes)
        plain = cells(block, columns, fmt, False, best, notes)
        for row, text in zip(rows, plain, strict=True):
            shown_cells = [_wrapped(row[j], text[j]) if j in wraps else row[j] for j in shown]
            body.append(" & ".join(shown_cells) + r" \\")
    return body


def render_latex(
    summary: pd.DataFrame,
    columns: Sequence[Column],
    caption: str,
    label: str,
    fmt: str = "{:.2f}",
    baselines: Mapping[str, str] | None = None,
    keep_order: bool = False,
) -> str:
    """The table as LaTeX floats (see the module doc for when it is several); a table without
    rows is a comment saying so. ``keep_order``: rows as given, no family blocks."""
    if summary.empty:
        return f"% {label}: no rows. {plain_caption(caption)}\n"
    aligns = ["l", "l", *(c.align for c in columns)]
    best = {col.key: _best(summary, col) for col in columns}
    notes = Notes.of(summary)
    pieces = []
    for backbone, rows in _parts(summary, baselines or {}, _lines(summary, columns, fmt, best)):
        layout = Layout.of(rows, columns, fmt, best, notes, keep_order)
        widths = layout.widths(columns, fmt, best, notes)
        fixed = 1 + (1 in layout.shown)
        for shown in _column_parts(widths, fixed):
            pieces.append((backbone, layout, shown, sum(widths[j] for j in shown)))
    tables = []
    for i, (backbone, layout, shown, width) in enumerate(pieces, start=1):
        body = _latex_body(layout, shown, columns, fmt, best, notes)
        part_caption, part_label = caption, label
        if len(pieces) > 1:
            where = f"{latex_escape(backbone_name(backbone))}, " if backbone else ""
            part_caption = rf"{caption} ({where}part {i} of {len(pieces)})"
            part_label = f"{label}-{i}"
        if layout.note:
            part_caption += " " + latex_escape(layout.note)
        cols = "".join(aligns[j] for j in shown)
        wide = width > PAGE.column_width
        tables.append(latex_table(body, cols, part_caption, part_label, wide=wide))
    return "\n".join(tables)


def render_markdown(
    summary: pd.DataFrame,
    columns: Sequence[Column],
    fmt: str = "{:.2f}",
    caption: str = "",
    keep_order: bool = False,
) -> str:
    """The table in Markdown, rows as in LaTeX; ``caption`` (LaTeX) first, as plain text, with
    what the layout adds to it. A table without rows says so. Every cell and the caption are
    escaped (:func:`negcse.text.markup.markdown_escape`): a tag cannot add a row or a cell."""
    text = markdown_escape(plain_caption(caption))
    if summary.empty:
        return (f"{text}\n\n" if text else "") + "No rows.\n"
    best = {col.key: _best(summary, col) for col in columns}
    notes = Notes.of(summary)
    layout = Layout.of(summary, columns, fmt, best, notes, keep_order)
    header = ["Method", "Backbone", *(c.header(latex=False) for c in columns)]
    rule = [":---", ":---", *(":---" if c.align == "l" else "---:" for c in columns)]
    rows = [header, *cells(pd.concat(layout.blocks), columns, fmt, False, best, notes)]
    lines = ["| " + " | ".join(markdown_escape(r[j]) for j in layout.shown) + " |" for r in rows]
    lines.insert(1, "|" + "|".join(rule[j] for j in layout.shown) + "|")
    text = " ".join(t for t in (text, markdown_escape(layout.note)) if t)
    return (f"{text}\n\n" if text else "") + "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Rendered:
    tex: str
    md: str


def render(
    summary: pd.DataFrame,
    columns: Sequence[Column],
    caption: str,
    label: str,
    fmt: str = "{:.2f}",
    baselines: Mapping[str, str] | None = None,
    keep_order: bool = False,
) -> Rendered:
    """LaTeX and Markdown of one table, with the same caption."""
    return Rendered(
        render_latex(summary, columns, caption, label, fmt, baselines, keep_order),
        render_markdown(summary, columns, fmt, caption, keep_order),
    )


def to_csv(frame: pd.DataFrame) -> str:
    """The CSV twin: every column, each float as stored (its shortest round-trip text), so a
    page built from it (:mod:`negcse.tables.reports`) rounds each number once, as the table
    does (from four decimals, a mean such as 59.19499 would be rounded twice: 59.1950, then
    59.20, where its table prints 59.19)."""
    return frame.to_csv(index=False)


def metrics(summary: pd.DataFrame, key: str) -> Nested:
    """The mean of ``key`` per method x backbone as ``{method: {backbone: {leaf: mean}}}`` (4
    decimals, as in the CSV; ``leaf``: :func:`metric_key` of ``key``): what `dvc metrics show`
    / `dvc metrics diff` list, as ``method.backbone.leaf``."""
    column = f"{key}_mean"
    if column not in summary:
        raise KeyError(f"no metric '{key}' in the table (columns: {', '.join(summary.columns)})")
    seeded = summary[summary["seeds"] > 0]
    leaf = metric_key(key)
    return nest(
        (method, backbone, {leaf: round(float(value), 4)})
        for method, backbone, value in zip(
            seeded["method"], seeded["backbone"], seeded[column], strict=True
        )
        if not math.isnan(value)  # none computed: no metric (a metrics file holds no NaN)
    )
