"""One page per paper: did its claims hold? ``results/reports/<paper>.md`` (and its HTML twin).

A page gathers, for the paper's methods of the grid and the baselines they are compared with,
the rows of the tables already built (their CSV twins): the verdicts (``verdicts.csv``), the
STS averages beside the published ones (``sts.csv``), the released checkpoints
(``checkpoints.csv``), and links to the figures of the method groups they are drawn in.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from negcse.tables.published import CHECKPOINT_ROWS, PAPERS
from negcse.tables.render import Column, render_markdown
from negcse.tables.verdicts import CHECKPOINT_COLUMNS, VERDICT_COLUMNS

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


#: the verdicts table's columns up to the paper's difference and the STS average beside the
#: published one (no bold: a page shows part of a table)
CLAIM_COLUMNS = VERDICT_COLUMNS[:7]
STS_COLUMNS = (
    Column("seeds", "Seeds", kind="count"),
    Column("avg", "Avg.", bold=None),
    Column("paper", "Paper", kind="number"),
    Column("diff", "Δ paper", kind="signed"),
)


def paper_page(
    paper: str,
    methods: Sequence[str],
    baselines: Mapping[str, str],
    sts: pd.DataFrame,
    verdicts: pd.DataFrame,
    checkpoints: pd.DataFrame,
    figures: Sequence[str],
    out_dir: str,
    transfer_verdicts: pd.DataFrame | None = None,
) -> str:
    """The Markdown page of ``paper`` (its methods among ``methods``, the grid's); with
    ``transfer_verdicts``, its claims on the transfer average too."""
    shown = page_methods(paper, methods, baselines)
    own = [m for m in shown if method_paper(m) == paper]
    parts = [f"# {TITLES.get(paper, paper)}", ""]
    parts.append(
        f"Our runs of {', '.join(f'`{m}`' for m in own)}, each beside the baseline its paper "
        "compared it with. How the intervals and verdicts are computed: docs/statistics.md; "
        "every deviation from the paper: docs/fidelity.md."
    )
    verdict_rows = _rows(verdicts, own)
    held = verdict_rows["verdict"].fillna("").value_counts()
    judged = {k: int(v) for k, v in held.items() if k}
    if judged:
        parts += ["", "Verdicts: " + ", ".join(f"{v} {k}" for k, v in judged.items()) + "."]
    parts += ["", "## Claims", "", render_markdown(verdict_rows, CLAIM_COLUMNS).rstrip()]
    if transfer_verdicts is not None:
        rows = _rows(transfer_verdicts, own)
        parts += ["", "## Transfer claims", ""]
        parts.append(
            render_markdown(rows, CLAIM_COLUMNS).rstrip() if len(rows) else "No transfer runs."
        )
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
