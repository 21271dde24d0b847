# Tables of OssCSE's Cont./Oppn. splits of the STS datasets (Tables 2, 3, 6) and its Appendix B
# probe. Each model's splits and probe are written by its evaluation job (rules/evaluate.smk).


rule splits_table:
    input:
        splits_evals(),
    output:
        tex=report(
            "results/tables/splits.tex",
            caption="../report/splits_table.rst",
            category="STS",
            subcategory="OssCSE Cont./Oppn. splits",
        ),
        csv="results/tables/splits.csv",
        md="results/tables/splits.md",
    log:
        "logs/tables/splits.log",
    conda:
        "../envs/negcse.yaml"
    shell:
        "python -m negcse table-splits --evals {input} --tex {output.tex} "
        "--csv {output.csv} --md {output.md} 2> {log}"


rule probe_table:
    input:
        probe_evals(),
    output:
        tex=report(
            "results/tables/probe.tex",
            caption="../report/probe_table.rst",
            category="STS",
            subcategory="OssCSE probe",
        ),
        csv="results/tables/probe.csv",
        md="results/tables/probe.md",
    log:
        "logs/tables/probe.log",
    conda:
        "../envs/negcse.yaml"
    shell:
        "python -m negcse table-probe --evals {input} --tex {output.tex} "
        "--csv {output.csv} --md {output.md} 2> {log}"
