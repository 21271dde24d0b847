# MTEB reranking (MAP, MRR@10) and classification (accuracy) of every trained model, through the
# pinned mteb library, written twice: our JSON (the tables read it) and mteb's own result files
# (`mteb.ResultCache("results/eval/mteb/<group>/<method>/<backbone>/seed<n>.mteb")`). Part of the paper grid; off in the offline smoke grid
# (evaluation.mteb: false), whose mirror has no MTEB data: the plan (negcse.workflow.plan)
# logs the skip when it reads the workflow. The datasets live in the Hugging Face cache ($HF_HOME),
# filled by mteb_data. The table is built in rules/tables.smk.


rule mteb_data:
    """Fill the Hugging Face cache with one group's MTEB datasets (needs network unless they
    are cached already; runs on the submitting host) and list dataset ids and revisions.
    """
    output:
        "results/data/mteb/{group}.json",
    log:
        "logs/data/mteb_{group}.log",
    benchmark:
        "benchmarks/rules/data/mteb_{group}.tsv"
    wildcard_constraints:
        group=MTEB_GROUP_PATTERN,
    retries: 2
    localrule: True
    conda:
        "../envs/negcse.yaml"
    shell:
        "python -m negcse fetch-mteb --group {wildcards.group:q} --out {output:q} 2> {log:q}"


rule evaluate_mteb:
    """One model on one group's tasks, data from the local cache only (never the network)."""
    input:
        model="results/models/{method}/{backbone}/seed{seed}",
        data="results/data/mteb/{group}.json",
    output:
        json="results/eval/mteb/{group}/{method}/{backbone}/seed{seed}.json",
        # the same results in mteb's own layout (results/<model>/<revision>/<task>.json)
        mteb=directory("results/eval/mteb/{group}/{method}/{backbone}/seed{seed}.mteb"),
    log:
        "logs/eval/mteb/{group}/{method}/{backbone}/seed{seed}.log",
    benchmark:
        "benchmarks/rules/eval/mteb/{group}/{method}/{backbone}/seed{seed}.tsv"
    wildcard_constraints:
        group=MTEB_GROUP_PATTERN,
    conda:
        "../envs/negcse.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=32000,
        runtime=240,
    params:
        batch_size=config["evaluation"]["batch_size"],
        mirror=mirror_arg(),
    shell:
        "python -m negcse.workflow.gpu_slots -- "
        "python -m negcse evaluate --only mteb --model {input.model:q} --pooler auto "
        "--mteb-group {wildcards.group:q} --batch-size {params.batch_size:q} "
        "--mteb-out {output.json:q} --mteb-results {output.mteb:q} "
        "--tag method={wildcards.method:q} --tag backbone={wildcards.backbone:q} "
        "--tag seed={wildcards.seed:q} --threads {threads} {params.mirror} 2> {log:q}"
