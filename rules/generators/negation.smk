# SNCSE / OssCSE negations of the corpus (spaCy rules): one file per corpus and style, shared by
# every backbone and seed. The generator's facts: src/negcse/generators/specs/negation.py.


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
        "python -m negcse negate --input {input:q} --output {output:q} {params.style} "
        "--n-process {threads} --batch-size {params.batch_size:q} --no-progress 2> {log:q}"
