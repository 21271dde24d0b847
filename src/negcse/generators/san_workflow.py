"""SAN generator settings from the config, and the file names they lead to (rules/negatives_san.smk).

``generators.san`` in params.yaml holds the defaults below; ``methods.<m>.generators.san``
overrides them for one method (the Table 7 scale ablation sets ``scale``). Every setting that
changes the samples is in the variant name, so each combination gets its own file, shared by the
methods and backbones that use it, one per seed; a change reruns exactly the jobs that read it.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from negcse.generators.san import DEFAULT_CHUNK, SanParams
from negcse.generators.settings_layers import layered_settings, method_variants, per_variant

SAN_COLUMN = "san"  # negcse.methods.san.SAN_COLUMN (not imported: it pulls in the methods)
SAN_DEFAULTS: dict[str, Any] = {
    "mlm": "bert-base-uncased",  # the MLM that fills the masks (and whose vocabulary is tagged)
    "scale": 20,  # mask probability = Table 2 score / scale (Table 7: 10, 20, 30, 40)
    "iterations": 4,  # mask-predict passes, each re-masking the previous output
    "reference_quirks": False,  # true: the released loop (greedy fill of every position)
    "lexicon": "spacy",  # spacy (re-tag the MLM's vocabulary) or released (vocab_pos_end.txt)
    "fallback": False,  # true: degenerate samples -> the sentence's SNCSE negation
    "max_tokens": 128,  # default mode: MLM window; longer sentences keep their tail
    "chunk_size": DEFAULT_CHUNK,  # sentences per random stream
    "batch_size": 64,  # sentences per MLM batch (speed only)
}

LEXICON_SOURCES = ("spacy", "released")
Wildcards = Any
InputFunction = Callable[[Wildcards], str]


def san_settings(config: dict[str, Any], method: str | None = None) -> dict[str, Any]:
    """SAN settings: defaults < generators.san < methods.<method>.generators.san."""
    settings = layered_settings(config, "san", SAN_DEFAULTS, method)
    where = f"methods.{method}.generators.san" if method else "generators.san"
    for key in ("reference_quirks", "fallback"):
        if not isinstance(settings[key], bool):
            raise ValueError(f"{where}.{key} must be true or false")
    if settings["lexicon"] not in LEXICON_SOURCES:
        raise ValueError(f"{where}.lexicon must be one of {', '.join(LEXICON_SOURCES)}")
    for key in ("iterations", "max_tokens", "chunk_size", "batch_size"):
        if not isinstance(settings[key], int) or settings[key] < 1:
            raise ValueError(f"{where}.{key} must be an integer >= 1")
    try:
        SanParams(
            iterations=settings["iterations"],
            scale=float(settings["scale"]),
            max_tokens=settings["max_tokens"],
        )
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None
    return settings


def mlm_id(name: str) -> str:
    """A file-name-safe id of an MLM name (``org/model`` -> ``org--model``)."""
    return name.strip("/").replace("/", "--")


def san_variant(settings: dict[str, Any]) -> str:
    """Every output-changing setting, e.g. ``bert-base-uncased_s20_i4_t128_c2048``."""
    name = (
        f"{mlm_id(settings['mlm'])}_s{float(settings['scale']):g}_i{settings['iterations']}"
        f"_t{settings['max_tokens']}_c{settings['chunk_size']}"
    )
    if settings["reference_quirks"]:
        name += "_ref"
    if settings["fallback"]:
        name += "_fb"
    if settings["lexicon"] == "released":
        name += "_rel"
    return name


def lexicon_id(mlm: str, source: str = "spacy") -> str:
    """File name of a lexicon: the MLM's id, ``+released`` for SAN's released table."""
    return mlm_id(mlm) + ("+released" if source == "released" else "")


def lexicon_path(mlm: str, source: str = "spacy") -> str:
    return f"results/features/pos_lexicon/{lexicon_id(mlm, source)}.tsv"


def san_samples_path(corpus: str, variant: str, seed: int | str) -> str:
    return f"results/negatives/san/{corpus}/{variant}/seed{seed}.txt"


def san_variants(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Variant name -> settings, over every configured method that reads the SAN column."""
    return method_variants(config, SAN_COLUMN, san_settings, san_variant)


def san_mlms(variants: dict[str, dict[str, Any]]) -> dict[str, tuple[str, str]]:
    """Lexicon id -> (MLM name, lexicon source), over the variants."""
    return {
        lexicon_id(s["mlm"], s["lexicon"]): (s["mlm"], s["lexicon"]) for s in variants.values()
    }


def san_cli_args(settings: dict[str, Any]) -> str:
    """The ``negcse san-negatives`` options of ``settings`` (besides files and seed)."""
    args = (
        f"--mlm {shlex.quote(settings['mlm'])} --scale {float(settings['scale']):g} "
        f"--iterations {settings['iterations']} --max-tokens {settings['max_tokens']} "
        f"--chunk-size {settings['chunk_size']} --batch-size {settings['batch_size']}"
    )
    if settings["reference_quirks"]:
        args += " --reference-quirks"
    if not settings["fallback"]:
        args += " --no-fallback"
    return args


# -- input functions ----------------------------------------------------------------------------


def san_samples_input(config: dict[str, Any], corpus: str) -> InputFunction:
    """COLUMN_FILES entry: the SAN samples of a train job's method and seed."""

    def path(wildcards: Wildcards) -> str:
        return san_samples_path(
            corpus, san_variant(san_settings(config, wildcards.method)), wildcards.seed
        )

    return path


def san_lexicon_input(variants: dict[str, dict[str, Any]]) -> InputFunction:
    return per_variant(variants, lambda settings: lexicon_path(settings["mlm"], settings["lexicon"]))


def san_args_param(variants: dict[str, dict[str, Any]]) -> InputFunction:
    return per_variant(variants, san_cli_args)


def lexicon_mlm_param(mlms: dict[str, tuple[str, str]]) -> InputFunction:
    """The ``negcse pos-lexicon`` options of a lexicon id: MLM and source."""

    def args(wildcards: Wildcards) -> str:
        mlm, source = mlms[wildcards.mlm]
        return f"--mlm {shlex.quote(mlm)} --source {shlex.quote(source)}"

    return args
