# Evaluation of every trained model (and each untrained backbone as a baseline row): STS, the
# SentEval transfer tasks, OssCSE's Cont./Oppn. splits and probe, and (trained models) the
# papers' analyses (src/negcse/evaluation/). One job per model runs them as one
# `negcse evaluate --only ...`: torch is imported once, the model loaded once, and each STS
# sentence encoded once for STS, splits, probe and analyses (each evaluation alone costs ~5 s
# of imports plus its own encoding pass; benchmarks/base.md).


rule evaluate_model:
    input:
        model="results/models/{method}/{backbone}/seed{seed}",
        sts="results/data/sts_manifest.tsv",
        transfer="results/data/transfer_manifest.tsv",
        sentences="results/analysis/sts_sentences.txt",
        negations="results/analysis/sts_sentences.negation.txt",
    output:
        sts="results/eval/sts/{method}/{backbone}/seed{seed}.json",
        transfer="results/eval/transfer/{method}/{backbone}/seed{seed}.json",
        splits="results/eval/splits/{method}/{backbone}/seed{seed}.json",
        probe="results/eval/probe/{method}/{backbone}/seed{seed}.json",
        analysis="results/analysis/{method}/{backbone}/seed{seed}/analysis.json",
        rank=report(
            "results/analysis/{method}/{backbone}/seed{seed}/rank_errors.tex",
            caption="../report/rank_errors.rst",
            category="Analysis",
            subcategory="Rank errors (SNCSE Table 4)",
            labels={
                "method": "{method}",
                "backbone": "{backbone}",
                "seed": "{seed}",
            },
        ),
        case=report(
            "results/analysis/{method}/{backbone}/seed{seed}/case_study.tex",
            caption="../report/case_study.rst",
            category="Analysis",
            subcategory="Normalized errors (GCSE App. J)",
            labels={
                "method": "{method}",
                "backbone": "{backbone}",
                "seed": "{seed}",
            },
        ),
    log:
        "logs/eval/{method}/{backbone}/seed{seed}.log",
    benchmark:
        "benchmarks/rules/eval/{method}/{backbone}/seed{seed}.tsv"
    conda:
        "../envs/negcse.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=32000,
        runtime=60,
    params:
        args=evaluation_args,
    shell:
        "python -m negcse.workflow.gpu_slots -- python -m negcse evaluate {params.args} 2> {log:q}"


rule evaluate_untrained:
    input:
        sts="results/data/sts_manifest.tsv",
        transfer="results/data/transfer_manifest.tsv",
    output:
        sts="results/eval/sts/untrained/{backbone}.json",
        transfer="results/eval/transfer/untrained/{backbone}.json",
        splits="results/eval/splits/untrained/{backbone}.json",
        probe="results/eval/probe/untrained/{backbone}.json",
    log:
        "logs/eval/untrained/{backbone}.log",
    benchmark:
        "benchmarks/rules/eval/untrained/{backbone}.tsv"
    conda:
        "../envs/negcse.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=32000,
        runtime=60,
    params:
        args=evaluation_args,
    shell:
        "python -m negcse.workflow.gpu_slots -- python -m negcse evaluate {params.args} 2> {log:q}"


rule evaluate_released:
    """A paper's released checkpoint (params.yaml `released`), evaluated as its own row with
    the pooler its authors' evaluation used; not trained, so no analyses."""
    input:
        sts="results/data/sts_manifest.tsv",
        transfer="results/data/transfer_manifest.tsv",
    output:
        sts="results/eval/sts/released/{released}/{backbone}.json",
        transfer="results/eval/transfer/released/{released}/{backbone}.json",
        splits="results/eval/splits/released/{released}/{backbone}.json",
        probe="results/eval/probe/released/{released}/{backbone}.json",
    log:
        "logs/eval/released/{released}/{backbone}.log",
    benchmark:
        "benchmarks/rules/eval/released/{released}/{backbone}.tsv"
    wildcard_constraints:
        released=_alternation(config.get("released") or {}) or "(?!)",
    conda:
        "../envs/negcse.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=32000,
        runtime=60,
    params:
        args=evaluation_args,
    shell:
        "python -m negcse.workflow.gpu_slots -- python -m negcse evaluate {params.args} 2> {log:q}"
