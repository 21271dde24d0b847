"""Our runs among the papers' published rows: for each backbone of the grid, every STS row the
five papers print for it (``published_sts.csv``: all 241 rows, baselines they quote included),
with ours, ordered by the 7-task average. Where a method has no paper of its own (a new one),
this is where its numbers meet the literature (its report page shows its backbone's part)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from negcse.tables.build import Options, Table, summarize_spec
from negcse.tables.html import markdown_html
from negcse.tables.published import TASKS, load_published
from negcse.tables.render import Column, metrics, render_latex, render_markdown
from negcse.text.display import backbone_name, task_name
from negcse.text.latex import latex_escape

if TYPE_CHECKING:
    from negcse.tables.table_spec import TableSpec

#: the columns of the table: where the row comes from, the 7 tasks and their average
SOURCE = Column("source", "Source", kind="text", align="l")
COLUMNS: tuple[Column, ...] = (
    SOURCE,
    *(Column(k, task_name(k), bold=None, std=False) for k in TASKS),
    Column("avg", task_name("avg"), bold=None),
)
#: rows per LaTeX table (a backbone's rows run over several)
ROWS_PER_TABLE = 30


def published_frame(backbones: Sequence[str]) -> pd.DataFrame:
    """Every published row of ``backbones`` as summary rows (one printed number each, not
    trained by us: never bold, no std): ``method`` is the row's label in the paper, ``source``
    its paper and table."""
    frame = load_published()
    frame = frame[frame["backbone"].isin(backbones)]
    rows = pd.DataFrame(
        {
            "method": frame["label"].astype(str),
            "backbone": frame["backbone"].astype(str),
            "source": frame["paper"].astype(str) + " " + frame["table"].astype(str),
            "seeds": 1,
            "trained": False,
        }
    )
    for key in (*TASKS, "avg"):
        rows[f"{key}_mean"] = frame[key].astype(float).to_numpy()
    return rows.reset_index(drop=True)


def with_published(summary: pd.DataFrame) -> pd.DataFrame:
    """``summary`` (our rows) and the published rows of its backbones, per backbone by
    average, best first (rows without an average last)."""
    ours = summary.assign(source="ours")
    rows = pd.concat([ours, published_frame(list(dict.fromkeys(ours["backbone"])))])
    order = {b: i for i, b in enumerate(dict.fromkeys(ours["backbone"]))}
    rows = rows.assign(_b=rows["backbone"].map(order), _a=-rows["avg_mean"].fillna(-1e9))
    rows = rows.sort_values(["_b", "_a"], kind="stable").drop(columns=["_b", "_a"])
    return rows.reset_index(drop=True)


def latex(summary: pd.DataFrame, spec: TableSpec, caption: str) -> str:
    """One ``table*`` per backbone and run of :data:`ROWS_PER_TABLE` rows, each captioned with
    its backbone (and part), the rows by average as given."""
    out = []
    for backbone, rows in summary.groupby("backbone", sort=False):
        chunks = [rows.iloc[i : i + ROWS_PER_TABLE] for i in range(0, len(rows), ROWS_PER_TABLE)]
        for k, chunk in enumerate(chunks, start=1):
            part = f", part {k} of {len(chunks)}" if len(chunks) > 1 else ""
            label = f"{spec.label}-{backbone}-{k}".replace("/", "-")
            cap = f"{caption} {latex_escape(backbone_name(str(backbone)))}{part}."
            out.append(render_latex(chunk, spec.columns, cap, label, spec.fmt, keep_order=True))
    return "\n".join(out)


def published_table(spec: TableSpec, evals: Sequence[str], options: Options) -> Table:
    """The ``published`` table: our STS rows among the papers' rows of the same backbones."""
    ours = summarize_spec(spec, evals, options)
    summary = with_published(ours)
    printed = set(summary.loc[summary["source"] != "ours", "backbone"])
    none = [b for b in dict.fromkeys(ours["backbone"]) if b not in printed]
    caption = spec.caption
    if none:
        caption += f" No paper prints numbers on {', '.join(map(backbone_name, none))}."
    md = render_markdown(summary, spec.columns, spec.fmt, caption, keep_order=True)
    return Table(
        tex=latex(summary, spec, caption),
        frame=summary,
        md=md,
        metrics=metrics(ours, "avg"),
        html=markdown_html(md, spec.name),
    )
