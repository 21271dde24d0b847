"""All analyses of one trained model, as one JSON-able dict (``negcse evaluate --only analysis``).

The model encodes every distinct sentence it needs once (one length-sorted pass): the sampled STS
sentences and their negations, the SAN hard-positive pairs, the rank-error tasks and the
case-study set.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from negcse.analysis.density import peak
from negcse.analysis.normalization import median_minmax
from negcse.analysis.overlap import hard_positive_pairs
from negcse.analysis.pairs import pair_cosines, random_partners
from negcse.analysis.rank_errors import rank_errors
from negcse.data.sts import STS_TASKS, STSData, load_sts
from negcse.encoders.vectors import EncodeFn, SentenceCache
from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    import scipy.stats as stats
else:
    # imported on first use (the workflow's parse reads this module)
    stats = LazyModule("scipy.stats")

logger = logging.getLogger(__name__)

#: GCSE Table 8's five STS-B dev pairs (as printed, with their gold scores)
GCSE_CASES: tuple[tuple[str, str, float], ...] = (
    ("A woman is cooking eggs .", "A woman is cooking something .", 3.00),
    (
        "Two little girls are talking on the phone.",
        "A little girl is walking down the street.",
        0.50,
    ),
    ("A chef is preparing some food .", "A chef prepared a meal .", 4.00),
    ("Five kittens are eating out of five dishes .", "Kittens are eating food on trays.", 2.75),
    ("A woman is cutting some herbs .", "A woman is chopping cilantro .", 2.80),
)


@dataclass(frozen=True)
class AnalysisSettings:
    protocol: str = "senteval"  # STS files: SentEval's (as the papers) or MTEB's raw text
    min_gold: float = 4.0  # SAN Figure 4: gold >= 4 ...
    max_overlap: float = 0.6  # ... and lexical overlap < 0.6
    overlap: str = "jaccard"  # see negcse.analysis.overlap
    rank_tasks: tuple[str, ...] = ("STS14", "SICKRelatedness")  # SNCSE Table 4
    top_k: int = 5
    ties: str = "average"  # see negcse.analysis.rank_errors
    case_task: str = "STSBenchmark-dev"  # GCSE Table 8 / Figure 1
    error_threshold: float = 0.2  # GCSE Figure 1: false when |s' - l'| > 0.2
    partner_seed: int = 0


def _key(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def find_pairs(data: STSData, cases: Sequence[tuple[str, str, float]]) -> list[int | None]:
    """Row of each (sent1, sent2, gold) in ``data`` matched on lowercased words, or None."""
    index: dict[tuple[str, str, float], int] = {}
    for i, (a, b, g) in enumerate(zip(data.sent1, data.sent2, data.scores, strict=True)):
        index.setdefault((_key(a), _key(b), float(g)), i)
    return [index.get((_key(a), _key(b), float(g))) for a, b, g in cases]


def _round(values: np.ndarray, digits: int = 5) -> list[float]:
    return [round(float(v), digits) for v in values]


def _rank_section(data: STSData, sims: np.ndarray, s: AnalysisSettings) -> dict[str, Any]:
    errors = rank_errors(sims, data.gold, s.ties)
    top = []
    for i in errors.top(s.top_k):
        top.append(
            {
                "row": int(i),
                "sent1": data.sent1[i],
                "sent2": data.sent2[i],
                "gold": float(data.scores[i]),
                "cosine": round(float(sims[i]), 5),
                "r_g": float(errors.r_g[i]),
                "r_e": float(errors.r_e[i]),
                "error": float(errors.error[i]),
            }
        )
    return {
        "n": len(data),
        "rho_eq10": errors.rho(),
        "spearman": float(stats.spearmanr(sims, data.gold).statistic),
        "top": top,
    }


def _case_section(data: STSData, sims: np.ndarray, s: AnalysisSettings) -> dict[str, Any]:
    norm = median_minmax(sims, data.gold)
    fp = norm.false_positives(s.error_threshold)
    fn = norm.false_negatives(s.error_threshold)

    def rows(mask: np.ndarray, sign: float) -> list[dict[str, Any]]:
        idx = np.flatnonzero(mask)
        idx = idx[np.argsort(-sign * norm.error[idx], kind="stable")][: s.top_k]
        return [
            {
                "row": int(i),
                "sent1": data.sent1[i],
                "sent2": data.sent2[i],
                "gold": float(data.scores[i]),
                "pred_norm": float(norm.pred[i]),
                "gold_norm": float(norm.gold[i]),
            }
            for i in idx
        ]

    return {
        "task": data.name,
        "n": len(data),
        "min_p": norm.min_p,
        "max_p": norm.max_p,
        "label_range": [norm.low, norm.high],
        "threshold": s.error_threshold,
        "false_positive_rate": float(fp.mean() * 100.0),
        "false_negative_rate": float(fn.mean() * 100.0),
        "top_false_positives": rows(fp, 1.0),
        "top_false_negatives": rows(fn, -1.0),
        "gcse_cases": [
            None if i is None else {"row": i, "pred_norm": float(norm.pred[i])}
            for i in find_pairs(data, GCSE_CASES)
        ],
        "pred_norm": _round(norm.pred),
    }


def analyze_model(
    encode: EncodeFn,
    sentences: Sequence[str],
    negations: Sequence[str],
    settings: AnalysisSettings | None = None,
    mirror: str | None = None,
) -> dict[str, Any]:
    """Raw similarities, summaries and tables' rows of every analysis for one model."""
    s = settings or AnalysisSettings()
    if len(sentences) != len(negations):
        raise ValueError(f"{len(sentences)} sentences but {len(negations)} negations")
    start = time.perf_counter()
    sts = {t: load_sts(t, s.protocol, mirror) for t in STS_TASKS}
    for task in s.rank_tasks:
        if task not in sts:
            raise ValueError(f"rank task {task!r} is not one of {', '.join(STS_TASKS)}")
    case = load_sts(s.case_task, s.protocol, mirror)
    hard = hard_positive_pairs(sts.values(), s.min_gold, s.max_overlap, s.overlap)

    cached = encode if isinstance(encode, SentenceCache) else SentenceCache(encode)
    texts = [*sentences, *negations]
    texts += [t for p in hard for t in (p.sent1, p.sent2)]
    for data in [*(sts[t] for t in s.rank_tasks), case]:
        texts += [*data.sent1, *data.sent2]
    cached.prefetch(texts)
    logger.info("%d distinct texts encoded so far", len(cached))

    soft = pair_cosines(cached, sentences, negations)
    partner = random_partners(len(sentences), s.partner_seed)
    rand = pair_cosines(cached, sentences, [sentences[j] for j in partner])
    hp = pair_cosines(cached, [p.sent1 for p in hard], [p.sent2 for p in hard])
    ranks = {
        t: _rank_section(sts[t], pair_cosines(cached, sts[t].sent1, sts[t].sent2), s)
        for t in s.rank_tasks
    }
    case_sims = pair_cosines(cached, case.sent1, case.sent2)
    summary = {
        "soft_negative_peak": peak(soft),
        "soft_negative_mean": float(soft.mean()),
        "random_peak": peak(rand),
        "random_mean": float(rand.mean()),
        # none without such pairs (null, not NaN: no file holds a NaN)
        "hard_positive_peak": peak(hp) if hp.size else None,
        "hard_positive_mean": float(hp.mean()) if hp.size else None,
        "hard_positive_std": float(hp.std(ddof=1)) if hp.size > 1 else None,
    }
    cases = _case_section(case, case_sims, s)
    summary["false_positive_rate"] = cases["false_positive_rate"]
    summary["false_negative_rate"] = cases["false_negative_rate"]
    return {
        **summary,
        "settings": {**asdict(settings or AnalysisSettings()), "rank_tasks": list(s.rank_tasks)},
        "similarity": {
            "n_sentences": len(sentences),
            "soft_negative": _round(soft),
            "random": _round(rand),
            "hard_positive": _round(hp),
            "hard_positive_pairs": [
                {"task": p.task, "row": p.row, "gold": p.gold, "overlap": round(p.overlap, 4)}
                for p in hard
            ],
        },
        "rank_errors": ranks,
        "case_study": cases,
        "seconds": round(time.perf_counter() - start, 1),
    }
