"""The STS evaluator: Spearman and aggregates against scipy/hand computations, dataset sizes,
and the public all-MiniLM-L6-v2 numbers under the MTEB protocol."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

from negcse.analysis.bootstrap import pair_key, split_keys
from negcse.data.sts import STSData, load_sts
from negcse.encoders.vectors import cosine_rows
from negcse.evaluation.sts import evaluate_sts, score_task

pytestmark = pytest.mark.mirror


def _vector_encoder(table: dict[str, list[float]]):
    def encode(sentences):
        return np.array([table[s] for s in sentences], dtype=np.float32)

    return encode


def test_score_task_matches_scipy_on_known_data() -> None:
    rng = np.random.default_rng(0)
    data = STSData("toy")
    sents = [f"s{i}" for i in range(40)]
    vecs = {s: rng.normal(size=8).tolist() for s in sents}
    pairs_a = [(sents[i], sents[i + 20], float(rng.uniform(0, 5))) for i in range(10)]
    pairs_b = [(sents[i], sents[i + 20], float(rng.uniform(0, 5))) for i in range(10, 20)]
    data.add("a", pairs_a)
    data.add("b", pairs_b)
    got = score_task(data, _vector_encoder(vecs))

    def cos(u, v):
        u, v = np.asarray(u), np.asarray(v)
        return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))

    sims = [cos(vecs[a], vecs[b]) for a, b, _ in pairs_a + pairs_b]
    gold = [g for _, _, g in pairs_a + pairs_b]
    sa = spearmanr(sims[:10], gold[:10]).statistic * 100
    sb = spearmanr(sims[10:], gold[10:]).statistic * 100
    assert got["all"] == pytest.approx(spearmanr(sims, gold).statistic * 100, abs=1e-9)
    assert got["subsets"]["a"] == pytest.approx(sa, abs=1e-9)
    assert got["mean"] == pytest.approx((sa + sb) / 2, abs=1e-9)
    assert got["wmean"] == pytest.approx((sa * 10 + sb * 10) / 20, abs=1e-9)


def test_cosine_rows() -> None:
    a = np.array([[1.0, 0.0], [1.0, 1.0]])
    b = np.array([[0.0, 1.0], [2.0, 2.0]])
    assert cosine_rows(a, b) == pytest.approx([0.0, 1.0])


@pytest.mark.parametrize(
    ("task", "protocol", "n"),
    [
        ("STS12", "senteval", 3108),
        ("STS13", "senteval", 1500),
        ("STS14", "senteval", 3750),
        ("STS15", "senteval", 3000),
        ("STS16", "senteval", 1186),
        ("STSBenchmark", "senteval", 1379),
        ("STSBenchmark-dev", "senteval", 1500),
        ("SICKRelatedness", "senteval", 4927),
        ("SICKRelatedness", "mteb", 9927),
        ("STS16", "mteb", 1186),
    ],
)
def test_sizes_as_published(task: str, protocol: str, n: int) -> None:
    """SentEval's pair counts (METHODS.md), empty gold scores dropped."""
    assert len(load_sts(task, protocol)) == n


def test_senteval_text_is_tokenized_and_lowercased() -> None:
    data = load_sts("STS12", "senteval")
    assert all(s == s.lower() for s in data.sent1[:200])
    raw = load_sts("STS12", "mteb")
    assert any(s != s.lower() for s in raw.sent1[:200])


@pytest.mark.slow
def test_all_minilm_reproduces_mteb_leaderboard(tmp_path: Path) -> None:
    """The public model's MTEB STS scores (model card / leaderboard, cosine Spearman x100)."""
    out = tmp_path / "minilm.json"
    cmd = [
        sys.executable,
        "-m",
        "negcse",
        "evaluate",
        "--only",
        "sts",
        "--model",
        "sentence-transformers/all-MiniLM-L6-v2",
        "--pooler",
        "mean",
        "--sts-protocol",
        "mteb",
        "--sts-out",
        str(out),
        "--batch-size",
        "64",  # on one CPU thread 64 encodes ~15% faster than 256 (benchmarks/base.md, stop 22)
    ]
    subprocess.run(cmd, check=True, capture_output=True)
    result = json.loads(out.read_text())
    published = {
        "STS12": 72.37,
        "STS13": 80.60,
        "STS14": 75.59,
        "STS15": 85.39,
        "STS16": 78.99,
        "STSBenchmark": 82.03,
        "SICKRelatedness": 77.58,
    }
    for task, value in published.items():
        assert result[task] == pytest.approx(value, abs=0.015), task


def test_evaluate_sts_reports_every_task_and_dev() -> None:
    """A bag-of-words encoder: every key present, avg = mean of the 7, dev recorded beside."""
    vocab: dict[str, int] = {}

    def encode(sentences):
        rows = []
        for s in sentences:
            v = np.zeros(4096, dtype=np.float32)
            for w in s.split():
                v[vocab.setdefault(w, len(vocab)) % 4096] += 1
            rows.append(v)
        return np.stack(rows)

    res = evaluate_sts(encode, keep_pairs=True)
    tasks = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness"]
    assert res["avg"] == pytest.approx(np.mean([res[t] for t in tasks]))
    assert 0 < res["stsb_dev"] < 100
    assert all(20 < res[t] < 90 for t in tasks)
    # each test task keeps its pairs (the verdict table's bootstrap): the cosines give its
    # 'all' Spearman back, the gold scores are the data's, the subsets their sizes
    for task in tasks:
        pairs = res["details"][task]["pairs"]
        data = load_sts(task)
        assert pairs["gold"] == data.scores
        assert pairs["subset_sizes"] == [s.stop - s.start for s in data.subsets.values()]
        rho = 100 * spearmanr(pairs["cosine"], pairs["gold"]).statistic
        assert rho == pytest.approx(res[task], abs=1e-9)
        assert split_keys(pairs["key"]) == list(map(pair_key, data.sent1, data.sent2))
    # a pair several tasks hold has one key in all of them: 839 of STS-B's 1,379 test pairs
    # (60.8%) are also in STS12-16
    keys = {t: set(split_keys(res["details"][t]["pairs"]["key"])) for t in tasks}
    stsb = split_keys(res["details"]["STSBenchmark"]["pairs"]["key"])
    years = set().union(*(keys[t] for t in tasks[:5]))
    assert sum(k in years for k in stsb) == 839
    assert "pairs" not in res["details"]["STSBenchmark-dev"]
    json.dumps(res)  # JSON-able as written
    plain = evaluate_sts(encode, tasks=["STS16"], with_dev=False)  # pairs only when asked
    assert "pairs" not in plain["details"]["STS16"] and plain["STS16"] == res["STS16"]
