"""GCSE's synthesized triplets (rules gcse_synthesize, gcse_denoise): an LLM writes candidates for the
first ``max_sources`` corpus lines (``negcse gcse-synthesize``: extraction -> KG -> synthesis,
one file per synthesis settings, shared by every backbone and seed), then the frozen stage-1
model (the method's ``evaluation`` guide, a run of this workflow) denoises them
(``negcse gcse-denoise``, eq. 10-11) into three aligned columns: the anchors (stage 2's
training sentences, ``GCSE.corpus_column``), positives and negatives, one set per backbone and
seed (the stage-1 model's)."""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from negcse.gcse.released import RELEASED_BUGS
from negcse.generators.registry import GeneratorSpec, methods_reading, register
from negcse.generators.settings import GeneratorSettings, as_dict, options, setting, view
from negcse.generators.steps import (
    GPU_SLOT,
    Step,
    StepContext,
    Wildcards,
    alternation,
    corpus_input,
)
from negcse.llm.pinned import PINNED

ANCHOR_COLUMN = "gcse_anchor"  # stage 2's training sentences (negcse.methods.gcse reads them)
POSITIVE_COLUMN = "gcse_positive"
NEGATIVE_COLUMN = "gcse_negative"
COLUMNS = (ANCHOR_COLUMN, POSITIVE_COLUMN, NEGATIVE_COLUMN)
MODES = ("paper", "released")
#: local engines take a GPU slot (their models are prefetched); openai: an endpoint
LOCAL_BACKENDS = ("transformers", "vllm")
BACKENDS = (*LOCAL_BACKENDS, "openai")
#: each mode's denoising thresholds (alpha, beta) when the settings leave them null
THRESHOLDS = {"paper": (0.9, 0.75), "released": (0.80, 0.75)}
#: the settings that change the candidates (the rest change only speed or spending)
SYNTHESIS_KEYS = (
    "mode",
    "backend",
    "model",
    "base_url",
    "positives",
    "negatives",
    "max_sources",
    "max_chars",
    "max_new_tokens",
    "temperature",
    "top_p",
    "synthesis_seed",
    "released_bugs",
    "extension",
)
#: the released bugs reproduced at denoising (the others change the candidates): gcse-denoise's
#: ``--order listed`` and ``--augment-anchors``
DENOISE_BUGS = ("listed_order", "anchor_augmentation")
#: gcse-synthesize's settings, in its command line's order
SYNTHESIS_OPTIONS = (
    "mode",
    "positives",
    "negatives",
    "synthesis_seed",
    "max_chars",
    "max_sources",
    "max_new_tokens",
    "temperature",
    "top_p",
    "backend",
    "model",
    "batch_size",
    "extension",
    "prefer_related",
    "neighbour_model",
    "released_bugs",
    "base_url",
    "api_key_env",
    "concurrency",
    "request_budget",
)
#: gcse-denoise's settings of GcseSettings (then its own --order and --augment-anchors)
DENOISE_OPTIONS = ("mode", "filter", "alpha", "beta", "choice")
#: ``neighbour_model`` naming the stage-1 run (``neighbour_stage1``), not a model
STAGE1 = "stage1"
CANDIDATES = "results/gcse/candidates/{corpus}/{synthesis}.jsonl"
SYNTHESIS_REPORT = "results/gcse/candidates/{corpus}/{synthesis}.report.json"
#: the response cache of a synthesis variant: kept outside the outputs, so a killed job resumes
CACHE = "results/cache/gcse/{corpus}/{synthesis}.sqlite"
TRIPLETS = "results/gcse/triplets/{corpus}/{variant}/{backbone}/seed{seed}.txt"
DENOISE_REPORT = "results/gcse/triplets/{corpus}/{triplets}/report/{backbone}/seed{seed}.json"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-") or "none"


def synthesis_id(settings: dict[str, Any]) -> str:
    """The candidates' name: readable main settings and a hash of all that change them, e.g.
    ``paper-transformers-smollm2-135m-instruct-q4.1_n8_1a2b3c4d``."""
    values = {k: settings[k] for k in SYNTHESIS_KEYS}
    values["released_bugs"] = sorted(set(values["released_bugs"]) - set(DENOISE_BUGS))
    prompted = settings["positives"] + settings["negatives"] > 0  # else no revision is made
    if prompted and settings["mode"] == "paper":  # released mode never reads it
        values["prefer_related"] = settings["prefer_related"]
    elif prompted and settings["neighbour_model"] is not None:  # paper mode never reads it
        values["neighbour_model"] = settings["neighbour_model"]
    blob = json.dumps(values, sort_keys=True)
    digest = hashlib.sha256(blob.encode()).hexdigest()[:8]
    n = "all" if settings["max_sources"] is None else settings["max_sources"]
    return f"{settings['mode']}-{settings['backend']}-{_slug(settings['model'])}_n{n}_{digest}"


def thresholds(settings: Mapping[str, Any]) -> tuple[float, float]:
    """(alpha, beta): the settings' own, or their mode's."""
    alpha, beta = THRESHOLDS[settings["mode"]]
    return (
        alpha if settings["alpha"] is None else settings["alpha"],
        beta if settings["beta"] is None else settings["beta"],
    )


def triplets_id(settings: dict[str, Any]) -> str:
    """The triplets' name: the candidates' and the denoising settings'."""
    bugs = settings["released_bugs"]
    aug = "_aug" if "anchor_augmentation" in bugs else ""
    if not settings["filter"]:
        return f"{synthesis_id(settings)}__nofilter{aug}"
    alpha, beta = thresholds(settings)
    listed = "_listed" if "listed_order" in bugs else ""
    return f"{synthesis_id(settings)}__a{alpha:g}_b{beta:g}_{settings['choice']}{listed}{aug}"


def variant(settings: dict[str, Any], column: str) -> str:
    return f"{triplets_id(settings)}/{column}"


def triplets_of(variant_name: str) -> str:
    """The triplets id of a column's variant (``<triplets>/<column>``)."""
    return variant_name.rsplit("/", 1)[0]


def synthesis_args(settings: dict[str, Any], neighbour: str | None = None) -> str:
    """``negcse gcse-synthesize`` options (besides files, cache and threads): ``GcseSynthesis``'s,
    the released bugs that change the candidates. The key is passed by its variable's NAME.
    ``neighbour``: the model that ``neighbour_model: stage1`` resolved to (the workflow's)."""
    bugs = sorted(set(settings["released_bugs"]) - set(DENOISE_BUGS))
    values = {**settings, "released_bugs": bugs}
    if settings["neighbour_model"] == STAGE1:
        if neighbour is None:
            raise ValueError("neighbour_model 'stage1' is a run of the workflow: give its model")
        values["neighbour_model"] = neighbour
    return options(values, GcseSynthesis)


def denoising(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``GcseDenoising``'s values of ``settings``: the thresholds resolved (the mode's where
    null), the denoising bugs as ``order`` and ``augment_anchors``."""
    alpha, beta = thresholds(settings)
    bugs = settings["released_bugs"]
    return {key: settings[key] for key in DENOISE_OPTIONS} | {
        "alpha": alpha,
        "beta": beta,
        "order": "listed" if "listed_order" in bugs else "roles",
        "augment_anchors": "anchor_augmentation" in bugs,
    }


def denoise_args(settings: dict[str, Any]) -> str:
    """``negcse gcse-denoise`` options (besides files, model, seed and threads)."""
    return options(denoising(settings), GcseDenoising)


def models(settings: dict[str, Any]) -> tuple[str, ...]:
    """A Hugging Face LLM to prefetch (the pinned GGUF ships in a package; endpoints serve
    their own), and a named neighbour encoder (not a run of the workflow)."""
    encoder = settings["neighbour_model"]
    named = encoder is not None and encoder != STAGE1 and settings["mode"] == "released"
    extra = (encoder,) if named else ()
    if settings["backend"] not in LOCAL_BACKENDS or settings["model"] in PINNED:
        return extra
    return (settings["model"], *extra)


def provenance(settings: dict[str, Any]) -> dict[str, Any]:
    """The LLM that writes the data, recorded in the run spec of a method trained on it (so in
    the model's negcse.json and, through the evaluation, in its table row): backend, model and,
    for an endpoint, its base URL (never the key). Nothing for "w randomly" (no prompt)."""
    if settings["positives"] + settings["negatives"] == 0:
        return {}
    llm = {"backend": settings["backend"], "model": settings["model"]}
    if settings["backend"] == "openai":
        llm["base_url"] = settings["base_url"]
    return {"llm": llm}


def _openai(values: Mapping[str, Any]) -> bool:
    return bool(values["backend"] == "openai")


def _paper(values: Mapping[str, Any]) -> bool:
    return bool(values["mode"] == "paper")


def _released(values: Mapping[str, Any]) -> bool:
    return bool(values["mode"] == "released")


def _filtered(values: Mapping[str, Any]) -> bool:
    return bool(values["filter"])


def _check(values: Mapping[str, Any]) -> None:
    """The cross-field checks of the settings or a step's view of them (of the keys it has)."""
    if values.get("backend") == "openai" and not values.get("base_url"):
        raise ValueError("backend openai needs base_url (an OpenAI-compatible /v1 endpoint)")
    if values.get("backend") == "vllm" and values.get("model") in PINNED:
        raise ValueError(
            f"backend vllm serves Hugging Face models, not the pinned GGUF {values['model']} "
            "(use backend transformers for it)"
        )
    if values.get("filter") and "alpha" in values:
        alpha, beta = thresholds(values)
        if not alpha > beta:
            raise ValueError(f"alpha ({alpha}) must exceed beta ({beta})")


@dataclass(frozen=True)
class GcseSettings(GeneratorSettings):
    """Synthesis (``SYNTHESIS_KEYS`` change the candidates) and denoising settings; the options
    of gcse-synthesize (``GcseSynthesis``) and gcse-denoise (``GcseDenoising``) are views of
    them."""

    mode: str = setting(
        "released",
        "released: the released pipeline's prompts, shares, denoising rule (offset fallback, "
        "self-pair rows) and thresholds (its bugs fixed unless released_bugs names them); paper: "
        "the paper's Figure 8-9 prompts, eq. 10-11, alpha 0.9",
        choices=MODES,
    )
    backend: str = setting(
        "transformers",
        "transformers (local; the CPU and the smoke grid), vllm (local, a CUDA GPU: offline "
        "continuous batching in envs/vllm.yaml) or openai (any compatible endpoint, e.g. vllm "
        "serve)",
        choices=BACKENDS,
    )
    model: str = setting(
        "THUDM/glm-4-9b-chat-hf",
        "the LLM, by default the released code's glm-4-9b-chat (its -hf conversion loads "
        "natively); transformers: a Hugging Face name or folder, or a pinned GGUF "
        "(smollm2-135m-instruct-q4_1: packaged, runs on CPU, for a quick try); openai: the "
        "served model's name",
        minLength=1,
    )
    base_url: str = setting("", "openai: e.g. http://127.0.0.1:8000/v1 (vllm serve)", when=_openai)
    api_key_env: str = setting(
        "OPENAI_API_KEY",
        "openai: the NAME of the key's variable ('' for none)",
        pattern="^[A-Za-z_][A-Za-z0-9_]*$|^$",
        when=_openai,
    )
    concurrency: int = setting(
        8, "openai: requests in flight", option="--max-in-flight", when=_openai, minimum=1
    )
    request_budget: int | None = setting(
        None,
        "openai: most HTTP requests per run (null: no limit)",
        schema={"type": ["integer", "null"]},
        when=_openai,
        minimum=1,
    )
    batch_size: int = setting(8, "transformers: prompts per generate call", minimum=1)
    positives: int = setting(1, "positive prompts per source (released)", minimum=0)
    negatives: int = setting(1, "negative prompts per source (released)", minimum=0)
    max_sources: int | None = setting(
        64000,
        "the first N corpus lines are the sources (null: all); ~64k as the paper's App. F",
        schema={"type": ["integer", "null"]},
        minimum=2,
    )
    max_chars: int = setting(2000, "longer source lines are skipped", minimum=1)
    max_new_tokens: int = setting(512, "released sampling settings", minimum=1)
    temperature: float = setting(0.6, "sampling temperature", schema={"type": "number"}, minimum=0)
    top_p: float = setting(
        0.95, "nucleus sampling", schema={"type": "number"}, exclusiveMinimum=0, maximum=1
    )
    synthesis_seed: int = setting(
        0, "prompts, replacements, sampling (shared by training seeds)", option="--seed"
    )
    filter: bool = setting(
        True,
        "eq. 10-11 with the stage-1 model (false, --no-filter: Table 4's 'w/o filtering', the "
        "first positive- and negative-prompt candidates unscored, eq. 10-11's fallbacks only "
        "where a role has none)",
        flag=("--no-filter", False),
    )
    alpha: float | None = setting(
        None,
        "positive threshold (null: the mode's, released 0.80, paper 0.9)",
        schema={"type": ["number", "null"]},
        when=_filtered,
    )
    beta: float | None = setting(
        None,
        "negative threshold (null: the mode's, 0.75)",
        schema={"type": ["number", "null"]},
        when=_filtered,
    )
    choice: str = setting(
        "first",
        "first or random of several qualifying candidates",
        choices=("first", "random"),
        when=_filtered,
    )
    released_bugs: Sequence[str] = setting(
        [],
        "released bugs to reproduce (negcse.gcse.released; fixed when absent); the denoising "
        "ones are gcse-denoise's --order listed (listed_order) and --augment-anchors "
        "(anchor_augmentation)",
        schema={
            "type": "array",
            "items": {"enum": sorted(RELEASED_BUGS)},
            "uniqueItems": True,
        },
        option="--released-bug",
    )
    extension: bool = setting(
        True,
        "extension sentences (Rewriting Prompt 4, released steps 5-6) as extra anchors",
        flag=("--extension", True),
    )
    prefer_related: bool = setting(
        True,
        "paper mode: an entity revision draws from T_p (eq. 7, soft edges) when it has one, else "
        "T_r (false, --no-prefer-related: uniformly from T(t) = T_r U T_p as a set, = T_r)",
        flag=("--no-prefer-related", False),
        when=_paper,
    )
    neighbour_model: str | None = setting(
        None,
        "released mode: a frozen encoder (Hugging Face name or folder; mean pooling, as the "
        "released SentenceTransformer loader) whose 10th / 5th nearest entity / main part is a "
        "positive revision's replacement, as the released KG's 'related'; 'stage1': the "
        "stage-1 run (guides.evaluation) of the grid's first backbone at its first seed, as "
        "released (the workflow trains it before the synthesis); null: the KG's own related "
        "replacement",
        schema={"type": ["string", "null"]},
        when=_released,
        minLength=1,
    )

    def check(self) -> None:
        _check(as_dict(self))


#: ``negcse gcse-synthesize``'s settings (``synthesis_args`` writes them)
GcseSynthesis = view("GcseSynthesis", GcseSettings, SYNTHESIS_OPTIONS, check=_check)
#: ``negcse gcse-denoise``'s settings (``denoise_args`` writes them, ``denoising`` maps them)
GcseDenoising = view(
    "GcseDenoising",
    GcseSettings,
    DENOISE_OPTIONS,
    extra=(
        (
            "order",
            str,
            setting(
                "roles",
                "roles: the negative is looked for among negative-prompt candidates first (and "
                "the positive among positive-prompt ones); listed: in listed order (released bug "
                "listed_order)",
                choices=("roles", "listed"),
                when=_filtered,
            ),
        ),
        (
            "augment_anchors",
            bool,
            setting(
                False,
                "released bug 12 (anchor_augmentation): each anchor repeats a few of its words "
                "(seeded by --seed)",
                flag=("--augment-anchors", True),
            ),
        ),
    ),
    check=_check,
)


def _shared_stage1(
    ctx: StepContext,
    what: str,
    reads: Callable[[str], bool],
    run_of: Callable[[str], tuple[str, str]],
) -> tuple[str, str | None]:
    """The one stage-1 model (``evaluation`` guide) of the methods that ``reads`` (method ->
    reads the file ``what`` names), each at its ``run_of(method)`` = (backbone, seed)."""
    found: dict[str, str | None] = {}
    for method in methods_reading(ctx.config, COLUMNS, ctx.readers):
        if not reads(method):
            continue
        model, run = ctx.guide(method, "evaluation", *run_of(method))
        if model is None:
            raise ValueError(f"methods.{method}: GCSE needs guides.evaluation (the stage-1 run)")
        found[model] = run
    if len(found) != 1:
        raise ValueError(
            f"{what}: {len(found)} stage-1 models ({sorted(found)}); the methods reading one "
            "variant must share guides.evaluation"
        )
    return next(iter(found.items()))


def stage1_models(
    ctx: StepContext, triplets: str, backbone: str, seed: int | str, corpus: str
) -> tuple[str, str | None]:
    """The stage-1 model that denoises the triplets variant ``triplets`` of ``corpus`` for
    ``backbone`` x ``seed``: the ``evaluation`` guide of the methods reading it, as (``--model``
    argument, the run folder the workflow trains or None for a named model). Methods sharing a
    variant and corpus must share that guide (else ValueError: give them different settings)."""

    def reads(method: str) -> bool:
        same = triplets_id(ctx.settings("gcse", method)) == triplets
        return same and ctx.corpus_of(method) == corpus

    return _shared_stage1(
        ctx, f"gcse triplets {triplets} of corpus {corpus}", reads, lambda m: (backbone, str(seed))
    )


def neighbour_stage1(ctx: StepContext, synthesis: str, corpus: str) -> tuple[str, str | None]:
    """The stage-1 model whose neighbours replace the positive revisions of the candidates
    ``synthesis`` of ``corpus`` (``neighbour_model: stage1``): the ``evaluation`` guide of the
    methods reading them on the grid's first backbone, at each one's first seed there, as
    (``--neighbour-model`` argument, the run folder the workflow trains or None). The
    candidates are shared by every backbone and seed, so one stage-1 run encodes the pool."""
    backbone = str(ctx.config["grid"]["backbones"][0])

    def reads(method: str) -> bool:
        same = synthesis_id(ctx.settings("gcse", method)) == synthesis
        return same and ctx.corpus_of(method) == corpus

    def run_of(method: str) -> tuple[str, str]:
        return backbone, str(ctx.seeds(method, backbone)[0])

    return _shared_stage1(ctx, f"gcse candidates {synthesis} of corpus {corpus}", reads, run_of)


def _triplets(ctx: StepContext) -> dict[str, dict[str, Any]]:
    """Triplets id -> settings, over the configured variants (``<triplets>/<column>``)."""
    return {triplets_of(v): s for v, s in ctx.variants("gcse").items()}


def _syntheses(ctx: StepContext) -> dict[str, dict[str, Any]]:
    """Synthesis id -> settings: one synthesis per candidates file."""
    return {synthesis_id(s): s for s in _triplets(ctx).values()}


def _neighbour(ctx: StepContext, wc: Wildcards) -> tuple[str, str | None] | None:
    """The stage-1 neighbour encoder of a synthesis job (None: no ``neighbour_model: stage1``)."""
    s = _syntheses(ctx)[wc["synthesis"]]
    if s["neighbour_model"] != STAGE1 or s["mode"] != "released":
        return None
    return neighbour_stage1(ctx, wc["synthesis"], wc["corpus"])


def _synthesis_inputs(ctx: StepContext, wc: Wildcards) -> dict[str, str]:
    """The corpus, and the stage-1 run that encodes the neighbours (trained first)."""
    inputs = corpus_input(ctx, wc)
    found = _neighbour(ctx, wc)
    if found is not None and found[1] is not None:
        inputs["stage1"] = found[1]
    return dict(inputs)


def _synthesis_settings(ctx: StepContext, wc: Wildcards) -> str:
    found = _neighbour(ctx, wc)
    return synthesis_args(_syntheses(ctx)[wc["synthesis"]], None if found is None else found[0])


def _synthesis_gpu(ctx: StepContext, wc: Wildcards) -> int:
    """A local LLM takes a GPU slot; an endpoint, or no prompt ("w randomly"), does not."""
    s = _syntheses(ctx)[wc["synthesis"]]
    return int(s["backend"] in LOCAL_BACKENDS and s["positives"] + s["negatives"] > 0)


def _synthesis_env(ctx: StepContext, wc: Wildcards) -> str:
    """The synthesis job's environment: vLLM's own (its torch and transformers) where vLLM
    runs, else llm (no prompt, "w randomly": no LLM)."""
    s = _syntheses(ctx)[wc["synthesis"]]
    return "vllm" if s["backend"] == "vllm" and s["positives"] + s["negatives"] else "llm"


def _stage1(ctx: StepContext, wc: Wildcards) -> tuple[str, str | None]:
    return stage1_models(ctx, wc["triplets"], wc["backbone"], wc["seed"], wc["corpus"])


def _denoise_inputs(ctx: StepContext, wc: Wildcards) -> dict[str, str]:
    """The candidates and the stage-1 run (trained first: SimCSE's train rule)."""
    synthesis = synthesis_id(_triplets(ctx)[wc["triplets"]])
    inputs = {"candidates": CANDIDATES.format(corpus=wc["corpus"], synthesis=synthesis)}
    run = _stage1(ctx, wc)[1]
    if run is not None:
        inputs["stage1"] = run
    return inputs


def _denoise_settings(ctx: StepContext, wc: Wildcards) -> str:
    """``--model STAGE1`` and the denoising options of the variant."""
    model = shlex.quote(_stage1(ctx, wc)[0])
    return f"--model {model} {denoise_args(_triplets(ctx)[wc['triplets']])}"


def _triplet_file(column: str) -> str:
    return f"results/gcse/triplets/{{corpus}}/{{triplets}}/{column}/{{backbone}}/seed{{seed}}.txt"


SPEC = register(
    GeneratorSpec(
        name="gcse",
        columns=COLUMNS,
        output=TRIPLETS,
        settings=GcseSettings,
        per_method=True,
        variant=variant,
        models=models,
        provenance=provenance,
        steps=(
            Step(
                name="gcse_synthesize",
                inputs=_synthesis_inputs,
                outputs={"candidates": CANDIDATES, "report": SYNTHESIS_REPORT},
                wildcards=lambda ctx: {"synthesis": alternation(_syntheses(ctx)) or "[^/]+"},
                params={
                    "settings": _synthesis_settings,
                    "cache": lambda ctx, wc: CACHE.format(
                        corpus=wc["corpus"], synthesis=wc["synthesis"]
                    ),
                    "slots": lambda ctx, wc: GPU_SLOT.strip() if _synthesis_gpu(ctx, wc) else "",
                },
                command="{params.slots} python -m negcse gcse-synthesize --input {input.corpus:q} "
                "--output {output.candidates:q} --report {output.report:q} "
                "--cache {params.cache:q} {params.settings} --threads {threads}",
                log="logs/gcse/candidates/{corpus}/{synthesis}.log",
                benchmark="benchmarks/rules/gcse/candidates/{corpus}/{synthesis}.tsv",
                threads=2,
                resources={"gpu": _synthesis_gpu, "mem_mb": 32000, "runtime": 1440},
                conda=_synthesis_env,
            ),
            Step(
                name="gcse_denoise",
                inputs=_denoise_inputs,
                outputs={
                    "anchors": _triplet_file(ANCHOR_COLUMN),
                    "positives": _triplet_file(POSITIVE_COLUMN),
                    "negatives": _triplet_file(NEGATIVE_COLUMN),
                    "report": DENOISE_REPORT,
                },
                wildcards=lambda ctx: {"triplets": alternation(_triplets(ctx)) or "[^/]+"},
                params={
                    "settings": _denoise_settings,
                    "mirror": lambda ctx, wc: ctx.mirror_arg(),
                },
                command=GPU_SLOT + "python -m negcse gcse-denoise --candidates "
                "{input.candidates:q} --anchors {output.anchors:q} "
                "--positives {output.positives:q} --negatives {output.negatives:q} "
                "--report {output.report:q} {params.settings} --seed {wildcards.seed:q} "
                "--threads {threads} {params.mirror}",
                log="logs/gcse/triplets/{corpus}/{triplets}/{backbone}/seed{seed}.log",
                benchmark="benchmarks/rules/gcse/triplets/{corpus}/{triplets}/{backbone}/seed{seed}.tsv",
                resources={"gpu": 1, "mem_mb": 16000, "runtime": 120},
                conda="llm",
            ),
        ),
    )
)
