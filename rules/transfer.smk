# SentEval transfer data (MR, CR, SUBJ, MPQA, SST2, TREC, MRPC); each model's transfer run is part
# of its evaluation job (rules/evaluate.smk), the table (beside GCSE Table 7, OssCSE Table 5) is
# built in rules/tables.smk. evaluation.transfer sets the tasks, folds and classifier; the smoke
# config reduces them, and the table's caption says so.


rule transfer_data:
    output:
        "results/data/transfer_manifest.tsv",
    log:
        "logs/data/transfer_data.log",
    benchmark:
        "benchmarks/rules/data/transfer_data.tsv"
    retries: 2
    localrule: True
    conda:
        "../envs/negcse.yaml"
    params:
        mirror=mirror_arg(),
    shell:
        "python -m negcse fetch-data --files 'senteval/MR/*' 'senteval/CR/*' 'senteval/SUBJ/*' "
        "'senteval/MPQA/*' 'senteval/SST/binary/*' 'senteval/TREC/*' 'senteval/MRPC/*' "
        "--manifest {output:q} {params.mirror} 2> {log:q}"
