"""Generator settings from the config, and the file names they lead to (used by the rules).

``generators.<name>`` in params.yaml holds a generator's defaults; ``methods.<m>.generators.
<name>`` overrides them for one method (UNA's Table 2 ablations set ``select`` / ``replace``).
:func:`una_variant` names a settings combination: every setting that changes the negatives is
in the name, so each combination gets its own file and a change reruns exactly its jobs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from negcse.generators.settings_layers import layered_settings, method_variants, per_variant
from negcse.generators.una import DEFAULT_CHUNK, UnaParams

UNA_DEFAULTS: dict[str, Any] = {
    "beta": 0.5,  # augmentation magnitude: mean replacement probability
    "window": 4000,  # rank radius r of the replacement window
    "select": "tfidf",  # tfidf (paper) or random (Table 2 ablation)
    "replace": "window",  # window (paper) or random (Table 2 ablation)
    "scores": "sentence",  # z_i: the sentence's TF-IDF (paper, released) or the global score
    "with_paraphrases": False,  # TF-IDF fit on the corpus plus its paraphrases (released +para)
    "chunk_size": DEFAULT_CHUNK,  # sentences per random stream
}

PARAPHRASE_DEFAULTS: dict[str, Any] = {
    "model": "tuner007/pegasus_paraphrase",
    "num_beams": 10,
    "max_length": 60,  # input truncation and output length, in model tokens
    "batch_size": 32,
    "precision": "fp32",  # fp32 or bf16 (PEGASUS overflows in fp16)
}


def una_settings(config: dict[str, Any], method: str) -> dict[str, Any]:
    """UNA generator settings of ``method``: defaults < generators.una < the method's."""
    settings = layered_settings(config, "una", UNA_DEFAULTS, method)
    UnaParams(
        beta=settings["beta"],
        window=settings["window"],
        select=settings["select"],
        replace=settings["replace"],
        scores=settings["scores"],
    )  # validates the values
    if int(settings["chunk_size"]) != settings["chunk_size"] or settings["chunk_size"] < 1:
        raise ValueError(f"methods.{method}: chunk_size must be an integer >= 1")
    return settings


def una_variant(settings: dict[str, Any]) -> str:
    """A file-name-safe name holding every setting, e.g. ``tfidf-window_b0.5_r4000_sentence_c10000``."""
    name = (
        f"{settings['select']}-{settings['replace']}_b{settings['beta']:g}_r{settings['window']}"
        f"_{settings['scores']}_c{settings['chunk_size']}"
    )
    return name + ("_para" if settings["with_paraphrases"] else "")


def paraphrase_settings(config: dict[str, Any]) -> dict[str, Any]:
    settings = layered_settings(config, "paraphrase", PARAPHRASE_DEFAULTS)
    if settings["precision"] not in ("fp32", "bf16"):
        raise ValueError(
            f"generators.paraphrase.precision must be fp32 or bf16, got {settings['precision']!r}"
        )
    return settings


# ---------------------------------------------------------------------------------------------
# Workflow glue: input functions and paths for rules/features.smk and rules/negatives_una.smk
# (built here so the rule files hold rules only).

UNA_NEGATIVE_COLUMN = "una_negative"
Wildcards = Any
InputFunction = Callable[[Wildcards], str]


def tfidf_table_path(corpus: str, with_paraphrases: bool) -> str:
    suffix = "+paraphrase" if with_paraphrases else ""
    return f"results/features/tfidf/{corpus}{suffix}.tsv"


def paraphrase_path(corpus: str) -> str:
    return f"results/features/paraphrase/{corpus}.txt"


def una_negatives_path(corpus: str, variant: str, seed: int | str) -> str:
    return f"results/negatives/una/{corpus}/{variant}/seed{seed}.txt"


def una_variants(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Variant name -> settings, over every configured method that reads the UNA negatives."""
    return method_variants(config, UNA_NEGATIVE_COLUMN, una_settings, una_variant)


def una_cli_args(settings: dict[str, Any]) -> str:
    """The ``negcse una-negatives`` options for ``settings``."""
    return (
        f"--beta {settings['beta']} --window {settings['window']} "
        f"--select {settings['select']} --replace {settings['replace']} "
        f"--scores {settings['scores']} --chunk-size {settings['chunk_size']}"
    )


def una_negatives_input(config: dict[str, Any], corpus: str) -> InputFunction:
    """COLUMN_FILES entry: the negatives file of a train job's method and seed."""

    def path(wildcards: Wildcards) -> str:
        variant = una_variant(una_settings(config, wildcards.method))
        return una_negatives_path(corpus, variant, wildcards.seed)

    return path


def una_tfidf_input(variants: dict[str, dict[str, Any]]) -> InputFunction:
    """The TF-IDF table a negatives variant samples from."""

    def path(wildcards: Wildcards) -> str:
        return tfidf_table_path(
            wildcards.corpus, bool(variants[wildcards.variant]["with_paraphrases"])
        )

    return path


def una_args_param(variants: dict[str, dict[str, Any]]) -> InputFunction:
    return per_variant(variants, una_cli_args)


def paraphrase_input(corpus: str) -> InputFunction:
    """COLUMN_FILES entry: the paraphrases of the corpus (backbone- and seed-independent)."""

    def path(wildcards: Wildcards) -> str:
        return paraphrase_path(corpus)

    return path
