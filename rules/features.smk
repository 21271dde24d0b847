# Features: PEGASUS paraphrases of the corpus (UNA's positives; GPU, cached across runs) and
# UNA's TF-IDF table, fitted once per corpus (with its paraphrases when a method asks for it).
from negcse.generators.generator_settings import paraphrase_input, paraphrase_settings

PARAPHRASE = paraphrase_settings(config)
COLUMN_FILES["paraphrase"] = paraphrase_input(CORPUS)


rule paraphrase:
    input:
        "results/data/corpus/{corpus}.txt",
    output:
        "results/features/paraphrase/{corpus}.txt",
    log:
        "logs/features/paraphrase_{corpus}.log",
    benchmark:
        "benchmarks/rules/features/paraphrase_{corpus}.tsv"
    conda:
        "../envs/negcse.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=32000,
        runtime=1440,
    params:
        model=PARAPHRASE["model"],
        num_beams=PARAPHRASE["num_beams"],
        max_length=PARAPHRASE["max_length"],
        batch_size=PARAPHRASE["batch_size"],
        precision=PARAPHRASE["precision"],
        # sentences paraphrased by earlier runs (any corpus) are not generated again
        cache="results/cache/paraphrase.sqlite",
        mirror=mirror_arg(),
    shell:
        "python -m negcse.gpu_slots -- "
        "python -m negcse paraphrase --corpus {input} --output {output} "
        "--cache {params.cache} --model {params.model:q} --num-beams {params.num_beams} "
        "--max-length {params.max_length} --batch-size {params.batch_size} "
        "--precision {params.precision} --threads {threads} --no-progress "
        "{params.mirror} 2> {log}"


rule tfidf:
    input:
        "results/data/corpus/{corpus}.txt",
    output:
        "results/features/tfidf/{corpus}.tsv",
    log:
        "logs/features/tfidf_{corpus}.log",
    benchmark:
        "benchmarks/rules/features/tfidf_{corpus}.tsv"
    conda:
        "../envs/negcse.yaml"
    shell:
        "python -m negcse tfidf --input {input} --output {output} 2> {log}"


rule tfidf_with_paraphrases:
    input:
        corpus="results/data/corpus/{corpus}.txt",
        paraphrases="results/features/paraphrase/{corpus}.txt",
    output:
        "results/features/tfidf/{corpus}+paraphrase.tsv",
    log:
        "logs/features/tfidf_{corpus}+paraphrase.log",
    benchmark:
        "benchmarks/rules/features/tfidf_{corpus}+paraphrase.tsv"
    conda:
        "../envs/negcse.yaml"
    shell:
        "python -m negcse tfidf --input {input.corpus} {input.paraphrases} --output {output} "
        "2> {log}"
