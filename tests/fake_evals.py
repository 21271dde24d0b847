"""Evaluation files made up for the table and page tests: every key the grid-wide tables read
(sts, transfer, splits, probe, analysis, the verdicts' per-pair and per-example records), values
spread so that the columns are as wide as real ones."""

from __future__ import annotations

import json
from pathlib import Path

from negcse.evaluation.splits import TABLE2_DATASETS
from negcse.tables.published import TASKS, TRANSFER_TASKS


def write_json(tmp: Path, name: str, **values: object) -> Path:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(values))
    return path


def evaluation(method: str, backbone: str, seed: str, i: int) -> dict[str, object]:
    """One file of ``method`` on ``backbone`` (``i`` spreads the values)."""
    value = 40.0 + (i * 7.31) % 50
    out: dict[str, object] = {"method": method, "backbone": backbone, "seed": seed}
    out |= {k: value for k in (*TASKS, "avg", *TRANSFER_TASKS, "MRPC_f1")}
    right = round(value * 10)  # the transfer verdicts' record: 1,000 test examples a task
    test = {"correct": "1" * right + "0" * (1000 - right)}  # negcse.evaluation.transfer's form
    out["details"] = {t: {"kfold": 10, "acc": right / 10, "test": test} for t in TRANSFER_TASKS}
    gold = [float(g % 6) for g in range(40)]  # the verdicts' pairs: a small test set per task
    cosine = [g + ((i * 7 + j * 3) % 11) / 4 for j, g in enumerate(gold)]
    pairs = {"cosine": cosine, "gold": gold, "subset_sizes": [20, 20]}
    out["details"] |= {t: {"pairs": pairs} for t in TASKS}
    out |= {k: value for k in ("cont", "oppn", "cont_rule", "oppn_rule")}
    out["datasets"] = list(TABLE2_DATASETS)
    out |= {"paraphrase": 0.8, "negation": 0.9, "gap": -0.1}
    out |= {k: value / 100 for k in ("soft_negative_peak", "random_peak", "hard_positive_mean",
                                     "hard_positive_std")}  # fmt: skip
    out |= {"false_positive_rate": value / 2, "false_negative_rate": value / 3}
    return out
