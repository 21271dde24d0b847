# The papers' analyses of every trained model: similarity distributions (SNCSE Figure 4, SAN
# Figure 4), rank errors (SNCSE Table 4), GCSE's normalized case study (Appendix J, Table 8) and
# STS-B dev training curves. Settings: analysis (params.yaml / the JSON schema).


rule analysis_sentences:
    input:
        data="results/data/sts_manifest.tsv",
    output:
        "results/analysis/sts_sentences.txt",
    log:
        "logs/analysis/sts_sentences.log",
    conda:
        "../envs/negcse.yaml"
    params:
        n=config["analysis"]["sentences"],
        seed=config["analysis"]["seed"],
        protocol=config["evaluation"]["protocol"],
        mirror=mirror_arg(),
    shell:
        "python -m negcse analysis-sentences --out {output} --n {params.n} "
        "--seed {params.seed} --protocol {params.protocol} {params.mirror} 2> {log}"


rule analysis_negations:
    input:
        "results/analysis/sts_sentences.txt",
    output:
        "results/analysis/sts_sentences.negation.txt",
    log:
        "logs/analysis/sts_sentences_negation.log",
    conda:
        "../envs/negcse.yaml"
    params:
        quirks=analysis_negation_args(),
    shell:
        "python -m negcse negate --input {input} --output {output} --style sncse "
        "{params.quirks} --no-progress 2> {log}"


rule analyze_model:
    input:
        model="results/models/{method}/{backbone}/seed{seed}",
        sentences="results/analysis/sts_sentences.txt",
        negations="results/analysis/sts_sentences.negation.txt",
    output:
        json="results/analysis/{method}/{backbone}/seed{seed}/analysis.json",
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
        "logs/analysis/{method}/{backbone}/seed{seed}.log",
    benchmark:
        "benchmarks/rules/analysis/{method}/{backbone}/seed{seed}.tsv"
    conda:
        "../envs/negcse.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=8000,
    params:
        settings=analysis_args(),
        batch_size=config["evaluation"]["batch_size"],
        mirror=mirror_arg(),
    shell:
        "python -m negcse analyze-model --model {input.model} --pooler auto "
        "--sentences {input.sentences} --negations {input.negations} --out {output.json} "
        "--rank-tex {output.rank} --case-tex {output.case} {params.settings} "
        "--batch-size {params.batch_size} --tag method={wildcards.method} "
        "--tag backbone={wildcards.backbone} --tag seed={wildcards.seed} "
        "--threads {threads} {params.mirror} 2> {log}"


rule analysis_figure:
    input:
        analysis_figure_inputs,
    output:
        png=report(
            "results/figures/{backbone}/{figure}.png",
            caption="../report/analysis_figure.rst",
            category="Analysis",
            subcategory="Figures",
            labels={"figure": "{figure}", "backbone": "{backbone}"},
        ),
        pdf="results/figures/{backbone}/{figure}.pdf",
    log:
        "logs/analysis/figures/{backbone}/{figure}.log",
    wildcard_constraints:
        figure="soft_negatives|hard_positives|training_curves",
    conda:
        "../envs/negcse.yaml"
    shell:
        "python -m negcse plot-analysis --kind {wildcards.figure} --inputs {input} "
        "--png {output.png} --pdf {output.pdf} --title {wildcards.backbone} 2> {log}"


rule analysis_case_table:
    input:
        analysis_jsons_of_backbone,
    output:
        report(
            "results/tables/case_study_{backbone}.tex",
            caption="../report/case_study_table.rst",
            category="Analysis",
            subcategory="Case study (GCSE Table 8)",
            labels={"backbone": "{backbone}"},
        ),
    log:
        "logs/tables/case_study_{backbone}.log",
    conda:
        "../envs/negcse.yaml"
    shell:
        "python -m negcse table-analysis --analyses {input} --cases-tex {output} 2> {log}"


rule analysis_table:
    input:
        analysis_jsons(),
    output:
        tex=report(
            "results/tables/analysis.tex",
            caption="../report/analysis_table.rst",
            category="Analysis",
            subcategory="Summary",
        ),
        csv="results/tables/analysis.csv",
        md="results/tables/analysis.md",
    log:
        "logs/tables/analysis.log",
    conda:
        "../envs/negcse.yaml"
    shell:
        "python -m negcse table-analysis --analyses {input} --tex {output.tex} "
        "--csv {output.csv} --md {output.md} 2> {log}"
