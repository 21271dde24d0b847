"""GCSE's low-resource domain setting (paper §4.1, Table 3): the unlabeled sentences of STS12
train, PAWS and SICK train as domain data, plus an NLI subset as general data at domain:general
= 1:3, and Table 4's "w/o general" (domain only) and "w/o domain" (general only) mixes.

Readers take the sentence pairs of a labeled file and drop its labels (the paper's "unlabeled
portions"); :func:`mix` draws the general lines with a seed. Not yet wired into the workflow
(one corpus for every method there; docs/fidelity-gcse.md).
"""

from __future__ import annotations

import csv
import random
from collections.abc import Iterable, Sequence
from pathlib import Path

from negcse.errors import UserError

#: domain:general as printed (§4.1: "the sample ratio between domain and general data is 1:3")
GENERAL_PER_DOMAIN = 3


class DomainDataError(UserError, ValueError):
    """A domain-setting file has the wrong shape; the message names the file and line."""


def _rows(path: Path, fields: int, header: Sequence[str] | None) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    if header is not None:
        if not rows or rows[0][: len(header)] != list(header):
            raise DomainDataError(f"{path}:1: header must start with {', '.join(header)}")
        rows = rows[1:]
    start = 2 if header is not None else 1
    for line, row in enumerate(rows, start):
        if len(row) < fields or not all(x.strip() for x in row[:fields]):
            raise DomainDataError(
                f"{path}:{line}: expected {fields} non-empty tab-separated fields"
            )
    return rows


def sts_pairs(path: str | Path) -> list[tuple[str, str]]:
    """An STS ``STS.input.*.txt`` file: one ``sentence1<TAB>sentence2`` pair a line."""
    return [(r[0], r[1]) for r in _rows(Path(path), 2, None)]


def sick_pairs(path: str | Path) -> list[tuple[str, str]]:
    """SICK's ``SICK_train.txt``: pair_ID, sentence_A, sentence_B, then the labels (dropped)."""
    return [(r[1], r[2]) for r in _rows(Path(path), 3, ("pair_ID", "sentence_A", "sentence_B"))]


def unique_sentences(pairs: Iterable[tuple[str, ...]]) -> list[str]:
    """Every sentence of the pairs once, in first-seen order (SICK repeats many)."""
    return list(dict.fromkeys(s.strip() for pair in pairs for s in pair))


def mix(
    domain: Sequence[str],
    general: Sequence[str],
    seed: int,
    use_domain: bool = True,
    use_general: bool = True,
) -> list[str]:
    """The stage-1 / synthesis corpus: the domain lines, then ``GENERAL_PER_DOMAIN`` general
    lines per domain line drawn without replacement (seeded, in pool order). "w/o general"
    (``use_general=False``) is the domain lines alone; "w/o domain" (``use_domain=False``) the
    same general draw alone. Too small a general pool raises, naming both sizes."""
    if not (use_domain or use_general):
        raise ValueError("a mix needs domain or general data")
    want = GENERAL_PER_DOMAIN * len(domain)
    if use_general and want > len(general):
        raise DomainDataError(
            f"{want} general lines needed ({GENERAL_PER_DOMAIN} x {len(domain)} domain lines), "
            f"the general pool has {len(general)}"
        )
    picked = sorted(random.Random(seed).sample(range(len(general)), want)) if use_general else []
    return (list(domain) if use_domain else []) + [general[i] for i in picked]
