"""One page per paper: did its claims hold? ``results/reports/<paper>.md`` (and its HTML twin).

A page gathers, for the paper's methods of the grid and the baselines they are compared with,
the rows of the tables already built (their CSV twins): the paper's claims and their verdicts
on every measure (``verdicts.csv``) with their forest plot, the STS averages beside the
published ones (``sts.csv``), the released checkpoints (``checkpoints.csv``), and links to the
figures of the method groups they are drawn in.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from negcse.tables.published import CHECKPOINT_ROWS, PAPERS
from negcse.tables.render import Column, render_markdown
from negcse.tables.verdicts import CHECKPOINT_COLUMNS, VERDICT_COLUMNS, paper_rows

TITLES: dict[str, str] = {
    "sncse": "SNCSE: soft negatives by negation",
    "una": "UNA: TF-IDF hard negatives and paraphrases",
    "san-hince": "SAN + HiNCE: syntactically aligned negatives",
    "gcse": "GCSE: knowledge-driven LLM synthesis and Gaussian decay",
    "osscse": "OssCSE: surface-structure bias (paraphrases and negations)",
}

#: a method's paper, by the prefix of its name (variants and ablations included)
PREFIXES: tuple[tuple[str, str], ...] = (
    ("una", "una"),
    ("sncse_san", "san-hince"),
    ("sncse", "sncse"),
    ("simcse_san", "san-hince"),
    ("san_", "san-hince"),
    ("rankcse", "san-hince"),
    ("rlrd", "san-hince"),
    ("gcse", "gcse"),
    ("osscse", "osscse"),
)


def method_paper(method: str) -> str | None:
    """The paper a method of the grid reproduces (None: a shared baseline such as SimCSE)."""
    return next((paper for prefix, paper in PREFIXES if method.startswith(prefix)), None)


def grid_papers(methods: Iterable[str]) -> list[str]:
    """The papers with at least one method in the grid, in :data:`PAPERS` order."""
    found = {method_paper(m) for m in methods}
    return [p for p in PAPERS if p in found]


def page_methods(paper: str, methods: Iterable[str], baselines: Mapping[str, str]) -> list[str]:
    """The paper's methods and the baselines they are compared with, in grid order."""
    methods = list(methods)
    own = [m for m in methods if method_paper(m) == paper]
    wanted = set(own) | {baselines[m] for m in own if m in baselines}
    return [m for m in methods if m in wanted]


def _rows(frame: pd.DataFrame, methods: Sequence[str]) -> pd.DataFrame:
    rows = frame[frame["method"].isin(methods)]
    order = rows["method"].map(list(methods).index)
    return rows.assign(_o=order).sort_values("_o", kind="stable").drop(columns="_o")


#: the verdicts table's columns (a page shows one paper's rows) and the STS average beside the
#: published one (no bold: a page shows part of a table)
CLAIM_COLUMNS = VERDICT_COLUMNS
STS_COLUMNS = (
    Column("seeds", "Seeds", kind="count"),
    Column("avg", "Avg.", bold=None),
    Column("paper", "Paper", kind="number"),
    Column("diff", "Δ paper", kind="signed"),
)


def forest_label(row: Mapping[str, object]) -> str:
    """A claim's row label in the forest plot."""
    return f"{row['method']} - {row['baseline']} ({row['measure_text']}, {row['backbone']})"


def paper_page(
    paper: str,
    methods: Sequence[str],
    baselines: Mapping[str, str],
    sts: pd.DataFrame,
    verdicts: pd.DataFrame,
    checkpoints: pd.DataFrame,
    figures: Sequence[str],
    out_dir: str,
    forest: str | None = None,
    scale_note: str = "",
) -> str:
    """The Markdown page of ``paper`` (its methods among ``methods``, the grid's): its claims
    on every measure (``forest``: their plot, linked), STS rows, checkpoints, figures; a
    reduced-scale grid's ``scale_note`` is its first line."""
    shown = page_methods(paper, methods, baselines)
    own = [m for m in shown if method_paper(m) == paper]
    parts = [f"**{scale_note}**", ""] if scale_note else []
    parts += [f"# {TITLES.get(paper, paper)}", ""]
    parts.append(
        f"Our runs of {', '.join(f'`{m}`' for m in own)}, each beside the baseline its paper "
        "compared it with. How the intervals and verdicts are computed: docs/statistics.md; "
        "every deviation from the paper: docs/fidelity.md."
    )
    claims = paper_rows(verdicts, paper)
    for column, when in (("verdict", "after Holm's correction"), ("verdict_raw", "from the 95% intervals")):
        held = claims[column].fillna("").value_counts()
        counts = ", ".join(f"{v} {k}" for k, v in held.items() if k)
        if counts:
            parts += ["", f"Verdicts {when}: {counts}."]
    parts += ["", "## Claims", ""]
    if len(claims):
        parts.append(render_markdown(claims, CLAIM_COLUMNS).rstrip())
        if forest:
            parts += ["", f"![Forest plot of the claims]({os.path.relpath(forest, out_dir)})"]
    else:
        parts.append("No claim of this paper has both its methods in the grid.")
    parts += ["", "## STS average", "", render_markdown(_rows(sts, shown), STS_COLUMNS).rstrip()]
    released = [n for n, (_, m, _) in CHECKPOINT_ROWS.items() if m in shown]
    ckpt = _rows(checkpoints, released) if len(checkpoints) else checkpoints
    parts += ["", "## Released checkpoints", ""]
    if len(ckpt):
        parts.append(render_markdown(ckpt, CHECKPOINT_COLUMNS).rstrip())
    else:
        parts.append("None evaluated (none released, or offline and in no mirror or cache).")
    if figures:
        parts += ["", "## Figures", ""]
        parts += [f"- [{f}]({os.path.relpath(f, out_dir)})" for f in figures]
    return "\n".join(parts) + "\n"
