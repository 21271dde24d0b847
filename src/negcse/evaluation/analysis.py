"""The papers' analyses of one model as an evaluation: similarity distributions (SNCSE Fig. 4,
SAN Fig. 4), rank errors (SNCSE Table 4) and GCSE's normalized case study, with their LaTeX
tables (:mod:`negcse.analysis`)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, ClassVar

from negcse.analysis.latex import case_study_table, latex_escape, rank_error_table
from negcse.analysis.overlap import OVERLAP_KINDS
from negcse.analysis.rank_errors import TIE_METHODS
from negcse.analysis.run import AnalysisSettings, analyze_model
from negcse.data.sts import PROTOCOLS, STS_TASKS
from negcse.encoders.vectors import SentenceCache
from negcse.errors import UserError
from negcse.evaluation.registry import Evaluation, Job, Options, quoted, register
from negcse.io_utils import atomic_open, read_lines
from negcse.text.display import task_name

logger = logging.getLogger(__name__)


def caption_model(tags: dict[str, str], model: str) -> str:
    """``method (backbone, seed N)`` from the tags, else the model's name (LaTeX-escaped)."""
    if {"method", "backbone"} <= tags.keys():
        seed = f", seed {tags['seed']}" if "seed" in tags else ""
        return latex_escape(f"{tags['method']} ({tags['backbone']}{seed})")
    return latex_escape(model)


def _job_args(s: Mapping[str, Any], config: Mapping[str, Any]) -> str:
    """Settings of the analysis (params.yaml ``analysis``)."""
    return (
        f"--analysis-protocol {config['evaluation']['protocol']} "
        f"--analysis-min-gold {s['min_gold']} --analysis-max-overlap {s['max_overlap']} "
        f"--analysis-overlap {s['overlap']} --analysis-rank-tasks {quoted(s['rank_tasks'])} "
        f"--analysis-top-k {s['top_k']} --analysis-ties {s['ties']} "
        f"--analysis-error-threshold {s['error_threshold']} "
        f"--analysis-partner-seed {s['seed']}"
    )


#: where each model's analysis files go: results/analysis/<method>/<backbone>/seed<seed>/
FOLDER = "results/analysis/{model}"


@register
class Analysis(Evaluation):
    name = "analysis"
    help = (
        "similarity distributions (SNCSE Fig. 4, SAN Fig. 4), rank errors (SNCSE Table 4) and "
        "GCSE's normalized case study"
    )
    options: ClassVar[Options] = {
        "sentences": {"required": True, "help": "analysis-sentences output"},
        "negations": {"required": True, "help": "their negations, line for line"},
        "rank_tex": {"help": "LaTeX table of the top rank errors"},
        "case_tex": {"help": "LaTeX table of the largest normalized errors"},
        "protocol": {
            "choices": PROTOCOLS,
            "default": "senteval",
            "help": "STS files: SentEval's processed ones (as the papers) or MTEB's raw text",
        },
        "min_gold": {
            "type": float,
            "default": 4.0,
            "help": "hard positives: gold score at least this",
        },
        "max_overlap": {
            "type": float,
            "default": 0.6,
            "help": "hard positives: lexical overlap below this (SAN Figure 4)",
        },
        "overlap": {
            "choices": OVERLAP_KINDS,
            "default": "jaccard",
            "help": "lexical overlap measure",
        },
        "rank_tasks": {
            "nargs": "+",
            "choices": STS_TASKS,
            "default": ["STS14", "SICKRelatedness"],
            "help": "STS tasks of the rank-error table (SNCSE Table 4)",
        },
        "top_k": {"type": int, "default": 5, "help": "rank errors listed per task"},
        "ties": {"choices": TIE_METHODS, "default": "average", "help": "ranks of tied scores"},
        "error_threshold": {
            "type": float,
            "default": 0.2,
            "help": "case study: a pair is false when |similarity - gold| exceeds this (0-1 scale)",
        },
        "partner_seed": {
            "type": int,
            "default": 0,
            "help": "seed drawing each sentence's random partner (soft negatives)",
        },
    }
    outputs = ("rank_tex", "case_tex")
    job = Job(
        order=4,
        config_key="analysis",
        args=_job_args,
        models=("trained",),
        reads={
            "sentences": "results/analysis/sts_sentences.txt",
            "negations": "results/analysis/sts_sentences.negation.txt",
        },
        out=f"{FOLDER}/analysis.json",
        writes={
            "rank": ("rank_tex", f"{FOLDER}/rank_errors.tex"),
            "case": ("case_tex", f"{FOLDER}/case_study.tex"),
        },
        # no report() entries: the report holds what a clone has (in git), and these per-model
        # tables live in the DVC cache (results/analysis/); GCSE Table 8 across methods is in it
    )

    def check(self, settings: dict[str, Any]) -> None:
        self._read(settings)

    @staticmethod
    def _read(settings: dict[str, Any]) -> tuple[list[str], list[str]]:
        sentences, negations = read_lines(settings["sentences"]), read_lines(settings["negations"])
        if len(sentences) != len(negations):
            raise UserError(
                f"{settings['sentences']} has {len(sentences)} lines but "
                f"{settings['negations']} has {len(negations)}: negations must be line for line"
            )
        return sentences, negations

    def run(self, encoder: SentenceCache, settings: dict[str, Any]) -> dict[str, Any]:
        s = settings
        sentences, negations = self._read(s)
        analysis = AnalysisSettings(
            protocol=s["protocol"],
            min_gold=s["min_gold"],
            max_overlap=s["max_overlap"],
            overlap=s["overlap"],
            rank_tasks=tuple(s["rank_tasks"]),
            top_k=s["top_k"],
            ties=s["ties"],
            error_threshold=s["error_threshold"],
            partner_seed=s["partner_seed"],
        )
        result = analyze_model(encoder, sentences, negations, analysis, s["mirror"])
        who = caption_model(s["tags"], s["model"])
        if s["rank_tex"]:
            tasks = ", ".join(task_name(t) for t in s["rank_tasks"])
            caption = (
                f"Top {s['top_k']} squared rank errors (estimated rank $-$ gold rank) of {who} "
                f"on {tasks} (SNCSE Table 4); ranks ascending (1 = least similar), {s['ties']} "
                "ranks for ties; estimated rank above the gold one: similarity overestimated."
            )
            with atomic_open(s["rank_tex"]) as fh:
                fh.write(rank_error_table(result["rank_errors"], caption, "tab:rank-errors"))
        if s["case_tex"]:
            case = result["case_study"]
            caption = (
                f"Largest normalized errors of {who} on "
                f"{task_name(case['task'])} (GCSE Appendix J): score = "
                "median-normalized cosine on the label scale "
                f"(0 and 1 at the median cosine of the lowest- and highest-labelled pairs, "
                f"{case['min_p']:.3f} and {case['max_p']:.3f}), error in "
                f"parentheses; false positives {case['false_positive_rate']:.1f}\\%, false "
                f"negatives {case['false_negative_rate']:.1f}\\% of pairs (error $>$ "
                f"{s['error_threshold']} on the 0-1 scale)."
            )
            with atomic_open(s["case_tex"]) as fh:
                fh.write(case_study_table(case, caption, "tab:case-study"))
        return result

    def summary(self, result: dict[str, Any]) -> str:
        mean = result["hard_positive_mean"]
        return (
            f"soft-negative peak {result['soft_negative_peak']:.2f}, random peak "
            f"{result['random_peak']:.2f}, hard-positive mean "
            f"{'none' if mean is None else f'{mean:.3f}'} "
            f"(n={len(result['similarity']['hard_positive'])}), {result['seconds']:.1f}s"
        )
