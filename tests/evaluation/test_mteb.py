"""MTEB through the pinned mteb library: our wrapper on mteb's own mock tasks, MAP/MRR@10 by
hand on tiny rankings, offline failure on missing data, the published numbers and the table."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from datasets import Dataset
from mteb.abstasks.retrieval import AbsTaskRetrieval
from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData
from mteb.abstasks.task_metadata import TaskMetadata
from mteb.mocks import MockClassificationTask, MockRerankingTask
from mteb.models.models_protocols import EncoderProtocol
from sklearn.linear_model import LogisticRegression

from negcse.data.mteb_tasks import CLASSIFICATION, GROUPS, RERANKING
from negcse.evaluation.mteb_runner import (
    MtebDataMissing,
    MtebModel,
    get_task,
    mteb_key,
    run_mteb,
)

REPO = Path(__file__).resolve().parents[2]

PAPERS_DIR = Path(os.environ.get("NEGCSE_PAPERS", "/work/shared/papers"))
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
# mteb rounds its scores to 5 decimals: x100, our numbers carry 3
ROUNDING = 5e-4


@pytest.fixture(scope="module")
def minilm(mirror: Path) -> MtebModel:
    return MtebModel.load(MINILM, "mean", mirror=mirror, batch_size=16)


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    return a @ b.T


def average_precision(relevance_in_rank_order: Sequence[int]) -> float:
    """AP from its definition: mean over relevant items of precision at their rank."""
    hits, total = 0, 0.0
    for rank, rel in enumerate(relevance_in_rank_order, start=1):
        if rel:
            hits += 1
            total += hits / rank
    return total / hits


def reciprocal_rank_at_10(relevance_in_rank_order: Sequence[int]) -> float:
    for rank, rel in enumerate(relevance_in_rank_order[:10], start=1):
        if rel:
            return 1.0 / rank
    return 0.0


# -- the wrapper on mteb's own mock tasks -------------------------------------------------------


@pytest.mark.mirror
def test_wrapper_is_an_mteb_encoder(minilm: MtebModel) -> None:
    assert isinstance(minilm, EncoderProtocol)
    meta = minilm.mteb_model_meta
    assert meta.name == "negcse/sentence-transformers__all-MiniLM-L6-v2"
    assert meta.similarity_fn_name.value == "cosine"
    assert meta.embed_dim == 384


@pytest.mark.mirror
def test_mock_reranking_task_gives_hand_map_and_mrr(minilm: MtebModel, tmp_path: Path) -> None:
    out = tmp_path / "rerank.json"
    result = run_mteb(
        MINILM,
        "mean",
        [MockRerankingTask()],
        out,
        group="reranking",
        model=minilm,
        tags={"method": "m", "seed": "1"},
    )
    assert json.loads(out.read_text()) == result
    assert result["metric_keys"] == {
        "MockRerankingTask": {"map": "map_at_1000", "mrr_at_10": "mrr_at_10"}
    }
    # By hand: the same texts mteb builds (title + " " + text for documents), our encoder,
    # cosine, each query's candidate list ranked, AP and RR@10 from their definitions.
    split = MockRerankingTask()
    split.load_data()
    data = split.dataset["default"]["test"]
    docs = {d["id"]: f"{d['title']} {d['text']}".strip() for d in data["corpus"]}
    aps, rrs = [], []
    for query in data["queries"]:
        cands = data["top_ranked"][query["id"]]
        q = minilm.model.encode([query["text"]])
        d = minilm.model.encode([docs[c] for c in cands])
        order = np.argsort(-cosine(q, d)[0])
        rels = [data["relevant_docs"][query["id"]][cands[i]] for i in order]
        aps.append(average_precision(rels))
        rrs.append(reciprocal_rank_at_10(rels))
    scores = result["MockRerankingTask"]
    assert scores["map"] == pytest.approx(100 * np.mean(aps), abs=ROUNDING)
    assert scores["mrr_at_10"] == pytest.approx(100 * np.mean(rrs), abs=ROUNDING)
    assert result["avg"] == scores


@pytest.mark.mirror
def test_the_mteb_evaluation_uses_the_loaded_embedder(minilm: MtebModel) -> None:
    """`negcse evaluate --only mteb`: the run's embedder, no second load, no model/pooler keys
    (the command writes them first, as for every evaluation)."""
    from negcse.encoders.vectors import SentenceCache
    from negcse.evaluation.mteb import Mteb

    settings = {"model": MINILM, "pooler": "mean", "group": "classification", "batch_size": 16}
    settings.update(tasks=[MockClassificationTask()], mirror=None, tags={})
    got = Mteb().run(SentenceCache(minilm.model.encode, minilm.model), settings)
    direct = run_mteb(
        MINILM, "mean", [MockClassificationTask()], None, group="classification", model=minilm
    )
    assert "model" not in got and "pooler" not in got
    assert got == {k: v for k, v in direct.items() if k not in ("model", "pooler")}


@pytest.mark.mirror
def test_the_mteb_job_writes_mtebs_own_layout_read_by_its_loader(
    minilm: MtebModel, tmp_path: Path
) -> None:
    """`negcse evaluate --only mteb --mteb-results DIR` (the workflow's MTEB job): mteb's own
    result files, under the run's model name and its weights' revision, read back by mteb's
    results loader (ResultCache.load_results) with the scores of our JSON."""
    import mteb

    from negcse.encoders.vectors import SentenceCache
    from negcse.evaluation.mteb import Mteb

    folder = tmp_path / "model"  # the revision: its weights' sha256
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"weights")
    digest = "9a129038d9a0"  # the first 12 hex digits of sha256(b"weights") (sha256sum)
    results = tmp_path / "seed1.mteb"
    tags = {"method": "sncse", "backbone": "bert-base-uncased", "seed": "1"}
    settings = {"model": str(folder), "pooler": "mean", "group": "reranking", "batch_size": 16}
    settings.update(tasks=[MockRerankingTask()], mirror=None, tags=tags, results=str(results))
    Mteb().check(settings)
    ours = Mteb().run(SentenceCache(minilm.model.encode, minilm.model), settings)
    name = "negcse/sncse-bert-base-uncased-seed1"
    task_file = results / "results" / "negcse__sncse-bert-base-uncased-seed1" / digest
    assert (task_file / "MockRerankingTask.json").is_file()
    assert (task_file / "model_meta.json").is_file()
    loaded = mteb.ResultCache(results).load_results(models=[name], include_remote=False)
    (model,) = loaded.model_results
    assert (model.model_name, model.model_revision) == (name, digest)
    (task,) = model.task_results
    (scores,) = task.scores["test"]
    assert task.task_name == "MockRerankingTask"
    assert 100 * scores["map_at_1000"] == pytest.approx(ours["MockRerankingTask"]["map"])
    assert 100 * scores["mrr_at_10"] == pytest.approx(ours["MockRerankingTask"]["mrr_at_10"])


@pytest.mark.mirror
def test_mock_classification_task_equals_logistic_regression(minilm: MtebModel) -> None:
    result = run_mteb(
        MINILM, "mean", [MockClassificationTask()], None, group="classification", model=minilm
    )
    task = MockClassificationTask()
    task.load_data()
    train, test = task.dataset["train"], task.dataset["test"]
    # mteb's protocol on this task: every training example (one per label), logistic
    # regression (max_iter=100, random_state = task seed) on the embeddings, test accuracy.
    clf = LogisticRegression(max_iter=100, random_state=task.seed)
    clf.fit(minilm.model.encode(train["text"]), train["label"])
    predicted = clf.predict(minilm.model.encode(test["text"]))
    expected = 100 * float(np.mean(predicted == np.asarray(test["label"])))
    assert result["MockClassificationTask"] == {"accuracy": pytest.approx(expected, abs=ROUNDING)}
    assert result["avg"]["accuracy"] == pytest.approx(expected, abs=ROUNDING)


# -- MAP and MRR@10 by hand on tiny rankings ---------------------------------------------------


class VectorTable:
    """Stands in for the neural encoder where the similarities must be chosen by hand: each
    text has a fixed unit vector, so every cosine is a number written in the test."""

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors
        self.calls: list[int] = []

    def encode(
        self, sentences: Sequence[str], batch_size: int = 128, progress: bool = False
    ) -> np.ndarray:
        self.calls.append(batch_size)
        return np.stack([self.vectors[s] for s in sentences]).astype(np.float32)


def _metadata(name: str, main_score: str) -> TaskMetadata:
    return TaskMetadata(
        name=name,
        description="a hand-made ranking for the negcse tests",
        reference="https://github.com/embeddings-benchmark/mteb",
        dataset={"path": "NA", "revision": "NA"},
        type="Reranking",
        category="t2t",
        modalities=["text"],
        eval_splits=["test"],
        eval_langs=["eng-Latn"],
        main_score=main_score,
        date=("2024-01-01", "2024-01-01"),
        dialect=["Written"],
        domains=[],
        task_subtypes=[],
        license="cc-by-4.0",
        annotations_creators="derived",
        sample_creation="found",
        bibtex_citation="",
    )


def ranking_task(
    name: str,
    main_score: str,
    candidates: dict[str, list[tuple[str, float, int]]],
    query_vectors: dict[str, np.ndarray],
    base: type[AbsTaskRetrieval] | None = None,
) -> tuple[AbsTaskRetrieval, VectorTable]:
    """A reranking task whose query q's candidate d has cosine exactly s (given) with q.

    ``base``: a real mteb task class whose metadata and scoring are kept, data replaced."""
    dim = max(len(v) for v in query_vectors.values())
    vectors = dict(query_vectors)
    corpus, qrels, top = [], {}, {}
    for qid, cands in candidates.items():
        qrels[qid], top[qid] = {}, []
        for doc, score, rel in cands:
            if doc not in vectors:  # a document scored against its (first) query only
                q = query_vectors[qid]
                other = np.roll(q, 1)  # orthogonal to q (q is a basis vector)
                vectors[doc] = score * q + math.sqrt(1 - score**2) * other
                corpus.append({"id": doc, "text": doc})
            qrels[qid][doc] = rel
            top[qid].append(doc)
    assert all(len(v) == dim for v in vectors.values())

    class Ranking(base or AbsTaskRetrieval):  # type: ignore[misc]
        metadata = base.metadata if base else _metadata(name, main_score)

        def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
            split = RetrievalSplitData(
                queries=Dataset.from_list([{"id": q, "text": q} for q in candidates]),
                corpus=Dataset.from_list(corpus),
                relevant_docs=qrels,
                top_ranked=top,
            )
            self.dataset = {"default": {"test": split}}
            self.data_loaded = True

    return Ranking(), VectorTable(vectors)


def basis(i: int, dim: int = 3) -> np.ndarray:
    v = np.zeros(dim)
    v[i] = 1.0
    return v


def test_map_and_mrr_at_10_against_hand_computation() -> None:
    # Candidates listed in descending cosine; relevance 1/0.
    # q1: 12 candidates, relevant at ranks 2, 5 and 12.
    # q2: 12 candidates, the only relevant one at rank 11 (beyond MRR's cut-off of 10).
    # q3: 4 candidates, relevant at ranks 1 and 3.
    rel = {"q1": [0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1], "q2": [0] * 10 + [1, 0], "q3": [1, 0, 1, 0]}
    candidates = {
        q: [(f"{q} doc {k}", 0.95 - 0.07 * k, r) for k, r in enumerate(rels)]
        for q, rels in rel.items()
    }
    # shuffle the candidate order mteb receives, so the ranking must come from the scores
    rng = np.random.default_rng(0)
    for q in candidates:
        candidates[q] = [candidates[q][i] for i in rng.permutation(len(candidates[q]))]
    task, table = ranking_task(
        "TinyRanking", "map_at_1000", candidates, {"q1": basis(0), "q2": basis(1), "q3": basis(2)}
    )
    model = MtebModel(table, name="negcse/vector-table")
    result = run_mteb(
        "vector-table", "none", [task], None, group="reranking", model=model, batch_size=7
    )

    ap_q1 = (1 / 2 + 2 / 5 + 3 / 12) / 3  # precision at each relevant rank, over 3 relevant
    ap_q2 = (1 / 11) / 1
    ap_q3 = (1 / 1 + 2 / 3) / 2
    rr_q1, rr_q2, rr_q3 = 1 / 2, 0.0, 1 / 1  # q2's first relevant is at rank 11 > 10
    assert result["TinyRanking"]["map"] == pytest.approx(
        100 * (ap_q1 + ap_q2 + ap_q3) / 3, abs=ROUNDING
    )
    assert result["TinyRanking"]["mrr_at_10"] == pytest.approx(
        100 * (rr_q1 + rr_q2 + rr_q3) / 3, abs=ROUNDING
    )
    assert result["TinyRanking"]["map"] == pytest.approx(43.586, abs=ROUNDING)
    assert result["TinyRanking"]["mrr_at_10"] == pytest.approx(50.0)
    # the batch size given to mteb reaches the wrapped encoder through mteb's encode kwargs
    assert table.calls and set(table.calls) == {7}


def test_subqueries_are_merged_by_their_maximum() -> None:
    # mteb's MindSmallReranking (its metadata and sub-query scoring) on hand-made data: user
    # u1 is two sub-queries u1_0 = e0 and u1_1 = e1; each candidate is [cos a, sin a, 0], so
    # its score is max(cos a, sin a) over the sub-queries.
    angles = {"d1": 10, "d2": 75, "d3": 45, "d4": 30}
    relevant = {"d1": 0, "d2": 1, "d3": 0, "d4": 1}
    vectors = {"u1_0": basis(0), "u1_1": basis(1)}
    for d, a in angles.items():
        r = math.radians(a)
        vectors[d] = np.array([math.cos(r), math.sin(r), 0.0])
    cands = [(d, 0.0, relevant[d]) for d in angles]
    mind = type(get_task(RERANKING[1]))
    task, _ = ranking_task(
        "MindSmallReranking",
        "",
        {"u1_0": cands, "u1_1": cands},
        {"u1_0": basis(0), "u1_1": basis(1)},
        base=mind,
    )
    model = MtebModel(VectorTable(vectors), name="negcse/vector-table")
    result = run_mteb("vector-table", "none", [task], None, group="reranking", model=model)
    assert result["metric_keys"]["MindSmallReranking"] == {
        "map": "max_over_subqueries_map_at_1000",
        "mrr_at_10": "max_over_subqueries_mrr_at_10",
    }
    # max scores: d1 .985, d2 .966, d4 .866, d3 .707 -> relevant at ranks 2 and 3
    # (u1_0 alone would rank d1, d4, d3, d2: relevant at 2 and 4, AP (1/2 + 2/4) / 2)
    assert result["MindSmallReranking"]["map"] == pytest.approx(
        100 * (1 / 2 + 2 / 3) / 2, abs=ROUNDING
    )
    assert result["MindSmallReranking"]["mrr_at_10"] == pytest.approx(100 * 1 / 2, abs=ROUNDING)


# -- the papers' tasks and offline behaviour ---------------------------------------------------


def test_paper_tasks_resolve_in_the_pinned_mteb() -> None:
    assert [s.name for s in RERANKING] == [
        "AskUbuntuDupQuestions",
        "MindSmallReranking",
        "SciDocsRR",
        "StackOverflowDupQuestions",
    ]
    text = (PAPERS_DIR / "san-hince.txt").read_text(encoding="utf-8")
    listed = re.search(r"ten diverse tasks: (.*?)\. We report", text, re.S)
    assert listed is not None
    # the paper's short names, in its order
    short = re.sub(r"\s*\([^)]*\)", "", listed.group(1)).replace(" and ", ", ").split(", ")
    assert len(short) == len(CLASSIFICATION) == 10
    for name, spec in zip(short, CLASSIFICATION, strict=True):
        assert spec.name.startswith(name.replace("Tox", "Toxic").replace("Classification", ""))
    for group, specs in GROUPS.items():
        for spec in specs:
            task = get_task(spec)
            assert task.metadata.type.lower() == group
            assert spec.subset in task.metadata.hf_subsets
            assert list(task.hf_subsets) == [spec.subset]
            assert list(task.eval_splits) == ["test"]
            if group == "reranking":
                assert {10, 1000} <= set(task.k_values)
    mind = get_task(RERANKING[1])
    assert mteb_key(mind, "map") == "max_over_subqueries_map_at_1000"
    assert mteb_key(get_task(RERANKING[0]), "mrr_at_10") == "mrr_at_10"


@pytest.fixture
def empty_hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import datasets.config
    import huggingface_hub.constants

    cache = tmp_path / "hf"
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache / "hub"))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache / "datasets")
    return cache


def test_missing_dataset_fails_fast_naming_task(empty_hf_cache: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    start = time.monotonic()
    with pytest.raises(MtebDataMissing) as err:
        # the model path does not exist: data are checked before any model is loaded
        run_mteb("no/such-model", "mean", ["SciDocsRR"], out, group="reranking")
    assert time.monotonic() - start < 60
    message = str(err.value)
    assert "MTEB task SciDocsRR" in message and "mteb/SciDocsRR" in message
    assert "networked machine" in message and "fetch-mteb --group reranking" in message
    assert not out.exists()
    assert os.environ.get("HF_HUB_OFFLINE") == "1"  # conftest's setting, restored


@pytest.mark.slow
def test_cli_fails_with_a_clear_message_without_data(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
    env.pop("HF_DATASETS_CACHE", None)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "negcse",
            "evaluate",
            "--only",
            "mteb",
            "--model",
            MINILM,
            "--pooler",
            "mean",
            "--mteb-group",
            "classification",
            "--mteb-tasks",
            "Banking77Classification",
            "--mteb-out",
            str(out),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard (CI runs this part at a lower priority)
    )
    assert proc.returncode != 0
    assert "error: MTEB task Banking77Classification" in proc.stderr
    assert "not in the local Hugging Face cache" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_unknown_task_and_wrong_group_are_refused() -> None:
    with pytest.raises(ValueError, match="not reranking tasks: STS12"):
        run_mteb("m", "mean", ["STS12"], None, group="reranking")
    with pytest.raises(ValueError, match="is a reranking task, not classification"):
        run_mteb("m", "mean", [MockRerankingTask()], None, group="classification")
