"""The workflow plan: from the validated config and the registries (methods, generators,
evaluations, tables), every job's inputs, outputs and command arguments, and the targets. The
rule files ask it (rules/common.smk holds the Snakemake glue only); it imports no Snakemake and
is tested without it (tests/workflow/test_plan.py)."""

from __future__ import annotations

import itertools
import json
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from typing import Any

from negcse.analysis.groups import MethodGroup, method_groups
from negcse.evaluation.registry import quoted
from negcse.generators import registry as generators
from negcse.methods.registry import method_class
from negcse.tables.claims import load_claims
from negcse.tables.published import published_mteb_avg
from negcse.tables.reports import grid_papers, own_pages
from negcse.tables.specs import TABLES, TableSpec
from negcse.workflow.config import (
    column_readers,
    grid_output,
    grid_runs,
    method_baselines,
    method_corpus,
    method_papers,
    released_models,
    resolve_method,
    scale_note,
)
from negcse.workflow.guide_config import (
    config_guide_models,
    guide_args,
    guide_backbones,
    guide_outputs,
    guide_specs,
)
from negcse.workflow.plan import evaluate
from negcse.workflow.plan.evaluate import MODEL_DIR, SUBJECTS, Subject, mirror_arg
from negcse.workflow.plan.guide_cache import (
    CACHE_DIR,
    CacheJob,
    cache_args,
    cache_inputs,
    guide_cache_jobs,
)

logger = logging.getLogger(__name__)

__all__ = ["SUBJECTS", "Plan", "Subject", "alternation", "expand", "mirror_arg", "quoted"]

#: the figures of each backbone and method group (rules/analysis.smk)
FIGURES = ["soft_negatives", "hard_positives", "training_curves"]
#: the `dvc plots` data of the training curves (rule training_curves_data)
PLOTS = ["training_curves", "training_loss"]
#: MTEB's task groups (rules/mteb.smk)
MTEB_GROUPS = ["reranking", "classification"]
TABLE_FORMATS = ["tex", "csv", "md", "html"]


def alternation(values: Iterable[Any]) -> str:
    """A regex matching exactly one of ``values`` (a wildcard constraint)."""
    return "|".join(re.escape(str(v)) for v in values)


def expand(patterns: str | Iterable[str], **values: Iterable[Any]) -> list[str]:
    """Snakemake's ``expand``: each pattern formatted with every combination of ``values``."""
    patterns = [patterns] if isinstance(patterns, str) else list(patterns)
    keys = list(values)
    combos = list(itertools.product(*(list(values[k]) for k in keys)))
    return [p.format(**dict(zip(keys, combo, strict=True))) for p in patterns for combo in combos]


def released_runs(config: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """The released checkpoints to evaluate (evaluation.released), all of them: planning never
    asks the network; a checkpoint that cannot be got when its job runs (offline, the hub
    unreachable, no pinned revision) is written as unavailable there, and the tables say so
    (``negcse evaluate --unavailable-ok``)."""
    return released_models(dict(config))


class Plan:
    """The jobs of one validated config. ``log`` receives the plan's notes (a named grid, a
    skipped table) as the dry run prints them."""

    def __init__(self, config: Mapping[str, Any], log: Callable[[str], None] = logger.info) -> None:
        self.config = config
        self.methods: list[str] = list(config["grid"]["methods"])
        self.backbones: list[str] = list(config["grid"]["backbones"])
        self.corpus: str = config["corpus"]["name"]
        self.corpora: list[str] = list(config.get("corpora") or {})
        self.baselines = method_baselines(dict(config))
        if config["grid"].get("name"):
            log(
                f"grid '{config['grid']['name']}' (grid.name): its tables, metrics, figures and "
                f"curves go under {self.grid_path('results/tables')[: -len('tables')]}, not over "
                "the default grid's results/tables"
            )
        self.released = released_runs(config)
        self.grid_tables = self._grid_tables(log)
        self.figure_groups: dict[str, MethodGroup] = {
            g.name: g for g in method_groups(self.methods, self.baselines)
        }
        self.papers = method_papers(dict(config))
        self.paper_pages = grid_papers(self.methods, self.papers)
        self.method_pages = own_pages(self.methods, self.papers)
        #: run_spec's answers: every seed's train job asks for its (method, backbone)'s
        self._run_specs: dict[tuple[str, str], str] = {}
        #: grid_runs' answers by backbones (the seed plan behind them is costly to key)
        self._grid_runs: dict[tuple[str, ...] | None, list[tuple[str, str, int]]] = {}

    # -- paths and words ------------------------------------------------------------------

    def grid_path(self, path: str) -> str:
        """A grid-wide output or log path (tables, metrics, figures, curves): as written for
        the default grid, under results/grids/<grid.name>/ for a named one (its own folder)."""
        return grid_output(dict(self.config), path)

    def mirror_arg(self) -> str:
        return mirror_arg(self.config)

    def wildcard_patterns(self) -> dict[str, str]:
        """The workflow-wide wildcard constraints."""
        return {
            "method": alternation(self.config["methods"]),
            "backbone": alternation([*self.backbones, *guide_backbones(dict(self.config))]),
            "seed": r"\d+",
            "corpus": r"[A-Za-z0-9_.-]+",
            "key": r"[A-Za-z0-9_.-]+",
        }

    def runs(self, backbones: list[str] | None = None) -> list[tuple[str, str, int]]:
        """(method, backbone, seed) of every training of the grid (:func:`grid_runs`), on
        ``backbones`` (else the grid's), computed once per Plan."""
        key = tuple(backbones) if backbones else None
        if key not in self._grid_runs:
            self._grid_runs[key] = grid_runs(dict(self.config), backbones)
        return self._grid_runs[key]

    def run_files(
        self, patterns: str | list[str], backbones: list[str] | None = None, **more: Any
    ) -> list[str]:
        """``patterns`` for every (method, backbone, seed) of the grid (each method with its own
        seeds: methods.<m>.seeds), with ``more`` expanded as Snakemake's expand does."""
        return [
            path
            for method, backbone, seed in self.runs(backbones)
            for path in expand(
                patterns, method=[method], backbone=[backbone], seed=[str(seed)], **more
            )
        ]

    # -- training ---------------------------------------------------------------------------

    def method_class(self, method: str) -> type:
        return method_class(self.config["methods"][method]["implementation"])

    def column_input(self, column: str, method: str, backbone: str, seed: str) -> str:
        """The file of generated ``column`` that a train job (method, backbone, seed) reads,
        made by the column's generator (src/negcse/generators/): the seam between the
        training jobs and the generator jobs."""
        try:
            return generators.column_file(
                self.config,
                column,
                method,
                seed,
                method_corpus(dict(self.config), method),
                backbone,
            )
        except KeyError as err:
            raise KeyError(f"{err.args[0]} (method {method})") from None

    def train_inputs(self, method: str, backbone: str, seed: str) -> dict[str, str]:
        """The corpus, the method's columns, its guide runs (teachers train first) and its
        guides' caches (:mod:`negcse.workflow.plan.guide_cache`)."""
        inputs = self._run_inputs(method, backbone, seed)
        caches = self.guide_caches[1].get((method, backbone, seed), {})
        inputs.update({f"guide_cache_{g}": CACHE_DIR.format(key=k) for g, k in caches.items()})
        return inputs

    def _run_inputs(self, method: str, backbone: str, seed: str) -> dict[str, str]:
        corpus_column = self.method_class(method).corpus_column
        inputs = {
            "corpus": (
                f"results/data/corpus/{method_corpus(dict(self.config), method)}.txt"
                if corpus_column is None
                else self.column_input(corpus_column, method, backbone, seed)
            )
        }
        for column in self.method_class(method).columns:
            inputs[column] = self.column_input(column, method, backbone, seed)
        guides = guide_outputs(dict(self.config), method, backbone, seed)
        inputs.update({f"guide_{name}": path for name, path in guides.items()})
        return inputs

    def run_spec(self, method: str, backbone: str) -> str:
        """Everything that determines one training run; a change here reruns exactly that run
        (and, through ``guide_runs``, a changed teacher reruns its students). Resolved once
        per (method, backbone): the seeds' jobs share it."""
        key = (method, backbone)
        if key not in self._run_specs:
            spec = resolve_method(dict(self.config), method, backbone)
            guides = guide_specs(dict(self.config), method, backbone)
            if guides:
                spec["guide_runs"] = guides
            self._run_specs[key] = json.dumps(spec, sort_keys=True)
        return self._run_specs[key]

    def column_args(self, method: str, inputs: Mapping[str, str]) -> str:
        """``--column NAME=FILE`` for each column of the method."""
        return " ".join(
            f"--column {quoted([f'{c}={inputs[c]}'])}" for c in self.method_class(method).columns
        )

    def guide_args(self, method: str, backbone: str, seed: str) -> str:
        """`--guide NAME=MODEL` for each guide of the method (teacher folders or released
        names) and `--guide-cache NAME=DIR` for each guide read from its cache."""
        caches = self.guide_caches[1].get((method, backbone, seed), {})
        cached = [
            f"--guide-cache {quoted([f'{g}=' + CACHE_DIR.format(key=k)])}"
            for g, k in sorted(caches.items())
        ]
        return " ".join([guide_args(dict(self.config), method, backbone, seed), *cached])

    @cached_property
    def guide_caches(
        self,
    ) -> tuple[dict[str, CacheJob], dict[tuple[str, str, str], dict[str, str]]]:
        """The ``encode_guide`` jobs by key, and each student's guide -> key."""
        return guide_cache_jobs(self.config, self._run_inputs)

    def guide_cache_inputs(self, key: str) -> dict[str, str]:
        return cache_inputs(self.guide_caches[0][key])

    def guide_cache_args(self, key: str) -> str:
        return cache_args(self.guide_caches[0][key])

    def prefetch_models(self) -> str:
        """Every model the config names: backbones, and the models of the generators (their
        specs' ``models``: an MLM, the paraphraser, the translation pivots; per-method
        overrides too), the guides and the released checkpoints."""
        models = [
            *self.backbones,
            *generators.config_models(self.config, column_readers(dict(self.config))),
            *config_guide_models(dict(self.config)),
            *(model for _, _, model in released_models(dict(self.config))),
        ]
        return quoted(dict.fromkeys(models))

    # -- evaluation -------------------------------------------------------------------------

    def evaluation_inputs(self, subject: Subject) -> dict[str, str]:
        return evaluate.inputs(subject)

    def evaluation_outputs(
        self, subject: Subject
    ) -> dict[str, tuple[str, Mapping[str, Any] | None]]:
        return evaluate.outputs(subject)

    def evaluation_args(
        self,
        wildcards: Mapping[str, str],
        inputs: Mapping[str, str],
        outputs: Mapping[str, str],
        threads: int,
    ) -> str:
        return evaluate.evaluation_args(self.config, wildcards, inputs, outputs, threads)

    def released_pattern(self) -> str:
        return alternation(self.config.get("released") or {}) or "(?!)"

    # -- analyses ---------------------------------------------------------------------------

    def negation_args(self) -> str:
        """The SNCSE negation settings of the training data (generators.negation)."""
        negation = (self.config.get("generators") or {}).get("negation") or {}
        return "--reference-quirks" if negation.get("reference_quirks") else ""

    def figure_inputs(self, backbone: str, figure: str, group: str) -> list[str]:
        """The group's runs on the backbone, the baseline's first (its line is drawn first)."""
        pattern = (
            MODEL_DIR
            if figure == "training_curves"
            else "results/analysis/{method}/{backbone}/seed{seed}/analysis.json"
        )
        runs = self.runs([backbone])
        return [
            pattern.format(method=m, backbone=b, seed=seed)
            for method in self.figure_groups[group].methods
            for m, b, seed in runs
            if m == method
        ]

    def figure_baseline_arg(self, group: str) -> str:
        baseline = self.figure_groups[group].baseline
        return f"--baseline {quoted([baseline])}" if baseline else ""

    def analysis_targets(self) -> list[str]:
        figures = expand(
            self.grid_path("results/figures/{backbone}/{figure}/{group}.{ext}"),
            backbone=self.backbones,
            figure=FIGURES,
            group=list(self.figure_groups),
            ext=["png", "pdf"],
        )
        per_model = self.run_files(
            "results/analysis/{method}/{backbone}/seed{seed}/{name}.tex",
            name=["rank_errors", "case_study"],
        )
        return figures + per_model

    # -- tables and reports -----------------------------------------------------------------

    def table_enabled(self, spec: TableSpec) -> bool:
        """False when the table needs an evaluation setting that is off (e.g. evaluation.mteb)."""
        return spec.when is None or bool(self.config["evaluation"][spec.when])

    def _grid_tables(self, log: Callable[[str], None]) -> list[str]:
        """The grid-wide tables of this config; a table switched off is logged (MTEB: the
        offline smoke grid's mirror has no MTEB data)."""
        names = []
        for name, spec in TABLES.items():
            if spec.per_backbone:
                continue
            if self.table_enabled(spec):
                names.append(name)
            elif name == "mteb":
                log(
                    "MTEB evaluation skipped: evaluation.mteb is false (the MTEB datasets are "
                    "not in the offline mirror; set it true where they are cached or can be "
                    "downloaded)"
                )
            else:
                log(f"{name} table skipped: evaluation.{spec.when} is false")
        return names

    def table_evals(self, spec: TableSpec, backbones: list[str] | None = None) -> list[str]:
        """The files a table reads: every trained model's (and those of its ``also`` evaluations
        that are switched on), then (evaluation.baseline) each untrained backbone's, then the
        released checkpoints'."""
        backbones = backbones or self.backbones
        files = self.run_files(spec.inputs, backbones, **spec.expand)
        for pattern, setting in spec.also:
            if setting is None or self.config["evaluation"][setting]:
                files += self.run_files(pattern, backbones)
        files = [f for f in files if self._mteb_shown(f)]
        if spec.untrained and self.config["evaluation"]["baseline"]:
            files += expand(spec.untrained, backbone=backbones)
        if spec.released:
            files += [
                spec.released.format(released=name, backbone=backbone)
                for name, backbone, _ in self.released
                if backbone in backbones
            ]
        return files

    @cached_property
    def mteb_rows(self) -> set[tuple[str, str, str]]:
        """(group, method, backbone) whose MTEB results a table shows: a method with a
        published average of the group on that backbone (GCSE Table 6, SAN Table 4), and both
        sides of a claim on the group's average (resources/claims.csv)."""
        rows = {
            (group, method, backbone)
            for group in MTEB_GROUPS
            for method in self.methods
            for backbone in self.backbones
            if published_mteb_avg(method, backbone, group) is not None
        }
        for claim in load_claims():
            group = claim.measure.removeprefix("mteb_")
            if group != claim.measure:
                rows |= {(group, m, claim.backbone) for m in (claim.method, claim.baseline)}
        return rows

    def _mteb_shown(self, path: str) -> bool:
        """False for an MTEB result (``results/eval/mteb/<group>/<method>/<backbone>/...``)
        that no table shows (:attr:`mteb_rows`): it is not planned. A reduced-scale grid (the
        smoke grid's backbones carry no published row) shows every MTEB result it runs."""
        parts = path.split("/")
        if parts[:3] != ["results", "eval", "mteb"] or scale_note(dict(self.config)):
            return True
        group, method, backbone = parts[3], parts[4], "/".join(parts[5:-1])
        return (group, method, backbone) in self.mteb_rows

    def scale_args(self) -> str:
        """``--scale-note`` with a reduced-scale grid's first line of every table and page
        (nothing at the papers' scale)."""
        note = scale_note(dict(self.config))
        return f"--scale-note {quoted([note])}" if note else ""

    def table_options(self) -> str:
        """What every table job is given: the fewest seeds of a verdict (verdicts.min_seeds), the
        decision rule's settings (verdicts.fraction, equivalence, power), each method's paper (a
        method of no paper is compared with its declared baseline) and :meth:`scale_args`."""
        verdicts = self.config.get("verdicts") or {}
        parts = [f"--min-seeds {int(verdicts.get('min_seeds', 3))}"]
        parts += [f"--{k} {float(verdicts[k])}" for k in ("fraction", "equivalence", "power")
                  if k in verdicts]  # fmt: skip
        parts += [f"--papers {quoted(f'{m}={p}' for m, p in self.papers.items())}"]
        return " ".join([*parts, self.scale_args()]).rstrip()

    def table_inputs(self, table: str) -> list[str]:
        return self.table_evals(TABLES[table])

    def case_study_inputs(self, backbone: str) -> list[str]:
        return self.table_evals(TABLES["case_study"], [backbone])

    def table_targets(self) -> list[str]:
        """Every table: LaTeX, CSV, Markdown, HTML (the report's) and DVC metrics of each
        grid-wide one, the headline metrics, and the case study of each backbone."""
        headline = {"sts", "verdicts"} <= set(self.grid_tables)
        return (
            expand(
                self.grid_path("results/tables/{table}.{ext}"),
                table=self.grid_tables,
                ext=TABLE_FORMATS,
            )
            + expand(self.grid_path("results/metrics/{table}.json"), table=self.grid_tables)
            + ([self.grid_path("results/headline.json")] if headline else [])
            + expand(
                self.grid_path("results/tables/case_study_{backbone}.{ext}"),
                backbone=self.backbones,
                ext=TABLE_FORMATS,
            )
        )

    def paper_figures(self, paper: str) -> list[str]:
        """The PNG figures of every group drawing one of the paper's own methods (a group that
        only shows a baseline of the paper is another paper's)."""
        return self._figures({m for m in self.methods if self.papers.get(m) == paper})

    def method_figures(self, method: str) -> list[str]:
        """The PNG figures of the group drawing the method (a method of no paper)."""
        return self._figures({method})

    def _figures(self, methods: set[str]) -> list[str]:
        """The figures of the groups holding one of ``methods`` as a member, not only as the
        group's baseline (SimCSE heads every family's group: its page shows its own)."""
        groups = [
            g.name for g in self.figure_groups.values() if methods & (set(g.methods) - {g.baseline})
        ]
        return expand(
            self.grid_path("results/figures/{backbone}/{figure}/{group}.png"),
            backbone=self.backbones,
            figure=FIGURES,
            group=groups,
        )

    def report_targets(self) -> list[str]:
        """A page per paper with a method in the grid, one per method of no paper."""
        return expand(
            self.grid_path("results/reports/{paper}.{ext}"),
            paper=self.paper_pages,
            ext=["md", "html"],
        ) + expand(
            self.grid_path("results/reports/methods/{method}.{ext}"),
            method=self.method_pages,
            ext=["md", "html"],
        )

    def all_targets(self) -> list[str]:
        """Every table and figure; each pulls in the evaluations (and trainings) behind it."""
        curves = [self.grid_path(f"results/plots/{name}.csv") for name in PLOTS]
        return [*self.table_targets(), *curves, *self.analysis_targets(), *self.report_targets()]

    def mteb_files(self) -> list[str]:
        """The MTEB results the grid's tables read (none when evaluation.mteb is off)."""
        spec = TABLES["mteb"]
        return self.table_evals(spec) if self.table_enabled(spec) else []

    def column_paths(self) -> list[tuple[str, str]]:
        """(column, file) of every generated column a training job of the grid reads."""
        return [
            (column, self.column_input(column, method, backbone, str(seed)))
            for method, backbone, seed in self.runs()
            for column in self.method_class(method).columns
        ]
