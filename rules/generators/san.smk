# SAN negatives: the POS lexicon of the MLM's vocabulary (one per MLM), then one file of
# mask-predict samples per corpus, settings (variant) and seed, shared by every backbone and by
# the methods with the same settings. The generator's facts: specs/san.py.


rule pos_lexicon:
    output:
        table=LEXICON,
        stats="results/features/pos_lexicon/{mlm}.stats.json",
    log:
        "logs/features/pos_lexicon/{mlm}.log",
    benchmark:
        "benchmarks/rules/features/pos_lexicon/{mlm}.tsv"
    wildcard_constraints:
        mlm=_alternation(SAN_MLMS),
    conda:
        "../../envs/negcse.yaml"
    params:
        mlm=lexicon_mlm_param,
        mirror=mirror_arg(),
    shell:
        "python -m negcse pos-lexicon {params.mlm} --output {output.table:q} "
        "--stats {output.stats:q} --no-progress {params.mirror} 2> {log:q}"


rule san_negatives:
    input:
        corpus="results/data/corpus/{corpus}.txt",
        lexicon=san_lexicon_input,
    output:
        samples=generator_output("san"),
        stats="results/negatives/san/{corpus}/{variant}/seed{seed}.stats.json",
    log:
        "logs/negatives/san/{corpus}/{variant}/seed{seed}.log",
    benchmark:
        "benchmarks/rules/negatives/san/{corpus}/{variant}/seed{seed}.tsv"
    wildcard_constraints:
        variant=_alternation(SAN_VARIANTS),
    conda:
        "../../envs/negcse.yaml"
    threads: 1
    resources:
        gpu=1,
        mem_mb=8000,
        runtime=240,
    params:
        settings=variant_args("san", SAN_VARIANTS),
        mirror=mirror_arg(),
    shell:
        "python -m negcse.workflow.gpu_slots -- "
        "python -m negcse san-negatives --corpus {input.corpus:q} --lexicon {input.lexicon:q} "
        "--output {output.samples:q} --stats {output.stats:q} --seed {wildcards.seed:q} "
        "{params.settings} --threads {threads} --no-progress {params.mirror} 2> {log:q}"
