"""OssCSE's paraphrases (positives) of the corpus: back-translation through the wmt19 pivots
(or the offline fallback's surface edits), then the candidates kept by word MER. One file per
corpus, shared by every backbone and seed."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from negcse.generators.registry import NAME, GeneratorSpec, register
from negcse.generators.settings import GeneratorSettings, options, setting
from negcse.generators.steps import (
    GPU_SLOT,
    Step,
    StepContext,
    Wildcards,
    alternation,
    corpus_input,
)

#: the paper's pivots: name -> (en->pivot model, pivot->en model)
WMT19_PIVOTS: dict[str, tuple[str, str]] = {
    "de": ("facebook/wmt19-en-de", "facebook/wmt19-de-en"),
    "ru": ("facebook/wmt19-en-ru", "facebook/wmt19-ru-en"),
}
COLUMN = "paraphrase_osscse"  # negcse.methods.osscse reads it
SOURCES = ("backtranslation", "surface_edits")
#: candidate files (rules back_translation, surface_edits)
BACKTRANSLATION = "results/negatives/osscse_paraphrase/{corpus}/bt_{pivot}.txt"
SURFACE_EDITS = "results/negatives/osscse_paraphrase/{corpus}/surface_edits.txt"


OUTPUT = "results/negatives/osscse_paraphrase/{corpus}/paraphrases.txt"
PIVOTS_SCHEMA = {
    "type": "object",
    "propertyNames": NAME,  # bt_<pivot>.txt
    "additionalProperties": {
        "type": "array",
        "items": {"type": "string"},
        "minItems": 2,
        "maxItems": 2,
    },
}


@dataclass(frozen=True)
class OssCseParaphraseSettings(GeneratorSettings):
    source: str = setting(
        "backtranslation", "the paper; surface_edits: offline fallback", choices=SOURCES, cli=False
    )
    pivots: Mapping[str, list[str]] = setting(
        {name: list(pair) for name, pair in WMT19_PIVOTS.items()},
        "pivot -> [en->pivot model, pivot->en model]",
        schema=PIVOTS_SCHEMA,
        cli=False,
    )
    num_beams: int = setting(5, "beams of each translation", minimum=1)
    max_length: int = setting(128, "tokens in and out of each translation", minimum=1)
    batch_size: int = setting(64, "sentences per translation batch", minimum=1)
    precision: str = setting("bf16", "fp32 or bf16", choices=("fp32", "bf16"))
    mer_min: float = setting(0.15, "least word MER of a kept candidate", minimum=0, maximum=1)
    mer_max: float = setting(0.6, "most word MER of a kept candidate", minimum=0, maximum=1)
    edit_rate: float = setting(
        0.15,
        "surface_edits: per-word deletion rate (and swaps per word)",
        option="--rate",
        minimum=0,
        maximum=1,
    )
    seed: int = setting(0, "choice among several kept candidates, and the surface edits")

    def check(self) -> None:
        if not self.mer_min <= self.mer_max:
            raise ValueError("need 0 <= mer_min <= mer_max <= 1")


def models(settings: dict[str, Any]) -> list[str]:
    """The translation models, when candidates come from back-translation."""
    if settings["source"] != "backtranslation":
        return []
    return [model for pair in settings["pivots"].values() for model in pair]


def candidates(settings: dict[str, Any], corpus: str) -> dict[str, str]:
    """The candidate files of the configured source, name -> path."""
    if settings["source"] == "surface_edits":
        return {"edits": SURFACE_EDITS.format(corpus=corpus)}
    return {p: BACKTRANSLATION.format(corpus=corpus, pivot=p) for p in settings["pivots"]}


def _options(*only: str) -> Any:
    """A param: the command-line options ``only`` of the generator's settings."""
    return lambda ctx, wc: options(
        ctx.settings("osscse_paraphrase"), OssCseParaphraseSettings, only
    )


def _translation_models(ctx: StepContext, wc: Wildcards) -> str:
    """``--forward A --backward B`` of a pivot."""
    pair = ctx.settings("osscse_paraphrase")["pivots"][wc["pivot"]]
    return "--forward {} --backward {}".format(*map(shlex.quote, pair))


def _select_inputs(ctx: StepContext, wc: Wildcards) -> dict[str, str]:
    found = candidates(ctx.settings("osscse_paraphrase"), wc["corpus"])
    return {**found, **corpus_input(ctx, wc)}


def _candidate_args(ctx: StepContext, wc: Wildcards) -> str:
    """``name=file ...`` of the candidates, for ``--candidates``."""
    found = candidates(ctx.settings("osscse_paraphrase"), wc["corpus"])
    return " ".join(shlex.quote(f"{name}={path}") for name, path in found.items())


SPEC = register(
    GeneratorSpec(
        name="osscse_paraphrase",
        columns=(COLUMN,),
        output=OUTPUT,
        settings=OssCseParaphraseSettings,
        models=models,
        gpu_rule=lambda settings: (
            "back_translation" if settings["source"] == "backtranslation" else None
        ),
        steps=(
            Step(
                name="back_translation",
                outputs={"candidates": BACKTRANSLATION},
                wildcards=lambda ctx: {
                    "pivot": alternation(ctx.settings("osscse_paraphrase")["pivots"])
                },
                params={
                    "models": _translation_models,
                    "cache": lambda ctx, wc: f"results/cache/backtranslation/{wc['pivot']}.sqlite",
                    "settings": _options("num_beams", "max_length", "batch_size", "precision"),
                    "mirror": lambda ctx, wc: ctx.mirror_arg(),
                },
                command=GPU_SLOT + "python -m negcse back-translate --corpus {input:q} "
                "--output {output:q} {params.models} --cache {params.cache:q} {params.settings} "
                "--threads {threads} --no-progress {params.mirror}",
                log="logs/negatives/osscse_paraphrase/{corpus}/bt_{pivot}.log",
                benchmark="benchmarks/rules/negatives/osscse_paraphrase/{corpus}/bt_{pivot}.tsv",
                threads=2,
                resources={"gpu": 1, "mem_mb": 32000, "runtime": 720},
            ),
            Step(
                name="surface_edits",
                outputs={"candidates": SURFACE_EDITS},
                params={"settings": _options("edit_rate", "seed")},
                command="python -m negcse surface-edits --corpus {input:q} --output {output:q} "
                "{params.settings}",
                log="logs/negatives/osscse_paraphrase/{corpus}/surface_edits.log",
                benchmark="benchmarks/rules/negatives/osscse_paraphrase/{corpus}/surface_edits.tsv",
            ),
            Step(
                name="osscse_paraphrase",
                inputs=_select_inputs,
                outputs={
                    "paraphrases": OUTPUT,
                    "stats": "results/negatives/osscse_paraphrase/{corpus}/stats.json",
                },
                params={
                    "candidates": _candidate_args,
                    "settings": _options("mer_min", "mer_max", "seed"),
                },
                command="python -m negcse select-paraphrases --corpus {input.corpus:q} "
                "--candidates {params.candidates} --output {output.paraphrases:q} "
                "--stats {output.stats:q} {params.settings} --no-progress",
                log="logs/negatives/osscse_paraphrase/{corpus}/select.log",
                benchmark="benchmarks/rules/negatives/osscse_paraphrase/{corpus}/select.tsv",
            ),
        ),
    )
)
