"""PEGASUS paraphrases of the corpus: UNA's positives, one file per corpus (GPU; sentences of
earlier runs come from a cache)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from negcse.generators.registry import GeneratorSpec, register
from negcse.generators.settings import GeneratorSettings, options, setting
from negcse.generators.steps import GPU_SLOT, Step

COLUMN = "paraphrase"  # UNA's positives (negcse.methods.una reads it)
OUTPUT = "results/features/paraphrase/{corpus}.txt"
#: sentences paraphrased by earlier runs (any corpus) are not generated again
CACHE = "results/cache/paraphrase.sqlite"


@dataclass(frozen=True)
class ParaphraseSettings(GeneratorSettings):
    model: str = setting("tuner007/pegasus_paraphrase", "hub id or folder")
    num_beams: int = setting(10, "beams of the search", minimum=1)
    max_length: int = setting(60, "input truncation and output length, in tokens", minimum=1)
    batch_size: int = setting(32, "sentences per batch", minimum=1)
    precision: str = setting(
        "fp32", "fp32 or bf16 (PEGASUS overflows in fp16)", choices=("fp32", "bf16")
    )


def models(settings: dict[str, Any]) -> tuple[str, ...]:
    return (settings["model"],)


SPEC = register(
    GeneratorSpec(
        name="paraphrase",
        columns=(COLUMN,),
        output=OUTPUT,
        settings=ParaphraseSettings,
        models=models,
        gpu_rule=lambda settings: "paraphrase",
        steps=(
            Step(
                name="paraphrase",
                outputs={"paraphrases": OUTPUT},
                params={
                    "settings": lambda ctx, wc: options(
                        ctx.settings("paraphrase"), ParaphraseSettings
                    ),
                    "cache": lambda ctx, wc: CACHE,
                    "mirror": lambda ctx, wc: ctx.mirror_arg(),
                },
                command=GPU_SLOT + "python -m negcse paraphrase --corpus {input:q} "
                "--output {output:q} --cache {params.cache:q} {params.settings} "
                "--threads {threads} --no-progress {params.mirror}",
                log="logs/features/paraphrase_{corpus}.log",
                benchmark="benchmarks/rules/features/paraphrase_{corpus}.tsv",
                threads=2,
                resources={"gpu": 1, "mem_mb": 32000, "runtime": 1440},
            ),
        ),
    )
)
