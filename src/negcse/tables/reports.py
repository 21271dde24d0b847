"""The report pages: one per paper, did its claims hold? (``results/reports/<paper>.md``), and
one per method of no paper (``results/reports/methods/<method>.md``), each with its HTML twin.

A method's paper is declared in its params block (``methods.<m>.paper``). A paper's page
gathers, for the paper's methods of the grid and the baselines they are compared with, the rows
of the tables already built (their CSV twins): the paper's claims and their verdicts on every
measure (``verdicts.csv``) with their forest plot, the STS averages beside the published ones
(``sts.csv``), the released checkpoints (``checkpoints.csv``), and links to the figures of the
method groups they are drawn in. A method of no paper (SimCSE, the suite's controls, a new
method) gets its comparisons with its declared baseline, its STS rows and its baseline's, and
its rows among every published row of its backbones (``published.csv``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from negcse.tables import published_view
from negcse.tables.published import CHECKPOINT_ROWS, PAPERS
from negcse.tables.render import Column, render_markdown
from negcse.tables.verdicts import CHECKPOINT_COLUMNS, VERDICT_COLUMNS, method_rows, paper_rows

TITLES: dict[str, str] = {
    "sncse": "SNCSE: soft negatives by negation",
    "una": "UNA: TF-IDF hard negatives and paraphrases",
    "san-hince": "SAN + HiNCE: syntactically aligned negatives",
    "gcse": "GCSE: knowledge-driven LLM synthesis and Gaussian decay",
    "osscse": "OssCSE: surface-structure bias (paraphrases and negations)",
}


def grid_papers(methods: Iterable[str], papers: Mapping[str, str]) -> list[str]:
    """The papers with at least one method in the grid (``papers``: method -> its declared
    paper, ``methods.<m>.paper``), in :data:`PAPERS` order."""
    found = {papers.get(m) for m in methods}
    return [p for p in PAPERS if p in found]


def own_pages(methods: Iterable[str], papers: Mapping[str, str]) -> list[str]:
    """The grid's methods of no paper (SimCSE, controls, a new method): a page each."""
    return [m for m in methods if m not in papers]


def page_methods(
    paper: str, methods: Iterable[str], baselines: Mapping[str, str], papers: Mapping[str, str]
) -> list[str]:
    """The paper's methods and the baselines they are compared with, in grid order."""
    methods = list(methods)
    own = [m for m in methods if papers.get(m) == paper]
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
    papers: Mapping[str, str],
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
    shown = page_methods(paper, methods, baselines, papers)
    own = [m for m in shown if papers.get(m) == paper]
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


#: the published table's columns on a method's page
PUBLISHED_COLUMNS = published_view.COLUMNS


def method_page(
    method: str,
    methods: Sequence[str],
    baselines: Mapping[str, str],
    sts: pd.DataFrame,
    verdicts: pd.DataFrame,
    published: pd.DataFrame,
    figures: Sequence[str],
    out_dir: str,
    scale_note: str = "",
) -> str:
    """The Markdown page of ``method``, a method of no paper: its comparisons with its
    baseline on every measure, its STS rows and its baseline's, and its rows among the
    published rows of its backbones; a reduced-scale grid's ``scale_note`` is its first line."""
    base = baselines.get(method)
    shown = [m for m in methods if m in {method, base}]
    parts = [f"**{scale_note}**", ""] if scale_note else []
    parts += [f"# {method}", ""]
    against = f"against its baseline `{base}`" if base else "(no baseline declared)"
    parts.append(
        f"Our runs of `{method}`, a method of no paper here, {against}, and beside every row "
        "the papers publish for the backbones it ran on. How the intervals and verdicts are "
        "computed: docs/statistics.md."
    )
    parts += ["", "## Against its baseline", ""]
    rows = method_rows(verdicts, method)
    if not base:
        parts.append("No baseline: declare one (`methods.<m>.baseline`) for a comparison.")
    elif len(rows):
        parts.append(render_markdown(rows, CLAIM_COLUMNS).rstrip())
    else:
        parts.append(f"No run of `{method}` and `{base}` on one backbone.")
    parts += ["", "## STS average", "", render_markdown(_rows(sts, shown), STS_COLUMNS).rstrip()]
    backbones = list(dict.fromkeys(_rows(sts, [method])["backbone"]))
    for backbone in backbones:
        rows = published[published["backbone"] == backbone]
        rows = rows[(rows["source"] != "ours") | rows["method"].isin(shown)]
        parts += ["", f"## Beside the published rows: {backbone}", ""]
        if (rows["source"] != "ours").any():
            parts.append(render_markdown(rows, PUBLISHED_COLUMNS).rstrip())
        else:
            parts.append(
                f"No paper prints numbers on {backbone} (the published rows are BERT and "
                "RoBERTa's: src/negcse/resources/published_sts.csv)."
            )
    if figures:
        parts += ["", "## Figures", ""]
        parts += [f"- [{f}]({os.path.relpath(f, out_dir)})" for f in figures]
    return "\n".join(parts) + "\n"
