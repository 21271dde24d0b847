# PEGASUS paraphrases of the corpus: UNA's positives (GPU, cached across runs). The generator's
# facts (column, output, settings): src/negcse/generators/specs/paraphrase.py.
rule paraphrase:
    input:
        "results/data/corpus/{corpus}.txt",
    output:
        generator_output("paraphrase"),
    log:
        "logs/features/paraphrase_{corpus}.log",
    benchmark:
        "benchmarks/rules/features/paraphrase_{corpus}.tsv"
    conda:
        "../../envs/negcse.yaml"
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
        "python -m negcse.workflow.gpu_slots -- "
        "python -m negcse paraphrase --corpus {input:q} --output {output:q} "
        "--cache {params.cache:q} --model {params.model:q} --num-beams {params.num_beams:q} "
        "--max-length {params.max_length:q} --batch-size {params.batch_size:q} "
        "--precision {params.precision:q} --threads {threads} --no-progress "
        "{params.mirror} 2> {log:q}"
