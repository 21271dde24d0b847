"""Evaluation files made up for the table and page tests: every key the grid-wide tables read
(sts, splits, probe, analysis, the verdicts' per-pair records) in one file per run, and its
transfer evaluation (with the per-example records) in a twin file, as `negcse evaluate` writes
them; values spread so that the columns are as wide as real ones, and every derived number
agrees with its records (the tables check that)."""

from __future__ import annotations

import json
from pathlib import Path

from scipy.stats import spearmanr

from negcse.evaluation.splits import TABLE2_DATASETS
from negcse.tables.published import TASKS, TRANSFER_TASKS


def write_json(tmp: Path, name: str, **values: object) -> Path:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(values))
    return path


def _tags(method: str, backbone: str, seed: str) -> dict[str, object]:
    """The file's tags as ``negcse evaluate --tag`` writes them: an untrained row (seed "")
    has no seed."""
    return {"method": method, "backbone": backbone} | ({"seed": seed} if seed else {})


def evaluation(method: str, backbone: str, seed: str, i: int) -> dict[str, object]:
    """One file of ``method`` on ``backbone`` (``i`` spreads the values): each STS task's
    number and the average are those of its pairs."""
    value = 40.0 + (i * 7.31) % 50
    out: dict[str, object] = _tags(method, backbone, seed)
    gold = [float(g % 6) for g in range(40)]  # the verdicts' pairs: a small test set per task
    cosine = [g * (i % 3) / 3 + ((i * 7 + j * 3) % 11) / 4 for j, g in enumerate(gold)]
    pairs = {"cosine": cosine, "gold": gold, "subset_sizes": [20, 20]}
    out["details"] = {t: {"pairs": pairs} for t in TASKS}
    out |= dict.fromkeys(TASKS, 100 * float(spearmanr(cosine, gold).statistic))
    out["avg"] = out[TASKS[0]]
    out |= {k: value for k in ("cont", "oppn", "cont_rule", "oppn_rule")}
    out["datasets"] = list(TABLE2_DATASETS)
    out |= {"paraphrase": 0.8, "negation": 0.9, "gap": -0.1}
    out |= {k: value / 100 for k in ("soft_negative_peak", "random_peak", "hard_positive_mean",
                                     "hard_positive_std")}  # fmt: skip
    out |= {"false_positive_rate": value / 2, "false_negative_rate": value / 3}
    return out


def transfer(method: str, backbone: str, seed: str, i: int) -> dict[str, object]:
    """The transfer evaluation of the same run: every task's accuracy that of its record."""
    right = round((40.0 + (i * 7.31) % 50) * 10)  # the record: 1,000 test examples a task
    test = {"correct": "1" * right + "0" * (1000 - right)}  # negcse.evaluation.transfer's form
    out: dict[str, object] = _tags(method, backbone, seed)
    out |= {k: right / 10 for k in (*TRANSFER_TASKS, "avg", "MRPC_f1")}
    out["details"] = {t: {"kfold": 10, "acc": right / 10, "test": test} for t in TRANSFER_TASKS}
    return out


def write_run(tmp: Path, name: str, method: str, backbone: str, seed: str, i: int) -> Path:
    """Both files of one run; the path of the first (its twin: :func:`transfer_twin`)."""
    write_json(tmp, f"{name}.transfer", **transfer(method, backbone, seed, i))
    return write_json(tmp, name, **evaluation(method, backbone, seed, i))


def transfer_twin(path: str | Path) -> str:
    return str(path).removesuffix(".json") + ".transfer.json"


def table_inputs(name: str, files: list[str]) -> list[str]:
    """The files table ``name`` reads: the twins for transfer, both for the verdicts."""
    twins = [transfer_twin(path) for path in files]
    return {"transfer": twins, "verdicts": [*files, *twins]}.get(name, files)
