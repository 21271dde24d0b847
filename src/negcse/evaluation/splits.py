"""OssCSE's Cont./Oppn. splits of the STS datasets (OssCSE Section 3.3, Tables 2, 3 and 6).

Per dataset (one STS subset, e.g. STS12-MSRvid, or an STS-B split), with the median human score
and the median word-level MER of its pairs as thresholds, a pair is **Cont.** (surface and
meaning agree) when its score is strictly above the median and its MER strictly below the
median, or its score strictly below and its MER strictly above; every other pair, ties at
either median included, is **Oppn.** Strict comparisons reproduce five of Table 2's Cont.
counts exactly (STS12-MSRvid 406, STS13-headlines 495, STS16-plagiarism 153, -postediting 180,
-question-question 75) and the rest within 4%; ties-to-Cont. conventions give 10-50 more Cont.
pairs per dataset. Only datasets whose median
score lies in [2, 3.5] count (the paper's footnote 3).

MER is computed on the SentEval-processed text (Moses-tokenized, lowercased: punctuation is a
word of its own), words split on whitespace, sentence 1 as reference. The default alignment is
the Levenshtein backtrace that ``jiwer`` (through ``rapidfuzz`` opcodes) reports, the usual
MER tool: among the minimum-edit alignments it may keep fewer hits than
:func:`negcse.text.mer.align` (the most-hits one), which moves medians and counts towards Table 2
(10 of 16 median MERs equal, |count difference| summed over Table 2 90 pairs, against 6 and
156 with most hits, and 5 and 263 on raw text). ``benchmarks/osscse_splits.md`` has the
comparison.

Candidate datasets are the STS12-16 test subsets and STS-B train and test. STS-B dev, the
model-selection set, is not one (Table 2 omits it; the paper's Figure 6 tracks it apart).
Table 2 lists 16 datasets; the stated [2, 3.5] rule admits four more (STS12-MSRpar 3.25,
STS14-deft-news, -OnWN and -tweet-news 3.4). Both weighted averages are kept: ``table2`` (the
paper's 16 rows, comparable with its Table 3) and ``rule`` (every dataset the rule admits).
Weighted averages weight each dataset's Spearman by its split size, which reproduces Table 3
from Tables 2 and 6.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from negcse.data.sts import PROTOCOLS, load_sts
from negcse.encoders.vectors import EncodeFn, SentenceCache, cosine_rows
from negcse.evaluation.registry import Evaluation, Job, Options, quoted, register
from negcse.evaluation.sts import spearman100
from negcse.text.mer import ALIGNMENTS, DEFAULT_ALIGNMENT, mer

logger = logging.getLogger(__name__)

STS_YEARS = ("STS12", "STS13", "STS14", "STS15", "STS16")
STSB_SPLITS = ("train", "test")
# Table 2's rows, in its order (the paper writes STS2012-MSRvid, STSB-train, ...).
TABLE2_DATASETS: tuple[str, ...] = (
    "STS12-MSRvid",
    "STS13-headlines",
    "STS13-OnWN",
    "STS14-deft-forum",
    "STS14-headlines",
    "STS14-images",
    "STS15-answers-students",
    "STS15-headlines",
    "STS15-images",
    "STS16-answer-answer",
    "STS16-headlines",
    "STS16-plagiarism",
    "STS16-postediting",
    "STS16-question-question",
    "STSB-train",
    "STSB-test",
)
SELECTIONS = ("table2", "rule")
MEDIAN_RANGE = (2.0, 3.5)


def pair_mer(reference: str, hypothesis: str, alignment: str = DEFAULT_ALIGNMENT) -> float:
    """Word-level MER of one pair (lowercased, whitespace words): :func:`negcse.text.mer.mer`, the
    same function the OssCSE paraphrase filter uses."""
    return mer(reference, hypothesis, alignment=alignment)


def assign_splits(scores: np.ndarray, mers: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Boolean Cont. mask (True = Cont.) and the two medians; ties at a median are Oppn."""
    scores = np.asarray(scores, dtype=np.float64)
    mers = np.asarray(mers, dtype=np.float64)
    if scores.shape != mers.shape or scores.ndim != 1 or len(scores) == 0:
        raise ValueError(f"scores {scores.shape} and MERs {mers.shape}: need equal, non-empty")
    med_s, med_m = float(np.median(scores)), float(np.median(mers))
    cont = ((scores > med_s) & (mers < med_m)) | ((scores < med_s) & (mers > med_m))
    return cont, med_s, med_m


def in_median_range(median_score: float, bounds: tuple[float, float] = MEDIAN_RANGE) -> bool:
    """The paper's dataset filter: median human score within [lo, hi], both ends included."""
    return bounds[0] <= median_score <= bounds[1]


@dataclass
class SplitDataset:
    """One dataset's pairs, MERs and Cont. mask."""

    name: str
    sent1: list[str]
    sent2: list[str]
    scores: np.ndarray
    mers: np.ndarray
    cont: np.ndarray
    median_score: float
    median_mer: float
    in_range: bool
    in_table2: bool = field(init=False)

    def __post_init__(self) -> None:
        self.in_table2 = self.name in TABLE2_DATASETS

    @property
    def n_cont(self) -> int:
        return int(self.cont.sum())

    @property
    def n_oppn(self) -> int:
        return len(self.cont) - self.n_cont

    def stats(self) -> dict[str, Any]:
        return {
            "n": len(self.cont),
            "n_cont": self.n_cont,
            "n_oppn": self.n_oppn,
            "median_score": self.median_score,
            "median_mer": self.median_mer,
            "in_range": self.in_range,
            "in_table2": self.in_table2,
        }


def candidate_pairs(
    protocol: str = "senteval", mirror: str | None = None
) -> dict[str, tuple[list[str], list[str], np.ndarray]]:
    """Every candidate dataset: name -> (sentences 1, sentences 2, gold scores)."""
    out: dict[str, tuple[list[str], list[str], np.ndarray]] = {}
    for year in STS_YEARS:
        data = load_sts(year, protocol, mirror)
        for subset, sl in data.subsets.items():
            out[f"{year}-{subset}"] = (data.sent1[sl], data.sent2[sl], data.gold[sl])
    for split in STSB_SPLITS:
        data = load_sts(
            "STSBenchmark" if split == "test" else f"STSBenchmark-{split}", protocol, mirror
        )
        out[f"STSB-{split}"] = (data.sent1, data.sent2, data.gold)
    return out


def build_splits(
    protocol: str = "senteval",
    alignment: str = "backtrace",
    bounds: tuple[float, float] = MEDIAN_RANGE,
    mirror: str | None = None,
    only: Sequence[str] | None = None,
) -> list[SplitDataset]:
    """Medians, MERs and Cont./Oppn. masks of every candidate dataset (in range or not), or of
    the candidates named in ``only`` (a reduced protocol, e.g. for a smoke run)."""
    candidates = candidate_pairs(protocol, mirror)
    if only is not None:
        unknown = sorted(set(only) - set(candidates))
        if unknown:
            raise ValueError(
                f"unknown split dataset(s) {', '.join(unknown)}; known: {', '.join(candidates)}"
            )
        candidates = {k: v for k, v in candidates.items() if k in set(only)}
    datasets = []
    for name, (s1, s2, gold) in candidates.items():
        mers = np.array([pair_mer(a, b, alignment) for a, b in zip(s1, s2, strict=True)])
        cont, med_s, med_m = assign_splits(gold, mers)
        datasets.append(
            SplitDataset(
                name, s1, s2, gold, mers, cont, med_s, med_m, in_median_range(med_s, bounds)
            )
        )
        logger.info(
            "%s: %d Cont. / %d Oppn., median score %.3f, median MER %.4f%s",
            name, datasets[-1].n_cont, datasets[-1].n_oppn, med_s, med_m,
            "" if datasets[-1].in_range else " (out of range)",
        )  # fmt: skip
    return datasets


def selected(datasets: Sequence[SplitDataset], selection: str) -> list[SplitDataset]:
    """``table2``: Table 2's 16 datasets; ``rule``: every dataset with its median in range."""
    if selection == "table2":
        return [d for d in datasets if d.in_table2]
    if selection == "rule":
        return [d for d in datasets if d.in_range]
    raise ValueError(f"unknown selection '{selection}'; known: {', '.join(SELECTIONS)}")


def weighted_average(values: Sequence[float], sizes: Sequence[int]) -> float:
    """Size-weighted mean (Table 3's weighted average; weights = split sizes)."""
    v = np.asarray(values, dtype=np.float64)
    w = np.asarray(sizes, dtype=np.float64)
    if v.shape != w.shape or w.sum() <= 0:
        raise ValueError("weighted_average needs as many positive-total weights as values")
    return float((v * w).sum() / w.sum())


def split_spearman(sims: np.ndarray, data: SplitDataset) -> tuple[float, float]:
    """Spearman x100 of cosine against gold on the Cont. and on the Oppn. pairs."""
    cont = data.cont
    return (
        spearman100(sims[cont], data.scores[cont], f"{data.name} Cont."),
        spearman100(sims[~cont], data.scores[~cont], f"{data.name} Oppn."),
    )


def evaluate_splits(datasets: Sequence[SplitDataset], encode: EncodeFn) -> dict[str, Any]:
    """Per-dataset Cont./Oppn. Spearman (x100) and the weighted averages of both selections.

    Unique sentences over all datasets are encoded once. Top-level ``cont`` / ``oppn`` are the
    ``table2`` averages (comparable with the paper's Table 3); ``cont_rule`` / ``oppn_rule`` the
    ``rule`` ones.
    """
    scored = [d for d in datasets if d.in_range or d.in_table2]
    unique = list(dict.fromkeys(s for d in scored for s in (*d.sent1, *d.sent2)))
    index = {s: i for i, s in enumerate(unique)}
    emb = encode(unique)
    per_dataset: dict[str, Any] = {}
    for d in scored:
        sims = cosine_rows(emb[[index[s] for s in d.sent1]], emb[[index[s] for s in d.sent2]])
        cont, oppn = split_spearman(sims, d)
        per_dataset[d.name] = {"cont": cont, "oppn": oppn, **d.stats()}
    result: dict[str, Any] = {}
    for selection in SELECTIONS:
        rows = [per_dataset[d.name] for d in selected(scored, selection)]
        if not rows:
            raise ValueError(f"no dataset of the '{selection}' selection was given")
        suffix = "" if selection == "table2" else "_rule"
        result[f"cont{suffix}"] = weighted_average(
            [r["cont"] for r in rows], [r["n_cont"] for r in rows]
        )
        result[f"oppn{suffix}"] = weighted_average(
            [r["oppn"] for r in rows], [r["n_oppn"] for r in rows]
        )
        result[f"datasets{suffix}"] = [d.name for d in selected(scored, selection)]
    result["per_dataset"] = per_dataset
    result["n_sentences"] = len(unique)
    return result


def _job_args(settings: Mapping[str, Any] | None, config: Mapping[str, Any]) -> str:
    """The protocol, and ``--splits-datasets ...`` when evaluation.splits.datasets names a
    reduced set (smoke); else all."""
    datasets = (settings or {}).get("datasets")
    reduced = f"--splits-datasets {quoted(datasets)}" if datasets else ""
    return f"--splits-protocol {config['evaluation']['protocol']} {reduced}"


@register
class Splits(Evaluation):
    name = "splits"
    help = "Spearman x100 on OssCSE's Cont./Oppn. splits of the STS datasets (Tables 2, 3, 6)"
    options: ClassVar[Options] = {
        "protocol": {
            "choices": PROTOCOLS,
            "default": "senteval",
            "help": "text for MER and encoding: senteval (processed files; matches Table 2) "
            "or mteb",
        },
        "alignment": {
            "choices": ALIGNMENTS,
            "default": "backtrace",
            "help": "MER word alignment: backtrace (jiwer's; default) or max_hits",
        },
        "min_median": {
            "type": float,
            "default": MEDIAN_RANGE[0],
            "help": "a dataset counts when its median score is at least this (footnote 3)",
        },
        "max_median": {
            "type": float,
            "default": MEDIAN_RANGE[1],
            "help": "... and at most this",
        },
        "datasets": {  # default (none: all): job.schema's
            "nargs": "+",
            "metavar": "NAME",
            "help": "only these candidate datasets (e.g. STS12-MSRvid STSB-test): a reduced "
            "protocol; default: all (STS12-16 test subsets, STS-B train and test)",
        },
    }
    job = Job(
        order=2,
        config_key="evaluation.splits",
        args=_job_args,
        schema={
            "type": "object",
            "additionalProperties": False,
            "default": {},
            "description": "OssCSE Cont./Oppn. splits (tabled in rules/tables.smk)",
            "properties": {
                "datasets": {
                    "type": ["array", "null"],
                    "items": {"type": "string"},
                    "default": None,
                    "description": "a reduced set of candidate datasets (e.g. the smoke grid's); "
                    "null: all of them. A reduced run is flagged in the splits table's caption.",
                },
            },
        },
    )

    def run(self, encoder: SentenceCache, settings: dict[str, Any]) -> dict[str, Any]:
        start = time.perf_counter()
        median_range = (settings["min_median"], settings["max_median"])
        datasets = build_splits(
            settings["protocol"],
            settings["alignment"],
            median_range,
            settings["mirror"],
            only=settings["datasets"],
        )
        result = evaluate_splits(datasets, encoder)
        result["settings"] = {
            "protocol": settings["protocol"],
            "alignment": settings["alignment"],
            "median_range": list(median_range),
            "reduced": settings["datasets"] is not None,
        }
        result["seconds"] = time.perf_counter() - start
        return result

    def summary(self, result: dict[str, Any]) -> str:
        return (
            f"Cont.={result['cont']:.2f} Oppn.={result['oppn']:.2f} (Table 2's datasets)  "
            f"Cont.={result['cont_rule']:.2f} Oppn.={result['oppn_rule']:.2f} (median rule)"
        )
