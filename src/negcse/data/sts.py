"""STS datasets as SentEval (SimCSE's copy) and MTEB read them.

``senteval`` protocol: the SentEval-processed files (Moses-tokenized, lowercased), sentences
re-joined from whitespace tokens, STS-B and SICK-R test only. ``mteb`` protocol: the organisers'
raw, untokenized text, with SICK-R over all 9,927 SICK pairs as MTEB's SICK-R does.
Pairs with an empty gold score are dropped in both.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from negcse.data.sources import resolve_data

STS_TASKS = (
    "STS12",
    "STS13",
    "STS14",
    "STS15",
    "STS16",
    "STSBenchmark",
    "SICKRelatedness",
)
PROTOCOLS = ("senteval", "mteb")

_SUBSETS = {
    "STS12": ("MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"),
    "STS13": ("FNWN", "headlines", "OnWN"),
    "STS14": ("deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"),
    "STS15": ("answers-forums", "answers-students", "belief", "headlines", "images"),
    "STS16": ("answer-answer", "headlines", "plagiarism", "postediting", "question-question"),
}


@dataclass
class STSData:
    """Sentence pairs with gold scores; ``subsets`` maps a subset name to its row slice."""

    name: str
    sent1: list[str] = field(default_factory=list)
    sent2: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    subsets: dict[str, slice] = field(default_factory=dict)

    def add(self, subset: str, pairs: list[tuple[str, str, float]]) -> None:
        start = len(self.scores)
        for a, b, s in pairs:
            self.sent1.append(a)
            self.sent2.append(b)
            self.scores.append(s)
        self.subsets[subset] = slice(start, len(self.scores))

    @property
    def gold(self) -> np.ndarray:
        return np.asarray(self.scores, dtype=np.float64)

    def __len__(self) -> int:
        return len(self.scores)


def _read_lines(path: os.PathLike[str]) -> list[str]:
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read().splitlines()


def _norm(text: str, tokenized: bool) -> str:
    return " ".join(text.split()) if tokenized else text.strip()


def _year_pairs(
    task: str, subset: str, protocol: str, mirror: str | None
) -> list[tuple[str, str, float]]:
    year = task[3:]
    root = "senteval/STS" if protocol == "senteval" else "raw"
    prefix = "STS2016." if (protocol == "mteb" and task == "STS16") else "STS."
    folder = f"{root}/STS{year}-en-test"
    inputs = _read_lines(resolve_data(f"{folder}/{prefix}input.{subset}.txt", mirror))
    golds = _read_lines(resolve_data(f"{folder}/{prefix}gs.{subset}.txt", mirror))
    if len(inputs) != len(golds):
        raise ValueError(f"{task}/{subset}: {len(inputs)} inputs but {len(golds)} gold lines")
    pairs = []
    tokenized = protocol == "senteval"
    for line_no, (line, gold) in enumerate(zip(inputs, golds, strict=True), start=1):
        if gold.strip() == "":
            continue
        cols = line.split("\t")
        if len(cols) < 2:
            raise ValueError(f"{folder}/{prefix}input.{subset}.txt:{line_no}: expected 2 columns")
        pairs.append((_norm(cols[0], tokenized), _norm(cols[1], tokenized), float(gold)))
    return pairs


def _stsb_pairs(split: str, protocol: str, mirror: str | None) -> list[tuple[str, str, float]]:
    rel = ("senteval/STS/STSBenchmark" if protocol == "senteval" else "raw/stsbenchmark") + (
        f"/sts-{split}.csv"
    )
    tokenized = protocol == "senteval"
    pairs = []
    for line_no, line in enumerate(_read_lines(resolve_data(rel, mirror)), start=1):
        cols = line.split("\t")
        if len(cols) < 7:
            raise ValueError(f"{rel}:{line_no}: expected at least 7 tab-separated columns")
        pairs.append((_norm(cols[5], tokenized), _norm(cols[6], tokenized), float(cols[4])))
    return pairs


def _sick_pairs(split: str, protocol: str, mirror: str | None) -> list[tuple[str, str, float]]:
    rel = ("senteval/SICK" if protocol == "senteval" else "raw/SICK") + f"/SICK_{split}.txt"
    tokenized = protocol == "senteval"
    lines = _read_lines(resolve_data(rel, mirror))[1:]  # header
    pairs = []
    for line_no, line in enumerate(lines, start=2):
        cols = line.rstrip("\r").split("\t")
        if len(cols) < 4:
            raise ValueError(f"{rel}:{line_no}: expected at least 4 tab-separated columns")
        pairs.append((_norm(cols[1], tokenized), _norm(cols[2], tokenized), float(cols[3])))
    return pairs


def load_sts(task: str, protocol: str = "senteval", mirror: str | None = None) -> STSData:
    """One STS evaluation set; ``task`` is one of STS_TASKS, ``STSBenchmark-dev`` or
    ``STSBenchmark-train``."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown STS protocol '{protocol}'; known: {', '.join(PROTOCOLS)}")
    data = STSData(task)
    if task in _SUBSETS:
        for subset in _SUBSETS[task]:
            data.add(subset, _year_pairs(task, subset, protocol, mirror))
    elif task in ("STSBenchmark", "STSBenchmark-dev", "STSBenchmark-train"):
        split = task.partition("-")[2] or "test"
        data.add(split, _stsb_pairs(split, protocol, mirror))
    elif task == "SICKRelatedness":
        splits = ("train", "trial", "test_annotated") if protocol == "mteb" else ("test_annotated",)
        for split in splits:
            data.add(split, _sick_pairs(split, protocol, mirror))
    else:
        raise ValueError(f"unknown STS task '{task}'; known: {', '.join(STS_TASKS)}")
    return data
