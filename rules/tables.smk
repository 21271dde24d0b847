# Tables: our numbers (mean +- std over seeds) beside the papers', regenerated from results.
from negcse.config import method_baselines


rule sts_table:
    input:
        sts_evals(),
    output:
        tex=report(
            "results/tables/sts.tex", caption="../report/sts_table.rst", category="STS"
        ),
        csv="results/tables/sts.csv",
        md="results/tables/sts.md",
        metrics="results/metrics/sts.json",
    log:
        "logs/tables/sts.log",
    conda:
        "../envs/negcse.yaml"
    params:
        baselines=" ".join(f"{m}={b}" for m, b in method_baselines(config).items()),
    shell:
        "python -m negcse table-sts --evals {input} --tex {output.tex} --csv {output.csv} "
        "--md {output.md} --metrics {output.metrics} --baselines {params.baselines} 2> {log}"
