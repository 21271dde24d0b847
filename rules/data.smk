# Data: evaluation sets and the training corpus, from the mirror or their canonical sources,
# every file sha256-verified against src/negcse/resources/datasets.tsv.


rule sts_data:
    output:
        "results/data/sts_manifest.tsv",
    log:
        "logs/data/sts_data.log",
    benchmark:
        "benchmarks/rules/data/sts_data.tsv"
    retries: 2
    localrule: True
    conda:
        "../envs/negcse.yaml"
    params:
        mirror=mirror_arg(),
    shell:
        "python -m negcse fetch-data --files 'senteval/STS/*' 'senteval/SICK/*' 'raw/*' "
        "--manifest {output:q} {params.mirror} 2> {log:q}"


rule corpus:
    output:
        corpus="results/data/corpus/{corpus}.txt",
        stats="results/data/corpus/{corpus}.stats.json",
    log:
        "logs/data/corpus_{corpus}.log",
    benchmark:
        "benchmarks/rules/data/corpus_{corpus}.tsv"
    wildcard_constraints:
        corpus=re.escape(CORPUS),
    retries: 2
    localrule: True
    conda:
        "../envs/negcse.yaml"
    params:
        source=config["corpus"]["source"],
        max_sentences=config["corpus"]["max_sentences"] or 0,
        max_chars=config["corpus"]["max_chars"],
        on_bad_line=config["corpus"]["on_bad_line"],
        mirror=mirror_arg(),
    shell:
        "python -m negcse prepare-corpus --source {params.source:q} --out {output.corpus:q} "
        "--stats {output.stats:q} --max-chars {params.max_chars:q} "
        "--on-bad-line {params.on_bad_line:q} --max-sentences {params.max_sentences:q} "
        "{params.mirror} 2> {log:q}"


rule mixed_corpus:
    """A corpus of params.yaml's `corpora` (GCSE's domain setting): domain sentences, then three
    general ones per domain line (seeded); offline, a domain file not at hand (PAWS) is skipped,
    logged and listed in the stats."""
    output:
        corpus="results/data/corpus/{corpus}.txt",
        stats="results/data/corpus/{corpus}.stats.json",
    log:
        "logs/data/corpus_{corpus}.log",
    benchmark:
        "benchmarks/rules/data/corpus_{corpus}.tsv"
    wildcard_constraints:
        corpus=_alternation(CORPORA) or "(?!)",  # none configured: matches nothing
    retries: 2
    localrule: True
    conda:
        "../envs/negcse.yaml"
    params:
        spec=lambda wildcards: shlex.quote(
            json.dumps(config["corpora"][wildcards.corpus])
        ),
        mirror=mirror_arg(),
    shell:
        "python -m negcse mix-corpus --spec {params.spec} --out {output.corpus:q} "
        "--stats {output.stats:q} {params.mirror} 2> {log:q}"


rule prefetch:
    """On a networked machine: every registered data file and every model the config names,
    sha256-verified, laid out as a mirror in results/mirror (copy it to the air-gapped side and
    point NEGCSE_MIRROR at it)."""
    output:
        directory("results/mirror"),
    log:
        "logs/data/prefetch.log",
    retries: 2
    localrule: True
    conda:
        "../envs/negcse.yaml"
    params:
        models=PLAN.prefetch_models(),
        mirror=mirror_arg(),
    shell:
        "python -m negcse fetch-data --fill-mirror {output:q} --models {params.models} "
        "--manifest {output:q}/MANIFEST.negcse.tsv {params.mirror} 2> {log:q}"
