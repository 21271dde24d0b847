# SAN negatives: the POS lexicon of the MLM's vocabulary (one per MLM), then one file of
# mask-predict samples per corpus, generator settings (variant) and seed, shared by every
# backbone and by the methods with the same settings. Settings: generators.san.
from negcse.generators.san_workflow import (
    SAN_COLUMN,
    lexicon_mlm_param,
    san_args_param,
    san_lexicon_input,
    san_mlms,
    san_samples_input,
    san_variants,
)

SAN_VARIANTS = san_variants(config)
SAN_MLMS = san_mlms(SAN_VARIANTS)
COLUMN_FILES[SAN_COLUMN] = san_samples_input(config, CORPUS)


rule pos_lexicon:
    output:
        table="results/features/pos_lexicon/{mlm}.tsv",
        stats="results/features/pos_lexicon/{mlm}.stats.json",
    log:
        "logs/features/pos_lexicon/{mlm}.log",
    benchmark:
        "benchmarks/rules/features/pos_lexicon/{mlm}.tsv"
    wildcard_constraints:
        mlm=_alternation(SAN_MLMS),
    conda:
        "../envs/negcse.yaml"
    params:
        mlm=lexicon_mlm_param(SAN_MLMS),
        mirror=mirror_arg(),
    shell:
        "python -m negcse pos-lexicon {params.mlm} --output {output.table} "
        "--stats {output.stats} --no-progress {params.mirror} 2> {log}"


rule san_negatives:
    input:
        corpus="results/data/corpus/{corpus}.txt",
        lexicon=san_lexicon_input(SAN_VARIANTS),
    output:
        samples="results/negatives/san/{corpus}/{variant}/seed{seed}.txt",
        stats="results/negatives/san/{corpus}/{variant}/seed{seed}.stats.json",
    log:
        "logs/negatives/san/{corpus}/{variant}/seed{seed}.log",
    benchmark:
        "benchmarks/rules/negatives/san/{corpus}/{variant}/seed{seed}.tsv"
    wildcard_constraints:
        variant=_alternation(SAN_VARIANTS),
    conda:
        "../envs/negcse.yaml"
    threads: 1
    resources:
        gpu=1,
        mem_mb=8000,
        runtime=240,
    params:
        settings=san_args_param(SAN_VARIANTS),
        mirror=mirror_arg(),
    shell:
        "python -m negcse.gpu_slots -- "
        "python -m negcse san-negatives --corpus {input.corpus} --lexicon {input.lexicon} "
        "--output {output.samples} --stats {output.stats} --seed {wildcards.seed} "
        "{params.settings} --threads {threads} --no-progress {params.mirror} 2> {log}"
