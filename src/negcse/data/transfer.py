"""SentEval transfer-task data (MR, CR, SUBJ, MPQA, SST2, TREC, MRPC) read as SentEval reads it.

Each file is decoded with SentEval's encoding (latin-1 for MR/CR/SUBJ/MPQA/TREC, utf-8 for SST and
MRPC), split into whitespace tokens and re-joined with single spaces, which is the text SimCSE's
batcher hands to the tokenizer. Blank lines of CR and MPQA stay as empty sentences (SentEval keeps
them: CR has 4, MPQA 3). Labels: ``.pos`` = 1 / ``.neg`` = 0; SUBJ objective = 1 / subjective =
0; TREC's six coarse classes in SentEval's order; MRPC ``Quality``.

``senteval_order`` gives the row order SentEval's classifiers see (it sorts every split by token
count, then label, before encoding), which fixes its cross-validation folds.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from negcse.data.sources import resolve_data

logger = logging.getLogger(__name__)

TRANSFER_TASKS = ("MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC")
TREC_CLASSES = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")

#: task -> (label-1 file, label-0 file) for the binary tasks, evaluated by 10-fold CV
_BINARY = {
    "MR": ("senteval/MR/rt-polarity.pos", "senteval/MR/rt-polarity.neg"),
    "CR": ("senteval/CR/custrev.pos", "senteval/CR/custrev.neg"),
    "SUBJ": ("senteval/SUBJ/subj.objective", "senteval/SUBJ/subj.subjective"),
    "MPQA": ("senteval/MPQA/mpqa.pos", "senteval/MPQA/mpqa.neg"),
}

#: how SentEval validates a task: ``cv`` (inner k-fold inside outer k-fold, no split),
#: ``split`` (train/dev/test, dev picks the penalty), ``kfold`` (train/test, k-fold on train)
PROTOCOL = {"MR": "cv", "CR": "cv", "SUBJ": "cv", "MPQA": "cv"} | {
    "SST2": "split",
    "TREC": "kfold",
    "MRPC": "kfold",
}


@dataclass(frozen=True)
class LabelledSet:
    """One split: sentences (``b`` holds the second sentence of a pair task) and int labels."""

    a: list[str]
    labels: np.ndarray
    b: list[str] | None = None

    def __post_init__(self) -> None:
        if len(self.a) != len(self.labels) or (self.b is not None and len(self.b) != len(self.a)):
            raise ValueError("sentences and labels differ in length")

    def __len__(self) -> int:
        return len(self.labels)

    def take(self, order: np.ndarray) -> LabelledSet:
        b = None if self.b is None else [self.b[i] for i in order]
        return LabelledSet([self.a[i] for i in order], self.labels[order], b)

    def sentences(self) -> list[str]:
        return self.a if self.b is None else [*self.a, *self.b]


@dataclass(frozen=True)
class TransferData:
    """A task's splits (``all``; ``train``/``dev``/``test``; or ``train``/``test``)."""

    name: str
    splits: dict[str, LabelledSet]
    nclasses: int

    @property
    def protocol(self) -> str:
        return PROTOCOL[self.name]


def _tokens_joined(text: str) -> str:
    """SentEval splits on whitespace; SimCSE's batcher joins the tokens with single spaces."""
    return " ".join(text.split())


def _read_binary_file(path: Path) -> list[str]:
    # SentEval: io.open(latin-1).read().splitlines(), then line.split()
    with open(path, encoding="latin-1") as fh:
        return [_tokens_joined(line) for line in fh.read().splitlines()]


def _iter_lines(path: Path, encoding: str) -> Iterator[tuple[int, str]]:
    with open(path, encoding=encoding) as fh:
        yield from enumerate(fh, start=1)


def _load_binary(task: str, mirror: str | os.PathLike[str] | None) -> LabelledSet:
    pos_rel, neg_rel = _BINARY[task]
    pos = _read_binary_file(resolve_data(pos_rel, mirror))
    neg = _read_binary_file(resolve_data(neg_rel, mirror))
    labels = np.array([1] * len(pos) + [0] * len(neg), dtype=np.int64)
    return LabelledSet(pos + neg, labels)


def _load_sst(split: str, mirror: str | os.PathLike[str] | None) -> LabelledSet:
    rel = f"senteval/SST/binary/sentiment-{split}"
    sents, labels = [], []
    for line_no, line in _iter_lines(resolve_data(rel, mirror), "utf-8"):
        cols = line.strip().split("\t")
        if len(cols) < 2 or cols[1] not in ("0", "1"):
            raise ValueError(f"{rel}:{line_no}: expected 'sentence TAB label(0|1)'")
        sents.append(_tokens_joined(cols[0]))
        labels.append(int(cols[1]))
    return LabelledSet(sents, np.array(labels, dtype=np.int64))


def _load_trec(rel: str, mirror: str | os.PathLike[str] | None) -> LabelledSet:
    sents, labels = [], []
    for line_no, line in _iter_lines(resolve_data(rel, mirror), "latin-1"):
        target, _, rest = line.strip().partition(":")
        fine_and_question = rest.split(" ", 1)
        if target not in TREC_CLASSES or len(fine_and_question) < 2:
            raise ValueError(f"{rel}:{line_no}: expected 'COARSE:fine question', got {line!r}")
        sents.append(_tokens_joined(fine_and_question[1]))
        labels.append(TREC_CLASSES.index(target))
    return LabelledSet(sents, np.array(labels, dtype=np.int64))


def _load_mrpc(split: str, mirror: str | os.PathLike[str] | None) -> LabelledSet:
    rel = f"senteval/MRPC/msr_paraphrase_{split}.txt"
    a, b, labels = [], [], []
    for line_no, line in _iter_lines(resolve_data(rel, mirror), "utf-8"):
        if line_no == 1:  # header (after a BOM)
            continue
        cols = line.strip().split("\t")
        if len(cols) < 5 or cols[0] not in ("0", "1"):
            raise ValueError(f"{rel}:{line_no}: expected 'quality TAB id TAB id TAB s1 TAB s2'")
        a.append(_tokens_joined(cols[3]))
        b.append(_tokens_joined(cols[4]))
        labels.append(int(cols[0]))
    return LabelledSet(a, np.array(labels, dtype=np.int64), b)


def load_transfer(task: str, mirror: str | os.PathLike[str] | None = None) -> TransferData:
    """One task, in file order (pos before neg for the binary tasks, as SentEval builds it)."""
    if task in _BINARY:
        return TransferData(task, {"all": _load_binary(task, mirror)}, 2)
    if task == "SST2":
        splits = {s: _load_sst(s, mirror) for s in ("train", "dev", "test")}
        return TransferData(task, splits, 2)
    if task == "TREC":
        splits = {
            "train": _load_trec("senteval/TREC/train_5500.label", mirror),
            "test": _load_trec("senteval/TREC/TREC_10.label", mirror),
        }
        return TransferData(task, splits, len(TREC_CLASSES))
    if task == "MRPC":
        return TransferData(task, {s: _load_mrpc(s, mirror) for s in ("train", "test")}, 2)
    raise ValueError(f"unknown transfer task '{task}'; known: {', '.join(TRANSFER_TASKS)}")


def senteval_order(split: LabelledSet) -> np.ndarray:
    """The permutation SentEval applies before encoding: stable sort by token count, then label.

    Pair tasks (MRPC) sort by (tokens of A, tokens of B, label).
    """
    ntok_a = [len(s.split()) for s in split.a]
    if split.b is None:
        keys = [(n, int(y)) for n, y in zip(ntok_a, split.labels, strict=True)]
    else:
        ntok_b = [len(s.split()) for s in split.b]
        keys = [(n, m, int(y)) for n, m, y in zip(ntok_a, ntok_b, split.labels, strict=True)]
    return np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)
