# SNCSE / OssCSE negations of the corpus (spaCy rules): one file per corpus and style, shared by
# every backbone and seed. The generator's facts: src/negcse/generators/specs/negation.py.
from negcse.generators.specs.negation import VARIANTS as NEGATION_VARIANTS
from negcse.generators.specs.negation import variant_args as negation_variant_args

NEGATION = generator_settings("negation")


def negation_args(wildcards):
    return negation_variant_args(wildcards.variant)


rule negation:
    input:
        "results/data/corpus/{corpus}.txt",
    output:
        generator_output("negation"),
    log:
        "logs/negatives/negation/{corpus}/{variant}.log",
    benchmark:
        "benchmarks/rules/negatives/negation/{corpus}/{variant}.tsv"
    wildcard_constraints:
        variant=_alternation(NEGATION_VARIANTS),
    conda:
        "../../envs/negcse.yaml"
    threads: 4
    params:
        style=negation_args,
        batch_size=NEGATION["batch_size"],
    shell:
        "python -m negcse negate --input {input} --output {output} {params.style} "
        "--n-process {threads} --batch-size {params.batch_size} --no-progress 2> {log}"
