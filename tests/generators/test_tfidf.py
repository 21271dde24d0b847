"""UNA's TF-IDF table: hand computations, the released code's output, the tokenizer, the file."""

from __future__ import annotations

import argparse
import csv
import math
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from negcse.commands import tfidf as tfidf_cmd
from negcse.data.sources import resolve_data
from negcse.generators.tfidf import (
    fit_tfidf,
    fit_tfidf_files,
    iter_corpus_lines,
    read_tfidf_table,
    write_tfidf_table,
)
from negcse.generators.word_tokenize import una_tokenize, word_tokenize

WIKI10K = "unlabeled/wiki1m/wiki1m_random10k.txt"


@pytest.fixture(scope="module")
def wiki10k() -> Path:
    here = Path(__file__).resolve().parents[2]
    for mirror in (os.environ.get("NEGCSE_MIRROR"), here.parent / "shared" / "mirror"):
        if mirror and Path(mirror).is_dir():
            return resolve_data(WIKI10K, mirror=mirror)
    pytest.skip("no mirror (set NEGCSE_MIRROR)")


def brute_force(sentences: list[list[str]]) -> dict[str, tuple[int, float, float]]:
    """The paper's definition, term by term: (df, idf, max over sentences of tf * idf)."""
    n_docs = len(sentences)
    df = Counter(t for s in sentences for t in set(s))
    out = {}
    for term, n_t_docs in df.items():
        idf = math.log(n_docs / n_t_docs)
        best = max(math.log(1 + s.count(term) / len(s)) * idf for s in sentences if term in s)
        out[term] = (n_t_docs, idf, best)
    return out


def test_hand_computed_values_and_rank() -> None:
    sents = [["the", "cat", "sat"], ["the", "cat", "saw", "the", "dog"], ["a", "dog"]]
    table = fit_tfidf(sents)
    got = {
        t: (int(d), i, s)
        for t, d, i, s in zip(table.terms, table.df, table.idf, table.max_tfidf, strict=True)
    }
    # tf = ln(1 + n_t/n), idf = ln(N/N_t), N = 3
    assert got["a"][2] == pytest.approx(math.log(1 + 1 / 2) * math.log(3))  # 0.4455
    assert got["sat"][2] == pytest.approx(math.log(1 + 1 / 3) * math.log(3))
    assert got["saw"][2] == pytest.approx(math.log(1 + 1 / 5) * math.log(3))
    assert got["the"][2] == pytest.approx(math.log(1 + 2 / 5) * math.log(3 / 2))  # 2 of 5 > 1 of 3
    assert got["dog"][2] == pytest.approx(math.log(1 + 1 / 2) * math.log(3 / 2))
    assert got["cat"][2] == pytest.approx(math.log(1 + 1 / 3) * math.log(3 / 2))
    assert got["the"][:2] == (2, pytest.approx(math.log(1.5)))
    assert table.terms == ["a", "sat", "saw", "dog", "the", "cat"]
    assert table.rank.tolist() == [1, 2, 3, 4, 5, 6]


def test_matches_brute_force_and_is_chunk_independent() -> None:
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(40)]
    sents = [[str(w) for w in rng.choice(words, size=rng.integers(1, 12))] for _ in range(300)]
    truth = brute_force(sents)
    tables = [fit_tfidf(sents, chunk_size=c) for c in (1, 7, 1000)]
    for table in tables:
        assert sorted(table.terms) == sorted(truth)
        for t, d, i, s in zip(table.terms, table.df, table.idf, table.max_tfidf, strict=True):
            assert (d, i, s) == (
                truth[t][0],
                pytest.approx(truth[t][1]),
                pytest.approx(truth[t][2]),
            )
        assert np.all(np.diff(table.max_tfidf) <= 0)
        assert table.terms == tables[0].terms
        np.testing.assert_array_equal(table.max_tfidf, tables[0].max_tfidf)


def test_ties_ranked_by_first_occurrence_and_common_terms_score_zero() -> None:
    # Every term has tf ln(1.5) and idf ln 3, except "z" which is in every line (idf 0).
    table = fit_tfidf([["y", "z"], ["x", "z"], ["w", "z"]])
    assert table.terms == ["y", "x", "w", "z"]
    assert table.first_seen.tolist() == [0, 2, 3, 1]
    assert table.max_tfidf[:3] == pytest.approx([math.log(1.5) * math.log(3)] * 3)
    assert table.max_tfidf[3] == 0.0


def test_empty_lines_count_as_documents() -> None:
    table = fit_tfidf([["a"], [], ["b", "a"], []])
    idf = dict(zip(table.terms, table.idf, strict=True))
    assert idf["a"] == pytest.approx(math.log(4 / 2))
    assert idf["b"] == pytest.approx(math.log(4 / 1))
    with pytest.raises(ValueError, match="no terms"):
        fit_tfidf([[], []])


def test_tokenizer_is_nltk_word_tokenize() -> None:
    # The docstring example of nltk.tokenize.word_tokenize: Punkt splits the sentences, so
    # "York." loses its period although it is not at the end of the text.
    text = "Good muffins cost $3.88\nin New York.  Please buy me\ntwo of them.\n\nThanks."
    assert word_tokenize(text) == [
        "Good", "muffins", "cost", "$", "3.88", "in", "New", "York", ".", "Please", "buy",
        "me", "two", "of", "them", ".", "Thanks", ".",
    ]  # fmt: skip
    # nltk.word_tokenize(text.lower()) with NLTK's punkt_tab gives exactly this: Punkt ends a
    # sentence after "u.s." (so its period is split off), quotes become `` and '', clitics split.
    assert una_tokenize('He said, "I can\'t go to the U.S. Army."') == [
        "he", "said", ",", "``", "i", "ca", "n't", "go", "to", "the", "u.s", ".", "army", ".",
        "''",
    ]  # fmt: skip
    assert una_tokenize("He met Dr. Smith in the U.S. Army yesterday.") == [
        "he", "met", "dr.", "smith", "in", "the", "u.s.", "army", "yesterday", ".",
    ]  # fmt: skip
    assert una_tokenize("   ") == []


def test_table_file_round_trip_keeps_odd_terms(tmp_path: Path) -> None:
    sents = [["nan", "null", "#", "'", '"', "n/a"], ["true", "nan", "1e5"], ["-"]]
    table = fit_tfidf(sents)
    path = tmp_path / "t.tsv"
    write_tfidf_table(table, path)
    back = read_tfidf_table(path)
    assert back.terms == table.terms
    for name in ("df", "idf", "max_tfidf", "first_seen"):
        np.testing.assert_array_equal(getattr(back, name), getattr(table, name))  # bit for bit
    # The documented plain-pandas reading gives the same columns.
    frame = pd.read_csv(path, sep="\t", quoting=csv.QUOTE_NONE, keep_default_na=False)
    assert frame["term"].tolist() == table.terms
    assert list(frame.columns) == ["rank", "term", "df", "idf", "max_tfidf", "first_seen"]


def test_bad_table_and_corpus_fail_clearly(tmp_path: Path) -> None:
    table = fit_tfidf([["a", "b"], ["b", "c"]])
    good = tmp_path / "good.tsv"
    write_tfidf_table(table, good)
    lines = good.read_text().splitlines()
    cases = {
        "missing column": "\n".join(line.rsplit("\t", 1)[0] for line in lines),
        "rank 3, expected 2": "\n".join([lines[0], lines[1], lines[3], lines[2]]),
        "listed twice": "\n".join([*lines, "4\ta\t1\t0.5\t0.0\t9"]),
        "no terms": lines[0],
    }
    for message, text in cases.items():
        bad = tmp_path / "bad.tsv"
        bad.write_text(text + "\n")
        with pytest.raises(ValueError, match=message):
            read_tfidf_table(bad)
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"fine line\nbad \xff byte\n")
    with pytest.raises(ValueError, match=r"c\.txt:2: not valid UTF-8"):
        list(iter_corpus_lines(corpus))


def test_command_writes_table_and_leaves_nothing_on_error(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("The cat sat.\nA dog!\n")
    out = tmp_path / "table.tsv"
    parser = argparse.ArgumentParser()
    tfidf_cmd.add_arguments(parser)
    assert tfidf_cmd.run(parser.parse_args(["--input", str(corpus), "--output", str(out)])) == 0
    table = read_tfidf_table(out)
    assert set(table.terms) == {"the", "cat", "sat", ".", "a", "dog", "!"}
    assert dict(zip(table.terms, table.df.tolist(), strict=True))["."] == 1
    corpus.write_bytes(b"ok\n\xfe\n")
    out2 = tmp_path / "table2.tsv"
    with pytest.raises(ValueError, match="not valid UTF-8"):
        tfidf_cmd.run(parser.parse_args(["--input", str(corpus), "--output", str(out2)]))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt", "table.tsv"]


def test_wiki10k_matches_released_code(wiki10k: Path) -> None:
    """Figures from the released ``data/augment/create_dict.py`` run on the same file
    (``benchmarks/una.md``): 29,604 terms; its term_idf.csv / term_tfidfmax.csv rows below."""
    table = fit_tfidf_files([wiki10k], progress=False)
    assert len(table) == 29_604
    row = {t: i for i, t in enumerate(table.terms)}
    released = {  # term: (Scores_idf, Scores_max, Scores_count)
        "initially": (5.8781358618009785, 0.5602461859025017, 28),
        "known": (4.173387769562553, 0.643330561860833, 154),
    }
    for term, (idf, score, count) in released.items():
        i = row[term]
        assert table.idf[i] == idf
        assert table.max_tfidf[i] == pytest.approx(score, rel=1e-14)
        assert table.df[i] == count
    assert table.first_seen[row["initially"]] == 0  # first token of the first line
