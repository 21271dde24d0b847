"""The report pages: one per paper, did its claims hold? (``results/reports/<paper>.md``), and
one per method of no paper (``results/reports/methods/<method>.md``), each with its HTML twin.

A method's paper is declared in its params block (``methods.<m>.paper``). A paper's page
gathers, for the paper's methods of the grid and the baselines they are compared with, the rows
of the tables already built (their CSV twins): the paper's claims and their verdicts on every
measure (``verdicts.csv``) with their forest plot, the STS averages beside the published ones
(``sts.csv``), the released checkpoints (``checkpoints.csv``), and the figures of the method
groups that draw its own methods, by kind, as images (the PNGs under ``results/figures/``, in
git). A method of no paper (SimCSE, the suite's controls, a new method) gets its comparisons
with its declared baseline, its STS rows and its baseline's, its rows among every published row
of its backbones (``published.csv``) and its figures. Methods and backbones are named as the
tables name them (:mod:`negcse.text.display`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePath

import pandas as pd

from negcse.analysis.groups import method_groups
from negcse.analysis.verdict_rules import MIN_SEEDS
from negcse.tables import published_view
from negcse.tables.published import CHECKPOINT_ROWS, PAPERS
from negcse.tables.render import Column, render_markdown
from negcse.tables.verdicts import CHECKPOINT_COLUMNS, VERDICT_COLUMNS, method_rows, paper_rows
from negcse.text.display import backbone_name, method_name
from negcse.text.markup import markdown_escape

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


#: what the claims table's words and columns mean, under it on every page (docs/statistics.md
#: states the procedures)
VERDICT_LEGEND = (
    "**Reading the claims table.** *Seeds* n/m: our runs of the method / of its baseline; an "
    "interval and a verdict need `verdicts.min_seeds` a side ({min_seeds} unless the config "
    "says otherwise; fewer: *no verdict*, the estimate alone). "
    "*Δ base*: the method minus its baseline on the claim's measure, mean over seeds, with its "
    "*95% CI* over seeds and test set; *Paper Δ base*: the paper's difference. *Verdict*: "
    "*reproduced* (the interval past 0 and reaching the paper's difference), *smaller than "
    "claimed* (past 0, short of it), *not reproduced* (holding 0, short of it), *reversed* "
    "(past 0 the other way), *inconclusive* (holding 0 and the paper's difference); "
    "*(Holm)*: after Holm's correction over every hypothesis of the table. Where the run is "
    "not the paper's comparison (another backbone, LLM, protocol or scale, or a method of no "
    "paper against its declared baseline) only the sign is checked: *direction check: as "
    "claimed* (the interval past 0 on the claim's side), *direction check: opposite* (past 0 "
    "the other way), *direction check: inconclusive* (the interval holds 0); the Note says why. "
    "*Δ paper*: our mean minus the paper's number, with its *95% PI (one run)*, the interval of "
    "one more run of ours (the paper's single run as another seed)."
)


def verdict_legend() -> str:
    """The claims table's legend, with the default number of seeds a verdict needs."""
    return VERDICT_LEGEND.format(min_seeds=MIN_SEEDS)


def runs_sentence(methods: Sequence[str]) -> str:
    """The methods a page shows, by display name: ", " between them, or "; " where a name holds
    a comma itself (UNA, random selection), so that each name reads as one."""
    names = [method_name(m) for m in methods]
    return ("; " if any("," in n for n in names) else ", ").join(names)


def forest_label(row: Mapping[str, object]) -> str:
    """A claim's row label in the forest plot, named as the tables name them."""
    method, base = method_name(str(row["method"])), method_name(str(row["baseline"]))
    return f"{method} − {base} ({row['measure_text']}, {backbone_name(str(row['backbone']))})"


def _link(path: str, out_dir: str) -> str:
    """``path`` relative to the page, with forward slashes."""
    return PurePath(os.path.relpath(path, out_dir)).as_posix()


def _doc(path: str, out_dir: str) -> str:
    """A link to a repository document, relative to the page, where the document is found
    from the working directory (the repository's root, as the workflow runs); else its path."""
    return f"[{path}]({_link(path, out_dir)})" if os.path.isfile(path) else f"`{path}`"


def figure_groups(methods: Sequence[str], baselines: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """Each figure group of the grid (as the workflow draws them,
    :func:`negcse.analysis.groups.method_groups`): its name -> the methods it draws."""
    try:
        return {g.name: g.methods for g in method_groups(list(methods), baselines)}
    except ValueError:  # a grid the workflow refuses draws no figure either
        return {}


def figure_section(
    figures: Sequence[str],
    out_dir: str,
    groups: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """The figures by kind, each an image with every method it draws named below it (from
    ``groups``, :func:`figure_groups`); a figure of no known group by the roots of the families
    its file is named for (``sncse+osscse``)."""
    groups = groups or {}
    by_kind: dict[str, list[str]] = {}
    for path in figures:
        by_kind.setdefault(PurePath(path).parent.name, []).append(path)
    order = list(FIGURE_KINDS)
    lines = ["", "## Figures"]
    for kind in sorted(by_kind, key=lambda k: order.index(k) if k in order else len(order)):
        lines += ["", f"### {FIGURE_KINDS.get(kind, kind)}", ""]
        for path in by_kind[kind]:
            where = PurePath(path)
            backbone = backbone_name(where.parent.parent.name)
            if where.stem in groups:
                group = f"{runs_sentence(groups[where.stem])} ({backbone})"
            else:
                roots = [r.replace("-", " ") if r.endswith("-more") else method_name(r)
                         for r in where.stem.split("+")]  # fmt: skip
                group = f"{' + '.join(roots)}, {backbone}"
            lines += [f"![{group}]({_link(path, out_dir)})", "", f"*{group}*", ""]
    return lines


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
        f"Our runs of {markdown_escape(runs_sentence(own))}, each beside the baseline its "
        f"paper compared it with. How the intervals and verdicts are computed: "
        f"{_doc('docs/statistics.md', out_dir)}; every deviation from the paper: "
        f"{_doc('docs/fidelity.md', out_dir)}."
    )
    claims = paper_rows(verdicts, paper)
    for column, when in (
        ("verdict", "after the correction over the paper's family"),
        ("verdict_raw", "from the 95% intervals"),
    ):
        held = claims[column].fillna("").value_counts()
        counts = markdown_escape(", ".join(f"{v} {k}" for k, v in held.items() if k))
        if counts:
            parts += ["", f"Verdicts {when}: {counts}."]
    parts += ["", "## Claims", ""]
    if len(claims):
        parts.append(render_markdown(claims, CLAIM_COLUMNS).rstrip())
        parts += ["", verdict_legend()]
        if forest:
            parts += ["", f"![Forest plot of the claims]({_link(forest, out_dir)})"]
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
        parts += figure_section(figures, out_dir, figure_groups(methods, baselines))
    return "\n".join(parts).rstrip() + "\n"


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
    name = markdown_escape(method_name(method))
    parts += [f"# {name}", ""]
    against = f"against its baseline {markdown_escape(method_name(base))}" if base else "(no baseline declared)"
    parts.append(
        f"Our runs of {name} (`{markdown_escape(method)}`), {against}, and beside every row the "
        "papers publish for the backbones it ran on. No paper's claims about it are tested here "
        "(its params block names none of the papers this suite checks: "
        f"`methods.{markdown_escape(method)}.paper`). How the intervals and verdicts are computed: "
        f"{_doc('docs/statistics.md', out_dir)}."
    )
    parts += ["", "## Against its baseline", ""]
    rows = method_rows(verdicts, method)
    if not base:
        parts.append("No baseline: declare one (`methods.<m>.baseline`) for a comparison.")
    elif len(rows):
        parts += [render_markdown(rows, CLAIM_COLUMNS).rstrip(), "", verdict_legend()]
    else:
        parts.append(f"No run of {name} and {markdown_escape(method_name(base))} on one backbone.")
    parts += ["", "## STS average", "", render_markdown(_rows(sts, shown), STS_COLUMNS).rstrip()]
    backbones = list(dict.fromkeys(_rows(sts, [method])["backbone"]))
    for backbone in backbones:
        rows = published[published["backbone"] == backbone]
        rows = rows[(rows["source"] != "ours") | rows["method"].isin(shown)]
        shown_name = markdown_escape(backbone_name(backbone))
        parts += ["", f"## Beside the published rows: {shown_name}", ""]
        if (rows["source"] != "ours").any():
            parts.append(render_markdown(rows, PUBLISHED_COLUMNS, keep_order=True).rstrip())
        else:
            parts.append(
                f"No paper prints numbers on {shown_name} (the published rows are BERT and "
                "RoBERTa's: src/negcse/resources/published_sts.csv)."
            )
    if figures:
        parts += figure_section(figures, out_dir, figure_groups(methods, baselines))
    return "\n".join(parts).rstrip() + "\n"
