"""The paired bootstrap of the transfer average (negcse.analysis.transfer_bootstrap) and its
verdict table: a hand-computed toy, the known cases (identical models; a model right on every
example the other gets right and on a fixed share more), pairing, and the files as `negcse
evaluate` writes them (negcse.evaluation.transfer.record_tested)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from negcse.analysis.bootstrap import resampled_variance
from negcse.analysis.transfer_bootstrap import (
    FoldedExamples,
    TransferDraws,
    read_record,
    resampled_accuracy,
    resampled_average,
    task_accuracy,
)
from negcse.cli import main
from negcse.evaluation.transfer import record_tested
from negcse.tables.build import Options, TableInputError
from negcse.tables.verdicts import verdict_frame


def test_toy_by_hand() -> None:
    """Task A: five examples, folds 0 1 0 1 1 (fold 0 = examples 0, 2; fold 1 = 1, 3, 4), so a
    resample's positions 0-1 redraw fold 0 and 2-4 fold 1 (fold order: examples 0 2 1 3 4).
    Task B: four examples, one test split.

    Model a on A: right on 0, 3, 4. Full data: fold 0 (0, 2) 1/2, fold 1 (1, 3, 4) 2/3:
    A = (50 + 66.67) / 2 = 58.33. Resample [0, 0 | 2, 2, 4] draws examples 0 0 | 1 1 4: fold 0
    2/2, fold 1 1/3: (100 + 33.33) / 2 = 66.67. Model a on B: right on 0, 2, 3; resample
    [1, 1, 3, 0]: 0 0 1 1 = 50. Transfer average = (66.67 + 50) / 2 = 58.33.
    """
    a_task = FoldedExamples(np.array([0, 1, 0, 1, 1]))
    b_task = FoldedExamples(np.zeros(4, dtype=np.int64))
    assert a_task.order.tolist() == [0, 2, 1, 3, 4] and a_task.sizes == (2, 3)
    correct = {"A": np.array([1, 0, 0, 1, 1], bool), "B": np.array([1, 0, 1, 1], bool)}
    assert task_accuracy(correct["A"], a_task) == pytest.approx((50 + 200 / 3) / 2)
    assert task_accuracy(correct["B"], b_task) == pytest.approx(75.0)
    draws = TransferDraws.from_indices(
        {"A": a_task, "B": b_task},
        {"A": np.array([[0, 0, 2, 2, 4]]), "B": np.array([[1, 1, 3, 0]])},
    )
    assert resampled_accuracy(correct["A"], draws, "A") == pytest.approx([200 / 3], abs=1e-4)
    assert resampled_accuracy(correct["B"], draws, "B") == pytest.approx([50.0], abs=1e-4)
    assert resampled_average(correct, draws) == pytest.approx([(200 / 3 + 50) / 2], abs=1e-4)


def test_record_round_trip_and_draws_stay_in_their_fold() -> None:
    correct = np.array([1, 0, 1, 1, 0, 0, 1], bool)
    fold = np.array([2, 0, 1, 0, 2, 1, 0])
    record = record_tested(correct, fold)
    assert record == {"correct": "1011001", "fold": "2010210"}
    back, tested = read_record(record)
    assert back.tolist() == correct.tolist() and tested.fold.tolist() == fold.tolist()
    draws = TransferDraws.draw({"t": tested}, resamples=50, seed=1)
    # every resample keeps each fold's size: counts per fold (fold order 1 3 6 | 2 5 | 0 4)
    counts = draws.counts["t"]
    assert (counts[:3].sum(0) == 3).all() and (counts[3:5].sum(0) == 2).all()
    assert (counts[5:].sum(0) == 2).all()
    for bad, message in (
        ({"correct": "10x"}, "string of 0 and 1"),
        ({"correct": "101", "fold": "01"}, "2 folds for 3 examples"),
        ({"correct": "101", "fold": "022"}, "skips a fold"),
    ):
        with pytest.raises(ValueError, match=message):
            read_record(bad)


def _tested(sizes: tuple[int, ...]) -> FoldedExamples:
    return FoldedExamples(np.repeat(np.arange(len(sizes)), sizes))


def _variance(a: list[np.ndarray], b: list[np.ndarray], tested: FoldedExamples) -> float:
    """The test set's share of the variance of A's seed mean minus B's."""
    draws = TransferDraws.draw({"t": tested}, resamples=1000, seed=0)
    per_seed = [np.stack([resampled_average({"t": c}, draws) for c in m]) for m in (a, b)]
    return resampled_variance(*per_seed)


def test_identical_models_have_no_test_set_variance() -> None:
    tested = _tested((80, 80, 80))
    same = np.random.default_rng(0).random(240) < 0.7
    assert _variance([same], [same.copy()], tested) == 0.0


def test_a_model_right_on_a_fixed_share_more_varies_little_paired() -> None:
    """B is right on 70% of 400 examples; A on the same ones and on 10 more (2.5 points).
    Paired, the difference's sd is about sqrt(10) / 400 x 100 = 0.8 points (a resample holds
    ~10 of the 10 extra examples, Poisson-like); drawn independently for each model the two
    accuracies' noise (sd ~2.3 points each) would give ~3.2."""
    tested = _tested((200, 200))
    rng = np.random.default_rng(1)
    b = rng.random(400) < 0.7
    a = b.copy()
    a[rng.choice(np.flatnonzero(~b), 10, replace=False)] = True
    assert task_accuracy(a, tested) - task_accuracy(b, tested) == pytest.approx(2.5)
    assert 0.5 < np.sqrt(_variance([a], [b], tested)) < 1.1


# The verdict table on transfer evaluation files.

FOLDS = {"CR": (30, 30, 30), "TREC": (60,)}  # CR cross-validated, TREC one test split
#: 1,000 examples a task: the test set's floor (about 1.5 points here) below OssCSE's +2.18
FULL = {t: (100,) * 10 if t in ("MR", "CR", "SUBJ", "MPQA") else (1000,) for t in
        ("MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC")}  # fmt: skip


def _write(tmp: Path, method: str, seed: int, share: float, backbone: str = "tiny",
           folds: dict[str, tuple[int, ...]] = FOLDS) -> str:  # fmt: skip
    """A transfer evaluation whose first ``share`` of each fold is right (the rest wrong), with
    accuracies as SentEval rounds them; seeds move the share by a point."""
    share = share + 0.01 * (seed - 2)
    details, accs = {}, []
    for task, sizes in folds.items():
        fold = np.repeat(np.arange(len(sizes)), sizes)
        correct = np.concatenate([np.arange(n) < round(share * n) for n in sizes])
        fold_accs = [round(100 * float(np.mean(correct[fold == f])), 2) for f in range(len(sizes))]
        acc = round(float(np.mean(fold_accs)), 2)
        accs.append(acc)
        details[task] = {"acc": acc, "kfold": len(sizes) if len(sizes) > 1 else None,
                         "test": record_tested(correct, fold if len(sizes) > 1 else None)}  # fmt: skip
    result = {"method": method, "backbone": backbone, "seed": str(seed),
              **{t: d["acc"] for t, d in details.items()},
              "avg": round(float(np.mean(accs)), 2), "details": details}  # fmt: skip
    path = tmp / f"{method}-{backbone}-{seed}.json"
    path.write_text(json.dumps(result))
    return str(path)


def test_transfer_claims_come_from_the_papers_transfer_tables(tmp_path: Path) -> None:
    """OssCSE Table 5 (RoBERTa-base): 87.02 vs SimCSE 84.84 over the seven tasks, the paper's
    comparison; over CR and TREC in 5 folds a reduced protocol: a direction check only."""
    files = []
    for seed in (1, 2, 3):
        files += [_write(tmp_path, "simcse", seed, 0.6, "roberta-base", FULL),
                  _write(tmp_path, "osscse", seed, 0.9, "roberta-base", FULL),
                  _write(tmp_path, "simcse", seed, 0.6), _write(tmp_path, "osscse", seed, 0.9)]  # fmt: skip
    frame = verdict_frame(files, Options())
    rows = {r["backbone"]: r for r in frame.to_dict("records") if r["measure"] == "transfer"}
    full, reduced = rows["roberta-base"], rows["tiny"]
    assert full["vs_baseline"] == pytest.approx(30.0) and full["vs_baseline_low"] > 20
    assert full["paper_delta"] == pytest.approx(2.18) and full["verdict_raw"] == "reproduced"
    assert full["paper"] == pytest.approx(87.02) and full["test_set"] == "yes"
    assert 0 < full["floor"] < 2.18
    assert reduced["verdict_raw"] == "direction check: as claimed"
    assert reduced["note"] == ("backbone tiny is not in the paper; reduced transfer protocol "
                               "(CR, TREC; 3-fold)")  # fmt: skip


def test_the_command_reads_transfer_files_beside_sts_ones(tmp_path: Path) -> None:
    from test_verdicts import _write as sts_file

    files = [_write(tmp_path, m, s, share) for s in (1, 2, 3)
             for m, share in (("simcse", 0.6), ("osscse", 0.9))]  # fmt: skip
    (tmp_path / "sts").mkdir()
    files += [sts_file(tmp_path / "sts", m, s, noise, "tiny") for s in (1, 2, 3)
              for m, noise in (("simcse", 1.5), ("osscse", 3.0))]  # fmt: skip
    out = tmp_path / "verdicts.csv"
    assert main(["table", "verdicts", "--evals", *files, "--csv", str(out)]) == 0
    rows = {r["measure"]: r for r in csv.DictReader(out.open())}
    assert set(rows) == {"sts", "transfer"}
    assert rows["transfer"]["verdict"] == "direction check: as claimed"
    assert rows["sts"]["verdict"] == "direction check: opposite"


def test_unpairable_or_unrecorded_files_are_refused(tmp_path: Path) -> None:
    good = _write(tmp_path, "simcse", 1, 0.6)
    other = _write(tmp_path, "osscse", 1, 0.9, folds={"CR": (31, 30, 29), "TREC": (60,)})
    with pytest.raises(TableInputError, match=r"osscse-tiny-1\.json: its transfer test exam"):
        verdict_frame([good, other], Options())
    result = json.loads(Path(good).read_text())
    result["details"]["CR"]["acc"] += 1.0
    result["CR"] += 1.0
    Path(other).write_text(json.dumps(result))
    with pytest.raises(TableInputError, match=r"details\.CR\.acc: the file says 61\.0000, its "
                       r"record details\.CR\.test gives 60\.0000"):  # fmt: skip
        verdict_frame([other], Options())
    result["details"]["CR"]["acc"] -= 1.0
    result["CR"] -= 1.0
    del result["details"]["TREC"]["test"]
    Path(other).write_text(json.dumps(result))
    with pytest.raises(TableInputError, match=r"no per-example record for TREC"):
        verdict_frame([other], Options())
