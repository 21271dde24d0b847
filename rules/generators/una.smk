# UNA: the TF-IDF table, fitted once per corpus (with its paraphrases when a method asks for
# it), and the negatives: one file per corpus, settings (variant) and seed, shared by every
# backbone; "same seed, same negatives". The Table 2 ablations are other variants. The
# generator's facts: src/negcse/generators/specs/una.py.


rule tfidf:
    input:
        "results/data/corpus/{corpus}.txt",
    output:
        TFIDF_TABLE,
    log:
        "logs/features/tfidf_{corpus}.log",
    benchmark:
        "benchmarks/rules/features/tfidf_{corpus}.tsv"
    conda:
        "../../envs/negcse.yaml"
    shell:
        "python -m negcse tfidf --input {input:q} --output {output:q} 2> {log:q}"


rule tfidf_with_paraphrases:
    input:
        corpus="results/data/corpus/{corpus}.txt",
        paraphrases=generator_output("paraphrase"),
    output:
        TFIDF_TABLE_WITH_PARAPHRASES,
    log:
        "logs/features/tfidf_{corpus}+paraphrase.log",
    benchmark:
        "benchmarks/rules/features/tfidf_{corpus}+paraphrase.tsv"
    conda:
        "../../envs/negcse.yaml"
    shell:
        "python -m negcse tfidf --input {input.corpus:q} {input.paraphrases:q} --output {output:q} "
        "2> {log:q}"


rule una_negatives:
    input:
        corpus="results/data/corpus/{corpus}.txt",
        tfidf=una_tfidf_input,
    output:
        generator_output("una"),
    log:
        "logs/negatives/una/{corpus}/{variant}/seed{seed}.log",
    benchmark:
        "benchmarks/rules/negatives/una/{corpus}/{variant}/seed{seed}.tsv"
    wildcard_constraints:
        variant=_alternation(UNA_VARIANTS),
    conda:
        "../../envs/negcse.yaml"
    params:
        settings=variant_args("una", UNA_VARIANTS),
    shell:
        "python -m negcse una-negatives --corpus {input.corpus:q} --tfidf {input.tfidf:q} "
        "--output {output:q} --seed {wildcards.seed:q} {params.settings} 2> {log:q}"
