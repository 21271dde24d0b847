# OssCSE's Cont./Oppn. splits of the STS datasets (Tables 2, 3, 6) and its Appendix B probe, for
# every trained model and each untrained backbone. One job per model writes both: the probe's
# 17 sentences ride on the splits job's loaded encoder.


rule evaluate_splits:
    input:
        model="results/models/{method}/{backbone}/seed{seed}",
        data="results/data/sts_manifest.tsv",
    output:
        splits="results/eval/splits/{method}/{backbone}/seed{seed}.json",
        probe="results/eval/probe/{method}/{backbone}/seed{seed}.json",
    log:
        "logs/eval/splits/{method}/{backbone}/seed{seed}.log",
    benchmark:
        "benchmarks/rules/eval/splits/{method}/{backbone}/seed{seed}.tsv"
    conda:
        "../envs/negcse.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=8000,
    params:
        splits=splits_args(),
        protocol=config["evaluation"]["protocol"],
        batch_size=config["evaluation"]["batch_size"],
        mirror=mirror_arg(),
    shell:
        "python -m negcse evaluate-splits --model {input.model} --pooler auto "
        "--protocol {params.protocol} {params.splits} --batch-size {params.batch_size} "
        "--out {output.splits} --probe-out {output.probe} "
        "--tag method={wildcards.method} --tag backbone={wildcards.backbone} "
        "--tag seed={wildcards.seed} --threads {threads} {params.mirror} 2> {log}"


rule evaluate_splits_untrained:
    input:
        data="results/data/sts_manifest.tsv",
    output:
        splits="results/eval/splits/untrained/{backbone}.json",
        probe="results/eval/probe/untrained/{backbone}.json",
    log:
        "logs/eval/splits/untrained/{backbone}.log",
    benchmark:
        "benchmarks/rules/eval/splits/untrained/{backbone}.tsv"
    conda:
        "../envs/negcse.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=8000,
    params:
        pooler=config["evaluation"]["baseline_pooler"],
        splits=splits_args(),
        protocol=config["evaluation"]["protocol"],
        batch_size=config["evaluation"]["batch_size"],
        mirror=mirror_arg(),
    shell:
        "python -m negcse evaluate-splits --model {wildcards.backbone} "
        "--pooler {params.pooler} --protocol {params.protocol} {params.splits} "
        "--batch-size {params.batch_size} --out {output.splits} --probe-out {output.probe} "
        "--tag method=untrained --tag backbone={wildcards.backbone} "
        "--threads {threads} {params.mirror} 2> {log}"


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
