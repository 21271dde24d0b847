# OssCSE's paraphrases (positives): back-translation through the wmt19 pivots, or the offline
# fallback's surface edits, then the candidates kept by word MER. One file per corpus, shared
# by every backbone and seed. The generator's facts: specs/osscse_paraphrase.py.


rule back_translation:
    input:
        "results/data/corpus/{corpus}.txt",
    output:
        BACKTRANSLATION,
    log:
        "logs/negatives/osscse_paraphrase/{corpus}/bt_{pivot}.log",
    benchmark:
        "benchmarks/rules/negatives/osscse_paraphrase/{corpus}/bt_{pivot}.tsv"
    wildcard_constraints:
        pivot=_alternation(OSSCSE_PARAPHRASE["pivots"]),
    conda:
        "../../envs/negcse.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=32000,
        runtime=720,
    params:
        models=translation_args,
        cache="results/cache/backtranslation/{pivot}.sqlite",
        num_beams=OSSCSE_PARAPHRASE["num_beams"],
        max_length=OSSCSE_PARAPHRASE["max_length"],
        batch_size=OSSCSE_PARAPHRASE["batch_size"],
        precision=OSSCSE_PARAPHRASE["precision"],
        mirror=mirror_arg(),
    shell:
        "python -m negcse.workflow.gpu_slots -- "
        "python -m negcse back-translate --corpus {input:q} --output {output:q} "
        "{params.models} --cache {params.cache:q} "
        "--num-beams {params.num_beams:q} --max-length {params.max_length:q} "
        "--batch-size {params.batch_size:q} --precision {params.precision:q} "
        "--threads {threads} --no-progress {params.mirror} 2> {log:q}"


rule surface_edits:
    input:
        "results/data/corpus/{corpus}.txt",
    output:
        SURFACE_EDITS,
    log:
        "logs/negatives/osscse_paraphrase/{corpus}/surface_edits.log",
    benchmark:
        "benchmarks/rules/negatives/osscse_paraphrase/{corpus}/surface_edits.tsv"
    conda:
        "../../envs/negcse.yaml"
    params:
        rate=OSSCSE_PARAPHRASE["edit_rate"],
        seed=OSSCSE_PARAPHRASE["seed"],
    shell:
        "python -m negcse surface-edits --corpus {input:q} --output {output:q} "
        "--rate {params.rate:q} --seed {params.seed:q} 2> {log:q}"


rule osscse_paraphrase:
    input:
        unpack(paraphrase_candidates),
        corpus="results/data/corpus/{corpus}.txt",
    output:
        paraphrases=generator_output("osscse_paraphrase"),
        stats="results/negatives/osscse_paraphrase/{corpus}/stats.json",
    log:
        "logs/negatives/osscse_paraphrase/{corpus}/select.log",
    benchmark:
        "benchmarks/rules/negatives/osscse_paraphrase/{corpus}/select.tsv"
    conda:
        "../../envs/negcse.yaml"
    params:
        candidates=candidate_args,
        mer_min=OSSCSE_PARAPHRASE["mer_min"],
        mer_max=OSSCSE_PARAPHRASE["mer_max"],
        seed=OSSCSE_PARAPHRASE["seed"],
    shell:
        "python -m negcse select-paraphrases --corpus {input.corpus:q} "
        "--candidates {params.candidates} --output {output.paraphrases:q} "
        "--stats {output.stats:q} --mer-min {params.mer_min:q} --mer-max {params.mer_max:q} "
        "--seed {params.seed:q} --no-progress 2> {log:q}"
