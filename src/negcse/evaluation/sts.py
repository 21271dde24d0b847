"""STS evaluation: cosine similarity against gold scores by Spearman, x100.

STS12-16 report SentEval's three aggregates: ``all`` (subsets concatenated; the headline number,
as SimCSE reports), ``mean`` and ``wmean`` (size-weighted mean over subsets). With ``--sts-pairs``
(the workflow's evaluations) each test task's record also keeps its pairs (``pairs``: cosine,
gold score, subset sizes, and a key per pair that is the same in every task holding the pair),
which the verdicts table's paired bootstrap resamples (:mod:`negcse.analysis.bootstrap`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from negcse.analysis.bootstrap import pair_key
from negcse.data.sts import PROTOCOLS, STS_TASKS, STSData, load_sts
from negcse.encoders.vectors import EncodeFn, SentenceCache, cosine_rows
from negcse.evaluation.registry import Evaluation, Job, Options, register
from negcse.finite import finite
from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    import scipy.stats as stats
else:
    # imported on first use (the workflow's parse reads this module)
    stats = LazyModule("scipy.stats")

logger = logging.getLogger(__name__)


def spearman100(pred: np.ndarray, gold: np.ndarray, where: str = "STS") -> float:
    """Spearman x100; undefined (all cosines equal, or NaN ones) is an error naming ``where``."""
    return finite(
        float(stats.spearmanr(pred, gold).statistic * 100.0),
        f"{where}: the Spearman of the model's cosines (all equal or not finite: a collapsed or "
        "diverged model?)",
    )


def score_task(data: STSData, encode: EncodeFn, keep_pairs: bool = False) -> dict[str, Any]:
    """Spearman of one task; unique sentences are encoded once. ``keep_pairs`` adds ``pairs``:
    every pair's cosine and gold score, the subset sizes in order, and every pair's key
    (:func:`negcse.analysis.bootstrap.pair_key`, concatenated: the bootstrap draws a pair that
    several tasks hold once for all of them)."""
    unique = list(dict.fromkeys([*data.sent1, *data.sent2]))
    index = {s: i for i, s in enumerate(unique)}
    emb = encode(unique)
    e1 = emb[[index[s] for s in data.sent1]]
    e2 = emb[[index[s] for s in data.sent2]]
    sims = cosine_rows(e1, e2)
    gold = data.gold
    per_subset = {
        name: spearman100(sims[sl], gold[sl], f"{data.name} {name}")
        for name, sl in data.subsets.items()
    }
    sizes = np.array([sl.stop - sl.start for sl in data.subsets.values()], dtype=np.float64)
    values = np.array(list(per_subset.values()))
    scores: dict[str, Any] = {
        "all": spearman100(sims, gold, data.name),
        "mean": float(values.mean()),
        "wmean": float((values * sizes).sum() / sizes.sum()),
        "subsets": per_subset,
        "n": len(data),
    }
    if keep_pairs:
        scores["pairs"] = {
            "cosine": sims.tolist(),  # full precision: rounding would tie near-equal pairs
            "gold": gold.tolist(),
            "subset_sizes": sizes.astype(int).tolist(),
            "key": "".join(map(pair_key, data.sent1, data.sent2)),
        }
    return scores


def evaluate_sts(
    encode: EncodeFn,
    tasks: Iterable[str] = STS_TASKS,
    protocol: str = "senteval",
    mirror: str | None = None,
    with_dev: bool = True,
    keep_pairs: bool = False,
) -> dict[str, Any]:
    """One number per task (the ``all`` aggregate) plus ``avg``; details under ``details``
    (with ``keep_pairs``, each test task's pairs: :func:`score_task`).

    ``stsb_dev`` (STS-B dev, the model-selection set) is recorded beside the average.
    """
    start = time.perf_counter()
    result: dict[str, Any] = {}
    details: dict[str, Any] = {}
    for task in tasks:
        scores = score_task(load_sts(task, protocol, mirror), encode, keep_pairs)
        result[task] = scores["all"]
        details[task] = scores
        logger.info("%s: %.2f (n=%d)", task, scores["all"], scores["n"])
    result["avg"] = float(np.mean([result[t] for t in details]))
    if with_dev:  # the model-selection set, reported beside (not inside) the average
        dev = score_task(load_sts("STSBenchmark-dev", protocol, mirror), encode)
        result["stsb_dev"] = dev["all"]
        details["STSBenchmark-dev"] = dev
    result["details"] = details
    result["protocol"] = protocol
    result["seconds"] = time.perf_counter() - start
    return result


def dev_scorer(
    protocol: str = "senteval", mirror: str | None = None
) -> Callable[[EncodeFn], float]:
    """STS-B dev Spearman (x100), the model-selection metric; data loaded once."""
    data = load_sts("STSBenchmark-dev", protocol, mirror)

    def score(encode: EncodeFn) -> float:
        return float(score_task(data, encode)["all"])

    return score


def _job_args(protocol: str, config: Mapping[str, Any]) -> str:
    return f"--sts-protocol {protocol} --sts-pairs"


@register
class STS(Evaluation):
    name = "sts"
    help = "Spearman x100 on STS12-16, STS-B test and SICK-R test (STS-B dev beside)"
    options: ClassVar[Options] = {
        "protocol": {
            "choices": PROTOCOLS,
            "default": "senteval",
            "help": "senteval: SimCSE's processed files (default); mteb: raw text as MTEB",
        },
        "tasks": {
            "nargs": "+",
            "default": list(STS_TASKS),
            "choices": STS_TASKS,
            "help": "a subset of the STS tasks (default: all seven)",
        },
        "pairs": {
            "action": "store_true",
            "help": "keep every test pair's cosine and gold score (the verdicts' bootstrap)",
        },
    }
    job = Job(
        order=0,
        config_key="evaluation.protocol",
        args=_job_args,
        needs={"sts": "results/data/sts_manifest.tsv"},
    )

    def run(self, encoder: SentenceCache, settings: dict[str, Any]) -> dict[str, Any]:
        return evaluate_sts(
            encoder,
            settings["tasks"],
            settings["protocol"],
            settings["mirror"],
            keep_pairs=settings["pairs"],
        )

    def summary(self, result: dict[str, Any]) -> str:
        keys = [k for k in result["details"] if k != "STSBenchmark-dev"]
        return "  ".join(f"{t}={result[t]:.2f}" for t in [*keys, "avg"])
