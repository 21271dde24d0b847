# Tables: our numbers (mean +- std over seeds) beside the papers', one job per table spec
# (src/negcse/tables/specs.py: inputs, columns, caption, published numbers). A named grid's
# (grid.name) go under results/grids/<name>/ (grid_path, rules/common.smk).


rule table:
    input:
        ask(PLAN.table_inputs),
    output:
        tex=grid_path("results/tables/{table}.tex"),
        csv=grid_path("results/tables/{table}.csv"),
        md=grid_path("results/tables/{table}.md"),
        html=report(
            grid_path("results/tables/{table}.html"),
            caption="../report/table.rst",
            category=table_report("category"),
            subcategory=table_report("subcategory"),
        ),
        metrics=grid_path("results/metrics/{table}.json"),
    log:
        grid_path("logs/tables/{table}.log"),
    wildcard_constraints:
        table=_alternation(PLAN.grid_tables),
    localrule: True
    conda:
        "../envs/negcse.yaml"
    params:
        baselines=quoted(f"{m}={b}" for m, b in PLAN.baselines.items()),
        released=quoted(config.get("released") or {}),
        caption=table_report("summary"),
        options=PLAN.table_options(),
    shell:
        "python -m negcse table {wildcards.table:q} --evals {input:q} --tex {output.tex:q} "
        "--csv {output.csv:q} --md {output.md:q} --html {output.html:q} "
        "--metrics {output.metrics:q} --baselines {params.baselines} "
        "--released {params.released} {params.options} 2> {log:q}"


# The short DVC metrics file (dvc.yaml `metrics`): each row's STS average and each claim's Δ and
# verdict, from the tables' metrics files (src/negcse/tables/dvc_metrics.py).
rule headline_metrics:
    input:
        sts=grid_path("results/metrics/sts.json"),
        verdicts=grid_path("results/metrics/verdicts.json"),
    output:
        grid_path("results/headline.json"),
    log:
        grid_path("logs/tables/headline.log"),
    localrule: True
    conda:
        "../envs/negcse.yaml"
    shell:
        "python -m negcse headline-metrics --sts {input.sts:q} --verdicts {input.verdicts:q} "
        "--out {output:q} 2> {log:q}"


rule case_study_table:
    input:
        ask(PLAN.case_study_inputs),
    output:
        tex=grid_path("results/tables/case_study_{backbone}.tex"),
        csv=grid_path("results/tables/case_study_{backbone}.csv"),
        md=grid_path("results/tables/case_study_{backbone}.md"),
        html=report(
            grid_path("results/tables/case_study_{backbone}.html"),
            caption="../report/case_study_table.rst",
            category="Analysis",
            subcategory="Case study (GCSE Table 8)",
            labels={"backbone": "{backbone}"},
        ),
    log:
        grid_path("logs/tables/case_study_{backbone}.log"),
    localrule: True
    conda:
        "../envs/negcse.yaml"
    params:
        options=PLAN.table_options(),
    shell:
        "python -m negcse table case_study --evals {input:q} --tex {output.tex:q} "
        "--csv {output.csv:q} --md {output.md:q} --html {output.html:q} {params.options} "
        "2> {log:q}"
