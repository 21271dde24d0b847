"""SAN's syntactically aligned negatives: the POS lexicon of the
MLM's vocabulary (one per MLM), then one file of mask-predict samples per corpus, settings
and seed, shared by every backbone and by the methods with the same settings. The Table 7
scale ablation sets ``scale`` per method."""

from __future__ import annotations

import logging
import shlex
import warnings
from dataclasses import dataclass
from functools import cache
from typing import Any

from negcse.data.sources import data_unavailable
from negcse.generators.registry import MODEL_IN_PATH, GeneratorSpec, SubstituteWarning, register
from negcse.generators.settings import GeneratorSettings, options, setting
from negcse.generators.steps import GPU_SLOT, Step, StepContext, Wildcards, alternation

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
    reason = data_unavailable(RELEASED_TABLE, mirror)
    if reason is not None:
        message = (
            f"SAN's released POS lexicon ({RELEASED_TABLE}) is {reason}: the spaCy lexicon is "
            f"used instead (generators.san.lexicon: released; recorded as '{SPACY_SUBSTITUTE}' "
            "in the run spec, the model's negcse.json and its table rows)"
        )
        logger.warning("%s", message)
        warnings.warn(message, SubstituteWarning, stacklevel=2)
    return reason


def provenance(settings: dict[str, Any]) -> dict[str, Any]:
    """The lexicon the samples were made with, in the run spec (so the model's negcse.json);
    a substitute also under ``substitutes``, which the evaluation and the table row show."""
    source = settings.get("lexicon_source", settings["lexicon"])
    if source == settings["lexicon"]:
        return {"san_lexicon": source}
    return {"san_lexicon": source, "substitutes": [f"SAN lexicon: {source}"]}


OUTPUT = "results/negatives/san/{corpus}/{variant}/seed{seed}.txt"


@dataclass(frozen=True)
class SanSettings(GeneratorSettings):
    """One variant of SAN's samples (the command's options, in this order)."""

    mlm: str = setting(
        "bert-base-uncased",
        "masked language model that fills the masks (its vocabulary is tagged); names files",
        schema=MODEL_IN_PATH,
    )
    scale: float = setting(
        20,
        "mask probability = Table 2 score / scale (Table 7: 10, 20, 30, 40)",
        schema={"type": "number"},
        exclusiveMinimum=0,
        fmt=lambda value: f"{float(value):g}",
    )
    iterations: int = setting(
        4, "mask-predict passes, each re-masking the previous output", minimum=1
    )
    max_tokens: int = setting(
        128, "default mode: MLM window; longer sentences keep their tail", minimum=3
    )
    chunk_size: int = setting(
        DEFAULT_CHUNK, "lines per random stream (fixes the output)", minimum=1
    )
    batch_size: int = setting(64, "sentences per MLM batch (speed only)", minimum=1)
    reference_quirks: bool = setting(
        False,
        "the released loop: greedy fill of every position, decode and re-tokenize per pass",
        flag=("--reference-quirks", True),
    )
    fallback: bool = setting(
        False,
        "degenerate samples -> the sentence's SNCSE negation (the command's --no-fallback "
        "keeps them)",
        flag=("--no-fallback", False),
    )
    lexicon: str = setting(
        "spacy",
        "spacy (re-tag the MLM's vocabulary) or released (SAN's table)",
        choices=LEXICON_SOURCES,
        cli=False,
    )


def _sample_settings(ctx: StepContext, wc: Wildcards) -> dict[str, Any]:
    return ctx.variants("san")[wc["variant"]]


def _lexicons(ctx: StepContext) -> dict[str, tuple[str, str]]:
    """Lexicon id -> (MLM name, lexicon source), over the variants."""
    found = ctx.variants("san").values()
    return {lexicon_id(s["mlm"], s["lexicon"]): (s["mlm"], s["lexicon"]) for s in found}


def _lexicon_args(ctx: StepContext, wc: Wildcards) -> str:
    """The ``negcse pos-lexicon`` options of a lexicon id: MLM and source."""
    mlm, source = _lexicons(ctx)[wc["mlm"]]
    return f"--mlm {shlex.quote(mlm)} --source {shlex.quote(source)}"


def _sample_inputs(ctx: StepContext, wc: Wildcards) -> dict[str, str]:
    settings = _sample_settings(ctx, wc)
    return {
        "corpus": f"results/data/corpus/{wc['corpus']}.txt",
        "lexicon": lexicon_path(settings["mlm"], settings["lexicon"]),
    }


SPEC = register(
    GeneratorSpec(
        name="san",
        columns=(COLUMN,),
        output=OUTPUT,
        settings=SanSettings,
        per_method=True,
        variant=variant,
        models=models,
        gpu_rule=lambda settings: "san_negatives",
        provenance=provenance,
        plan=plan,
        steps=(
            Step(
                name="pos_lexicon",
                inputs=None,
                outputs={
                    "table": LEXICON,
                    "stats": "results/features/pos_lexicon/{mlm}.stats.json",
                },
                wildcards=lambda ctx: {"mlm": alternation(_lexicons(ctx))},
                params={"mlm": _lexicon_args, "mirror": lambda ctx, wc: ctx.mirror_arg()},
                command="python -m negcse pos-lexicon {params.mlm} --output {output.table:q} "
                "--stats {output.stats:q} --no-progress {params.mirror}",
                log="logs/features/pos_lexicon/{mlm}.log",
                benchmark="benchmarks/rules/features/pos_lexicon/{mlm}.tsv",
            ),
            Step(
                name="san_negatives",
                inputs=_sample_inputs,
                outputs={
                    "samples": OUTPUT,
                    "stats": "results/negatives/san/{corpus}/{variant}/seed{seed}.stats.json",
                },
                wildcards=lambda ctx: {"variant": alternation(ctx.variants("san"))},
                params={
                    "settings": lambda ctx, wc: options(_sample_settings(ctx, wc), SanSettings),
                    "mirror": lambda ctx, wc: ctx.mirror_arg(),
                },
                command=GPU_SLOT + "python -m negcse san-negatives --corpus {input.corpus:q} "
                "--lexicon {input.lexicon:q} --output {output.samples:q} "
                "--stats {output.stats:q} --seed {wildcards.seed:q} {params.settings} "
                "--threads {threads} --no-progress {params.mirror}",
                log="logs/negatives/san/{corpus}/{variant}/seed{seed}.log",
                benchmark="benchmarks/rules/negatives/san/{corpus}/{variant}/seed{seed}.tsv",
                resources={"gpu": 1, "mem_mb": 8000, "runtime": 240},
            ),
        ),
    )
)
