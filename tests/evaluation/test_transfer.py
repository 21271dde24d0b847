"""SentEval transfer tasks: loaders on the mirror's files, folds, metrics, the batched classifier
against a one-model-at-a-time reference, and end-to-end runs on cheap features."""

from __future__ import annotations

import copy
import os
import shutil
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch
from sklearn.metrics import accuracy_score, f1_score

from negcse.data.sources import ChecksumError
from negcse.data.transfer import TRANSFER_TASKS, TREC_CLASSES, load_transfer, senteval_order
from negcse.evaluation.transfer import (
    INNER_KFOLD_SEED,
    _stratified_folds,
    accuracy100,
    evaluate_transfer,
    f1_100,
)
from negcse.evaluation.transfer_classifier import (
    FitJob,
    LogRegConfig,
    fit_logreg_batch,
    senteval_linear_init,
)

MIRROR = os.environ.get("NEGCSE_MIRROR", "/work/shared/mirror")
DATA = Path(MIRROR) / "data" / "senteval"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="needs the offline mirror")

# Sizes from the mirror's data/README.md ("Sizes verified").
EXPECTED_SIZES = {
    "MR": {"all": 10662},
    "CR": {"all": 3775},
    "SUBJ": {"all": 10000},
    "MPQA": {"all": 10606},
    "SST2": {"train": 67349, "dev": 872, "test": 1821},
    "TREC": {"train": 5452, "test": 500},
    "MRPC": {"train": 4076, "test": 1725},
}


@pytest.mark.parametrize("task", TRANSFER_TASKS)
def test_split_sizes_match_the_mirror_readme(task: str) -> None:
    data = load_transfer(task, MIRROR)
    assert {k: len(v) for k, v in data.splits.items()} == EXPECTED_SIZES[task]


def test_binary_labels_follow_the_files() -> None:
    def lines(name: str) -> int:
        return (DATA / name).read_bytes().count(b"\n")

    for task, pos, neg in [
        ("MR", "MR/rt-polarity.pos", "MR/rt-polarity.neg"),
        ("CR", "CR/custrev.pos", "CR/custrev.neg"),
        ("SUBJ", "SUBJ/subj.objective", "SUBJ/subj.subjective"),  # SentEval: objective = 1
        ("MPQA", "MPQA/mpqa.pos", "MPQA/mpqa.neg"),
    ]:
        split = load_transfer(task, MIRROR).splits["all"]
        assert int(split.labels.sum()) == lines(pos)
        assert int((split.labels == 0).sum()) == lines(neg)
        first_pos = (DATA / pos).read_text("latin-1").splitlines()[0]
        assert split.a[0] == " ".join(first_pos.split())


def test_blank_lines_stay_as_empty_sentences_like_senteval() -> None:
    # SentEval keeps them (read().splitlines()): CR has 4 blank lines, MPQA 3.
    for task, expected in (("CR", 4), ("MPQA", 3)):
        split = load_transfer(task, MIRROR).splits["all"]
        blank = sum(
            ln.strip() == ""
            for f in (DATA / task).iterdir()
            for ln in f.read_text("latin-1").splitlines()
        )
        assert blank == expected
        assert sum(s == "" for s in split.a) == expected


def test_trec_labels_and_latin1_text() -> None:
    data = load_transfer("TREC", MIRROR)
    raw = (DATA / "TREC" / "TREC_10.label").read_text("latin-1").splitlines()
    counts = Counter(line.split(":", 1)[0] for line in raw)
    got = Counter(TREC_CLASSES[i] for i in data.splits["test"].labels)
    assert got == counts
    # train_5500.label has one 0xF0 byte; SentEval decodes latin-1, so it is 'ð'
    assert any("sister\u00f0city" in s for s in data.splits["train"].a)
    assert data.splits["test"].a[0] == " ".join(raw[0].split(":", 1)[1].split(" ", 1)[1].split())


def test_mrpc_pairs_and_sst_labels() -> None:
    mrpc = load_transfer("MRPC", MIRROR).splits["train"]
    second_line = (DATA / "MRPC" / "msr_paraphrase_train.txt").read_text("utf-8").splitlines()[1]
    quality, _, _, s1, s2 = second_line.split("\t")
    expected = (" ".join(s1.split()), " ".join(s2.split()), int(quality))
    assert (mrpc.a[0], mrpc.b[0], int(mrpc.labels[0])) == expected
    sst = load_transfer("SST2", MIRROR).splits
    raw_dev = (DATA / "SST" / "binary" / "sentiment-dev").read_text("utf-8").splitlines()
    assert int(sst["dev"].labels.sum()) == sum(ln.endswith("\t1") for ln in raw_dev)


def test_senteval_order_sorts_by_tokens_then_label_stably() -> None:
    split = load_transfer("CR", MIRROR).splits["all"]
    order = senteval_order(split)
    assert sorted(order.tolist()) == list(range(len(split)))
    keys = [(len(split.a[i].split()), int(split.labels[i]), int(i)) for i in order]
    assert keys == sorted(keys)  # ties keep file order (Python's stable sort)
    mrpc = load_transfer("MRPC", MIRROR).splits["test"]
    o = senteval_order(mrpc)
    k = [(len(mrpc.a[i].split()), len(mrpc.b[i].split()), int(mrpc.labels[i]), int(i)) for i in o]
    assert k == sorted(k)


def test_ten_folds_partition_mr_with_stratification() -> None:
    split = load_transfer("MR", MIRROR).splits["all"]
    y = split.labels[senteval_order(split)]
    folds = _stratified_folds(y, 10, INNER_KFOLD_SEED)
    tests = np.concatenate([te for _, te in folds])
    assert len(folds) == 10 and np.array_equal(np.sort(tests), np.arange(len(y)))
    for train, test in folds:
        assert len(np.intersect1d(train, test)) == 0 and len(train) + len(test) == len(y)
        assert len(test) in (1066, 1067)
        # each class is spread evenly: 5331 per class -> 533 or 534 per fold
        assert all(abs(int((y[test] == c).sum()) - 5331 / 10) < 1 for c in (0, 1))
    assert _stratified_folds(y, 10, INNER_KFOLD_SEED)[3][1].tolist() == folds[3][1].tolist()
    assert _stratified_folds(y, 10, 7)[3][1].tolist() != folds[3][1].tolist()


def test_accuracy_and_f1_match_sklearn() -> None:
    rng = np.random.default_rng(3)
    gold = rng.integers(0, 2, 501)
    pred = np.where(rng.random(501) < 0.8, gold, 1 - gold)
    assert accuracy100(pred, gold) == round(100 * accuracy_score(gold, pred), 2)
    assert f1_100(pred, gold) == round(100 * f1_score(gold, pred), 2)
    assert accuracy100(np.array([1, 0, 1, 1]), np.array([1, 1, 1, 0])) == 50.0
    # F1 of class 1: tp=2, fp=1, fn=1 -> 2/3
    assert f1_100(np.array([1, 0, 1, 1]), np.array([1, 1, 1, 0])) == 66.67


def test_linear_init_is_nn_linear_after_manual_seed() -> None:
    before = torch.get_rng_state()
    w, b = senteval_linear_init(7, 3, 1111)
    assert torch.equal(torch.get_rng_state(), before)  # global stream untouched
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(1111)
        layer = torch.nn.Linear(7, 3)
    assert torch.equal(w, layer.weight) and torch.equal(b, layer.bias)


def _reference_fit(x, y, train_rows, dev_rows, l2, nclasses, cfg):
    """SentEval's fit for one model, written plainly: nn.Linear, torch Adam, numpy RandomState."""
    rs = np.random.RandomState(cfg.seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        model = torch.nn.Linear(x.shape[1], nclasses)
    opt = torch.optim.Adam(model.parameters(), weight_decay=l2)
    if dev_rows is None:
        perm = rs.permutation(len(train_rows))
        cut = int(cfg.validation_split * len(train_rows))
        dev_rows, train_rows = train_rows[perm[:cut]], train_rows[perm[cut:]]
    xt, yt = torch.from_numpy(x[train_rows]), torch.from_numpy(y[train_rows])
    xd, yd = torch.from_numpy(x[dev_rows]), torch.from_numpy(y[dev_rows])
    nepoch, best, misses, stop, best_model = 0, -1.0, 0, False, None
    while not stop and nepoch <= cfg.max_epoch:
        for _ in range(cfg.epoch_size):
            perm = rs.permutation(len(xt))
            for i in range(0, len(xt), cfg.batch_size):
                idx = torch.from_numpy(perm[i : i + cfg.batch_size])
                loss = torch.nn.functional.cross_entropy(model(xt[idx]), yt[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
        nepoch += cfg.epoch_size
        with torch.no_grad():
            acc = (model(xd).argmax(1) == yd).sum().item() / len(yd)
        if acc > best:
            best, best_model = acc, copy.deepcopy(model)
        else:
            stop = misses >= cfg.tenacity
            misses += 1
    return best_model, best, nepoch


def test_batched_fit_equals_one_model_at_a_time() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(650, 12)).astype(np.float32)
    y = ((x[:, 0] + rng.normal(size=650) > 0).astype(np.int64) + (x[:, 1] > 1)).astype(np.int64)
    cfg = LogRegConfig(max_epoch=40)
    penalties = (1e-5, 1e-2, 0.5)
    jobs = [  # unequal sizes, so jobs run out of batches at different steps
        FitJob(np.arange(0, 450), np.arange(450, 560), penalties),
        FitJob(np.arange(90, 473), np.arange(473, 650), penalties),
        FitJob(np.arange(100, 650), None, penalties),  # SentEval's validation_split
    ]
    res = fit_logreg_batch(x, y, jobs, 3, cfg)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny ops: threads only add overhead on a shared machine
    try:
        _compare_with_reference(x, y, jobs, res, cfg)
    finally:
        torch.set_num_threads(threads)


def _compare_with_reference(x, y, jobs, res, cfg) -> None:
    for j, job in enumerate(jobs):
        for r, l2 in enumerate(job.penalties):
            model, best, nepoch = _reference_fit(x, y, job.train_rows, job.dev_rows, l2, 3, cfg)
            assert res.dev_accuracy[j, r] == pytest.approx(best, abs=1e-12)
            assert res.passes[j, r] == nepoch
            np.testing.assert_allclose(res.weight[j, r], model.weight.detach(), atol=1e-6)
            np.testing.assert_allclose(res.bias[j, r], model.bias.detach(), atol=1e-6)
            pred = model(torch.from_numpy(x)).argmax(1).numpy()
            assert np.array_equal(res.predict(x, j, r), pred)


def bow_encode(sentences, dim: int = 256) -> np.ndarray:
    """Hashed bag of words through a fixed random projection: cheap, deterministic features."""
    proj = np.random.default_rng(0).normal(size=(4096, dim)).astype(np.float32)
    out = np.zeros((len(sentences), dim), np.float32)
    for i, s in enumerate(sentences):
        ids = [zlib.crc32(w.lower().encode()) % 4096 for w in s.split()]
        if ids:
            out[i] = proj[ids].mean(0)
    return out


def test_end_to_end_trec_on_bag_of_words() -> None:
    res = evaluate_transfer(bow_encode, tasks=["TREC"], mirror=MIRROR)
    det = res["details"]["TREC"]
    majority = (
        100 * max(Counter(load_transfer("TREC", MIRROR).splits["test"].labels).values()) / 500
    )
    assert res["TREC"] > majority + 25  # ~23% majority; bag of words gets ~71
    assert res["avg"] == res["TREC"]
    assert det["n"] == {"train": 5452, "test": 500} and sum(det["fold_sizes"]) == 5452
    assert det["penalty"] in det["penalties"] and det["devacc"] == max(det["cv_scores"])


def test_reproducible_and_seed_dependent() -> None:
    cfg = LogRegConfig(max_epoch=8)  # short training keeps this fast; the protocol is unchanged
    run = [evaluate_transfer(bow_encode, ["TREC"], MIRROR, config=cfg) for _ in range(2)]
    assert run[0]["TREC"] == run[1]["TREC"]
    assert run[0]["details"]["TREC"]["cv_scores"] == run[1]["details"]["TREC"]["cv_scores"]
    other = evaluate_transfer(bow_encode, ["TREC"], MIRROR, seed=7, config=cfg)
    assert other["details"]["TREC"]["cv_scores"] != run[0]["details"]["TREC"]["cv_scores"]


def test_changed_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "data" / "senteval" / "TREC"
    shutil.copytree(DATA / "TREC", target)
    with open(target / "TREC_10.label", "a", encoding="latin-1") as fh:
        fh.write("NUM:count How many tests are there ?\n")
    with pytest.raises(ChecksumError, match=r"TREC_10\.label"):
        load_transfer("TREC", tmp_path)


#: one task per protocol: 10-fold nested CV (CR; MR, SUBJ and MPQA take the same path at ~3x
#: the CPU each, and their files are checked above), train/dev/test (SST2), CV on train then
#: test (TREC) and sentence pairs (MRPC)
PROTOCOLS = ["CR", "SST2", "TREC", "MRPC"]


@pytest.mark.slow
def test_every_protocol_end_to_end_on_bag_of_words() -> None:
    res = evaluate_transfer(bow_encode, PROTOCOLS, mirror=MIRROR)
    assert set(PROTOCOLS) <= res.keys() and "MRPC_f1" in res
    assert res["avg"] == round(float(np.mean([res[t] for t in PROTOCOLS])), 2)
    det = res["details"]["CR"]
    assert len(det["folds"]) == 10
    assert sum(f["n_test"] for f in det["folds"]) == EXPECTED_SIZES["CR"]["all"]
    labels = load_transfer("CR", MIRROR).splits["all"].labels
    assert res["CR"] > 100 * max(labels.mean(), 1 - labels.mean()) + 2  # the majority class
    assert res["SST2"] > 55 and res["MRPC"] > 66.5  # chance-level predictors: 50 / 66.5


@pytest.mark.slow
def test_sklearn_classifier_runs_senteval_grid() -> None:
    res = evaluate_transfer(bow_encode, ["MRPC"], MIRROR, classifier="sklearn", kfold=3)
    det = res["details"]["MRPC"]
    assert det["penalties"] == [2.0**t for t in range(-1, 6)]  # SentEval's C grid for k-fold
    assert len(det["fold_sizes"]) == 3 and det["penalty"] in det["penalties"]
    assert res["MRPC"] >= 66.5 and 0 < res["MRPC_f1"] <= 100


def _accuracy(bits: str) -> float:
    return 100.0 * bits.count("1") / len(bits)


def test_each_test_example_is_recorded_in_fold_order() -> None:
    """details.<task>.test: one 0/1 per tested example (CR: all rows, with their outer fold;
    TREC: the test split) that gives back every accuracy; the folds do not depend on the
    encoder, so two models' records pair example by example."""
    cfg = LogRegConfig(max_epoch=4)
    res = evaluate_transfer(bow_encode, ["CR", "TREC"], MIRROR, kfold=3, config=cfg)
    cr, trec = res["details"]["CR"]["test"], res["details"]["TREC"]["test"]
    assert set(trec) == {"correct"} and len(trec["correct"]) == 500
    assert round(_accuracy(trec["correct"]), 2) == res["TREC"]
    assert len(cr["correct"]) == len(cr["fold"]) == EXPECTED_SIZES["CR"]["all"]
    folds = res["details"]["CR"]["folds"]
    for f, fold in enumerate(folds):
        bits = "".join(c for c, k in zip(cr["correct"], cr["fold"], strict=True) if k == str(f))
        assert len(bits) == fold["n_test"] and round(_accuracy(bits), 2) == fold["acc"]
    # the senteval order and seed 1111 fix the folds: the same for another encoder
    other = evaluate_transfer(lambda s: bow_encode(s)[:, ::-1] * 2.0, ["CR"], MIRROR, kfold=3,
                              config=cfg)  # fmt: skip
    assert other["details"]["CR"]["test"]["fold"] == cr["fold"]
    assert other["details"]["CR"]["test"]["correct"] != cr["correct"]
