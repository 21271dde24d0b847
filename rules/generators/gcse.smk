# GCSE's triplets. An LLM writes candidates for the corpus's first sources (one file per
# synthesis settings, shared by every backbone and seed; responses cached beside it, so a killed
# job resumes without asking again), then the frozen stage-1 model (SimCSE's train rule, the
# method's `evaluation` guide) denoises them into aligned anchor / positive / negative columns,
# one set per backbone and seed. The generator's facts: src/negcse/generators/specs/gcse.py.


rule gcse_synthesize:
    input:
        corpus="results/data/corpus/{corpus}.txt",
    output:
        candidates=GCSE_CANDIDATES,
        report=GCSE_SYNTHESIS_REPORT,
    log:
        "logs/gcse/candidates/{corpus}/{synthesis}.log",
    benchmark:
        "benchmarks/rules/gcse/candidates/{corpus}/{synthesis}.tsv"
    wildcard_constraints:
        synthesis=_alternation(GCSE_SYNTHESES) or "[^/]+",
    conda:
        "../../envs/llm.yaml"
    threads: 2
    resources:
        gpu=gcse_synthesis_gpu,
        mem_mb=32000,
        runtime=1440,
    params:
        settings=gcse_synthesis_settings,
        cache=GCSE_CACHE,
        slots=gcse_synthesis_prefix,
    shell:
        "{params.slots} python -m negcse gcse-synthesize --input {input.corpus:q} "
        "--output {output.candidates:q} --report {output.report:q} --cache {params.cache:q} "
        "{params.settings} --threads {threads} 2> {log:q}"


rule gcse_denoise:
    input:
        unpack(gcse_denoise_inputs),
    output:
        anchors="results/gcse/triplets/{corpus}/{triplets}/gcse_anchor/{backbone}/seed{seed}.txt",
        positives="results/gcse/triplets/{corpus}/{triplets}/gcse_positive/{backbone}/seed{seed}.txt",
        negatives="results/gcse/triplets/{corpus}/{triplets}/gcse_negative/{backbone}/seed{seed}.txt",
        report=GCSE_DENOISE_REPORT,
    log:
        "logs/gcse/triplets/{corpus}/{triplets}/{backbone}/seed{seed}.log",
    benchmark:
        "benchmarks/rules/gcse/triplets/{corpus}/{triplets}/{backbone}/seed{seed}.tsv"
    wildcard_constraints:
        triplets=_alternation(GCSE_TRIPLETS) or "[^/]+",
    conda:
        "../../envs/llm.yaml"
    threads: 1
    resources:
        gpu=1,
        mem_mb=16000,
        runtime=120,
    params:
        settings=gcse_denoise_settings,
        mirror=mirror_arg(),
    shell:
        "python -m negcse.workflow.gpu_slots -- "
        "python -m negcse gcse-denoise --candidates {input.candidates:q} "
        "--anchors {output.anchors:q} --positives {output.positives:q} "
        "--negatives {output.negatives:q} --report {output.report:q} {params.settings} "
        "--seed {wildcards.seed:q} --threads {threads} {params.mirror} 2> {log:q}"
