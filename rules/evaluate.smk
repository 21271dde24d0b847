# Evaluation of every trained model (and each untrained backbone as a baseline row).


rule evaluate_sts:
    input:
        model="results/models/{method}/{backbone}/seed{seed}",
        data="results/data/sts_manifest.tsv",
    output:
        "results/eval/sts/{method}/{backbone}/seed{seed}.json",
    log:
        "logs/eval/sts/{method}/{backbone}/seed{seed}.log",
    benchmark:
        "benchmarks/rules/eval/sts/{method}/{backbone}/seed{seed}.tsv"
    conda:
        "../envs/negcse.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=8000,
    params:
        protocol=config["evaluation"]["protocol"],
        batch_size=config["evaluation"]["batch_size"],
        mirror=mirror_arg(),
    shell:
        "python -m negcse evaluate-sts --model {input.model} --pooler auto "
        "--protocol {params.protocol} --batch-size {params.batch_size} --out {output} "
        "--tag method={wildcards.method} --tag backbone={wildcards.backbone} "
        "--tag seed={wildcards.seed} --threads {threads} {params.mirror} 2> {log}"


rule evaluate_sts_untrained:
    input:
        data="results/data/sts_manifest.tsv",
    output:
        "results/eval/sts/untrained/{backbone}.json",
    log:
        "logs/eval/sts/untrained/{backbone}.log",
    benchmark:
        "benchmarks/rules/eval/sts/untrained/{backbone}.tsv"
    conda:
        "../envs/negcse.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=8000,
    params:
        pooler=config["evaluation"]["baseline_pooler"],
        protocol=config["evaluation"]["protocol"],
        batch_size=config["evaluation"]["batch_size"],
        mirror=mirror_arg(),
    shell:
        "python -m negcse evaluate-sts --model {wildcards.backbone} --pooler {params.pooler} "
        "--protocol {params.protocol} --batch-size {params.batch_size} --out {output} "
        "--tag method=untrained --tag backbone={wildcards.backbone} "
        "--threads {threads} {params.mirror} 2> {log}"
