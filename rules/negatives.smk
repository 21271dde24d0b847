# SNCSE / OssCSE generators: negations of the corpus (spaCy rules) and OssCSE's paraphrases
# (back-translation kept by word MER; offline fallback: surface edits). One file per corpus,
# shared by every backbone and seed. Settings: generators.negation, generators.osscse_paraphrase.
from negcse.generators.negation_workflow import (
    candidate_args,
    column_inputs,
    negation_args,
    negation_settings,
    osscse_paraphrase_settings,
    paraphrase_candidates,
    translation_args,
)

NEGATION = negation_settings(config)
OSSCSE_PARAPHRASE = osscse_paraphrase_settings(config)
COLUMN_FILES.update(column_inputs(config, CORPUS))


rule negation:
    input:
        "results/data/corpus/{corpus}.txt",
    output:
        "results/negatives/negation/{corpus}/{variant}.txt",
    log:
        "logs/negatives/negation/{corpus}/{variant}.log",
    benchmark:
        "benchmarks/rules/negatives/negation/{corpus}/{variant}.tsv"
    wildcard_constraints:
        variant="sncse|sncse-reference|osscse",
    conda:
        "../envs/negcse.yaml"
    threads: 4
    params:
        style=negation_args,
        batch_size=NEGATION["batch_size"],
    shell:
        "python -m negcse negate --input {input} --output {output} {params.style} "
        "--n-process {threads} --batch-size {params.batch_size} --no-progress 2> {log}"


rule back_translation:
    input:
        "results/data/corpus/{corpus}.txt",
    output:
        "results/negatives/osscse_paraphrase/{corpus}/bt_{pivot}.txt",
    log:
        "logs/negatives/osscse_paraphrase/{corpus}/bt_{pivot}.log",
    benchmark:
        "benchmarks/rules/negatives/osscse_paraphrase/{corpus}/bt_{pivot}.tsv"
    wildcard_constraints:
        pivot=_alternation(OSSCSE_PARAPHRASE["pivots"]),
    conda:
        "../envs/negcse.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=32000,
        runtime=720,
    params:
        models=translation_args(config),
        cache="results/cache/backtranslation/{pivot}.sqlite",
        num_beams=OSSCSE_PARAPHRASE["num_beams"],
        max_length=OSSCSE_PARAPHRASE["max_length"],
        batch_size=OSSCSE_PARAPHRASE["batch_size"],
        precision=OSSCSE_PARAPHRASE["precision"],
        mirror=mirror_arg(),
    shell:
        "python -m negcse.gpu_slots -- "
        "python -m negcse back-translate --corpus {input} --output {output} "
        "{params.models} --cache {params.cache} "
        "--num-beams {params.num_beams} --max-length {params.max_length} "
        "--batch-size {params.batch_size} --precision {params.precision} "
        "--threads {threads} --no-progress {params.mirror} 2> {log}"


rule surface_edits:
    input:
        "results/data/corpus/{corpus}.txt",
    output:
        "results/negatives/osscse_paraphrase/{corpus}/surface_edits.txt",
    log:
        "logs/negatives/osscse_paraphrase/{corpus}/surface_edits.log",
    benchmark:
        "benchmarks/rules/negatives/osscse_paraphrase/{corpus}/surface_edits.tsv"
    conda:
        "../envs/negcse.yaml"
    params:
        rate=OSSCSE_PARAPHRASE["edit_rate"],
        seed=OSSCSE_PARAPHRASE["seed"],
    shell:
        "python -m negcse surface-edits --corpus {input} --output {output} "
        "--rate {params.rate} --seed {params.seed} 2> {log}"


rule osscse_paraphrase:
    input:
        unpack(paraphrase_candidates(config)),
        corpus="results/data/corpus/{corpus}.txt",
    output:
        paraphrases="results/negatives/osscse_paraphrase/{corpus}/paraphrases.txt",
        stats="results/negatives/osscse_paraphrase/{corpus}/stats.json",
    log:
        "logs/negatives/osscse_paraphrase/{corpus}/select.log",
    benchmark:
        "benchmarks/rules/negatives/osscse_paraphrase/{corpus}/select.tsv"
    conda:
        "../envs/negcse.yaml"
    params:
        candidates=candidate_args,
        mer_min=OSSCSE_PARAPHRASE["mer_min"],
        mer_max=OSSCSE_PARAPHRASE["mer_max"],
        seed=OSSCSE_PARAPHRASE["seed"],
    shell:
        "python -m negcse select-paraphrases --corpus {input.corpus} "
        "--candidates {params.candidates} --output {output.paraphrases} "
        "--stats {output.stats} --mer-min {params.mer_min} --mer-max {params.mer_max} "
        "--seed {params.seed} --no-progress 2> {log}"
