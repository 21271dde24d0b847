"""GCSE's synthesized triplets (rules/generators/gcse.smk): an LLM writes candidates for the
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
from typing import Any

from negcse.gcse.released import RELEASED_BUGS
from negcse.generators.registry import GeneratorSpec, register

ANCHOR_COLUMN = "gcse_anchor"  # stage 2's training sentences (negcse.methods.gcse reads them)
POSITIVE_COLUMN = "gcse_positive"
NEGATIVE_COLUMN = "gcse_negative"
COLUMNS = (ANCHOR_COLUMN, POSITIVE_COLUMN, NEGATIVE_COLUMN)
MODES = ("paper", "released")
BACKENDS = ("transformers", "openai")
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
#: the released bugs reproduced at denoising (the others change the candidates)
DENOISE_BUGS = ("listed_order", "anchor_augmentation")
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


def thresholds(settings: dict[str, Any]) -> tuple[float, float]:
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


def synthesis_args(settings: dict[str, Any]) -> str:
    """``negcse gcse-synthesize`` options (besides files, cache and threads). The key is
    passed by its variable's NAME only."""
    s = settings
    out = [
        f"--mode {s['mode']} --positives {s['positives']} --negatives {s['negatives']}",
        f"--seed {s['synthesis_seed']} --max-chars {s['max_chars']}",
        "" if s["max_sources"] is None else f"--max-sources {s['max_sources']}",
        f"--max-new-tokens {s['max_new_tokens']} --temperature {s['temperature']}",
        f"--top-p {s['top_p']} --backend {s['backend']} --model {shlex.quote(s['model'])}",
        f"--batch-size {s['batch_size']}",
        "--extension" if s["extension"] else "",
        "--no-prefer-related" if s["mode"] == "paper" and not s["prefer_related"] else "",
        (
            f"--neighbour-model {shlex.quote(s['neighbour_model'])}"
            if s["mode"] == "released" and s["neighbour_model"] is not None
            else ""
        ),
        *(f"--released-bug {b}" for b in sorted(s["released_bugs"]) if b not in DENOISE_BUGS),
    ]
    if s["backend"] == "openai":
        out.append(
            f"--base-url {shlex.quote(s['base_url'])} "
            f"--api-key-env {shlex.quote(s['api_key_env'])} "
            f"--max-in-flight {s['concurrency']}"
        )
        if s["request_budget"] is not None:
            out.append(f"--request-budget {s['request_budget']}")
    return " ".join(o for o in out if o)


def denoise_args(settings: dict[str, Any]) -> str:
    """``negcse gcse-denoise`` options (besides files, model, seed and threads)."""
    aug = " --augment-anchors" if "anchor_augmentation" in settings["released_bugs"] else ""
    if not settings["filter"]:
        return f"--mode {settings['mode']} --no-filter{aug}"
    alpha, beta = thresholds(settings)
    order = "listed" if "listed_order" in settings["released_bugs"] else "roles"
    return (
        f"--mode {settings['mode']} --alpha {alpha} --beta {beta} "
        f"--choice {settings['choice']} --order {order}{aug}"
    )


def models(settings: dict[str, Any]) -> tuple[str, ...]:
    """A Hugging Face LLM to prefetch (the pinned GGUF ships in a package; endpoints serve
    their own)."""
    from negcse.llm.pinned import PINNED  # light: no torch

    encoder = settings["neighbour_model"]
    extra = (encoder,) if encoder is not None and settings["mode"] == "released" else ()
    if settings["backend"] != "transformers" or settings["model"] in PINNED:
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


def check(settings: dict[str, Any]) -> None:
    if settings["backend"] == "openai" and not settings["base_url"]:
        raise ValueError("backend openai needs base_url (an OpenAI-compatible /v1 endpoint)")
    alpha, beta = thresholds(settings)
    if settings["filter"] and not alpha > beta:
        raise ValueError(f"alpha ({alpha}) must exceed beta ({beta})")


SPEC = register(
    GeneratorSpec(
        name="gcse",
        columns=COLUMNS,
        output=TRIPLETS,
        per_method=True,
        defaults={
            # released: the released pipeline's prompts, shares and thresholds (its bugs fixed
            # unless released_bugs names them); paper: the paper's Figure 8-9 prompts, alpha 0.9
            "mode": "released",
            "backend": "transformers",  # transformers (local) or openai (any compatible endpoint)
            # the released code's default LLM (glm-4-9b-chat; the -hf conversion loads natively)
            "model": "THUDM/glm-4-9b-chat-hf",
            "base_url": "",  # openai: e.g. http://127.0.0.1:8000/v1 (vllm serve)
            "api_key_env": "OPENAI_API_KEY",  # openai: the NAME of the key's variable
            "concurrency": 8,  # openai: requests in flight
            "request_budget": None,  # openai: most HTTP requests per run (null: no limit)
            "batch_size": 8,  # transformers: prompts per generate call
            "positives": 1,  # positive prompts per source (released)
            "negatives": 1,  # negative prompts per source (released)
            # the first N corpus lines are the sources (null: all); ~64k as the paper's App. F
            "max_sources": 64000,
            "max_chars": 2000,  # longer source lines are skipped
            "max_new_tokens": 512,  # released sampling settings
            "temperature": 0.6,
            "top_p": 0.95,
            "synthesis_seed": 0,  # prompts, replacements, sampling (shared by training seeds)
            "filter": True,  # false: Table 4's "w/o filtering" (candidates kept unfiltered)
            "alpha": None,  # positive threshold (null: the mode's, released 0.80, paper 0.9)
            "beta": None,  # negative threshold (null: the mode's, 0.75)
            "choice": "first",  # first or random of several qualifying candidates
            # released bugs to reproduce (negcse.gcse.released; gcse_released names them all)
            "released_bugs": [],
            # extension sentences (Rewriting Prompt 4, released steps 5-6) as extra anchors
            "extension": True,
            # paper mode: an entity revision draws from T_p (eq. 7, soft edges) when it has one,
            # else T_r (false: uniformly from T(t) = T_r U T_p as a set, which equals T_r)
            "prefer_related": True,
            # released mode: a frozen encoder (Hugging Face name or folder) whose nearest
            # neighbours give the positive revisions, as the released KG's "related" (null: the
            # KG's own related replacement; the released code used its stage-1 model)
            "neighbour_model": None,
        },
        schema={
            "mode": {"enum": list(MODES)},
            "backend": {"enum": list(BACKENDS)},
            "model": {"type": "string", "minLength": 1},
            "base_url": {"type": "string"},
            "api_key_env": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$|^$"},
            "concurrency": {"type": "integer", "minimum": 1},
            "request_budget": {"type": ["integer", "null"], "minimum": 1},
            "batch_size": {"type": "integer", "minimum": 1},
            "positives": {"type": "integer", "minimum": 0},
            "negatives": {"type": "integer", "minimum": 0},
            "max_sources": {"type": ["integer", "null"], "minimum": 2},
            "max_chars": {"type": "integer", "minimum": 1},
            "max_new_tokens": {"type": "integer", "minimum": 1},
            "temperature": {"type": "number", "minimum": 0},
            "top_p": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
            "synthesis_seed": {"type": "integer"},
            "filter": {"type": "boolean"},
            "alpha": {"type": ["number", "null"]},
            "beta": {"type": ["number", "null"]},
            "choice": {"enum": ["first", "random"]},
            "extension": {"type": "boolean"},
            "prefer_related": {"type": "boolean"},
            "neighbour_model": {"type": ["string", "null"], "minLength": 1},
            "released_bugs": {
                "type": "array",
                "items": {"enum": sorted(RELEASED_BUGS)},
                "uniqueItems": True,
                "description": "released bugs to reproduce (fixed when absent)",
            },
        },
        variant=variant,
        check=check,
        models=models,
        provenance=provenance,
        conda="llm",
    )
)


def stage1_models(
    config: dict[str, Any], triplets: str, backbone: str, seed: int | str, corpus: str
) -> tuple[str, str | None]:
    """The stage-1 model that denoises the triplets variant ``triplets`` of ``corpus`` for
    ``backbone`` x ``seed``: the ``evaluation`` guide of the methods reading it, as (``--model``
    argument, the run folder the workflow trains or None for a named model). Methods sharing a
    variant and corpus must share that guide (else ValueError: give them different settings)."""
    from negcse.generators.registry import methods_reading, settings
    from negcse.workflow.config import method_corpus
    from negcse.workflow.guide_config import guide_models, guide_outputs

    found: dict[str, str | None] = {}
    for method in methods_reading(config, COLUMNS):
        if triplets_id(settings(config, "gcse", method)) != triplets:
            continue
        if method_corpus(config, method) != corpus:
            continue
        model = guide_models(config, method, backbone, seed).get("evaluation")
        if model is None:
            raise ValueError(f"methods.{method}: GCSE needs guides.evaluation (the stage-1 run)")
        found[model] = guide_outputs(config, method, backbone, seed).get("evaluation")
    if len(found) != 1:
        raise ValueError(
            f"gcse triplets {triplets} of corpus {corpus}: {len(found)} stage-1 models "
            f"({sorted(found)}); the methods reading one variant must share guides.evaluation"
        )
    return next(iter(found.items()))
