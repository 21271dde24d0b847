"""SentEval transfer tasks with SentEval's "test" protocol as SimCSE runs it (``kfold`` 10).

- MR, CR, SUBJ, MPQA (no split): SentEval's ``InnerKFoldClassifier``. 10 outer stratified folds;
  in each, the penalty is chosen by 10-fold inner CV on the outer training part, then a model
  with that penalty is fitted on the outer training part and scored on the outer test fold; the
  task's number is the mean of the 10 test accuracies. Fold seed 1111 (hard-coded in SentEval).
- SST2: ``SplitClassifier``; one model per penalty on train, early-stopped and scored on dev; the
  best dev accuracy picks the penalty, its model is scored on test.
- TREC, MRPC: ``KFoldClassifier``; 10-fold CV on train (fold seed = ``seed``) picks the penalty,
  then a model on all of train (5% held out for early stopping) is scored on test. MRPC features
  are ``[|u - v|, u * v]``; MRPC also reports F1 of the paraphrase class.

Rows are put in SentEval's order (``senteval_order``) before folds are drawn, which makes the
folds SentEval's own. Accuracies are x100 and rounded to 2 decimals where and as SentEval
rounds (numpy's rounding for means, Python's for single scores), so ties pick the same penalty.
Classifiers: ``sentevalish`` (default) reproduces SentEval's PyTorch logistic regression
(``negcse.evaluation.transfer_classifier``), ``sklearn`` is SentEval's ``usepytorch=False`` branch.

Every task also records whether each test example was classified right (``details.<task>.test``,
:func:`record_tested`), for the paired bootstrap of the transfer average
(``negcse.analysis.transfer_bootstrap``, ``docs/statistics.md``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from negcse.data.transfer import (
    TRANSFER_TASKS,
    LabelledSet,
    TransferData,
    load_transfer,
    senteval_order,
)
from negcse.encoders.vectors import EncodeFn, SentenceCache
from negcse.evaluation.registry import Evaluation, Job, Options, register
from negcse.evaluation.transfer_classifier import (
    FitJob,
    Fitted,
    LogRegConfig,
    fit_logreg_batch,
    fit_sklearn_batch,
)
from negcse.model_cli import at_least
from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    import sklearn.metrics as metrics
    import sklearn.model_selection as model_selection
else:
    # imported on first use (the workflow's parse reads this module)
    metrics = LazyModule("sklearn.metrics")
    model_selection = LazyModule("sklearn.model_selection")

logger = logging.getLogger(__name__)

CLASSIFIERS = ("sentevalish", "sklearn")
INNER_KFOLD_SEED = 1111  # SentEval's InnerKFoldClassifier ignores its seed for the folds

#: the penalty grids SentEval scans: L2 weight decay (PyTorch) or C (scikit-learn)
PENALTIES = {
    "sentevalish": {p: tuple(10.0**t for t in range(-5, -1)) for p in ("cv", "split", "kfold")},
    "sklearn": {
        "cv": tuple(2.0**t for t in range(-2, 4)),
        "split": tuple(2.0**t for t in range(-2, 4)),
        "kfold": tuple(2.0**t for t in range(-1, 6)),
    },
}


#: one character per fold in ``details.<task>.test.fold`` (at most 36 folds)
FOLD_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def record_tested(correct: np.ndarray, fold: np.ndarray | None = None) -> dict[str, str]:
    """Each test example's correctness as a string of 0/1, one character per example in the
    task's example order (SentEval's order of the rows that are tested: all of a CV task's, the
    test split's otherwise), and, for a CV task, the outer fold that tested it (``fold``, one
    digit of :data:`FOLD_DIGITS` per example). ~1-2 bytes an example: the file stays small."""
    record = {"correct": "".join("1" if c else "0" for c in np.asarray(correct, dtype=bool))}
    if fold is not None:
        if int(np.max(fold)) >= len(FOLD_DIGITS):
            raise ValueError(f"at most {len(FOLD_DIGITS)} folds are recorded, got {max(fold) + 1}")
        record["fold"] = "".join(FOLD_DIGITS[f] for f in np.asarray(fold))
    return record


def accuracy100(pred: np.ndarray, gold: np.ndarray) -> float:
    """SentEval's test accuracy: Python's round(100 * accuracy, 2)."""
    return round(100.0 * float(np.mean(np.asarray(pred) == np.asarray(gold))), 2)


def f1_100(pred: np.ndarray, gold: np.ndarray) -> float:
    """SentEval's MRPC F1 (positive class 1), 100 * F1 rounded as numpy rounds."""
    return np_round2(100.0 * metrics.f1_score(gold, pred))


def np_round2(value: float) -> float:
    """``round(numpy_float, 2)`` as SentEval applies it to numpy means: numpy's rounding
    (scale, round half to even, unscale), which can differ from Python's on x.xx5 values."""
    return float(np.round(np.float64(value), 2))


class _Prober:
    """Fits the chosen classifier on many row sets of one feature matrix."""

    def __init__(self, classifier: str, seed: int, config: LogRegConfig | None) -> None:
        if classifier not in CLASSIFIERS:
            raise ValueError(f"unknown classifier '{classifier}'; known: {', '.join(CLASSIFIERS)}")
        self.classifier = classifier
        self.seed = seed
        self.config = replace(config or LogRegConfig(), seed=seed)

    def fit(
        self, x: np.ndarray, y: np.ndarray, jobs: list[FitJob], nclasses: int, desc: str
    ) -> Fitted:
        if self.classifier == "sklearn":
            return fit_sklearn_batch(x, y, jobs, seed=self.seed, desc=desc)
        return fit_logreg_batch(x, y, jobs, nclasses, self.config, desc=desc)


def _stratified_folds(y: np.ndarray, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    skf = model_selection.StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    return list(skf.split(np.zeros((len(y), 1)), y))


def _pick(scores: Sequence[float], penalties: Sequence[float]) -> tuple[int, float]:
    """SentEval's choice: first penalty with the highest rounded score."""
    best = int(np.argmax(scores))
    return best, penalties[best]


def inner_kfold(
    x: np.ndarray, y: np.ndarray, nclasses: int, prober: _Prober, k: int, name: str
) -> dict[str, Any]:
    """SentEval's InnerKFoldClassifier (MR, CR, SUBJ, MPQA)."""
    penalties = PENALTIES[prober.classifier]["cv"]
    outer = _stratified_folds(y, k, INNER_KFOLD_SEED)
    jobs = []
    for train, _ in outer:
        for in_train, in_test in _stratified_folds(y[train], k, INNER_KFOLD_SEED):
            jobs.append(FitJob(train[in_train], train[in_test], penalties))
    inner = prober.fit(x, y, jobs, nclasses, f"{name} inner CV")
    dev_acc = inner.dev_accuracy.reshape(k, k, len(penalties))  # [outer, inner, penalty]
    chosen = []
    for f in range(k):
        scores = [np_round2(100.0 * np.mean(dev_acc[f, :, r])) for r in range(len(penalties))]
        chosen.append((*_pick(scores, penalties), max(scores)))
    final_jobs = [FitJob(train, None, (chosen[f][1],)) for f, (train, _) in enumerate(outer)]
    final = prober.fit(x, y, final_jobs, nclasses, f"{name} outer folds")
    pred, fold = np.empty_like(y), np.empty(len(y), dtype=np.int64)  # the folds partition y
    for f, (_, test) in enumerate(outer):
        pred[test], fold[test] = final.predict(x[test], f, 0), f
    test_acc = [accuracy100(pred[test], y[test]) for _, test in outer]
    return {
        "acc": np_round2(np.mean(test_acc)),
        "devacc": np_round2(np.mean([c[2] for c in chosen])),
        "folds": [
            {"n_train": len(tr), "n_test": len(te), "penalty": c[1], "devacc": c[2], "acc": a}
            for (tr, te), c, a in zip(outer, chosen, test_acc, strict=True)
        ],
        "penalties": list(penalties),
        "test": record_tested(pred == y, fold),
    }


def split_classifier(
    x: np.ndarray,
    y: np.ndarray,
    rows: dict[str, np.ndarray],
    nclasses: int,
    prober: _Prober,
    name: str,
) -> dict[str, Any]:
    """SentEval's SplitClassifier (SST2): dev picks the penalty; its model is scored on test."""
    penalties = PENALTIES[prober.classifier]["split"]
    job = FitJob(rows["train"], rows["dev"], penalties)
    fitted = prober.fit(x, y, [job], nclasses, f"{name} train/dev")
    # sentevalish: dev is also the early-stopping set, so its best accuracy is the dev score
    scores = [round(100.0 * float(a), 2) for a in fitted.dev_accuracy[0]]
    r, penalty = _pick(scores, penalties)
    # SentEval refits with the chosen penalty; with the same seed and data that fit is this one.
    test = rows["test"]
    pred = fitted.predict(x[test], 0, r)
    return {
        "acc": accuracy100(pred, y[test]),
        "devacc": max(scores),
        "penalty": penalty,
        "dev_scores": scores,
        "penalties": list(penalties),
        "test": record_tested(pred == y[test]),
    }


def kfold_classifier(
    x: np.ndarray,
    y: np.ndarray,
    rows: dict[str, np.ndarray],
    nclasses: int,
    prober: _Prober,
    k: int,
    name: str,
) -> dict[str, Any]:
    """SentEval's KFoldClassifier (TREC, MRPC): k-fold CV on train picks the penalty."""
    penalties = PENALTIES[prober.classifier]["kfold"]
    train, test = rows["train"], rows["test"]
    folds = _stratified_folds(y[train], k, prober.seed)
    jobs = [FitJob(train[tr], train[te], penalties) for tr, te in folds]
    cv = prober.fit(x, y, jobs, nclasses, f"{name} CV")
    scores = [np_round2(100.0 * np.mean(cv.dev_accuracy[:, r])) for r in range(len(penalties))]
    _, penalty = _pick(scores, penalties)
    final = prober.fit(x, y, [FitJob(train, None, (penalty,))], nclasses, f"{name} train")
    pred = final.predict(x[test], 0, 0)
    return {
        "acc": accuracy100(pred, y[test]),
        "f1": f1_100(pred, y[test]) if nclasses == 2 else None,
        "devacc": max(scores),
        "penalty": penalty,
        "cv_scores": scores,
        "penalties": list(penalties),
        "fold_sizes": [len(te) for _, te in folds],
        "pred": pred,
        "test": record_tested(pred == y[test]),
    }


def _encode_task(data: TransferData, encode: EncodeFn) -> dict[str, np.ndarray]:
    """Sentence embeddings per split; every distinct sentence of the task is encoded once."""
    unique = list(dict.fromkeys(s for split in data.splits.values() for s in split.sentences()))
    emb = np.asarray(encode(unique), dtype=np.float32)
    if emb.shape[0] != len(unique):
        raise ValueError(f"encode returned {emb.shape[0]} rows for {len(unique)} sentences")
    index = {s: i for i, s in enumerate(unique)}
    out = {}
    for key, split in data.splits.items():
        a = emb[[index[s] for s in split.a]]
        if split.b is None:
            out[key] = a
        else:  # MRPC: SentEval's pair features
            b = emb[[index[s] for s in split.b]]
            out[key] = np.concatenate([np.abs(a - b), a * b], axis=1)
    return out


def _stack(
    splits: dict[str, LabelledSet], feats: dict[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """One feature matrix over all splits (each in SentEval order) and each split's rows."""
    xs, ys, rows, start = [], [], {}, 0
    for key, split in splits.items():
        order = senteval_order(split)
        xs.append(feats[key][order])
        ys.append(split.labels[order])
        rows[key] = np.arange(start, start + len(split))
        start += len(split)
    return np.concatenate(xs), np.concatenate(ys), rows


def evaluate_task(
    data: TransferData, encode: EncodeFn, prober: _Prober, kfold: int = 10
) -> dict[str, Any]:
    """Accuracy (x100) of one task and its details."""
    t0 = time.perf_counter()
    feats = _encode_task(data, encode)
    t1 = time.perf_counter()
    x, y, rows = _stack(data.splits, feats)
    if data.protocol == "cv":
        res = inner_kfold(x, y, data.nclasses, prober, kfold, data.name)
    elif data.protocol == "split":
        res = split_classifier(x, y, rows, data.nclasses, prober, data.name)
    else:
        res = kfold_classifier(x, y, rows, data.nclasses, prober, kfold, data.name)
        res.pop("pred")
    res["n"] = {key: len(split) for key, split in data.splits.items()}
    res["protocol"] = data.protocol
    res["kfold"] = kfold if data.protocol != "split" else None
    res["feature_dim"] = int(x.shape[1])
    res["encode_seconds"] = round(t1 - t0, 2)
    res["fit_seconds"] = round(time.perf_counter() - t1, 2)
    return res


def evaluate_transfer(
    encode: EncodeFn,
    tasks: Iterable[str] = TRANSFER_TASKS,
    mirror: str | None = None,
    seed: int = 1111,
    classifier: str = "sentevalish",
    kfold: int = 10,
    config: LogRegConfig | None = None,
) -> dict[str, Any]:
    """Accuracy x100 per task (``MRPC_f1`` too), ``avg`` over the task accuracies, ``details``.

    ``seed`` is SentEval's: it seeds every classifier and TREC/MRPC's folds (the binary tasks'
    folds use SentEval's fixed 1111). ``config`` changes the classifier's training settings
    (its ``seed`` is replaced by ``seed``).
    """
    start = time.perf_counter()
    prober = _Prober(classifier, seed, config)
    result: dict[str, Any] = {}
    details: dict[str, Any] = {}
    for task in tasks:
        data = load_transfer(task, mirror)
        res = evaluate_task(data, encode, prober, kfold)
        details[task] = res
        result[task] = res["acc"]
        if task == "MRPC":
            result["MRPC_f1"] = res["f1"]
        logger.info(
            "%s: %.2f (dev %.2f; encode %.0fs, fit %.0fs)",
            task,
            res["acc"],
            res["devacc"],
            res["encode_seconds"],
            res["fit_seconds"],
        )
    result["avg"] = round(float(np.mean([details[t]["acc"] for t in details])), 2)
    result["details"] = details
    result["classifier"] = classifier
    result["seed"] = seed
    result["seconds"] = round(time.perf_counter() - start, 1)
    return result


@register
class Transfer(Evaluation):
    name = "transfer"
    help = "SentEval transfer accuracy x100 (MR, CR, SUBJ, MPQA, SST2, TREC, MRPC)"
    options: ClassVar[Options] = {
        # tasks, classifier, kfold: default and choices from job.schema (the config's)
        "tasks": {"nargs": "+", "help": "a subset of the transfer tasks (default: the config's)"},
        "classifier": {
            "help": "sentevalish: SentEval's PyTorch logistic regression, reproduced "
            "(default); sklearn: SentEval's scikit-learn branch",
        },
        "seed": {"type": int, "default": 1111, "help": "SentEval's seed (default 1111)"},
        "kfold": {"type": at_least(2), "help": "folds (SimCSE's test mode: 10)"},
    }
    job = Job(
        order=1,
        config_key="evaluation.transfer",
        needs={"transfer": "results/data/transfer_manifest.tsv"},
        schema={
            "type": "object",
            "additionalProperties": False,
            "default": {},
            "description": 'SentEval transfer tasks. Defaults are SimCSE\'s "test" protocol; any '
            "reduction (fewer tasks, fewer folds) is printed in the transfer table's caption.",
            "properties": {
                "tasks": {
                    "type": "array",
                    "items": {"enum": list(TRANSFER_TASKS)},
                    "minItems": 1,
                    "uniqueItems": True,
                    "default": list(TRANSFER_TASKS),
                },
                "kfold": {
                    "type": "integer",
                    "minimum": 2,
                    "default": 10,
                    "description": "cross-validation folds",
                },
                "classifier": {
                    "enum": list(CLASSIFIERS),
                    "default": "sentevalish",
                    "description": "SentEval's PyTorch logistic regression (reproduced) or its "
                    "sklearn branch",
                },
            },
        },
    )

    def run(self, encoder: SentenceCache, settings: dict[str, Any]) -> dict[str, Any]:
        result = evaluate_transfer(
            encoder,
            tasks=settings["tasks"],
            mirror=settings["mirror"],
            seed=settings["seed"],
            classifier=settings["classifier"],
            kfold=settings["kfold"],
        )
        result["senteval_seed"] = result.pop("seed")  # "seed" is the training run's (a tag)
        return result

    def summary(self, result: dict[str, Any]) -> str:
        keys = [*result["details"], *(["MRPC_f1"] if "MRPC" in result else []), "avg"]
        return "  ".join(f"{k}={result[k]:.2f}" for k in keys)
