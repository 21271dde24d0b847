"""One page per paper: did its claims hold? ``results/reports/<paper>.md`` (and its HTML twin).

A page gathers, for the paper's methods of the grid and the baselines they are compared with,
the rows of the tables already built (their CSV twins): the verdicts (``verdicts.csv``), the
STS averages beside the published ones (``sts.csv``), the released checkpoints
(``checkpoints.csv``), and shows the figures of the method groups that draw the paper's own
methods, by kind, as images (the PNGs beside the page under ``results/figures/``, in git).
Methods are named as the tables name them (:mod:`negcse.display`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePath

import pandas as pd

from negcse.display import backbone_name, family, method_name
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

#: the figure kinds (results/figures/<backbone>/<kind>/<group>.png), in page order
FIGURE_KINDS: dict[str, str] = {
    "soft_negatives": "Negations and random pairs: cosine similarity (SNCSE Figure 4)",
    "hard_positives": "High-gold, low-overlap STS pairs: cosine similarity (SAN Figure 4)",
    "training_curves": "Training: STS-B dev, the loss and its logged parts",
}


def method_paper(method: str) -> str | None:
    """The paper a method of the grid reproduces (None: a shared baseline such as SimCSE):
    its family's (:func:`negcse.display.family`)."""
    return family(method).paper


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


def _doc(path: str, out_dir: str) -> str:
    """A link to a repository document, relative to the page, where the document is found
    from the working directory (the repository's root, as the workflow runs); else its path."""
    if os.path.isfile(path):
        return f"[{path}]({PurePath(os.path.relpath(path, out_dir)).as_posix()})"
    return f"`{path}`"


def figure_section(figures: Sequence[str], out_dir: str) -> list[str]:
    """The figures by kind, each an image with the group's methods named below it."""
    by_kind: dict[str, list[str]] = {}
    for path in figures:
        by_kind.setdefault(PurePath(path).parent.name, []).append(path)
    lines: list[str] = []
    for kind in sorted(by_kind, key=lambda k: list(FIGURE_KINDS).index(k) if k in FIGURE_KINDS
                       else len(FIGURE_KINDS)):  # fmt: skip
        lines += ["", f"### {FIGURE_KINDS.get(kind, kind)}", ""]
        for path in by_kind[kind]:
            parts = PurePath(path)
            roots = parts.stem.split("+")
            group = " + ".join(method_name(r) if "-more" not in r else r.replace("-", " ")
                               for r in roots)  # fmt: skip
            where = backbone_name(parts.parent.parent.name)
            link = PurePath(os.path.relpath(path, out_dir)).as_posix()
            lines += [f"![{group}, {where}]({link})", "", f"*{group}, {where}*", ""]
    return lines


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
        f"Our runs of {', '.join(method_name(m) for m in own)}, each beside the baseline its "
        f"paper compared it with. How the intervals and verdicts are computed: "
        f"{_doc('docs/statistics.md', out_dir)}; every deviation from the paper: "
        f"{_doc('docs/fidelity.md', out_dir)}."
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
        parts += ["", "## Figures", *figure_section(figures, out_dir)]
    return "\n".join(parts).rstrip() + "\n"
