"""UNA's TF-IDF hard negatives (rules/generators/una.smk): one file per corpus, settings and
seed ("same seed, same negatives"), shared by every backbone. The Table 2 ablations set
``select`` / ``replace`` per method."""

from __future__ import annotations

from typing import Any

from negcse.generators.registry import GeneratorSpec, register

SELECT_MODES: tuple[str, ...] = ("tfidf", "random")
REPLACE_MODES: tuple[str, ...] = ("window", "random")
SCORE_MODES: tuple[str, ...] = ("sentence", "global")
COLUMN = "una_negative"  # the negatives (negcse.methods.una reads it)
DEFAULT_CHUNK = 10_000  # sentences per random stream
#: the TF-IDF tables a variant samples from (rules tfidf, tfidf_with_paraphrases)
TFIDF_TABLE = "results/features/tfidf/{corpus}.tsv"
TFIDF_TABLE_WITH_PARAPHRASES = "results/features/tfidf/{corpus}+paraphrase.tsv"


def variant(settings: dict[str, Any], column: str) -> str:
    """Every setting, e.g. ``tfidf-window_b0.5_r4000_sentence_c10000`` (``_para``: TF-IDF fit
    with the paraphrases)."""
    name = (
        f"{settings['select']}-{settings['replace']}_b{settings['beta']:g}_r{settings['window']}"
        f"_{settings['scores']}_c{settings['chunk_size']}"
    )
    return name + ("_para" if settings["with_paraphrases"] else "")


def args(settings: dict[str, Any]) -> str:
    """The ``negcse una-negatives`` options (besides files and seed)."""
    return (
        f"--beta {settings['beta']} --window {settings['window']} "
        f"--select {settings['select']} --replace {settings['replace']} "
        f"--scores {settings['scores']} --chunk-size {settings['chunk_size']}"
    )


def tfidf_table(corpus: str, with_paraphrases: bool) -> str:
    """The TF-IDF table a variant samples from."""
    pattern = TFIDF_TABLE_WITH_PARAPHRASES if with_paraphrases else TFIDF_TABLE
    return pattern.format(corpus=corpus)


SPEC = register(
    GeneratorSpec(
        name="una",
        columns=(COLUMN,),
        output="results/negatives/una/{corpus}/{variant}/seed{seed}.txt",
        per_method=True,
        defaults={
            "beta": 0.5,  # augmentation magnitude: mean replacement probability
            "window": 4000,  # rank radius r of the replacement window
            "select": "tfidf",  # tfidf (paper) or random (Table 2 ablation)
            "replace": "window",  # window (paper) or random (Table 2 ablation)
            "scores": "sentence",  # z_i: the sentence's TF-IDF (paper, released) or global
            "with_paraphrases": False,  # TF-IDF fit on corpus + paraphrases (released +para)
            "chunk_size": DEFAULT_CHUNK,
        },
        schema={
            "beta": {"type": "number", "minimum": 0},
            "window": {"type": "integer", "minimum": 1},
            "select": {"enum": list(SELECT_MODES)},
            "replace": {"enum": list(REPLACE_MODES)},
            "scores": {"enum": list(SCORE_MODES)},
            "with_paraphrases": {"type": "boolean"},
            "chunk_size": {"type": "integer", "minimum": 1},
        },
        variant=variant,
        args=args,
    )
)
