"""The types a table spec and its builders share: :class:`TableSpec` (and its
:class:`PaperColumn`), the workflow's :class:`Options` and the built :class:`Table`. The specs
(:mod:`negcse.tables.specs`) and the builders (``build``, ``published_view``, ``verdicts``) import
them from here, so no builder imports the specs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from negcse.analysis.verdict_rules import MIN_SEEDS, Rule
from negcse.tables.render import Column

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Options:
    """Settings from the workflow: ``baselines`` maps a method to the one its paper compared
    it with (config/defaults.yaml ``methods.<m>.baseline``); ``released`` names the released
    checkpoints' rows (config/defaults.yaml ``released``), reference rows like the untrained one;
    ``min_seeds`` the fewest seeds a side that give a verdict (config/defaults.yaml
    ``verdicts.min_seeds``); ``scale_note`` the first line of every table of a reduced-scale
    grid (empty at the papers' scale: :func:`negcse.workflow.config.scale_note`); ``papers``
    maps a method to its paper (``methods.<m>.paper``; a method of no paper is compared with
    its declared baseline); ``rule`` the verdicts' decision rule (config/defaults.yaml
    ``verdicts``: fraction, equivalence, power)."""

    baselines: Mapping[str, str] = field(default_factory=dict)
    released: tuple[str, ...] = ()
    min_seeds: int = MIN_SEEDS
    scale_note: str = ""
    papers: Mapping[str, str] = field(default_factory=dict)
    rule: Rule = field(default_factory=Rule)


@dataclass(frozen=True)
class Table:
    """A built table: LaTeX, the frame its CSV twin is written from, Markdown, DVC metrics,
    and the HTML page the Snakemake report shows (the Markdown with its caption)."""

    tex: str
    frame: pd.DataFrame | None = None
    md: str | None = None
    metrics: Mapping[str, Any] | None = None  # nested (negcse.tables.dvc_metrics)
    html: str | None = None


@dataclass(frozen=True)
class PaperColumn:
    """Published numbers of one metric (published_splits.csv): a ``paper_{metric}`` column,
    and a row for every published model we do not train."""

    metric: str
    dataset: str
    table: str | None = None


@dataclass(frozen=True)
class TableSpec:
    """A results table.

    ``inputs`` is one trained model's evaluation file ({method}, {backbone}, {seed}, and any
    wildcard of ``expand``); ``untrained`` the untrained backbone's ({backbone}), or None;
    ``released`` a released checkpoint's ({released}, {backbone}: config/defaults.yaml ``released``).
    ``columns`` are shown after Method and Backbone, in order (see :class:`Column`): a ``mean``
    column's ``source`` is its key in the evaluation JSON, times ``scale``. ``paper`` gives
    the published headline of a method x backbone (columns ``paper``, ``diff``: our mean of the
    last mean column minus it); ``published`` the per-metric published columns. ``baseline``
    adds each method's paper baseline and our difference to it. ``also``: more trained
    models' evaluation files the table reads, each with the boolean ``evaluation`` setting it
    needs (None: always). ``caption`` is LaTeX; a builder may add to it. ``when`` names a
    boolean ``evaluation`` setting the table needs.
    """

    name: str
    inputs: str
    caption: str
    summary: str  # one line for the Snakemake report
    category: str
    build: Callable[[TableSpec, Sequence[str], Options], Table]
    columns: tuple[Column, ...] = ()
    untrained: str | None = None
    released: str | None = None
    paper: Callable[[str, str], float | None] | None = None
    published: tuple[PaperColumn, ...] = ()
    baseline: bool = False
    also: tuple[tuple[str, str | None], ...] = ()
    metric: str | None = "avg"
    fmt: str = "{:.2f}"
    subcategory: str | None = None
    expand: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    when: str | None = None
    per_backbone: bool = False

    @property
    def label(self) -> str:
        return f"tab:{self.name}"
