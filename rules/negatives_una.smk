# UNA negatives: one file per corpus, generator settings (variant) and seed, shared by every
# backbone; "same seed, same negatives". The Table 2 ablations are other variants.
from negcse.generators.generator_settings import (
    una_args_param,
    una_negatives_input,
    una_tfidf_input,
    una_variants,
)

UNA_VARIANTS = una_variants(config)
COLUMN_FILES["una_negative"] = una_negatives_input(config, CORPUS)


rule una_negatives:
    input:
        corpus="results/data/corpus/{corpus}.txt",
        tfidf=una_tfidf_input(UNA_VARIANTS),
    output:
        "results/negatives/una/{corpus}/{variant}/seed{seed}.txt",
    log:
        "logs/negatives/una/{corpus}/{variant}/seed{seed}.log",
    benchmark:
        "benchmarks/rules/negatives/una/{corpus}/{variant}/seed{seed}.tsv"
    wildcard_constraints:
        variant=_alternation(UNA_VARIANTS),
    conda:
        "../envs/negcse.yaml"
    params:
        settings=una_args_param(UNA_VARIANTS),
    shell:
        "python -m negcse una-negatives --corpus {input.corpus} --tfidf {input.tfidf} "
        "--output {output} --seed {wildcards.seed} {params.settings} 2> {log}"
