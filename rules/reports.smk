# One page per paper (src/negcse/tables/reports.py): its claims' verdicts, STS rows, released
# checkpoints and figures, from the built tables' CSV twins; after the tables. Input
# functions: rules/common.smk.


rule paper_report:
    input:
        sts="results/tables/sts.csv",
        verdicts="results/tables/verdicts.csv",
        checkpoints="results/tables/checkpoints.csv",
        figures=paper_figures,
    output:
        md="results/reports/{paper}.md",
        html=report(
            "results/reports/{paper}.html",
            caption="../report/paper_report.rst",
            category="Papers",
            labels={"paper": "{paper}"},
        ),
    log:
        "logs/reports/{paper}.log",
    wildcard_constraints:
        paper=_alternation(PAPER_PAGES) or "(?!)",
    conda:
        "../envs/negcse.yaml"
    params:
        methods=quoted(METHODS),
        baselines=" ".join(f"{m}={b}" for m, b in method_baselines(config).items()),
    shell:
        "python -m negcse paper-report --paper {wildcards.paper} --methods {params.methods} "
        "--baselines {params.baselines} --sts {input.sts} --verdicts {input.verdicts} "
        "--checkpoints {input.checkpoints} --figures {input.figures} --out {output.md} "
        "--html {output.html} 2> {log}"
