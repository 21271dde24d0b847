"""SNCSE / OssCSE negations of the corpus by spaCy rules (rule negation): one
file per corpus and style, shared by every backbone and seed. ``reference_quirks`` (per
method) reproduces the released SNCSE trainer's lookup miss."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from negcse.generators.registry import GeneratorSpec, register
from negcse.generators.settings import GeneratorSettings, setting
from negcse.generators.steps import Step, alternation

#: column -> negation style
SNCSE_COLUMN = "negation_sncse"
OSSCSE_COLUMN = "negation_osscse"
STYLES = {SNCSE_COLUMN: "sncse", OSSCSE_COLUMN: "osscse"}
#: every file the rule can make (the analyses read the SNCSE one whatever the grid)
VARIANTS = ("sncse", "sncse-reference", "osscse")


def variant(settings: dict[str, Any], column: str) -> str:
    """``sncse``, ``sncse-reference`` (released lookup quirk) or ``osscse``."""
    style = STYLES[column]
    return f"{style}-reference" if style == "sncse" and settings["reference_quirks"] else style


def variant_args(name: str) -> str:
    """``negcse negate`` options of a variant (its name holds them all)."""
    style, _, flag = name.partition("-")
    return f"--style {style}" + (" --reference-quirks" if flag == "reference" else "")


OUTPUT = "results/negatives/negation/{corpus}/{variant}.txt"


@dataclass(frozen=True)
class NegationSettings(GeneratorSettings):
    reference_quirks: bool = setting(
        False,
        "SNCSE only: reproduce the released trainer's lookup, which turns every sentence "
        "without final punctuation into 'Not <sentence> .'",
        flag=("--reference-quirks", True),
    )
    batch_size: int = setting(256, "sentences per spaCy batch", minimum=1)


SPEC = register(
    GeneratorSpec(
        name="negation",
        columns=tuple(STYLES),
        output=OUTPUT,
        settings=NegationSettings,
        per_method=True,
        variant=variant,
        steps=(
            Step(
                name="negation",
                outputs={"negations": OUTPUT},
                wildcards=lambda ctx: {"variant": alternation(VARIANTS)},
                params={
                    "style": lambda ctx, wc: variant_args(wc["variant"]),
                    "batch_size": lambda ctx, wc: ctx.settings("negation")["batch_size"],
                },
                command="python -m negcse negate --input {input:q} --output {output:q} "
                "{params.style} --n-process {threads} --batch-size {params.batch_size:q} "
                "--no-progress",
                log="logs/negatives/negation/{corpus}/{variant}.log",
                benchmark="benchmarks/rules/negatives/negation/{corpus}/{variant}.tsv",
                threads=4,
            ),
        ),
    )
)
