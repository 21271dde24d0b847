"""OssCSE's paraphrases (positives) of the corpus (rules/generators/osscse_paraphrase.smk):
back-translation through the wmt19 pivots, kept by word MER; offline fallback: surface edits.
One file per corpus, shared by every backbone and seed."""

from __future__ import annotations

from typing import Any

from negcse.generators.registry import NAME, GeneratorSpec, register

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


def check(settings: dict[str, Any]) -> None:
    if not settings["mer_min"] <= settings["mer_max"]:
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


SPEC = register(
    GeneratorSpec(
        name="osscse_paraphrase",
        columns=(COLUMN,),
        output="results/negatives/osscse_paraphrase/{corpus}/paraphrases.txt",
        defaults={
            "source": "backtranslation",  # the paper; surface_edits: offline fallback
            "pivots": {name: list(pair) for name, pair in WMT19_PIVOTS.items()},
            "num_beams": 5,
            "max_length": 128,  # tokens in and out of each translation
            "batch_size": 64,
            "precision": "bf16",  # fp32 or bf16
            "mer_min": 0.15,
            "mer_max": 0.6,
            "seed": 0,  # choice among several kept candidates, and the surface edits
            "edit_rate": 0.15,  # surface_edits: per-word deletion rate (and swaps per word)
        },
        schema={
            "source": {"enum": list(SOURCES)},
            "pivots": {
                "type": "object",
                "description": "pivot -> [en->pivot model, pivot->en model]",
                "propertyNames": NAME,  # bt_<pivot>.txt
                "additionalProperties": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 2,
                    "maxItems": 2,
                },
            },
            "num_beams": {"type": "integer", "minimum": 1},
            "max_length": {"type": "integer", "minimum": 1},
            "batch_size": {"type": "integer", "minimum": 1},
            "precision": {"enum": ["fp32", "bf16"]},
            "mer_min": {"type": "number", "minimum": 0, "maximum": 1},
            "mer_max": {"type": "number", "minimum": 0, "maximum": 1},
            "seed": {"type": "integer"},
            "edit_rate": {"type": "number", "minimum": 0, "maximum": 1},
        },
        check=check,
        models=models,
        gpu_rule=lambda settings: (
            "back_translation" if settings["source"] == "backtranslation" else None
        ),
    )
)
