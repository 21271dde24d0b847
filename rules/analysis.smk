# The papers' analyses of every trained model: similarity distributions (SNCSE Figure 4, SAN
# Figure 4), rank errors (SNCSE Table 4), GCSE's normalized case study (Appendix J, Table 8) and
# STS-B dev training curves. Settings: analysis (params.yaml / the JSON schema). Each model's
# analysis runs in its evaluation job (rules/evaluate.smk); here: inputs and figures
# (tables: rules/tables.smk).


rule analysis_sentences:
    input:
        data="results/data/sts_manifest.tsv",
    output:
        "results/analysis/sts_sentences.txt",
    log:
        "logs/analysis/sts_sentences.log",
    localrule: True
    conda:
        "../envs/negcse.yaml"
    params:
        n=config["analysis"]["sentences"],
        seed=config["analysis"]["seed"],
        protocol=config["evaluation"]["protocol"],
        mirror=mirror_arg(),
    shell:
        "python -m negcse analysis-sentences --out {output:q} --n {params.n:q} "
        "--seed {params.seed:q} --protocol {params.protocol:q} {params.mirror} 2> {log:q}"


rule analysis_negations:
    input:
        "results/analysis/sts_sentences.txt",
    output:
        "results/analysis/sts_sentences.negation.txt",
    log:
        "logs/analysis/sts_sentences_negation.log",
    localrule: True
    conda:
        "../envs/negcse.yaml"
    params:
        quirks=PLAN.negation_args(),
    shell:
        "python -m negcse negate --input {input:q} --output {output:q} --style sncse "
        "{params.quirks} --no-progress 2> {log:q}"


rule analysis_figure:
    input:
        ask(PLAN.figure_inputs),
    output:
        png=report(
            grid_path("results/figures/{backbone}/{figure}/{group}.png"),
            caption="../report/analysis_figure.rst",
            category="Analysis",
            subcategory="Figures",
            labels={
                "figure": "{figure}",
                "backbone": "{backbone}",
                "methods": "{group}",
            },
        ),
        pdf=grid_path("results/figures/{backbone}/{figure}/{group}.pdf"),
    log:
        grid_path("logs/analysis/figures/{backbone}/{figure}/{group}.log"),
    wildcard_constraints:
        figure="soft_negatives|hard_positives|training_curves",
        group=_alternation(PLAN.figure_groups),
    localrule: True
    conda:
        "../envs/negcse.yaml"
    params:
        baseline=ask(PLAN.figure_baseline_arg),
    shell:
        "python -m negcse plot-analysis --kind {wildcards.figure:q} --inputs {input:q} "
        "--png {output.png:q} --pdf {output.pdf:q} --title {wildcards.backbone:q} "
        "{params.baseline} 2> {log:q}"


# The same curves as data, the loss and its logged parts beside (git-tracked; `dvc plots show`
# draws them with .dvc/plots/).
rule training_curves_data:
    input:
        PLAN.run_files("results/models/{method}/{backbone}/seed{seed}"),
    output:
        curves=grid_path("results/plots/training_curves.csv"),
        loss=grid_path("results/plots/training_loss.csv"),
    log:
        grid_path("logs/analysis/training_curves_data.log"),
    localrule: True
    conda:
        "../envs/negcse.yaml"
    shell:
        "python -m negcse curves-data --models {input:q} --out {output.curves:q} "
        "--loss-out {output.loss:q} 2> {log:q}"
