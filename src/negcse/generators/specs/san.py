"""SAN's syntactically aligned negatives (rules/generators/san.smk): the POS lexicon of the
MLM's vocabulary (one per MLM), then one file of mask-predict samples per corpus, settings
and seed, shared by every backbone and by the methods with the same settings. The Table 7
scale ablation sets ``scale`` per method."""

from __future__ import annotations

import logging
import shlex
from functools import cache
from typing import Any

from negcse.generators.registry import MODEL_IN_PATH, GeneratorSpec, register

logger = logging.getLogger(__name__)

COLUMN = "san"  # negcse.methods.san reads it
LEXICON_SOURCES = ("spacy", "released")
#: the released SAN table (bcai01/SAN corpus-handle/vocab_pos_end.txt), a registered data file
RELEASED_TABLE = "san/vocab_pos_end.txt"
#: the lexicon a run records when the released table could not be had where it was planned
SPACY_SUBSTITUTE = "spacy (released table unavailable)"
DEFAULT_CHUNK = 2048  # sentences per random stream
LEXICON = "results/features/pos_lexicon/{mlm}.tsv"  # rule pos_lexicon; {mlm}: lexicon_id()


def mlm_id(name: str) -> str:
    """A file-name-safe id of an MLM name (``org/model`` -> ``org--model``)."""
    return name.strip("/").replace("/", "--")


def variant(settings: dict[str, Any], column: str) -> str:
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


def args(settings: dict[str, Any]) -> str:
    """The ``negcse san-negatives`` options (besides files and seed)."""
    out = (
        f"--mlm {shlex.quote(settings['mlm'])} --scale {float(settings['scale']):g} "
        f"--iterations {settings['iterations']} --max-tokens {settings['max_tokens']} "
        f"--chunk-size {settings['chunk_size']} --batch-size {settings['batch_size']}"
    )
    if settings["reference_quirks"]:
        out += " --reference-quirks"
    if not settings["fallback"]:
        out += " --no-fallback"
    return out


def lexicon_id(mlm: str, source: str = "spacy") -> str:
    """File name of a lexicon: the MLM's id, ``+released`` for SAN's released table."""
    return mlm_id(mlm) + ("+released" if source == "released" else "")


def lexicon_path(mlm: str, source: str = "spacy") -> str:
    return LEXICON.format(mlm=lexicon_id(mlm, source))


def models(settings: dict[str, Any]) -> tuple[str, ...]:
    return (settings["mlm"],)


def plan(settings: dict[str, Any], mirror: str | None) -> dict[str, Any]:
    """``lexicon: released`` where the released table is in no mirror or cache and cannot be
    downloaded (offline, or its host unreachable): the spaCy lexicon instead, so its file, the
    sample variant and every record name the spaCy one (logged once per process)."""
    if settings["lexicon"] != "released" or released_table_unavailable(mirror) is None:
        return settings
    return {**settings, "lexicon": "spacy", "lexicon_source": SPACY_SUBSTITUTE}


@cache
def released_table_unavailable(mirror: str | None) -> str | None:
    from negcse.data.sources import data_unavailable  # no network unless nothing local has it

    reason = data_unavailable(RELEASED_TABLE, mirror)
    if reason is not None:
        logger.warning(
            "SAN's released POS lexicon (%s) is %s: the spaCy lexicon is used instead "
            "(generators.san.lexicon: released; recorded as '%s')",
            RELEASED_TABLE,
            reason,
            SPACY_SUBSTITUTE,
        )
    return reason


def provenance(settings: dict[str, Any]) -> dict[str, Any]:
    """The lexicon the samples were made with, in the run spec (so the model's negcse.json);
    a substitute also under ``substitutes``, which the evaluation and the table row show."""
    source = settings.get("lexicon_source", settings["lexicon"])
    if source == settings["lexicon"]:
        return {"san_lexicon": source}
    return {"san_lexicon": source, "substitutes": [f"SAN lexicon: {source}"]}


SPEC = register(
    GeneratorSpec(
        name="san",
        columns=(COLUMN,),
        output="results/negatives/san/{corpus}/{variant}/seed{seed}.txt",
        per_method=True,
        defaults={
            "mlm": "bert-base-uncased",  # fills the masks (and its vocabulary is tagged)
            "scale": 20,  # mask probability = Table 2 score / scale (Table 7: 10, 20, 30, 40)
            "iterations": 4,  # mask-predict passes, each re-masking the previous output
            "reference_quirks": False,  # true: the released loop (greedy fill of every position)
            "lexicon": "spacy",  # spacy (re-tag the MLM's vocabulary) or released
            "fallback": False,  # true: degenerate samples -> the sentence's SNCSE negation
            "max_tokens": 128,  # default mode: MLM window; longer sentences keep their tail
            "chunk_size": DEFAULT_CHUNK,
            "batch_size": 64,  # sentences per MLM batch (speed only)
        },
        schema={
            "mlm": MODEL_IN_PATH,  # its id names the lexicon and variant files
            "scale": {"type": "number", "exclusiveMinimum": 0},
            "iterations": {"type": "integer", "minimum": 1},
            "reference_quirks": {"type": "boolean"},
            "lexicon": {"enum": list(LEXICON_SOURCES)},
            "fallback": {"type": "boolean"},
            "max_tokens": {"type": "integer", "minimum": 3},
            "chunk_size": {"type": "integer", "minimum": 1},
            "batch_size": {"type": "integer", "minimum": 1},
        },
        variant=variant,
        args=args,
        models=models,
        gpu_rule=lambda settings: "san_negatives",
        provenance=provenance,
        plan=plan,
    )
)
