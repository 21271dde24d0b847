"""One spec per results table: what it reads, its columns and caption, the published numbers
beside ours, and how it is built. A new table is one :class:`TableSpec` in :data:`TABLES`.

The workflow (``rules/tables.smk``) makes one job per spec: it expands ``inputs`` over the grid
(and ``untrained`` over the backbones when ``evaluation.baseline`` is on) and runs
``negcse table NAME``, which writes ``results/tables/NAME.{tex,csv,md}`` and the DVC metrics
``results/metrics/NAME.json`` (the mean of ``metric`` per method/backbone). Specs with
``per_backbone`` (the case study) have their own rule, one job per backbone.

An installed package adds tables through the ``negcse.tables`` entry-point group
(:mod:`negcse.plugins`): a ``TableSpec`` (or a list of them), or a module that calls
:func:`register`; loaded when this module is imported, after the built-in tables.
"""

from __future__ import annotations

import re

from negcse.data.mteb_tasks import GROUPS
from negcse.plugins import load_plugins
from negcse.tables import build, published_view, verdicts
from negcse.tables.published import TASKS, published_avg
from negcse.tables.render import PAPER_DIFF, Column
from negcse.tables.table_spec import PaperColumn, TableSpec
from negcse.text.display import task_name

SEEDS = Column("seeds", "Seeds", kind="count")


def _eval(kind: str) -> dict[str, str]:
    """A table's evaluation files of one kind: trained, untrained, released checkpoints."""
    return {
        "inputs": f"results/eval/{kind}/{{method}}/{{backbone}}/seed{{seed}}.json",
        "untrained": f"results/eval/{kind}/untrained/{{backbone}}.json",
        "released": f"results/eval/{kind}/released/{{released}}/{{backbone}}.json",
    }


def _tables() -> dict[str, TableSpec]:
    analysis = "results/analysis/{method}/{backbone}/seed{seed}/analysis.json"
    specs = [
        TableSpec(
            name="sts",
            **_eval("sts"),
            columns=(
                *[Column(k, task_name(k), std=False) for k in TASKS],
                Column("avg", task_name("avg")),
                *PAPER_DIFF,
            ),
            paper=published_avg,
            baseline=True,
            caption=(
                "STS test sets, Spearman $\\times$100 of cosine similarity (SentEval ``all'' "
                "setting), mean over seeds (Avg.: $\\pm$ std over seeds; the CSV twin has every "
                "std); Paper: the published 7-task average; $\\Delta$ = ours $-$ paper; the best "
                "trained method's mean per column and backbone in bold. Each method's difference "
                "to the baseline its paper compared it with: the verdicts table (and the CSV "
                "twin's vs\\_baseline)."
            ),
            summary=(
                "STS results: Spearman ×100 of cosine similarity on the 7 STS tasks, mean ± "
                "std over seeds, beside the papers' averages."
            ),
            category="STS",
            build=build.summary_table,
        ),
        TableSpec(
            name="transfer",
            **_eval("transfer"),
            caption=(
                "Transfer tasks, accuracy $\\times$100 of logistic regression on frozen "
                "embeddings (MRPC also F1), {protocol}; mean over seeds. Avg.: mean accuracy over "
                "the tasks shown, $\\pm$ std over seeds (the CSV twin has every std). Paper: the "
                "published average over the same tasks (GCSE Table 7, first LLM; OssCSE Table 5; "
                "GCSE Table 7's SimCSE/DiffCSE/PCL/RankCSE rows are STS numbers and are not "
                "used); $\\Delta$ = "
                "ours $-$ paper; the best trained method's mean per column and backbone in bold."
            ),
            summary=(
                "Transfer tasks (MR, CR, SUBJ, MPQA, SST2, TREC, MRPC): accuracy ×100 of logistic "
                "regression on frozen embeddings, mean ± std over seeds, beside the published "
                "averages (GCSE Table 7, OssCSE Table 5); the caption in the table states the "
                "protocol (reduced in the smoke grid)."
            ),
            category="Transfer",
            build=build.transfer_table,
        ),
        TableSpec(
            name="mteb",
            inputs="results/eval/mteb/{group}/{method}/{backbone}/seed{seed}.json",
            expand={"group": tuple(GROUPS)},
            when="mteb",
            caption="",  # one per group: build.MTEB_CAPTIONS
            summary=(
                "MTEB results: reranking MAP and MRR@10 (4 tasks) and classification accuracy "
                "(10 tasks), ×100, mean ± std over seeds, beside the papers' averages (GCSE "
                "Table 6, SAN Table 4)."
            ),
            category="MTEB",
            metric=None,  # per group: the headline average (build.mteb_table)
            build=build.mteb_table,
        ),
        TableSpec(
            name="analysis",
            inputs=analysis,
            columns=(
                # a peak's or a spread's best is not defined: no bold there
                # a peak's or a spread's best is not defined: no bold there
                Column("Soft-neg. peak", "Soft-neg.\npeak", bold=None, source="soft_negative_peak",
                       scale=100, std=False),
                Column("Random peak", "Random\npeak", bold=None, source="random_peak", scale=100,
                       std=False),
                Column("Hard-pos. mean", "Hard-pos.\nmean", source="hard_positive_mean", scale=100),
                Column("Hard-pos. std", "Hard-pos.\nstd", bold=None, source="hard_positive_std",
                       scale=100, std=False),
                Column("FP", "FP", bold="min", source="false_positive_rate"),
                Column("FN", "FN", bold="min", source="false_negative_rate"),
            ),
            metric="FP",
            caption=(
                "Analyses, mean over seeds ($\\pm$ std of the means and rates); cosines $\\times$100. Peaks: mode of the "
                "cosine-similarity density of (sentence, SNCSE negation) and (sentence, random "
                "sentence) pairs of STS sentences (SNCSE Fig.~4); hard positives: cosine of STS "
                "pairs with gold $\\geq$ 4 and low lexical overlap (SAN Fig.~4); FP / FN: "
                "percentage of STS-B dev pairs whose median-normalized score is more than 0.2 "
                "above / below the normalized label (GCSE Fig.~1, App.~J). Bold: the best trained "
                "method per backbone, highest hard-positive cosine and lowest FP / FN (peaks and "
                "spread have no best)."
            ),
            summary=(
                "Analysis summary per method and backbone, mean ± std over seeds: similarity "
                "peaks of soft-negative and random pairs (SNCSE Figure 4), cosine of high-gold "
                "low-overlap STS pairs (SAN Figure 4), false-positive / false-negative rates "
                "after GCSE's normalization."
            ),
            category="Analysis",
            subcategory="Summary",
            build=build.summary_table,
        ),
        TableSpec(
            name="case_study",
            inputs=analysis,
            per_backbone=True,
            metric=None,
            caption=(
                "GCSE Table 8's STS-B dev pairs, {backbone}: median-normalized score on the 0-5 "
                "scale (GCSE App.~J; mean over seeds), absolute error in parentheses; FP / FN: "
                "share of STS-B dev pairs more than 0.2 above / below the normalized label."
            ),
            summary="GCSE Table 8's STS-B dev pairs scored by every method, per backbone.",
            category="Analysis",
            subcategory="Case study (GCSE Table 8)",
            build=build.case_study_table,
        ),
        TableSpec(
            name="splits",
            **_eval("splits"),
            columns=(
                Column("cont", "Cont."),
                Column("oppn", "Oppn."),
                Column("cont_rule", "Cont. (rule)"),
                Column("oppn_rule", "Oppn. (rule)"),
                Column("paper_cont", "Paper Cont.", kind="number"),
                Column("paper_oppn", "Paper Oppn.", kind="number"),
                SEEDS,
            ),
            published=(
                PaperColumn("cont", "weighted_average", "3"),
                PaperColumn("oppn", "weighted_average", "3"),
            ),
            metric="oppn",
            caption=(
                "OssCSE's Cont./Oppn. splits: Spearman $\\times$100 of cosine similarity, "
                "split-size-weighted average over the 16 datasets of OssCSE Table 2 (Cont., "
                "Oppn.) and over every dataset whose median gold score is in [2, 3.5] (rule); "
                "mean $\\pm$ std over seeds. Paper: OssCSE Table 3 (SimCSE: SimCSE's released "
                "unsupervised BERT-base; SimCSE (supervised): its supervised one); the best trained "
                "method's mean per column and backbone in bold."
            ),
            summary=(
                "OssCSE's Cont./Oppn. splits (OssCSE Tables 2, 3, 6): Spearman ×100 on the pairs "
                "where surface overlap (word MER) and gold score agree (Cont.) or not (Oppn.), "
                "split-size-weighted over Table 2's datasets and over the median-rule datasets, "
                "mean ± std over seeds, beside the paper's Table 3."
            ),
            category="OssCSE splits and probe",
            subcategory="Cont./Oppn. splits (Tables 2, 3, 6)",
            build=build.splits_table,
        ),
        TableSpec(
            name="probe",
            **_eval("probe"),
            columns=(
                Column("paraphrase", "Para.", std=False),
                Column("negation", "Neg.", bold="min", std=False),
                Column("gap", "Gap"),
                Column("paper_paraphrase", "Paper para.", kind="number"),
                Column("paper_negation", "Paper neg.", kind="number"),
                SEEDS,
            ),
            published=(PaperColumn("paraphrase", "probe"), PaperColumn("negation", "probe")),
            metric="gap",
            fmt="{:.3f}",
            caption=(
                "OssCSE's Appendix B probe: mean cosine similarity of the sentence to its eight "
                "paraphrases (Para.) and to its eight negations (Neg.), Gap = Para. $-$ Neg. "
                "(positive: paraphrases closer), mean over seeds (Gap: $\\pm$ std; every std in the "
                "CSV twin). Paper: OssCSE "
                "Section 5.2 (BERT-base). Bold: the trained method with the highest paraphrase "
                "and gap, lowest negation, per backbone."
            ),
            summary=(
                "OssCSE's Appendix B probe: mean cosine similarity of one sentence to its eight "
                "paraphrases and to its eight negations, mean ± std over seeds, beside the "
                "paper's SimCSE and OssCSE (BERT-base) means."
            ),
            category="OssCSE splits and probe",
            subcategory="Paraphrase / negation probe (Appendix B)",
            build=build.summary_table,
        ),
        TableSpec(
            name="published",
            **_eval("sts"),
            columns=published_view.COLUMNS,
            caption=(
                "Our runs among the papers' published STS rows of the same backbones: "
                "Spearman $\\times$100 of cosine similarity (SentEval ``all'' setting); ours: "
                "mean $\\pm$ std over seeds; published: every row the five papers print for "
                "the backbone (baselines they quote included; Source: paper and table), best "
                "average first."
            ),
            summary=(
                "Our STS rows among every published row of the same backbones (the five "
                "papers' tables), ordered by the 7-task average."
            ),
            category="STS",
            subcategory="Beside the published rows",
            build=published_view.published_table,
        ),
        TableSpec(
            name="verdicts",
            **_eval("sts"),
            also=(
                (_eval("transfer")["inputs"], None),
                (_eval("splits")["inputs"], None),
                (_eval("probe")["inputs"], None),
                *((f"results/eval/mteb/{g}/{{method}}/{{backbone}}/seed{{seed}}.json", "mteb")
                  for g in GROUPS),
            ),
            columns=verdicts.VERDICT_COLUMNS,
            metric=None,  # verdicts.verdict_table: Δ base per claim
            caption=(
                "Do the papers' claims hold? One row per claim (resources/claims.csv: the "
                "paper's table and rows) whose two methods the grid ran: $\\Delta$~base "
                "= our method $-$ the paper's baseline (mean over seeds) on the claim's measure, "
                "with a 95\\% interval over seeds and test set: a $t$-interval over the seeds "
                "with the test set's share from {resamples} paired resamples of the test items "
                "(STS: the sentence pairs, a pair several tasks hold drawn once; transfer: the "
                "examples of each fold; the split averages, the probe and the MTEB averages: "
                "seeds only; "
                "docs/statistics.md). No interval and no verdict below {min_seeds} seeds a side. "
                "Verdict, read off the interval in the claim's direction: reproduced (above "
                "{fraction} $\\times$ the paper's difference), smaller than claimed (between 0 "
                "and it), not reproduced (within {equivalence} $\\times$ it of 0: equivalence), "
                "reversed (past 0 the other way), inconclusive; untestable where the paper's "
                "difference is "
                "below the test set's floor; on a backbone, LLM, protocol or scale the paper "
                "did not use, a direction check only. Family: the verdict with each row's "
                "interval widened to 1 $-$ 0.05/$k$ over the $k$ rows of its paper and "
                "measure; $p$ (family): the corrected $p$ of the raw verdict. MDE: the smallest "
                "true effect read as reproduced with {power} power at the seeds run, under the "
                "family's correction. $p$: of no difference. "
                "$\\Delta$~paper = our mean $-$ the paper's number for the method, "
                "with the interval of one run (the paper's single run as one more seed of ours)."
            ),
            summary=(
                "Verdicts: each claim of the papers (their table and rows) with our difference, "
                "a 95% interval over seeds and test set, the paper's difference, the minimum "
                "detectable effect and the verdict before and after the correction over the "
                "paper's family; direction checks only where the "
                "backbone, LLM, protocol or scale is not the paper's."
            ),
            category="STS",
            subcategory="Verdicts",
            build=verdicts.verdict_table,
        ),
        TableSpec(
            name="checkpoints",
            **_eval("sts"),
            columns=verdicts.CHECKPOINT_COLUMNS,
            metric=None,  # verdicts.checkpoint_table: the training gap
            caption=(
                "The authors' released checkpoints (config/defaults.yaml released) through our evaluator: "
                "7-task STS average (Spearman $\\times$100); Paper: the published number the "
                "checkpoint reproduces; Ours: our training of the same method (mean over seeds); "
                "evaluation gap = released $-$ paper (one model on the test set the paper's number "
                "is from: no interval), training gap = ours $-$ released with the 95\\% interval "
                "of one run (the released model as one more seed of ours; from {min_seeds} seeds; "
                "docs/statistics.md)."
            ),
            summary=(
                "Released checkpoints: the paper's number, the checkpoint through our evaluator, "
                "our training, the evaluation gap and the training gap with the interval of one "
                "run."
            ),
            category="STS",
            subcategory="Released checkpoints",
            build=verdicts.checkpoint_table,
        ),
    ]
    return {spec.name: spec for spec in specs}


#: Every table, by name (rules/tables.smk makes one job per grid-wide table).
TABLES: dict[str, TableSpec] = _tables()
#: a table's name: part of its files' names and a wildcard value
TABLE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


def register(spec: TableSpec) -> TableSpec:
    """Add a table (a plug-in's); a name another table holds is an error."""
    if not isinstance(spec, TableSpec):
        raise TypeError(f"{spec!r} is not a TableSpec")
    if not TABLE_NAME.fullmatch(spec.name):
        raise ValueError(
            f"table name {spec.name!r}: letters, digits and _ . + -, a letter or digit first"
        )
    old = TABLES.get(spec.name)
    if old is not None and old is not spec:
        raise ValueError(f"table '{spec.name}' registered twice")
    TABLES[spec.name] = spec
    return spec


load_plugins("tables", register)


def table_spec(name: str) -> TableSpec:
    """The spec called ``name``; an unknown name is one error listing the known ones."""
    if name not in TABLES:
        raise KeyError(f"unknown table {name!r}; known: {', '.join(TABLES)}")
    return TABLES[name]
