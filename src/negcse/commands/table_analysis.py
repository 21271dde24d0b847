"""``negcse table-analysis``: summary of the analyses (mean +- std over seeds) and GCSE's case study."""

from __future__ import annotations

import argparse
import json
import logging
import math
from collections import defaultdict

NAME = "table-analysis"
HELP = "similarity peaks / false-pair rates table, and the GCSE Table 8 case study per backbone"
logger = logging.getLogger(__name__)

#: analyze-model key -> column name (LaTeX-safe)
SUMMARY_KEYS = {
    "soft_negative_peak": "Soft-neg. peak",
    "random_peak": "Random peak",
    "hard_positive_mean": "Hard-pos. mean",
    "hard_positive_std": "Hard-pos. std",
    "false_positive_rate": "FP",
    "false_negative_rate": "FN",
}

COSINE_KEYS = ("soft_negative_peak", "random_peak", "hard_positive_mean", "hard_positive_std")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--analyses", nargs="+", required=True, help="analyze-model JSON files")
    p.add_argument("--tex", help="summary table (LaTeX)")
    p.add_argument("--csv")
    p.add_argument("--md")
    p.add_argument("--cases-tex", help="GCSE Table 8 pairs x methods (all inputs: one backbone)")


def _summary(args: argparse.Namespace) -> None:
    from negcse.tables import collect, summarize, write_table

    long = collect(args.analyses, list(SUMMARY_KEYS))
    cosine = long["metric"].isin(COSINE_KEYS)
    long.loc[cosine, "value"] *= 100.0  # cosines x100, as every other table's scores
    long["metric"] = long["metric"].map(SUMMARY_KEYS)
    keys = list(SUMMARY_KEYS.values())
    summary = summarize(long, keys)
    caption = (
        "Analyses, mean $\\pm$ std over seeds; cosines $\\times$100. Peaks: mode of the cosine-similarity density of "
        "(sentence, SNCSE negation) and (sentence, random sentence) pairs of STS sentences "
        "(SNCSE Fig.~4); hard positives: cosine of STS pairs with gold $\\geq$ 4 and low lexical "
        "overlap (SAN Fig.~4); FP / FN: percentage of STS-B dev pairs whose median-normalized score is more "
        "than 0.2 above / below the normalized label (GCSE Fig.~1, App.~J). "
        "Bold: column maximum (not necessarily best)."
    )
    write_table(summary, keys, args.tex, args.csv, args.md, caption, "tab:analysis")
    logger.info("analysis table: %d rows", len(summary))


def _cases(args: argparse.Namespace) -> None:
    from negcse.analysis.latex import case_comparison_table, latex_escape
    from negcse.analysis.run import GCSE_CASES
    from negcse.io_utils import atomic_open

    per_method: dict[str, list[dict]] = defaultdict(list)
    backbones = set()
    for path in args.analyses:
        with open(path, encoding="utf-8") as fh:
            result = json.load(fh)
        per_method[result["method"]].append(result["case_study"])
        backbones.add(result.get("backbone", "?"))
    if len(backbones) > 1:
        raise SystemExit(f"--cases-tex takes one backbone's analyses, got {sorted(backbones)}")
    methods = {}
    for method, cases in per_method.items():
        preds = []
        for j in range(len(GCSE_CASES)):
            values = [c["gcse_cases"][j]["pred_norm"] for c in cases if c["gcse_cases"][j]]
            preds.append(sum(values) / len(values) if values else math.nan)
        methods[method] = {
            "pred_norm": preds,
            "false_positive_rate": sum(c["false_positive_rate"] for c in cases) / len(cases),
            "false_negative_rate": sum(c["false_negative_rate"] for c in cases) / len(cases),
        }
    low, high = next(iter(per_method.values()))[0]["label_range"]
    caption = (
        f"GCSE Table 8's STS-B dev pairs, {latex_escape(backbones.pop())}: median-normalized "
        "score on the 0-5 scale (GCSE App.~J; mean over seeds), absolute error in parentheses; "
        "FP / FN: share of STS-B dev pairs more than 0.2 above / below the normalized label."
    )
    with atomic_open(args.cases_tex) as fh:
        fh.write(case_comparison_table(GCSE_CASES, methods, low, high, caption, "tab:cases"))


def run(args: argparse.Namespace) -> int:
    if args.tex or args.csv or args.md:
        _summary(args)
    if args.cases_tex:
        _cases(args)
    return 0
