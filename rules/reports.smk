# One page per paper (src/negcse/tables/reports.py): its claims' verdicts on every measure and
# their forest plot, STS rows, released checkpoints and figures, from the built tables' CSV
# twins; after the tables. A method of no paper (methods.<m>.paper unset) gets a page of its
# own: its comparisons with its baseline, its STS rows and its rows among the published rows of
# its backbones. Input functions: rules/common.smk.


rule paper_report:
    input:
        sts=grid_path("results/tables/sts.csv"),
        verdicts=grid_path("results/tables/verdicts.csv"),
        checkpoints=grid_path("results/tables/checkpoints.csv"),
        figures=ask(PLAN.paper_figures),
    output:
        md=grid_path("results/reports/{paper}.md"),
        html=report(
            grid_path("results/reports/{paper}.html"),
            caption="../report/paper_report.rst",
            category="Papers",
            labels={"paper": "{paper}"},
        ),
        forest=grid_path("results/figures/forest/{paper}.png"),
        forest_pdf=grid_path("results/figures/forest/{paper}.pdf"),
        seeds=grid_path("results/figures/seeds/{paper}.png"),
        seeds_pdf=grid_path("results/figures/seeds/{paper}.pdf"),
    log:
        grid_path("logs/reports/{paper}.log"),
    wildcard_constraints:
        paper=_alternation(PLAN.paper_pages) or "(?!)",
    localrule: True
    conda:
        "../envs/negcse.yaml"
    params:
        methods=quoted(PLAN.methods),
        baselines=quoted(f"{m}={b}" for m, b in PLAN.baselines.items()),
        papers=quoted(f"{m}={p}" for m, p in PLAN.papers.items()),
        options=PLAN.scale_args(),
    shell:
        "python -m negcse paper-report --paper {wildcards.paper:q} --methods {params.methods} "
        "--baselines {params.baselines} --papers {params.papers} --sts {input.sts:q} "
        "--verdicts {input.verdicts:q} --checkpoints {input.checkpoints:q} "
        "--figures {input.figures:q} --out {output.md:q} --html {output.html:q} "
        "--forest {output.forest:q} --seed-strip {output.seeds:q} {params.options} 2> {log:q}"


rule method_report:
    input:
        sts=grid_path("results/tables/sts.csv"),
        verdicts=grid_path("results/tables/verdicts.csv"),
        checkpoints=grid_path("results/tables/checkpoints.csv"),
        published=grid_path("results/tables/published.csv"),
        figures=ask(PLAN.method_figures),
    output:
        md=grid_path("results/reports/methods/{method}.md"),
        html=report(
            grid_path("results/reports/methods/{method}.html"),
            caption="../report/method_report.rst",
            category="Methods",
            labels={"method": "{method}"},
        ),
    log:
        grid_path("logs/reports/methods/{method}.log"),
    wildcard_constraints:
        method=_alternation(PLAN.method_pages) or "(?!)",
    localrule: True
    conda:
        "../envs/negcse.yaml"
    params:
        methods=quoted(PLAN.methods),
        baselines=quoted(f"{m}={b}" for m, b in PLAN.baselines.items()),
        options=PLAN.scale_args(),
    shell:
        "python -m negcse paper-report --method {wildcards.method:q} --methods {params.methods} "
        "--baselines {params.baselines} --sts {input.sts:q} --verdicts {input.verdicts:q} "
        "--checkpoints {input.checkpoints:q} --published {input.published:q} "
        "--figures {input.figures:q} --out {output.md:q} --html {output.html:q} "
        "{params.options} 2> {log:q}"
