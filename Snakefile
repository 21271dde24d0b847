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


# runtime.worker (the smoke profile): one warm process imports torch and transformers once and
# runs each job's `python -m negcse` in a forked child (negcse.runtime.worker); a job it refuses,
# or any job once it is gone, runs in its own process, as without it
WORKER = {}


onstart:
    if (
        config["runtime"]["worker"]
        and workflow.local_exec
        and not workflow.remote_exec
    ):
        env = worker_process.job_env(
            os.environ, str(PACKAGE_SRC), config["device"], worker_process.SOCKET
        )
        WORKER["process"] = worker_process.start(env)
        if WORKER["process"] is not None:
            os.environ[worker_process.ENV] = worker_process.SOCKET


onsuccess:
    worker_process.stop(WORKER.pop("process", None))


onerror:
    worker_process.stop(WORKER.pop("process", None))
