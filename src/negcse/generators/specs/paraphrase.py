"""PEGASUS paraphrases of the corpus (rules/generators/paraphrase.smk): UNA's positives, one
file per corpus (GPU; sentences of earlier runs come from a cache)."""

from __future__ import annotations

from typing import Any

from negcse.generators.registry import GeneratorSpec, register

COLUMN = "paraphrase"  # UNA's positives (negcse.methods.una reads it)


def models(settings: dict[str, Any]) -> tuple[str, ...]:
    return (settings["model"],)


SPEC = register(
    GeneratorSpec(
        name="paraphrase",
        columns=(COLUMN,),
        output="results/features/paraphrase/{corpus}.txt",
        defaults={
            "model": "tuner007/pegasus_paraphrase",
            "num_beams": 10,
            "max_length": 60,  # input truncation and output length, in model tokens
            "batch_size": 32,
            "precision": "fp32",  # fp32 or bf16 (PEGASUS overflows in fp16)
        },
        schema={
            "model": {"type": "string"},
            "num_beams": {"type": "integer", "minimum": 1},
            "max_length": {"type": "integer", "minimum": 1},
            "batch_size": {"type": "integer", "minimum": 1},
            "precision": {"enum": ["fp32", "bf16"]},
        },
        models=models,
        gpu_rule=lambda settings: "paraphrase",
    )
)
