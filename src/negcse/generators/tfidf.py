"""UNA's TF-IDF table: document frequency, idf and the global score of every term.

Each line of the corpus is a document. Text is lowercased and word-tokenized
(:func:`negcse.generators.word_tokenize.una_tokenize`); no stop words are removed. For term t
in sentence d with n tokens, t occurring n_t times::

    tf(t, d) = ln(1 + n_t / n)      idf(t) = ln(N / N_t)      s_t = max_d tf(t, d) * idf(t)

with N the number of lines (empty lines included) and N_t the number of lines holding t. As
idf(t) >= 0 and ln(1 + x) grows with x, s_t = ln(1 + max_d n_t / n) * idf(t): one streaming
pass collects N_t and max n_t / n per term from sparse count matrices, one chunk at a time.

The table is a TSV, one row per term in rank order: ``rank`` (1 = highest ``max_tfidf``; ties
go to the term seen first in the corpus, as the released code's stable sort of its
insertion-ordered dictionary does), ``term``, ``df`` (N_t), ``idf``, ``max_tfidf`` (s_t) and
``first_seen`` (0-based order of first occurrence). Read it with :func:`read_tfidf_table`, or
with pandas as ``pd.read_csv(path, sep="\\t", quoting=csv.QUOTE_NONE, keep_default_na=False)``
(terms such as ``nan`` or ``null`` must stay strings; terms never contain tabs or newlines).
"""

from __future__ import annotations

import csv
import itertools
import logging
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from tqdm import tqdm

from negcse.errors import UserError
from negcse.generators.word_tokenize import tokenize_lines
from negcse.io_utils import atomic_open

logger = logging.getLogger(__name__)

COLUMNS = ("rank", "term", "df", "idf", "max_tfidf", "first_seen")


@dataclass(frozen=True)
class TfidfTable:
    """Per-term statistics in rank order (index 0 = rank 1)."""

    terms: list[str]
    df: np.ndarray  # int64, number of lines holding the term
    idf: np.ndarray  # float64, ln(N / df)
    max_tfidf: np.ndarray  # float64, the global score s
    first_seen: np.ndarray  # int64, order of first occurrence in the corpus

    def __post_init__(self) -> None:
        n = len(self.terms)
        for name in ("df", "idf", "max_tfidf", "first_seen"):
            if len(getattr(self, name)) != n:
                raise ValueError(
                    f"TfidfTable: column {name} has {len(getattr(self, name))} rows, terms {n}"
                )

    def __len__(self) -> int:
        return len(self.terms)

    @property
    def rank(self) -> np.ndarray:
        return np.arange(1, len(self.terms) + 1, dtype=np.int64)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "rank": self.rank,
                "term": self.terms,
                "df": self.df,
                "idf": self.idf,
                "max_tfidf": self.max_tfidf,
                "first_seen": self.first_seen,
            }
        )


class TfidfError(UserError, ValueError):
    """A corpus or TF-IDF table that cannot be used; the message names the file (and line)."""


def iter_corpus_lines(path: str | os.PathLike[str]) -> Iterator[str]:
    """Lines of a UTF-8 file split on ``\\n`` only (so the count matches ``wc -l`` plus an
    unterminated last line); a line that is not UTF-8 fails with its file and line number."""
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                yield raw.rstrip(b"\n").decode("utf-8")
            except UnicodeDecodeError as err:
                raise TfidfError(f"{path}:{lineno}: not valid UTF-8 ({err.reason})") from None


def fit_tfidf(
    token_lists: Iterable[list[str]],
    chunk_size: int = 50_000,
    progress: bool = False,
    source: str = "the corpus",
) -> TfidfTable:
    """TF-IDF statistics of tokenized sentences (one list of terms per line); ``source`` names
    them in the error for a corpus without a term."""
    vocab: dict[str, int] = {}
    df = np.zeros(0, dtype=np.int64)
    max_ratio = np.zeros(0, dtype=np.float64)
    n_lines = 0
    it = iter(token_lists)
    bar = tqdm(desc="tf-idf", unit="line", disable=not progress)
    while chunk := list(itertools.islice(it, chunk_size)):
        lengths = np.fromiter(map(len, chunk), dtype=np.int64, count=len(chunk))
        # Ids in order of first occurrence: the released dictionary's insertion order.
        ids = np.fromiter(
            (vocab.setdefault(tok, len(vocab)) for toks in chunk for tok in toks),
            dtype=np.int64,
            count=int(lengths.sum()),
        )
        n_terms = len(vocab)
        df = np.pad(df, (0, n_terms - len(df)))
        max_ratio = np.pad(max_ratio, (0, n_terms - len(max_ratio)))
        rows = np.repeat(np.arange(len(chunk)), lengths)
        counts = sp.csr_matrix(
            (np.ones(len(ids)), (rows, ids)), shape=(len(chunk), n_terms)
        )  # duplicates summed: data holds n_t per (line, term)
        counts.sum_duplicates()
        df += np.bincount(counts.indices, minlength=n_terms)
        ratio = counts.data / np.repeat(lengths, np.diff(counts.indptr))
        np.maximum.at(max_ratio, counts.indices, ratio)
        n_lines += len(chunk)
        bar.update(len(chunk))
    bar.close()
    if not vocab:
        raise TfidfError(f"{source}: no terms in {n_lines} line(s) (an empty corpus?)")
    idf = np.log(n_lines / df)
    score = np.log1p(max_ratio) * idf
    order = np.argsort(-score, kind="stable")  # ties: first seen first
    terms = np.array(list(vocab), dtype=object)[order].tolist()
    logger.info("tf-idf: %d lines, %d terms", n_lines, len(terms))
    return TfidfTable(
        terms=terms, df=df[order], idf=idf[order], max_tfidf=score[order], first_seen=order
    )


def fit_tfidf_files(
    paths: Iterable[str | os.PathLike[str]], chunk_size: int = 50_000, progress: bool = True
) -> TfidfTable:
    """TF-IDF over the lines of several corpus files taken as one corpus (e.g. + paraphrases)."""
    paths = list(paths)
    lines = itertools.chain.from_iterable(iter_corpus_lines(p) for p in paths)
    return fit_tfidf(tokenize_lines(lines), chunk_size, progress, source=", ".join(map(str, paths)))


def write_tfidf_table(table: TfidfTable, path: str | os.PathLike[str]) -> None:
    """Write the table atomically; floats as ``repr`` so they read back bit for bit."""
    with atomic_open(path) as fh:
        fh.write("\t".join(COLUMNS) + "\n")
        for i, (term, df, idf, score, seen) in enumerate(
            zip(
                table.terms,
                table.df.tolist(),
                table.idf.tolist(),
                table.max_tfidf.tolist(),
                table.first_seen.tolist(),
                strict=True,
            ),
            start=1,
        ):
            fh.write(f"{i}\t{term}\t{df}\t{idf!r}\t{score!r}\t{seen}\n")


def read_tfidf_table(path: str | os.PathLike[str]) -> TfidfTable:
    """Read and check a table written by :func:`write_tfidf_table`."""
    path = Path(path)
    try:
        frame = pd.read_csv(
            path,
            sep="\t",
            quoting=csv.QUOTE_NONE,
            keep_default_na=False,
            na_filter=False,
            dtype={"term": str},
            engine="c",
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise TfidfError(f"{path}: not a TF-IDF table ({err})") from None
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise TfidfError(
            f"{path}: missing column(s) {', '.join(missing)}; has {list(frame.columns)}"
        )
    if frame.empty:
        raise TfidfError(f"{path}: no terms")
    for col in ("rank", "df", "first_seen"):
        if not pd.api.types.is_integer_dtype(frame[col]):
            raise TfidfError(f"{path}: column {col} must be integers")
    for col in ("idf", "max_tfidf"):
        if not pd.api.types.is_float_dtype(frame[col]) and not pd.api.types.is_integer_dtype(
            frame[col]
        ):
            raise TfidfError(f"{path}: column {col} must be numbers")
    expected = np.arange(1, len(frame) + 1)
    bad = np.flatnonzero(frame["rank"].to_numpy() != expected)
    if bad.size:
        raise TfidfError(
            f"{path}: data row {bad[0] + 1} has rank {frame['rank'].iat[bad[0]]}, expected {bad[0] + 1}"
        )
    score = frame["max_tfidf"].to_numpy(dtype=np.float64)
    idf = frame["idf"].to_numpy(dtype=np.float64)
    df = frame["df"].to_numpy(dtype=np.int64)
    for name, values in (("max_tfidf", score), ("idf", idf)):
        bad = np.flatnonzero(~np.isfinite(values) | (values < 0))
        if bad.size:
            raise TfidfError(f"{path}: data row {bad[0] + 1}: {name} must be finite and >= 0")
    bad = np.flatnonzero(df < 1)
    if bad.size:
        raise TfidfError(f"{path}: data row {bad[0] + 1}: df must be >= 1")
    bad = np.flatnonzero(np.diff(score) > 0)
    if bad.size:
        raise TfidfError(
            f"{path}: data row {bad[0] + 2}: max_tfidf rises; rows must be in rank order"
        )
    terms = frame["term"].tolist()
    empty = [i for i, t in enumerate(terms) if not t]
    if empty:
        raise TfidfError(f"{path}: data row {empty[0] + 1}: empty term")
    if frame["term"].duplicated().any():
        dup = int(np.flatnonzero(frame["term"].duplicated().to_numpy())[0])
        raise TfidfError(f"{path}: data row {dup + 1}: term {terms[dup]!r} listed twice")
    return TfidfTable(
        terms=terms,
        df=df,
        idf=idf,
        max_tfidf=score,
        first_seen=frame["first_seen"].to_numpy(dtype=np.int64),
    )
