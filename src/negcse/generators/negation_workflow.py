"""Settings and file names of the SNCSE / OssCSE generators, for rules/negatives.smk.

``generators.negation`` and ``generators.osscse_paraphrase`` in params.yaml hold the defaults
below; ``methods.<m>.generators.negation`` overrides the negation settings for one method (e.g. a
row trained on the released code's quirky negations). Every setting that changes a file is in
its name, so a change reruns exactly the jobs that read it.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from negcse.generators.backtranslation import WMT19_PIVOTS
from negcse.generators.settings_layers import layered_settings

NEGATION_DEFAULTS: dict[str, Any] = {
    "reference_quirks": False,  # SNCSE: reproduce the released trainer's " ." lookup miss
    "batch_size": 256,  # sentences per spaCy batch
}
PARAPHRASE_SOURCES = ("backtranslation", "surface_edits")
OSSCSE_PARAPHRASE_DEFAULTS: dict[str, Any] = {
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
}
NEGATION_COLUMNS = {"negation_sncse": "sncse", "negation_osscse": "osscse"}
PARAPHRASE_COLUMN = "paraphrase_osscse"

Wildcards = Any
InputFunction = Callable[[Wildcards], Any]


def negation_settings(config: dict[str, Any], method: str | None = None) -> dict[str, Any]:
    settings = layered_settings(config, "negation", NEGATION_DEFAULTS, method)
    if not isinstance(settings["reference_quirks"], bool):
        raise ValueError("generators.negation.reference_quirks must be true or false")
    return settings


def osscse_paraphrase_settings(config: dict[str, Any]) -> dict[str, Any]:
    settings = layered_settings(config, "osscse_paraphrase", OSSCSE_PARAPHRASE_DEFAULTS)
    where = "generators.osscse_paraphrase"
    if settings["source"] not in PARAPHRASE_SOURCES:
        raise ValueError(f"{where}.source must be one of {PARAPHRASE_SOURCES}")
    if settings["precision"] not in ("fp32", "bf16"):
        raise ValueError(f"{where}.precision must be fp32 or bf16")
    if not 0 <= settings["mer_min"] <= settings["mer_max"] <= 1:
        raise ValueError(f"{where}: need 0 <= mer_min <= mer_max <= 1")
    for name, pair in settings["pivots"].items():
        if not (isinstance(pair, list | tuple) and len(pair) == 2):
            raise ValueError(f"{where}.pivots.{name} must be [en->pivot model, pivot->en model]")
    return settings


# -- file names ---------------------------------------------------------------------------------


def negation_variant(style: str, reference_quirks: bool) -> str:
    """``sncse``, ``sncse-reference`` (released lookup quirk) or ``osscse``."""
    return f"{style}-reference" if style == "sncse" and reference_quirks else style


def negation_path(corpus: str, variant: str) -> str:
    return f"results/negatives/negation/{corpus}/{variant}.txt"


def backtranslation_path(corpus: str, pivot: str) -> str:
    return f"results/negatives/osscse_paraphrase/{corpus}/bt_{pivot}.txt"


def surface_edits_path(corpus: str) -> str:
    return f"results/negatives/osscse_paraphrase/{corpus}/surface_edits.txt"


def paraphrase_path(corpus: str) -> str:
    return f"results/negatives/osscse_paraphrase/{corpus}/paraphrases.txt"


# -- workflow glue ------------------------------------------------------------------------------


def column_inputs(config: dict[str, Any], corpus: str) -> dict[str, InputFunction]:
    """COLUMN_FILES entries: column -> function(wildcards of a train job) -> file."""

    def negation(style: str) -> InputFunction:
        def path(wildcards: Wildcards) -> str:
            quirks = negation_settings(config, wildcards.method)["reference_quirks"]
            return negation_path(corpus, negation_variant(style, quirks))

        return path

    def paraphrase(wildcards: Wildcards) -> str:
        return paraphrase_path(corpus)

    inputs = {column: negation(style) for column, style in NEGATION_COLUMNS.items()}
    inputs[PARAPHRASE_COLUMN] = paraphrase
    return inputs


def negation_args(wildcards: Wildcards) -> str:
    """``negcse negate`` options of a negation variant (the file name holds them all)."""
    style, _, flag = wildcards.variant.partition("-")
    return f"--style {style}" + (" --reference-quirks" if flag == "reference" else "")


def paraphrase_candidates(config: dict[str, Any]) -> InputFunction:
    """The candidate files of the configured source, name -> path."""

    def files(wildcards: Wildcards) -> dict[str, str]:
        settings = osscse_paraphrase_settings(config)
        if settings["source"] == "surface_edits":
            return {"edits": surface_edits_path(wildcards.corpus)}
        return {p: backtranslation_path(wildcards.corpus, p) for p in settings["pivots"]}

    return files


def translation_args(config: dict[str, Any]) -> InputFunction:
    """``--forward A --backward B`` of a pivot."""

    def args(wildcards: Wildcards) -> str:
        forward, backward = osscse_paraphrase_settings(config)["pivots"][wildcards.pivot]
        return f"--forward {shlex.quote(forward)} --backward {shlex.quote(backward)}"

    return args


def candidate_args(wildcards: Wildcards, input: Any) -> str:
    """``--candidates name=file ...`` for select-paraphrases (the rule's named inputs)."""
    names = input.keys()  # a Snakemake Namedlist iterates over its files, not its names
    return " ".join(f"{name}={input[name]}" for name in names if name != "corpus")
