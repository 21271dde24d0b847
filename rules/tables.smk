# Tables: our numbers (mean +- std over seeds) beside the papers', one job per table spec
# (src/negcse/tables/specs.py: inputs, columns, caption, published numbers).


rule table:
    input:
        table_inputs,
    output:
        tex="results/tables/{table}.tex",
        csv="results/tables/{table}.csv",
        md="results/tables/{table}.md",
        html=report(
            "results/tables/{table}.html",
            caption="../report/table.rst",
            category=table_report("category"),
            subcategory=table_report("subcategory"),
        ),
        metrics="results/metrics/{table}.json",
    log:
        "logs/tables/{table}.log",
    wildcard_constraints:
        table=_alternation(GRID_TABLES),
    conda:
        "../envs/negcse.yaml"
    params:
        baselines=quoted(f"{m}={b}" for m, b in method_baselines(config).items()),
        released=quoted(config.get("released") or {}),
        caption=table_report("summary"),
    shell:
        "python -m negcse table {wildcards.table:q} --evals {input:q} --tex {output.tex:q} "
        "--csv {output.csv:q} --md {output.md:q} --html {output.html:q} "
        "--metrics {output.metrics:q} --baselines {params.baselines} "
        "--released {params.released} 2> {log:q}"


rule case_study_table:
    input:
        case_study_inputs,
    output:
        tex="results/tables/case_study_{backbone}.tex",
        csv="results/tables/case_study_{backbone}.csv",
        md="results/tables/case_study_{backbone}.md",
        html=report(
            "results/tables/case_study_{backbone}.html",
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
        "python -m negcse table case_study --evals {input:q} --tex {output.tex:q} "
        "--csv {output.csv:q} --md {output.md:q} --html {output.html:q} 2> {log:q}"
