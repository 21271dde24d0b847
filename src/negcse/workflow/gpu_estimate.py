"""Estimated GPU hours of a grid, from the unit costs benchmarks/gpu.py measured.

``benchmarks/gpu_costs.csv`` holds seconds per training step (implementation x precision at a
batch size, BERT-base), per STS-B dev evaluation, per evaluation and MTEB job and per generated
sentence on one GPU: measured rows, and rows ``benchmarks/derive_costs.py`` derives from them
(source "derived from ...": the evaluation and MTEB jobs, GCSE's LLM synthesis). A run of method
m on backbone b costs steps x step seconds (scaled by batch size and by the backbone's
transformer-layer FLOPs relative to BERT-base) plus its dev evaluations plus one evaluation job;
a step at a precision without a row of its own is derived (:meth:`Costs.step_rate`); an
implementation without a measured row is priced by the measured one with the same trained
views (``SAME_COST``) plus its frozen guides' forward passes (each text a guide encodes: a third
of a trained view, the forward of forward + backward, at the guide's backbone size). A generator
costs its per-sentence time over the corpus for each distinct output the grid needs; GCSE's
synthesis and denoising are priced over its sources. Every size comes from the config and the
registered files' line counts (``datasets.tsv``), never from built files, so the estimate is the
same before and after the corpora exist. ``negcse estimate`` prints the table (:func:`grid_table`),
and so does a dry run of the workflow (rules/common.smk).
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from negcse.data.sources import registry
from negcse.generators.registry import producer, settings
from negcse.generators.specs.gcse import synthesis_id, triplets_id
from negcse.methods.registry import build_method, method_class
from negcse.workflow.config import method_corpus, method_seeds, released_models, resolve_method
from negcse.workflow.guide_config import guide_entries
from negcse.workflow.plan import SUBJECTS, Plan
from negcse.workflow.plan.guide_cache import CacheJob

#: the unit costs benchmarks/gpu.py writes, relative to the checkout
COSTS_FILE = "benchmarks/gpu_costs.csv"

WIKI1M = 1_000_000
DEV_SENTENCES = 3000  # STS-B dev: 1,500 pairs, the dev_eval row's work
#: transformer-layer FLOPs per token relative to BERT-base (layers x hidden^2): 24 x 1024^2
#: over 12 x 768^2 for the large models; RoBERTa-base has BERT-base's layers
LARGE_FACTOR = 24 * 1024**2 / (12 * 768**2)


#: implementations priced by the measured one with the same trained views per step (UNA's
#: variants swap a column; SNCSE's ablations keep its three prompt views, or drop one; the
#: distillation methods train their base method's views, their teachers are added as guides)
SAME_COST = {
    "una_baseline": "simcse",  # UNA's own SimCSE run (fp32, no injection)
    "una_paraphrase": "una",
    "una_both": "una",
    "sncse_pl": "sncse",
    "sncse_nl": "sncse",
    "sncse_infonce": "sncse",
    "rankcse": "simcse",
    # GCSE stage 1: SimCSE's two views (its word doubling rewrites the corpus once an epoch)
    "gcse_stage1": "simcse",
    "rankcse_san": "simcse_san",
    "rlrd": "sncse",
    "rlrd_san": "sncse_san",
    # GCSE stage 2 trains three [CLS] views (anchor, positive, negative) as SimCSE+SAN does
    # (its third view at another dropout), plus the frozen stage-1 model (a guide)
    "gcse": "simcse_san",
}
#: sentences per row of each mixed-corpus reader (negcse.data.domain_mix; pairs: two)
READER_SENTENCES = {"sts_pairs": 2, "sick_pairs": 2, "paws_pairs": 2, "nli_sentences": 3}
#: general lines per domain line (negcse.data.domain_mix.GENERAL_PER_DOMAIN; not imported:
#: the module reads files)
GENERAL_PER_DOMAIN = 3
#: LLM prompts per source before the positive / negative ones: the paper's one extraction
#: prompt, the released pipeline's two (negcse.gcse.pipeline)
EXTRACTION_PROMPTS = {"paper": 1, "released": 2}
#: prompts per source behind the derived gcse_synthesis rows (paper mode, one of each)
SYNTHESIS_ROW_PROMPTS = 3
#: the cost row of GCSE's synthesis per backend that runs on the grid's GPUs (openai: elsewhere)
SYNTHESIS_COSTS = {"transformers": "gcse_synthesis", "vllm": "gcse_synthesis_vllm"}
#: what a derived synthesis row is derived from (the table's note)
SYNTHESIS_DERIVATION = {
    "gcse_synthesis": "PEGASUS x decoder FLOPs",
    "gcse_synthesis_vllm": "a published vLLM tokens/s",
}


#: precisions that run at one rate: fp16 and bf16 are both 16-bit tensor-core autocast, one
#: matmul rate on Hopper and Ampere (bf16 only drops the grad scaler); tf32 and fp32 differ
PRECISION_CLASS = {"fp16": "16-bit", "bf16": "16-bit"}


@cache
def trained_views(implementation: str) -> int:
    """The views an implementation trains per step (its default parameters); 2 (SimCSE's) for
    a name the registry does not know or one without defaults for every parameter."""
    try:
        return len(build_method(implementation, {}, "bert-base-uncased").views(0))
    except (KeyError, TypeError, ValueError):
        return 2


def backbone_factor(backbone: str) -> float:
    return LARGE_FACTOR if "large" in backbone.lower() else 1.0


#: the options column of a training step compiled as ``compile: auto`` runs it on CUDA
AUTO_OPTIONS = "compile(reduce-overhead)+static_padding"


def run_options(train: Mapping[str, Any]) -> str:
    """The options column (benchmarks/gpu.py's naming) of a run's training step on CUDA: "" for
    eager; ``compile: auto`` is reduce-overhead with static padding."""
    mode = train.get("compile")
    if mode in (None, False):
        return ""
    if mode == "auto":
        return AUTO_OPTIONS
    compiled = "compile" if mode is True else f"compile({mode})"
    return compiled + ("+static_padding" if train.get("static_padding") else "")


@dataclass
class Costs:
    """Unit costs from gpu_costs.csv (seconds)."""

    device: str
    step: dict[tuple[str, str], tuple[float, int]] = field(default_factory=dict)
    #: (implementation, precision, options) -> compiled step seconds and batch
    compiled: dict[tuple[str, str, str], tuple[float, int]] = field(default_factory=dict)
    #: K processes on one GPU -> seconds per step of all of them (SimCSE eager)
    jobs: dict[int, float] = field(default_factory=dict)
    dev_eval: dict[str, float] = field(default_factory=dict)
    eval_job: float | None = None  # None: no row (neither measured nor derived)
    mteb_job: dict[str, float] = field(default_factory=dict)  # group -> seconds
    generator: dict[str, float] = field(default_factory=dict)
    #: (kind, name) -> the row's source where it was derived, not measured
    derived: dict[tuple[str, str], str] = field(default_factory=dict)

    def measured_step(self, implementation: str) -> bool:
        return any(i == implementation for i, _ in self.step)

    def own_step(self, implementation: str, precision: str) -> tuple[float, int, str] | None:
        """The eager row of ``implementation`` at ``precision``, else at a precision of its
        class (:data:`PRECISION_CLASS`): seconds, batch size and the row's precision."""
        kind = PRECISION_CLASS.get(precision)
        same = sorted(p for p, c in PRECISION_CLASS.items() if kind and c == kind)
        for p in (precision, *same):
            if (implementation, p) in self.step:
                return (*self.step[(implementation, p)], p)
        return None

    def step_rate(
        self, implementation: str, precision: str, batch: int
    ) -> tuple[float, str] | None:
        """Seconds of one eager step at batch ``batch`` (batch size scales linearly) and what
        it was derived from ("" where measured). An implementation priced as another
        (``SAME_COST``) by that one's rows. The step: (a) the implementation's row at
        ``precision``; else (b) its row at a precision of the same class (fp16 / bf16); else
        (c) a row of another precision times the per-sample ratio of the two precisions of the
        measured reference whose load (batch x trained views) is closest, on a log scale, to
        the priced step's (a launch-bound step gains less from faster numerics than a
        compute-bound one); else (d) that row unscaled. None: no row of the implementation."""
        name = SAME_COST.get(implementation, implementation)
        own = self.own_step(name, precision)
        if own is not None:
            seconds, measured_batch, used = own
            how = "" if used == precision else f"{name}'s {used} step"
            return seconds * batch / measured_batch, how
        rows = sorted((p, v) for (i, p), v in self.step.items() if i == name)
        if not rows:
            return None
        load = batch * trained_views(name)
        candidates = []
        for ref in sorted({i for i, _ in self.step} - {name}):
            target = self.own_step(ref, precision)
            for p, (seconds, measured_batch) in rows:
                base = self.own_step(ref, p)
                if target is None or base is None:
                    continue
                distance = abs(math.log(target[1] * trained_views(ref) / load))
                ratio = (target[0] / target[1]) / (base[0] / base[1])
                how = f"{name}'s {p} step x {ref}'s {target[2]}/{base[2]}"
                candidates.append((distance, how, seconds * ratio, measured_batch))
        if not candidates:
            p, (seconds, measured_batch) = rows[0]
            return seconds * batch / measured_batch, f"{name}'s {p} step (no {precision} ratio)"
        _, how, seconds, measured_batch = min(candidates)
        return seconds * batch / measured_batch, how

    def step_seconds(self, implementation: str, precision: str, batch: int) -> float | None:
        """The seconds of :meth:`step_rate`."""
        got = self.step_rate(implementation, precision, batch)
        return None if got is None else got[0]

    def compiled_seconds(
        self, implementation: str, precision: str, batch: int, options: str
    ) -> float | None:
        """Seconds of one step compiled with ``options``, where that was measured (an
        implementation priced as another, ``SAME_COST``, by that one's row); batch scales."""
        implementation = SAME_COST.get(implementation, implementation)
        got = self.compiled.get((implementation, precision, options))
        return None if got is None else got[0] * batch / got[1]

    def jobs_speedup(self, k: int) -> float:
        """Aggregate steps/s of ``k`` processes on one GPU over one process's (measured)."""
        if k == 1:
            return 1.0
        if k not in self.jobs or 1 not in self.jobs:
            raise ValueError(f"no jobs_per_gpu rows for K=1 and K={k} in the unit costs")
        return self.jobs[1] / self.jobs[k]


def merged_rows(paths: Sequence[str | Path]) -> list[tuple[Path, int, dict[str, str]]]:
    """The rows of every file, a later file's row replacing an earlier one of the same kind,
    name, precision, batch size and options (a measured CSV over the shipped one)."""
    rows: dict[tuple[str, ...], tuple[Path, int, dict[str, str]]] = {}
    for path in map(Path, paths):
        with path.open(encoding="utf-8", newline="") as fh:
            for line, row in enumerate(csv.DictReader(fh), start=2):
                key = tuple(row.get(k) or "" for k in KEY_COLUMNS)
                rows.pop(key, None)  # the newer row goes last: its device is the table's
                rows[key] = (path, line, row)
    return list(rows.values())


KEY_COLUMNS = ("kind", "name", "precision", "batch_size", "options")


def load_costs(*paths: str | Path) -> Costs:
    """Unit costs from one or more gpu_costs.csv files (later files' rows win)."""
    costs = Costs(device="")
    for path, line, row in merged_rows(paths):
        try:
            seconds = float(row["seconds"])
            costs.device = row["device"]
            kind = row["kind"]
            if kind == "train_step" and not row["options"]:
                costs.step[(row["name"], row["precision"])] = (seconds, int(row["batch_size"]))
            elif kind == "train_step":
                key = (row["name"], row["precision"], row["options"])
                costs.compiled[key] = (seconds, int(row["batch_size"]))
            elif kind == "jobs_per_gpu":
                costs.jobs[int(row["options"].removeprefix("K="))] = seconds
            elif kind == "dev_eval":
                costs.dev_eval[row["precision"]] = seconds
            elif kind == "eval_job":
                costs.eval_job = seconds
            elif kind == "mteb_job":
                costs.mteb_job[row["name"]] = seconds
            elif kind == "generator_sentence":
                costs.generator[row["name"]] = seconds
            if (row.get("source") or "").startswith("derived"):
                costs.derived[(kind, row["name"])] = row["source"]
            else:
                costs.derived.pop((kind, row["name"]), None)
        except (KeyError, ValueError, TypeError) as err:
            raise ValueError(f"{path}, line {line}: bad cost row {row} ({err})") from err
    return costs


@dataclass
class Row:
    name: str
    jobs: int = 0
    train_h: float = 0.0
    eval_h: float = 0.0
    unpriced: bool = False
    #: what its cost was derived from (no measurement of its own)
    derived: set[str] = field(default_factory=set)
    #: its training steps priced at a measured compiled rate (what its compile setting runs)
    compiled: bool = False

    @property
    def total_h(self) -> float:
        return self.train_h + self.eval_h


def _registered_lines(files: Iterable[str]) -> int | None:
    known = registry()
    lines = [known[f].lines if f in known else None for f in files]
    return None if None in lines else sum(lines)  # type: ignore[arg-type]


def corpus_size(config: Mapping[str, Any], name: str) -> int:
    """Lines of corpus ``name`` as the config and the registered line counts say (never the
    built file): the main corpus's ``max_sentences`` or its file's lines (wiki1m: 1,000,000);
    a mixed corpus (``corpora``) at most two sentences per pair (``max_pairs`` rows of a
    source, else its files' lines), its domain lines capped by ``max_domain_lines``, plus three
    general lines per domain line: an upper bound (the built mix drops repeated sentences)."""
    main = config["corpus"]
    if name == main["name"]:
        lines = _registered_lines([main["source"]])
        limits = [n for n in (main.get("max_sentences"), lines) if n]
        return min(limits) if limits else WIKI1M
    entry = config["corpora"][name]
    domain = 0
    for i, source in enumerate(entry["domain"]):
        rows = _registered_lines(source["files"])
        if source.get("max_pairs"):
            rows = min(rows, source["max_pairs"]) if rows else source["max_pairs"]
        if rows is None:
            raise ValueError(
                f"corpora.{name}.domain[{i}]: no line count registered for {source['files']} "
                "(datasets.tsv) and no max_pairs: the GPU estimate cannot size it"
            )
        domain += rows * READER_SENTENCES.get(source["reader"], 1)
    if entry.get("max_domain_lines"):
        domain = min(domain, entry["max_domain_lines"])
    general = GENERAL_PER_DOMAIN * domain if entry.get("use_general", True) else 0
    return (domain if entry.get("use_domain", True) else 0) + general


def training_sentences(config: Mapping[str, Any], method: str) -> int:
    """The sentences a method's run trains on: its corpus; GCSE stage 2 trains on one triplet
    per synthesized source (``generators.gcse.max_sources`` of its corpus; every source kept by
    the denoising: an upper bound)."""
    n = corpus_size(config, method_corpus(dict(config), method))
    if config["methods"][method]["implementation"] == "gcse":
        limit = settings(config, "gcse", method)["max_sources"]
        n = min(n, limit) if limit else n
    return n


def _guide_factor(guide: Mapping[str, Any], backbone: str) -> float:
    """The size of a guide's model: its own backbone (``{method, backbone}``), a released
    model's name (``{model}``), else the student's backbone."""
    return backbone_factor(guide.get("backbone") or guide.get("model") or backbone)


def guide_seconds(
    config: Mapping[str, Any],
    method_name: str,
    spec: Mapping[str, Any],
    backbone: str,
    step_s: float,
) -> float:
    """Seconds the frozen guides add to a step whose trained views cost ``step_s`` (BERT-base
    units): per text a guide encodes, a third of a trained view (forward only), at the guide's
    size relative to the student's."""
    method = build_method(spec["implementation"], spec.get("params") or {}, backbone)
    guides = method.guides()
    if not guides:
        return 0.0
    per_view = step_s / len(method.views(0))
    configured = guide_entries(dict(config), method_name, backbone)
    student = backbone_factor(backbone)
    return sum(
        len(g.encoded())
        * per_view
        / 3
        * _guide_factor(configured.get(g.name) or {}, backbone)
        / student
        for g in guides
    )


def _plugin_step(
    config: Mapping[str, Any], costs: Costs, spec: Mapping[str, Any], precision: str
) -> tuple[float, str] | None:
    """A plug-in method's step (an implementation outside negcse, no measured row): SimCSE's
    step per trained view times its views (its first step's)."""
    cls = method_class(spec["implementation"])
    if cls.__module__.startswith("negcse."):
        return None
    simcse = costs.step_rate("simcse", precision, spec["train"]["batch_size"])
    if simcse is None:
        return None
    views = len(
        build_method(spec["implementation"], spec.get("params") or {}, spec["backbone"]).views(0)
    )
    how = simcse[1] or "simcse's step"
    return simcse[0] * views / 2, f"{how} per view x {views} views"


def run_seconds(
    config: Mapping[str, Any],
    costs: Costs,
    method: str,
    backbone: str,
    row: Row | None = None,
    share: float = 1.0,
) -> float:
    """GPU seconds of one training run of ``method`` on ``backbone`` in BERT-base units (times
    :func:`backbone_factor` for its backbone): its steps and dev evaluations, a step at the
    measured rate of its compile setting where measured, else the eager rate over ``share``
    (runs sharing a GPU). ``row`` is told what was compiled, unpriced or derived."""
    row = row or Row(method)
    spec = resolve_method(dict(config), method, backbone)
    t = spec["train"]
    precision = "fp16" if t["precision"] == "auto" else t["precision"]
    steps = math.ceil(training_sentences(config, method) / t["batch_size"]) * t["epochs"]
    if t.get("max_steps"):
        steps = min(steps, t["max_steps"])
    implementation = spec["implementation"]
    cached_s = _cached_guides_step(config, costs, spec, precision)
    if cached_s is not None:  # measured with its guides read from their cache
        row.compiled |= bool(run_options(t))
        dev_s = costs.dev_eval.get(precision, costs.dev_eval.get("fp32", 0.0))
        return steps * cached_s + (steps // t["eval_steps"] + 1) * dev_s
    step_s = costs.compiled_seconds(implementation, precision, t["batch_size"], run_options(t))
    row.compiled |= step_s is not None
    step_how = ""  # what the eager step was derived from ("": its own row at its precision)
    if step_s is None:
        rate = costs.step_rate(implementation, precision, t["batch_size"])
        if rate is None and implementation not in SAME_COST:
            rate = _plugin_step(config, costs, spec, precision)
        if rate is not None:
            step_s, step_how = rate[0] / share, rate[1]
    if step_s is None:
        row.unpriced = True
        step_s = 0.0
    elif not costs.measured_step(implementation):
        built = build_method(implementation, spec.get("params") or {}, backbone)
        rewritten = set(built.augmentations())  # such guides are never cached (the plan's rule)
        cached = guides_cached(config) and not any(
            rewritten & set(g.columns) for g in built.guides()
        )
        guides_s = 0.0 if cached else guide_seconds(config, method, spec, backbone, step_s)
        same = SAME_COST.get(implementation)
        if guides_s:
            step_s += guides_s
            if same:
                step_how = (step_how or f"{same}'s step") + " + guide forwards"
        elif cached and same and built.guides():
            step_how = (step_how or f"{same}'s step") + "; guides read from their cache"
    if step_how:
        row.derived.add(step_how)
    dev_s = costs.dev_eval.get(precision, costs.dev_eval.get("fp32", 0.0))
    return steps * step_s + (steps // t["eval_steps"] + 1) * dev_s


#: the options-column mark of a step measured with its guides read from their cache
GUIDE_CACHE_OPTION = "guide_cache"


def _cached_guides_step(
    config: Mapping[str, Any], costs: Costs, spec: Mapping[str, Any], precision: str
) -> float | None:
    """A guided method's measured step with its guides read from their cache (a train_step
    row of its own implementation whose options end in ``guide_cache``), where the workflow
    caches them; batch scales; None where not measured."""
    if not guides_cached(config):
        return None
    t = spec["train"]
    options = "+".join(o for o in (run_options(t), GUIDE_CACHE_OPTION) if o)
    got = costs.compiled.get((spec["implementation"], precision, options))
    return None if got is None else got[0] * t["batch_size"] / got[1]


def guides_cached(config: Mapping[str, Any]) -> bool:
    """Whether the students read their frozen guides from caches (``guide_cache``)."""
    return bool(config.get("guide_cache", True))


def guide_cache_row(
    config: Mapping[str, Any], costs: Costs, jobs: Iterable[CacheJob]
) -> Row | None:
    """The ``encode_guide`` jobs: each text of each cache over its students' corpus, once, at
    the STS-B dev evaluation's per-sentence rate (forward only, no gradient) at the students'
    precision, scaled by the guide model's size."""
    row = Row("guide encodings", derived={"dev evaluation per sentence"})
    for job in jobs:
        method, backbone, name = job.student
        t = resolve_method(dict(config), method, backbone)["train"]
        precision = "fp16" if t["precision"] == "auto" else t["precision"]
        per_sentence = costs.dev_eval.get(precision, costs.dev_eval.get("fp32", 0.0))
        entry = guide_entries(dict(config), method, backbone).get(name) or {}
        sentences = training_sentences(config, method) * len(job.texts)
        row.jobs += 1
        row.train_h += (
            per_sentence / DEV_SENTENCES * sentences * _guide_factor(entry, backbone) / 3600
        )
    return row if row.jobs else None


def estimate(
    config: Mapping[str, Any],
    costs: Costs,
    generator_outputs: Mapping[str, int],
    mteb_jobs: Iterable[tuple[str, str]] = (),
    jobs_per_gpu: int = 1,
    guide_caches: Iterable[CacheJob] = (),
) -> list[Row]:
    """One row per grid method (trainings + their evaluations), per GPU generator, GCSE's
    synthesis, untrained baselines, released checkpoints and MTEB jobs (``mteb_jobs``: (group,
    backbone) per job); GPU hours on the benchmarked GPU. A training step is priced at the
    measured rate of the compile setting it runs with on CUDA where that was measured, else at
    the eager rate; eager steps of ``jobs_per_gpu`` runs sharing a GPU at the measured
    aggregate rate (``Costs.jobs_speedup``). With ``guide_cache`` on, a student's step has no
    guide forwards and ``guide_caches`` (the plan's ``encode_guide`` jobs) are one row."""
    share = costs.jobs_speedup(jobs_per_gpu)
    grid = config["grid"]
    corpus_sentences = corpus_size(config, config["corpus"]["name"])
    rows = []
    for method in grid["methods"]:
        row = Row(method)
        for backbone in grid["backbones"]:
            per_run = run_seconds(config, costs, method, backbone, row, share)
            factor = backbone_factor(backbone)
            for _ in method_seeds(dict(config), method, backbone):
                row.jobs += 2
                row.train_h += per_run * factor / 3600
                row.eval_h += (costs.eval_job or 0.0) * factor / 3600
        rows.append(row)
    evaluated = []
    if config.get("evaluation", {}).get("baseline", True):
        evaluated.append(("untrained baselines", list(grid["backbones"])))
    released = [backbone for _, backbone, _ in released_models(dict(config))]
    if released:
        evaluated.append(("released checkpoints", released))
    for name, backbones in evaluated:
        base = Row(name)
        for backbone in backbones:
            base.jobs += 1
            base.eval_h += (costs.eval_job or 0.0) * backbone_factor(backbone) / 3600
        base.unpriced = costs.eval_job is None
        rows.append(base)
    mteb = Row("MTEB evaluations")
    for group, backbone in mteb_jobs:
        mteb.jobs += 1
        seconds = costs.mteb_job.get(group)
        mteb.unpriced |= seconds is None
        mteb.eval_h += (seconds or 0.0) * backbone_factor(backbone) / 3600
        if ("mteb_job", group) in costs.derived:
            mteb.derived.add("dev evaluation x MTEB texts")
    if mteb.jobs:
        rows.append(mteb)
    for generator, outputs in sorted(generator_outputs.items()):
        per = costs.generator.get(generator)
        gen = Row(f"generator: {generator}", jobs=outputs, unpriced=per is None)
        gen.train_h = (per or 0.0) * corpus_sentences * outputs / 3600
        rows.append(gen)
    rows.extend(_gcse_rows(config, costs))
    guides = guide_cache_row(config, costs, guide_caches) if guides_cached(config) else None
    if guides is not None:
        rows.append(guides)
    return rows


def _gcse_rows(config: Mapping[str, Any], costs: Costs) -> list[Row]:
    """GCSE's LLM synthesis (one job per corpus and synthesis settings, over its sources, at
    its backend's per-source cost scaled by its prompts per source: extraction + positives +
    negatives, none for "w randomly"; the ``openai`` backend runs elsewhere: no GPU job here;
    a row per backend, :data:`SYNTHESIS_COSTS`) and its
    denoising (per stage-1 model:
    the sources and their candidates encoded once, at the dev evaluation's per-sentence rate)."""
    grid = config["grid"]
    #: (corpus, synthesis id) -> (backend, source-prompts / 3)
    synth: dict[tuple[str, str], tuple[str, float]] = {}
    denoise: dict[tuple[str, str, str, int], int] = {}
    for method in grid["methods"]:
        if config["methods"][method]["implementation"] != "gcse":
            continue
        s = settings(config, "gcse", method)
        corpus = method_corpus(dict(config), method)
        sources = training_sentences(config, method)
        prompts = s["positives"] + s["negatives"]
        if prompts and s["backend"] in SYNTHESIS_COSTS:
            prompts += EXTRACTION_PROMPTS[s["mode"]]
            synth[(corpus, synthesis_id(s))] = (
                s["backend"],
                sources * prompts / SYNTHESIS_ROW_PROMPTS,
            )
        texts = sources * (1 + s["positives"] + s["negatives"])
        for backbone in grid["backbones"]:
            for seed in method_seeds(dict(config), method, backbone):
                denoise[(corpus, triplets_id(s), backbone, seed)] = texts
    rows = []
    for backend, name in SYNTHESIS_COSTS.items():
        units = [n for b, n in synth.values() if b == backend]
        if not units:
            continue
        per = costs.generator.get(name)
        row = Row(f"generator: {name}", jobs=len(units), unpriced=per is None)
        row.train_h = (per or 0.0) * sum(units) / 3600
        if ("generator_sentence", name) in costs.derived:
            row.derived.add(SYNTHESIS_DERIVATION[name])
        rows.append(row)
    if denoise:
        per_sentence = costs.dev_eval.get("fp32", 0.0) / DEV_SENTENCES
        row = Row("generator: gcse_denoise", jobs=len(denoise), derived={"dev evaluation"})
        row.train_h = (
            sum(per_sentence * texts * backbone_factor(key[2]) for key, texts in denoise.items())
            / 3600
        )
        rows.append(row)
    return rows


def gpu_generators(
    config: Mapping[str, Any], column_paths: Iterable[tuple[str, str]]
) -> dict[str, int]:
    """Distinct GPU generator outputs: (column, output path) pairs -> the GPU rule its
    generator's spec names (``gpu_rule``) -> count; columns of no generator are skipped."""
    seen: dict[str, set[str]] = defaultdict(set)
    for column, path in column_paths:
        try:
            gen = producer(column)
        except KeyError:
            continue
        rule = gen.gpu_rule(settings(config, gen.name))
        if rule is not None:
            seen[rule].add(path)
    return {k: len(v) for k, v in seen.items()}


def mteb_jobs(files: Iterable[str], backbones: Iterable[str]) -> list[tuple[str, str]]:
    """(group, backbone) of each MTEB result file ``results/eval/mteb/<group>/.../<backbone>/...``
    (the backbone: the path part that names a grid backbone)."""
    names = set(backbones)
    out = []
    for file in files:
        parts = Path(file).parts
        group = parts[parts.index("mteb") + 1]
        out.append((group, next(p for p in parts if p in names)))
    return out


def format_table(
    rows: list[Row], costs: Costs, corpus_sentences: int, source: str, jobs_per_gpu: int = 1
) -> str:
    lines = [
        f"Estimated GPU hours on one {costs.device} (unit costs: {source}; corpus "
        f"{corpus_sentences:,} sentences; large backbones x{LARGE_FACTOR:.2f} of base):",
        f"{'what':<34} {'GPU jobs':>8} {'train/gen h':>11} {'eval h':>8} {'total h':>8}",
    ]
    for r in rows:
        mark = " (no cost row: not counted)" if r.unpriced else ""
        if r.derived:
            mark += f" (derived from {'; '.join(sorted(r.derived))})"
        lines.append(
            f"{r.name:<34} {r.jobs:>8} {r.train_h:>11.1f} {r.eval_h:>8.1f} {r.total_h:>8.1f}{mark}"
        )
    total = sum(r.total_h for r in rows)
    jobs = sum(r.jobs for r in rows)
    lines.append(f"{'total':<34} {jobs:>8} {'':>11} {'':>8} {total:>8.1f}")
    lines.append(f"(on N GPUs with --resources gpu=N: about {total:.0f} / N hours)")
    compiled = [r.name for r in rows if r.compiled]
    named = ", ".join(compiled[:6]) + (
        f" and {len(compiled) - 6} more" if len(compiled) > 6 else ""
    )
    lines.append(
        "Training priced at the measured rate of its compile setting on CUDA (compile: auto = "
        f"reduce-overhead + static padding) for: {named}; at eager rates for the others (their "
        "compiled rate not measured: benchmarks/gpu.md)"
        if compiled
        else "Training priced at the measured eager rates (compile: auto, the CUDA default, is "
        "faster where measured: benchmarks/gpu.md)"
    )
    if jobs_per_gpu > 1:
        lines.append(
            f"Eager training steps at {jobs_per_gpu} jobs per GPU: the measured aggregate rate, "
            f"{costs.jobs_speedup(jobs_per_gpu):.2f}x one job's (NEGCSE_JOBS_PER_GPU)"
        )
    if costs.derived:
        lines.append(
            "Derived unit costs (no measurement of their own; benchmarks/derive_costs.py):"
        )
        lines += [f"  {kind} {name}: {src}" for (kind, name), src in sorted(costs.derived.items())]
    return "\n".join(lines)


def grid_table(
    plan: Plan,
    costs_file: str | Path | Sequence[str | Path],
    source: str = COSTS_FILE,
    jobs_per_gpu: int = 1,
) -> str:
    """The estimate of ``plan``'s grid as the dry run and ``negcse estimate`` print it: one row
    per method, GPU generator and evaluation kind, from the unit costs in ``costs_file`` (or
    several files: a later one's rows replace an earlier one's, a measured CSV over the
    shipped one)."""
    files = [costs_file] if isinstance(costs_file, str | Path) else list(costs_file)
    costs = load_costs(*files)
    rows = estimate(
        plan.config,
        costs,
        gpu_generators(plan.config, plan.column_paths()),
        mteb_jobs(plan.mteb_files(), plan.backbones),
        jobs_per_gpu,
        plan.guide_caches[0].values(),
    )
    return format_table(rows, costs, corpus_size(plan.config, plan.corpus), source, jobs_per_gpu)


#: the rule of a row whose name is not its rule's
ROW_RULES = {
    "gcse_synthesis": "gcse_synthesize",
    "gcse_synthesis_vllm": "gcse_synthesize",
    "guide encodings": "encode_guide",
}


def job_seconds(config: Mapping[str, Any], costs_file: str | Path) -> Callable[[Any], float]:
    """GPU seconds of one workflow job (anything with ``rule`` and ``wildcards``) by the cost
    model, as :func:`estimate` prices the grid: a training run, an evaluation or MTEB job, a GPU
    generator's output (its row over its jobs); 0 for a job it does not price (CPU work)."""
    costs = load_costs(costs_file)
    plan = Plan(config, log=lambda _note: None)
    rows = estimate(
        plan.config,
        costs,
        gpu_generators(plan.config, plan.column_paths()),
        mteb_jobs(plan.mteb_files(), plan.backbones),
        guide_caches=plan.guide_caches[0].values(),
    )
    per_output = {
        ROW_RULES.get(name, name): r.total_h * 3600 / r.jobs
        for r in rows
        if r.jobs and ((name := r.name.removeprefix("generator: ")) != r.name or name in ROW_RULES)
    }
    evaluations = {subject.rule for subject in SUBJECTS}
    runs: dict[tuple[str, str], float] = {}

    def seconds(job: Any) -> float:
        rule, wc = job.rule, job.wildcards
        if rule == "train":
            key = (wc["method"], wc["backbone"])
            if key not in runs:
                runs[key] = run_seconds(config, costs, *key) * backbone_factor(key[1])
            return runs[key]
        if rule in evaluations:
            return (costs.eval_job or 0.0) * backbone_factor(wc["backbone"])
        if rule == "evaluate_mteb":
            return costs.mteb_job.get(wc["group"], 0.0) * backbone_factor(wc["backbone"])
        return per_output.get(rule, 0.0)

    return seconds
