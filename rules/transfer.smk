# SentEval transfer tasks (MR, CR, SUBJ, MPQA, SST2, TREC, MRPC) for every trained model and each
# untrained backbone, and the transfer table beside the papers' (GCSE Table 7, OssCSE Table 5).
# evaluation.transfer sets the tasks, folds and classifier; the smoke config reduces them, and
# the table's caption says so.


rule transfer_data:
    output:
        "results/data/transfer_manifest.tsv",
    log:
        "logs/data/transfer_data.log",
    benchmark:
        "benchmarks/rules/data/transfer_data.tsv"
    retries: 2
    conda:
        "../envs/negcse.yaml"
    params:
        mirror=mirror_arg(),
    shell:
        "python -m negcse fetch-data --files 'senteval/MR/*' 'senteval/CR/*' 'senteval/SUBJ/*' "
        "'senteval/MPQA/*' 'senteval/SST/binary/*' 'senteval/TREC/*' 'senteval/MRPC/*' "
        "--manifest {output} {params.mirror} 2> {log}"


rule evaluate_transfer:
    input:
        model="results/models/{method}/{backbone}/seed{seed}",
        data="results/data/transfer_manifest.tsv",
    output:
        "results/eval/transfer/{method}/{backbone}/seed{seed}.json",
    log:
        "logs/eval/transfer/{method}/{backbone}/seed{seed}.log",
    benchmark:
        "benchmarks/rules/eval/transfer/{method}/{backbone}/seed{seed}.tsv"
    conda:
        "../envs/negcse.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=16000,
    params:
        protocol=transfer_args(),
        batch_size=config["evaluation"]["batch_size"],
        mirror=mirror_arg(),
    shell:
        "python -m negcse evaluate-transfer --model {input.model} --pooler auto "
        "{params.protocol} --batch-size {params.batch_size} --out {output} "
        "--tag method={wildcards.method} --tag backbone={wildcards.backbone} "
        "--tag seed={wildcards.seed} --threads {threads} {params.mirror} 2> {log}"


rule evaluate_transfer_untrained:
    input:
        data="results/data/transfer_manifest.tsv",
    output:
        "results/eval/transfer/untrained/{backbone}.json",
    log:
        "logs/eval/transfer/untrained/{backbone}.log",
    benchmark:
        "benchmarks/rules/eval/transfer/untrained/{backbone}.tsv"
    conda:
        "../envs/negcse.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=16000,
    params:
        pooler=config["evaluation"]["baseline_pooler"],
        protocol=transfer_args(),
        batch_size=config["evaluation"]["batch_size"],
        mirror=mirror_arg(),
    shell:
        "python -m negcse evaluate-transfer --model {wildcards.backbone} "
        "--pooler {params.pooler} {params.protocol} --batch-size {params.batch_size} "
        "--out {output} --tag method=untrained --tag backbone={wildcards.backbone} "
        "--threads {threads} {params.mirror} 2> {log}"


rule transfer_table:
    input:
        transfer_evals(),
    output:
        tex=report(
            "results/tables/transfer.tex",
            caption="../report/transfer_table.rst",
            category="Transfer",
        ),
        csv="results/tables/transfer.csv",
        md="results/tables/transfer.md",
    log:
        "logs/tables/transfer.log",
    conda:
        "../envs/negcse.yaml"
    shell:
        "python -m negcse table-transfer --evals {input} --tex {output.tex} "
        "--csv {output.csv} --md {output.md} 2> {log}"
