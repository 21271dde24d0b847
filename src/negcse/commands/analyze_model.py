"""``negcse analyze-model``: the papers' analyses of one trained model (JSON + LaTeX tables)."""

from __future__ import annotations

import argparse
import logging

from negcse.analysis.overlap import OVERLAP_KINDS
from negcse.analysis.rank_errors import TIE_METHODS
from negcse.io_utils import atomic_open, read_lines, write_json
from negcse.model_cli import add_model_arguments, header, load_encoder, tags
from negcse.sts_data import PROTOCOLS, STS_TASKS

NAME = "analyze-model"
HELP = (
    "similarity distributions (SNCSE Fig. 4, SAN Fig. 4), rank errors (SNCSE Table 4) and "
    "GCSE's normalized case study for one model"
)
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p)
    p.add_argument("--sentences", required=True, help="analysis-sentences output")
    p.add_argument("--negations", required=True, help="their negations, line for line")
    p.add_argument("--rank-tex", help="LaTeX table of the top rank errors")
    p.add_argument("--case-tex", help="LaTeX table of the largest normalized errors")
    p.add_argument("--protocol", choices=PROTOCOLS, default="senteval")
    p.add_argument("--min-gold", type=float, default=4.0)
    p.add_argument("--max-overlap", type=float, default=0.6)
    p.add_argument("--overlap", choices=OVERLAP_KINDS, default="jaccard")
    p.add_argument(
        "--rank-tasks", nargs="+", choices=STS_TASKS, default=["STS14", "SICKRelatedness"]
    )
    p.add_argument("--top-k", type=int, default=5)
    p.add_argument("--ties", choices=TIE_METHODS, default="average")
    p.add_argument("--error-threshold", type=float, default=0.2)
    p.add_argument("--partner-seed", type=int, default=0)


def _caption_model(tags: dict[str, str], model: str) -> str:
    from negcse.analysis.latex import latex_escape

    if {"method", "backbone"} <= tags.keys():
        seed = f", seed {tags['seed']}" if "seed" in tags else ""
        return latex_escape(f"{tags['method']} ({tags['backbone']}{seed})")
    return latex_escape(model)


def run(args: argparse.Namespace) -> int:
    from negcse.analysis.latex import TASK_NAMES, case_study_table, rank_error_table
    from negcse.analysis.run import AnalysisSettings, analyze_model
    sentences, negations = read_lines(args.sentences), read_lines(args.negations)
    if len(sentences) != len(negations):
        raise SystemExit(
            f"{args.sentences} has {len(sentences)} lines but {args.negations} has "
            f"{len(negations)}: negations must be line for line"
        )
    encoder = load_encoder(args)
    settings = AnalysisSettings(
        protocol=args.protocol,
        min_gold=args.min_gold,
        max_overlap=args.max_overlap,
        overlap=args.overlap,
        rank_tasks=tuple(args.rank_tasks),
        top_k=args.top_k,
        ties=args.ties,
        error_threshold=args.error_threshold,
        partner_seed=args.partner_seed,
    )
    result = analyze_model(
        lambda s: encoder.encode(s, args.batch_size, progress=True),
        sentences,
        negations,
        settings,
        args.mirror,
    )
    who = _caption_model(tags(args), args.model)
    if args.rank_tex:
        tasks = ", ".join(TASK_NAMES.get(t, t) for t in args.rank_tasks)
        caption = (
            f"Top {args.top_k} rank errors $(R_E - R_G)^2$ of {who} on {tasks} (SNCSE Table 4); "
            f"ranks ascending (1 = least similar), {args.ties} ranks for ties; "
            "$R_E > R_G$: similarity overestimated."
        )
        with atomic_open(args.rank_tex) as fh:
            fh.write(rank_error_table(result["rank_errors"], caption, "tab:rank-errors"))
    if args.case_tex:
        case = result["case_study"]
        caption = (
            f"Largest normalized errors of {who} on {TASK_NAMES.get(case['task'], case['task'])} "
            f"(GCSE Appendix J): score = median-normalized cosine on the label scale "
            f"(min$_p$ {case['min_p']:.3f}, max$_p$ {case['max_p']:.3f}), error in parentheses; "
            f"false positives {case['false_positive_rate']:.1f}\\%, false negatives "
            f"{case['false_negative_rate']:.1f}\\% of pairs (error $>$ {args.error_threshold} "
            "on the 0-1 scale)."
        )
        with atomic_open(args.case_tex) as fh:
            fh.write(case_study_table(case, caption, "tab:case-study"))
    result = {**header(args), **result}
    write_json(args.out, result)
    logger.info(
        "soft-negative peak %.2f, random peak %.2f, hard-positive mean %.3f (n=%d), %.1fs",
        result["soft_negative_peak"],
        result["random_peak"],
        result["hard_positive_mean"],
        len(result["similarity"]["hard_positive"]),
        result["seconds"],
    )
    return 0
