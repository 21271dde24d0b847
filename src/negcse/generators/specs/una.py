"""UNA's TF-IDF hard negatives: the TF-IDF table, fitted once per corpus (with its paraphrases
when a method asks for it), then one file of negatives per corpus, settings and seed ("same
seed, same negatives"), shared by every backbone. The Table 2 ablations set ``select`` /
``replace`` per method."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from negcse.generators.registry import GeneratorSpec, register
from negcse.generators.settings import GeneratorSettings, options, setting
from negcse.generators.specs.paraphrase import SPEC as PARAPHRASE
from negcse.generators.steps import Step, StepContext, Wildcards, alternation, corpus_input

SELECT_MODES: tuple[str, ...] = ("tfidf", "random")
REPLACE_MODES: tuple[str, ...] = ("window", "random")
SCORE_MODES: tuple[str, ...] = ("sentence", "global")
COLUMN = "una_negative"  # the negatives (negcse.methods.una reads it)
DEFAULT_CHUNK = 10_000  # sentences per random stream
#: the TF-IDF tables a variant samples from (rules tfidf, tfidf_with_paraphrases)
TFIDF_TABLE = "results/features/tfidf/{corpus}.tsv"
TFIDF_TABLE_WITH_PARAPHRASES = "results/features/tfidf/{corpus}+paraphrase.tsv"


NEGATIVES = "results/negatives/una/{corpus}/{variant}/seed{seed}.txt"


@dataclass(frozen=True)
class UnaSettings(GeneratorSettings):
    """One variant of UNA's negatives (the command's options, in this order)."""

    beta: float = setting(0.5, "augmentation magnitude: mean replacement probability", minimum=0)
    window: int = setting(4000, "rank radius r of the replacement window", minimum=1)
    select: str = setting(
        "tfidf", "tfidf (paper) or random (Table 2 ablation)", choices=SELECT_MODES
    )
    replace: str = setting(
        "window", "window (paper) or random (Table 2 ablation)", choices=REPLACE_MODES
    )
    scores: str = setting(
        "sentence",
        "z_i: the sentence's TF-IDF (paper, released code) or the global max TF-IDF",
        choices=SCORE_MODES,
    )
    with_paraphrases: bool = setting(
        False, "TF-IDF fit on corpus + paraphrases (released +para)", cli=False
    )
    chunk_size: int = setting(
        DEFAULT_CHUNK, "sentences per random stream; part of what fixes the output", minimum=1
    )

    def check(self) -> None:
        if not math.isfinite(self.beta):
            raise ValueError(f"beta: must be a finite number, got {self.beta}")


def variant(settings: dict[str, Any], column: str) -> str:
    """Every setting, e.g. ``tfidf-window_b0.5_r4000_sentence_c10000`` (``_para``: TF-IDF fit
    with the paraphrases)."""
    name = (
        f"{settings['select']}-{settings['replace']}_b{settings['beta']:g}_r{settings['window']}"
        f"_{settings['scores']}_c{settings['chunk_size']}"
    )
    return name + ("_para" if settings["with_paraphrases"] else "")


def tfidf_table(corpus: str, with_paraphrases: bool) -> str:
    """The TF-IDF table a variant samples from."""
    pattern = TFIDF_TABLE_WITH_PARAPHRASES if with_paraphrases else TFIDF_TABLE
    return pattern.format(corpus=corpus)


def _with_paraphrases(ctx: StepContext, wc: Wildcards) -> dict[str, str]:
    return {**corpus_input(ctx, wc), "paraphrases": PARAPHRASE.output.format(corpus=wc["corpus"])}


def _negatives_inputs(ctx: StepContext, wc: Wildcards) -> dict[str, str]:
    settings = ctx.variants("una")[wc["variant"]]
    return {
        **corpus_input(ctx, wc),
        "tfidf": tfidf_table(wc["corpus"], settings["with_paraphrases"]),
    }


SPEC = register(
    GeneratorSpec(
        name="una",
        columns=(COLUMN,),
        output=NEGATIVES,
        settings=UnaSettings,
        per_method=True,
        variant=variant,
        steps=(
            Step(
                name="tfidf",
                outputs={"table": TFIDF_TABLE},
                command="python -m negcse tfidf --input {input:q} --output {output:q}",
                log="logs/features/tfidf_{corpus}.log",
                benchmark="benchmarks/rules/features/tfidf_{corpus}.tsv",
            ),
            Step(
                name="tfidf_with_paraphrases",
                inputs=_with_paraphrases,
                outputs={"table": TFIDF_TABLE_WITH_PARAPHRASES},
                command="python -m negcse tfidf --input {input.corpus:q} {input.paraphrases:q} "
                "--output {output:q}",
                log="logs/features/tfidf_{corpus}+paraphrase.log",
                benchmark="benchmarks/rules/features/tfidf_{corpus}+paraphrase.tsv",
            ),
            Step(
                name="una_negatives",
                inputs=_negatives_inputs,
                outputs={"negatives": NEGATIVES},
                wildcards=lambda ctx: {"variant": alternation(ctx.variants("una"))},
                params={
                    "settings": lambda ctx, wc: options(
                        ctx.variants("una")[wc["variant"]], UnaSettings
                    )
                },
                command="python -m negcse una-negatives --corpus {input.corpus:q} "
                "--tfidf {input.tfidf:q} --output {output:q} --seed {wildcards.seed:q} "
                "{params.settings}",
                log="logs/negatives/una/{corpus}/{variant}/seed{seed}.log",
                benchmark="benchmarks/rules/negatives/una/{corpus}/{variant}/seed{seed}.tsv",
            ),
        ),
    )
)
