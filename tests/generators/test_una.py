"""UNA negatives: p_i and the window sampler by hand, replacement frequencies against the
formula, the guaranteed change, determinism, the ablations, edge cases and the command."""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

import numpy as np
import pytest

from negcse.commands import una_negatives as una_cmd
from negcse.data.sources import resolve_data
from negcse.generators.specs.una import UnaSettings
from negcse.generators.tfidf import (
    TfidfTable,
    fit_tfidf_files,
    iter_corpus_lines,
    write_tfidf_table,
)
from negcse.generators.una import (
    UnaGenerator,
    UnaStats,
    replace_probabilities,
    sentence_tfidf,
    uniform_sample,
    window_sample,
)
from negcse.generators.word_tokenize import una_tokenize
from negcse.runtime.seed import numpy_rng

WIKI10K = "unlabeled/wiki1m/wiki1m_random10k.txt"


def make_table(scores: list[float], idf: list[float] | None = None) -> TfidfTable:
    """Terms t000, t001, ... in rank order with the given global scores (descending)."""
    n = len(scores)
    return TfidfTable(
        terms=[f"t{i:03d}" for i in range(n)],
        df=np.ones(n, dtype=np.int64),
        idf=np.asarray(idf if idf is not None else scores, dtype=np.float64),
        max_tfidf=np.asarray(scores, dtype=np.float64),
        first_seen=np.arange(n),
    )


def sigma_bound(p: np.ndarray, m: int) -> np.ndarray:
    return 5 * np.sqrt(p * (1 - p) / m) + 1e-9


@pytest.fixture(scope="module")
def wiki() -> tuple[UnaGenerator, list[str]]:
    here = Path(__file__).resolve().parents[2]
    for mirror in (os.environ.get("NEGCSE_MIRROR"), here.parent / "shared" / "mirror"):
        if mirror and Path(mirror).is_dir():
            path = resolve_data(WIKI10K, mirror=mirror)
            table = fit_tfidf_files([path], progress=False)
            return UnaGenerator(table), list(iter_corpus_lines(path))
    pytest.skip("no mirror (set NEGCSE_MIRROR)")


# --- the formulas by hand --------------------------------------------------------------------


def test_sentence_tfidf_and_p_by_hand() -> None:
    idf = np.array([1.0, 2.0, 3.0, 0.5])  # terms 0..3 = a, b, c, d
    # sentence 0: "a b c c d" (n = 5); sentence 1: "b d" (n = 2)
    ranks = np.array([0, 1, 2, 2, 3, 1, 3])
    sent = np.array([0, 0, 0, 0, 0, 1, 1])
    z = sentence_tfidf(ranks, sent, np.array([5, 2]), idf)
    ln12, ln14, ln15 = math.log(1.2), math.log(1.4), math.log(1.5)
    assert z == pytest.approx(
        [ln12, 2 * ln12, 3 * ln14, 3 * ln14, 0.5 * ln12, 2 * ln15, 0.5 * ln15]
    )
    p, forced = replace_probabilities(z, sent, beta=0.5)
    # d = z - min z = [.09116, .27348, .91826, .91826, 0], C = 2.20116 / 5 = .440232,
    # p = .5 d / C = [.1035, .3106, 1.043 -> 1, 1, 0]; "b d": d = [.6082, 0], C = .3041.
    assert p == pytest.approx([0.10354, 0.31061, 1.0, 1.0, 0.0, 1.0, 0.0], abs=1e-5)
    assert forced.tolist() == [2, 5]  # the first position of each sentence's top score
    # beta scales p below the clip: 0.1 -> [.0207, .0621, .2086, .2086, 0]
    p, _ = replace_probabilities(z[:5], sent[:5], beta=0.1)
    assert p == pytest.approx([0.020708, 0.062122, 1.0, 0.208588, 0.0], abs=1e-5)


def test_p_edge_cases_one_token_and_all_equal() -> None:
    p, forced = replace_probabilities(np.array([0.7]), np.array([0]), 0.5)
    assert p.tolist() == [1.0] and forced.tolist() == [0]
    # C = 0: nothing but the forced first position
    p, forced = replace_probabilities(np.array([0.3, 0.3, 0.3]), np.array([0, 0, 0]), 0.5)
    assert p.tolist() == [1.0, 0.0, 0.0] and forced.tolist() == [0]


def test_window_sample_by_hand() -> None:
    cumsum = np.array([0.0, 4, 7, 9, 10])  # s = 4, 3, 2, 1
    no, yes = np.array([False]), np.array([True])

    def draw(r: int, u: float, radius: int = 1, excl: np.ndarray = no) -> int:
        return int(window_sample(cumsum, np.array([r]), np.array([u]), radius, excl)[0])

    # r = 1, window ranks 0..2 with weights 4, 3, 2: target = 9u
    assert [draw(1, u) for u in (0.1, 0.44, 0.45, 0.77, 0.78, 0.99)] == [0, 0, 1, 1, 2, 2]
    # without rank 1: weights 4, 2, target = 6u, the interval of rank 1 skipped
    assert [draw(1, u, excl=yes) for u in (0.1, 0.66, 0.67, 0.99)] == [0, 0, 2, 2]
    # clipped windows: r = 0 -> ranks 0, 1 (4, 3); r = 3 -> ranks 2, 3 (2, 1)
    assert [draw(0, u) for u in (0.5, 0.58)] == [0, 1]
    assert [draw(3, u) for u in (0.6, 0.7)] == [2, 3]
    assert [draw(3, u, excl=yes) for u in (0.0, 0.5, 0.999)] == [2, 2, 2]
    assert draw(1, 0.5, radius=100) == 1  # 10u = 5 falls in [4, 7)
    # zero weights are never drawn; an all-zero window is drawn uniformly
    zeros = np.array([0.0, 1, 1, 1, 2])  # s = 1, 0, 0, 1
    assert {
        int(window_sample(zeros, np.array([1]), np.array([u]), 1, no)[0]) for u in (0, 0.5, 0.99)
    } == {0}
    flat = np.array([0.0, 5, 5, 5, 5])  # s = 5, 0, 0, 0; window of rank 2 is ranks 1..3
    got = [
        int(window_sample(flat, np.array([2]), np.array([u]), 1, no)[0]) for u in (0.1, 0.5, 0.9)
    ]
    assert got == [1, 2, 3]
    got = [int(window_sample(flat, np.array([2]), np.array([u]), 1, yes)[0]) for u in (0.1, 0.9)]
    assert got == [1, 3]


def test_window_sample_frequencies() -> None:
    rng = numpy_rng(0, 1)
    s = np.sort(rng.random(50))[::-1] + 0.05
    cumsum = np.r_[0.0, np.cumsum(s)]
    m, r, radius = 200_000, 25, 10
    for exclude in (False, True):
        j = window_sample(cumsum, np.full(m, r), rng.random(m), radius, np.full(m, exclude))
        weights = np.zeros(50)
        weights[r - radius : r + radius + 1] = s[r - radius : r + radius + 1]
        if exclude:
            weights[r] = 0
        expected = weights / weights.sum()
        observed = np.bincount(j, minlength=50) / m
        assert np.all(np.abs(observed - expected) <= sigma_bound(expected, m))


def test_uniform_sample_by_hand() -> None:
    u = np.array([0.1, 0.3, 0.6, 0.8])
    r = np.full(4, 2)
    assert uniform_sample(5, r, u, np.ones(4, dtype=bool)).tolist() == [0, 1, 3, 4]
    assert uniform_sample(5, r, u, np.zeros(4, dtype=bool)).tolist() == [0, 1, 3, 4]
    assert uniform_sample(5, r[:1], np.array([0.5]), np.array([False])).tolist() == [2]


# --- replacement frequencies against the formula ---------------------------------------------

SCORES = [2 - k / 200 for k in range(200)]
POSITIONS = [10, 50, 100, 150, 190, 199]  # one sentence of six distinct terms


def change_frequency(
    gen: UnaGenerator, params: UnaSettings, m: int = 20_000
) -> tuple[np.ndarray, list[list[str]]]:
    sentence = [gen.table.terms[k] for k in POSITIONS]
    out, _ = gen.generate_tokens([list(sentence)] * m, numpy_rng(7, 3), params)
    changed = np.array([[a != b for a, b in zip(o, sentence, strict=True)] for o in out])
    return changed.mean(axis=0), out


def keep_probability(gen: UnaGenerator, radius: int) -> np.ndarray:
    """Chance that a (non-forced) window draw returns the term itself: s_r / window sum."""
    s = gen.table.max_tfidf
    out = []
    for r in POSITIONS:
        lo, hi = max(r - radius, 0), min(r + radius + 1, len(s))
        out.append(s[r] / s[lo:hi].sum())
    return np.array(out)


def test_replacement_frequency_follows_the_formula() -> None:
    gen = UnaGenerator(make_table(SCORES, idf=[3 * s for s in SCORES]))
    params = UnaSettings(beta=0.5, window=20)
    freq, _ = change_frequency(gen, params)
    z = math.log(1 + 1 / 6) * 3 * np.array([SCORES[k] for k in POSITIONS])
    d = z - z.min()
    p = np.minimum(0.5 * d / d.mean(), 1.0)
    p[0] = 1.0  # the top term, always replaced, never by itself
    expected = p * (1 - keep_probability(gen, 20))
    expected[0] = 1.0
    assert np.all(np.abs(freq - expected) <= sigma_bound(expected, 20_000))
    assert np.all(np.diff(freq) < 0)  # higher TF-IDF, more replacement
    assert freq[-1] == 0.0  # the lowest score has p = 0


def test_replacement_frequency_rises_with_tfidf_on_wiki(
    wiki: tuple[UnaGenerator, list[str]],
) -> None:
    gen, lines = wiki
    toks = [una_tokenize(s) for s in lines[:3000]]
    out, stats = gen.generate_tokens(toks, numpy_rng(11), UnaSettings())
    flat = [t for s in toks for t in s]
    changed = np.array(
        [a != b for o, s in zip(out, toks, strict=True) for a, b in zip(o, s, strict=True)]
    )
    lengths = np.array([len(s) for s in toks])
    ranks = np.array([gen.index[t] for t in flat])
    sent = np.repeat(np.arange(len(toks)), lengths)
    z = sentence_tfidf(ranks, sent, lengths, gen.table.idf)
    p, _ = replace_probabilities(z, sent, 0.5)
    assert stats.replaced >= changed.sum()
    # Bins of p: the observed change rate matches the mean p (a draw keeps its own term with
    # chance ~1/8001, well inside the tolerance) and rises from bin to bin.
    edges = np.array([0, 1e-12, 0.2, 0.4, 0.6, 0.8, 0.999999, 1.0 + 1e-9])
    rates = []
    for lo, hi in itertools_pairs(edges):
        sel = (p >= lo) & (p < hi)
        assert sel.sum() > 500
        mean_p, rate = p[sel].mean(), changed[sel].mean()
        assert abs(rate - mean_p) <= 5 * math.sqrt(max(mean_p * (1 - mean_p), 1e-4) / sel.sum())
        rates.append(rate)
    assert rates[0] == 0.0 and rates[-1] > 0.999
    assert all(b > a for a, b in itertools_pairs(np.array(rates)))


def itertools_pairs(a: np.ndarray) -> list[tuple[float, float]]:
    return list(zip(a[:-1].tolist(), a[1:].tolist(), strict=True))


# --- guarantees on real data -----------------------------------------------------------------


def test_every_wiki_sentence_changes_within_the_window(
    wiki: tuple[UnaGenerator, list[str]],
) -> None:
    gen, lines = wiki
    stats = UnaStats()
    negatives = gen.generate(lines, seed=1, stats=stats)
    assert len(negatives) == len(lines) == stats.sentences == 10_000
    assert stats.unknown_tokens == 0 and stats.empty == 0
    small = gen.generate(lines[:2000], seed=2, window=50)
    for i, (line, neg) in enumerate(zip(lines, negatives, strict=True)):
        orig = una_tokenize(line)
        assert neg != " ".join(orig), f"line {i + 1} unchanged"
        assert len(neg.split(" ")) == len(orig)
    for line, neg in zip(lines[:2000], small, strict=True):
        for a, b in zip(una_tokenize(line), neg.split(" "), strict=True):
            assert abs(gen.index[a] - gen.index[b]) <= 50
    # beta = 0.5: about half the tokens are replaced (mean p is beta before clipping)
    assert 0.4 < stats.replaced / stats.tokens < 0.6


def test_same_seed_same_output(wiki: tuple[UnaGenerator, list[str]]) -> None:
    gen, lines = wiki
    a = gen.generate(lines[:500], seed=3)
    assert a == gen.generate(lines[:500], seed=3)
    assert a == list(gen.iter_generate(lines[:500], 3, UnaSettings()))
    assert a != gen.generate(lines[:500], seed=4)
    assert a != gen.generate(lines[:500], seed=3, stream=(1,))
    # chunk k draws from stream k: the first chunk does not depend on what follows
    assert gen.generate(lines[:300], seed=3, chunk_size=100)[:100] == gen.generate(
        lines[:100], seed=3, chunk_size=100
    )


# --- ablations -------------------------------------------------------------------------------


def test_random_selection_ignores_tfidf() -> None:
    gen = UnaGenerator(make_table(SCORES, idf=[3 * s for s in SCORES]))
    freq, _ = change_frequency(gen, UnaSettings(beta=0.5, window=20, select="random"))
    n = len(POSITIONS)
    # one position forced uniformly (never kept), each other replaced with probability beta
    expected = 1 / n + (1 - 1 / n) * 0.5 * (1 - keep_probability(gen, 20))
    assert np.all(np.abs(freq - expected) <= sigma_bound(expected, 20_000))
    _, out = change_frequency(gen, UnaSettings(beta=0.0, select="random"), m=3000)
    sentence = [gen.table.terms[k] for k in POSITIONS]
    changes = np.array([sum(a != b for a, b in zip(o, sentence, strict=True)) for o in out])
    assert np.all(changes == 1)  # beta 0: exactly the forced one


def test_random_replacement_draws_from_the_whole_vocabulary() -> None:
    gen = UnaGenerator(make_table(SCORES))
    m = 20_000
    sentence = ["t100"]  # one token: always forced, never kept
    for replace, radius in (("window", 5), ("random", 5)):
        out, _ = gen.generate_tokens(
            [sentence] * m, numpy_rng(5), UnaSettings(window=radius, replace=replace)
        )
        new = np.array([gen.index[o[0]] for o in out])
        assert not np.any(new == 100)
        if replace == "window":
            assert np.all(np.abs(new - 100) <= radius)
        else:
            counts = np.bincount(new, minlength=200)
            expected = m / 199
            assert counts[100] == 0
            assert np.all(np.abs(np.delete(counts, 100) - expected) <= 5 * math.sqrt(expected))


# --- edge cases ------------------------------------------------------------------------------


def test_edge_cases() -> None:
    gen = UnaGenerator(make_table([3.0, 2.0, 2.0, 1.0], idf=[3.0, 2.0, 2.0, 1.0]))
    stats = UnaStats()
    out = gen.generate(
        ["", "   ", "T000", "t001 t002", "zzz t003", "zzz", "T000 t000"] * 200, seed=0, stats=stats
    )
    rows = [out[i::7] for i in range(7)]
    assert set(rows[0]) == {""} and set(rows[1]) == {""}  # empty in, empty out
    assert "t000" not in set(rows[2])  # a one-term sentence: its term is replaced
    # "t001 t002": equal scores, C = 0: the first changes, the second never
    assert all(o.split()[0] != "t001" and o.split()[1] == "t002" for o in rows[3])
    assert all(o.startswith("zzz ") and o != "zzz t003" for o in rows[4])  # unknown kept
    assert set(rows[5]) == {"zzz"}  # only unknown tokens: left as tokenized
    # a repeated top term: only its first position is forced; equal scores, so C = 0
    assert all(o.split()[0] != "t000" and o.split()[1] == "t000" for o in rows[6])
    assert stats.empty == 400 and stats.unchanged == 200 and stats.unknown_tokens == 400


def test_invalid_parameters_and_tiny_vocabulary() -> None:
    for bad in (
        {"beta": -0.1},
        {"window": 0},
        {"select": "idf"},
        {"replace": "near"},
        {"scores": "x"},
        {"beta": float("nan")},
        {"chunk_size": 0},
    ):
        with pytest.raises(ValueError):
            UnaSettings(**bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least 2 terms"):
        UnaGenerator(make_table([1.0]))


# --- the command -----------------------------------------------------------------------------


def test_command_aligned_and_atomic(tmp_path: Path) -> None:
    table = make_table(SCORES)
    table_path = tmp_path / "table.tsv"
    write_tfidf_table(table, table_path)
    corpus = tmp_path / "corpus.txt"
    lines = ["T010 t020 t030", "", "t150 t199 t010 t150"]
    corpus.write_text("\n".join(lines) + "\n")
    out = tmp_path / "neg.txt"
    parser = argparse.ArgumentParser()
    una_cmd.add_arguments(parser)
    argv = [
        "--corpus",
        str(corpus),
        "--tfidf",
        str(table_path),
        "--output",
        str(out),
        "--seed",
        "9",
    ]
    assert una_cmd.run(parser.parse_args([*argv, "--window", "30"])) == 0
    got = out.read_text().split("\n")
    assert got[-1] == "" and len(got) - 1 == len(lines)
    assert got[:-1] == UnaGenerator(table).generate(lines, seed=9, window=30)
    assert got[1] == ""
    table_path.write_text("rank\tterm\n1\ta\n")
    out.unlink()
    with pytest.raises(ValueError, match="missing column"):
        una_cmd.run(parser.parse_args(argv))
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt", "table.tsv"]
