# negcse: unsupervised sentence embeddings with synthetic negatives, one workflow for five papers.
# Run `snakemake --profile profiles/local` (paper grid) or `--profile profiles/smoke` (CPU smoke).
from snakemake.utils import min_version

min_version("9.0")


# the suite's defaults, then the run settings over them (later wins; --configfile overlays last)
configfile: "config/defaults.yaml"
configfile: "params.yaml"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/generators.smk"
include: "rules/train.smk"
include: "rules/evaluate.smk"
include: "rules/mteb.smk"
include: "rules/tables.smk"
include: "rules/transfer.smk"
include: "rules/analysis.smk"
include: "rules/reports.smk"


rule all:
    default_target: True
    input:
        all_inputs,
