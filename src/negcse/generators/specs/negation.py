"""SNCSE / OssCSE negations of the corpus by spaCy rules (rules/generators/negation.smk): one
file per corpus and style, shared by every backbone and seed. ``reference_quirks`` (per
method) reproduces the released SNCSE trainer's lookup miss."""

from __future__ import annotations

from typing import Any

from negcse.generators.registry import GeneratorSpec, register

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


SPEC = register(
    GeneratorSpec(
        name="negation",
        columns=tuple(STYLES),
        output="results/negatives/negation/{corpus}/{variant}.txt",
        per_method=True,
        defaults={
            "reference_quirks": False,  # SNCSE: the released trainer's " ." lookup miss
            "batch_size": 256,  # sentences per spaCy batch
        },
        schema={
            "reference_quirks": {"type": "boolean"},
            "batch_size": {"type": "integer", "minimum": 1},
        },
        variant=variant,
    )
)
