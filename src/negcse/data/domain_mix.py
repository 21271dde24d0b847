"""GCSE's low-resource domain setting (paper §4.1, Table 3): the unlabeled sentences of STS12
train, PAWS and SICK train as domain data, plus an NLI subset as general data at domain:general
= 1:3, and Table 4's "w/o general" (domain only) and "w/o domain" (general only) mixes.

Readers take the sentence pairs of a labeled file and drop its labels (the paper's "unlabeled
portions"); :func:`mix` draws the general lines with a seed. :func:`build` makes one corpus of
the workflow's ``corpora`` (params.yaml; rule ``mixed_corpus``) from registered files: a domain
source that is not at hand and cannot be downloaded (offline, or its host does not answer; PAWS
is not in the offline mirror) is skipped with a logged message and recorded in the stats; a mix
that then lacks a part it asks for is an error.
"""

from __future__ import annotations

import csv
import logging
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from negcse.data.sources import ResolveError
from negcse.errors import UserError
from negcse.io_utils import read_lines

logger = logging.getLogger(__name__)

#: domain:general as printed (§4.1: "the sample ratio between domain and general data is 1:3")
GENERAL_PER_DOMAIN = 3


class DomainDataError(UserError, ValueError):
    """A domain-setting file has the wrong shape; the message names the file and line."""


def _rows(
    path: Path, fields: int, header: Sequence[str] | None, csv_quoted: bool = False
) -> list[list[str]]:
    """Tab-separated, unquoted rows (or ``csv_quoted``: comma-separated CSV); each of the first
    ``fields`` non-empty, the errors naming file and line."""
    with open(path, encoding="utf-8", newline="") as fh:
        if csv_quoted:
            rows = list(csv.reader(fh))
        else:
            rows = list(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    if header is not None:
        if not rows or rows[0][: len(header)] != list(header):
            raise DomainDataError(f"{path}:1: header must start with {', '.join(header)}")
        rows = rows[1:]
    start = 2 if header is not None else 1
    for line, row in enumerate(rows, start):
        if len(row) < fields or not all(x.strip() for x in row[:fields]):
            kind = "comma" if csv_quoted else "tab"
            raise DomainDataError(f"{path}:{line}: expected {fields} non-empty {kind}-separated fields")
    return rows


def sts_pairs(path: str | Path) -> list[tuple[str, str]]:
    """An STS ``STS.input.*.txt`` file: one ``sentence1<TAB>sentence2`` pair a line."""
    return [(r[0], r[1]) for r in _rows(Path(path), 2, None)]


def sick_pairs(path: str | Path) -> list[tuple[str, str]]:
    """SICK's ``SICK_train.txt``: pair_ID, sentence_A, sentence_B, then the labels (dropped)."""
    return [(r[1], r[2]) for r in _rows(Path(path), 3, ("pair_ID", "sentence_A", "sentence_B"))]


def paws_pairs(path: str | Path) -> list[tuple[str, str]]:
    """PAWS-Wiki's ``train.tsv``: id, sentence1, sentence2, label (dropped)."""
    return [(r[1], r[2]) for r in _rows(Path(path), 3, ("id", "sentence1", "sentence2"))]


def nli_sentences(path: str | Path) -> list[tuple[str, ...]]:
    """SimCSE's ``nli_for_simcse.csv`` (sent0, sent1, hard_neg): every sentence of a row,
    the entailment / contradiction roles dropped."""
    rows = _rows(Path(path), 3, ("sent0", "sent1", "hard_neg"), csv_quoted=True)
    return [tuple(r[:3]) for r in rows]


def text_lines(path: str | Path) -> list[tuple[str]]:
    """A one-sentence-per-line file (the Wikipedia corpus); blank lines dropped."""
    return [(ln.strip(),) for ln in read_lines(path) if ln.strip()]


#: reader name (params.yaml ``corpora.<name>.*.reader``) -> rows of sentences of one file
READERS: dict[str, Callable[[Path], Sequence[tuple[str, ...]]]] = {
    "sts_pairs": sts_pairs,
    "sick_pairs": sick_pairs,
    "paws_pairs": paws_pairs,
    "nli_sentences": nli_sentences,
    "lines": text_lines,
}


def seeded_draw(n: int, k: int, seed: int) -> list[int]:
    """``k`` of ``range(n)`` without replacement (seeded), in increasing order."""
    return sorted(random.Random(seed).sample(range(n), k))


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
    picked = seeded_draw(len(general), want, seed) if use_general else []
    return (list(domain) if use_domain else []) + [general[i] for i in picked]


def _sample_rows(rows: Sequence[tuple[str, ...]], limit: int | None, seed: int) -> list:
    """At most ``limit`` rows drawn without replacement (seeded), in file order."""
    if limit is None or limit >= len(rows):
        return list(rows)
    return [rows[i] for i in seeded_draw(len(rows), limit, seed)]


def read_source(
    source: Mapping[str, Any], resolve: Callable[[str], Path], seed: int
) -> tuple[list[str], dict[str, Any]]:
    """The unique sentences of one source (``reader``, ``files``, ``max_pairs``) and its stats.
    A file that ``resolve`` cannot find raises :class:`negcse.data.sources.ResolveError`."""
    reader = READERS[source["reader"]]
    rows: list[tuple[str, ...]] = []
    for name in source["files"]:
        rows += reader(resolve(name))
    picked = _sample_rows(rows, source.get("max_pairs"), seed)
    sentences = unique_sentences(picked)
    stats = {"files": list(source["files"]), "rows": len(rows), "rows_used": len(picked)}
    return sentences, {**stats, "sentences": len(sentences)}


def build(
    spec: Mapping[str, Any], resolve: Callable[[str], Path]
) -> tuple[list[str], dict[str, Any]]:
    """One mixed corpus from its params.yaml entry: ``domain`` (sources), ``general`` (one
    source), ``use_domain``, ``use_general``, ``max_domain_lines``, ``seed``. A domain source
    whose file ``resolve`` finds nowhere without a network (ResolveError: offline or unreachable;
    a failed download is another error) is skipped (logged, listed under ``skipped``); without
    domain or general lines where the mix needs them, a :class:`DomainDataError` names the
    setting."""
    seed = int(spec.get("seed", 0))
    use_domain, use_general = bool(spec.get("use_domain", True)), bool(spec.get("use_general", True))
    stats: dict[str, Any] = {"domain": [], "skipped": [], "seed": seed}
    # the domain lines are read even for "w/o domain": they fix how many general lines are drawn
    domain: list[str] = []
    for source in spec["domain"]:
        try:
            lines, info = read_source(source, resolve, seed)
        except ResolveError as exc:
            reason = "; ".join(line.strip() for line in str(exc).splitlines())
            logger.warning(
                "skipped offline: domain source %s (%s); fetch it on a networked machine "
                "(negcse fetch-data) to use it",
                ", ".join(source["files"]),
                reason,
            )
            stats["skipped"].append({"files": list(source["files"]), "reason": reason})
            continue
        stats["domain"].append({"reader": source["reader"], **info})
        domain += lines
    domain = list(dict.fromkeys(domain))
    cap = spec.get("max_domain_lines")
    if cap is not None and cap < len(domain):
        domain = [domain[i] for i in seeded_draw(len(domain), cap, seed)]
    if not domain:
        raise DomainDataError("corpus: no domain source was found (the mix's size comes from it)")
    general: list[str] = []
    stats["general"] = None
    if use_general:
        general_source = spec.get("general")
        if not general_source:
            raise DomainDataError("corpus: use_general is true but 'general' names no source")
        general, info = read_source(general_source, resolve, seed)
        stats["general"] = {"reader": general_source["reader"], **info}
    lines = mix(domain, general, seed, use_domain=use_domain, use_general=use_general)
    stats.update(
        domain_lines=len(domain) if use_domain else 0,
        general_lines=len(lines) - (len(domain) if use_domain else 0),
        lines=len(lines),
        use_domain=use_domain,
        use_general=use_general,
    )
    return lines, stats
