# Training: one job per method x backbone x seed. Resumable: a killed job rerun by the same
# command continues from results/checkpoints/ (kept outside the declared output on purpose).


rule train:
    input:
        unpack(train_inputs),
    output:
        directory("results/models/{method}/{backbone}/seed{seed}"),
    log:
        "logs/train/{method}/{backbone}/seed{seed}.log",
    benchmark:
        "benchmarks/rules/train/{method}/{backbone}/seed{seed}.tsv"
    conda:
        "../envs/negcse.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=32000,
        runtime=360,
    params:
        run=ask(PLAN.run_spec),
        columns=column_args,
        guides=ask(PLAN.guide_args),
        checkpoints="results/checkpoints/{method}/{backbone}/seed{seed}",
        protocol=config["evaluation"]["protocol"],
        mirror=mirror_arg(),
    shell:
        "python -m negcse.workflow.gpu_slots -- "
        "python -m negcse train --run {params.run:q} --seed {wildcards.seed:q} "
        "--corpus {input.corpus:q} {params.columns} {params.guides} --out {output:q} "
        "--checkpoint-dir {params.checkpoints:q} --eval-protocol {params.protocol:q} "
        "--threads {threads} {params.mirror} 2> {log:q}"


# A frozen guide's encodings of its students' corpus, once per guide model and corpus
# (negcse.workflow.plan.guide_cache): RankCSE's and RLRD's teachers, GCSE's stage-1 model.
rule encode_guide:
    input:
        unpack(ask(PLAN.guide_cache_inputs)),
    output:
        directory("results/guides/{key}"),
    log:
        "logs/encode_guide/{key}.log",
    benchmark:
        "benchmarks/rules/encode_guide/{key}.tsv"
    conda:
        "../envs/negcse.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=32000,
        runtime=120,
    params:
        args=ask(PLAN.guide_cache_args),
        mirror=mirror_arg(),
    shell:
        "python -m negcse.workflow.gpu_slots -- "
        "python -m negcse encode-guide {params.args} --out {output:q} "
        "--threads {threads} {params.mirror} 2> {log:q}"
