# Snakemake glue: the config is validated here and the rules ask the workflow plan
# (src/negcse/workflow/plan/) for their inputs, outputs and arguments.
import inspect
import json
import os
import re
import shlex
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger

# The workflow uses the package of its own checkout, installed or not.
PACKAGE_SRC = Path(workflow.basedir) / "src"
sys.path.insert(0, str(PACKAGE_SRC))

from negcse.workflow.config import (
    ConfigError,
    check_config,
    check_config_files,
    check_unique_keys,
)
from negcse.generators import registry as generators
from negcse.workflow.gpu_estimate import COSTS_FILE, grid_table, load_costs
from negcse.workflow.seed_costs import seed_report
from negcse.workflow.gpu_slots import job_limit
from negcse.workflow import worker_process
from negcse.workflow.plan.load import with_defaults
from negcse.tables.specs import TABLES
from negcse.workflow.plan import (
    MTEB_GROUPS,
    SUBJECTS,
    Plan,
    alternation as _alternation,
    quoted,
)

# The config: config/defaults.yaml, params.yaml over it (Snakefile), then --configfile overlays.
# The suite's own checks (their messages name the key; Snakemake's `validate` would print the
# whole config), then the schema's defaults, the evaluations' keys included (negcse.workflow.config.schema).
_CLI_FILES = [str(f) for f in workflow.overwrite_configfiles or []]
CONFIG_FILES = [
    str(f) for f in workflow.configfiles if str(f) not in _CLI_FILES
] + _CLI_FILES
try:
    # Snakemake skips a missing configfile when --configfile is given: the defaults are needed
    if not (Path(workflow.basedir) / "config/defaults.yaml").is_file():
        raise ConfigError(
            f"{Path(workflow.basedir) / 'config/defaults.yaml'}: missing (the suite's defaults)"
        )
    check_unique_keys(CONFIG_FILES)
    check_config(
        config,
        source=" merged with ".join(CONFIG_FILES) or "the config",
        # a wrong key is named in the file that wrote it (not when --config may have)
        files=[] if workflow.config_settings.config else CONFIG_FILES,
    )
    check_config_files(config, CONFIG_FILES)
    with_defaults(config)
except ConfigError as exc:
    raise WorkflowError(str(exc)) from None

# Jobs run `python -m negcse` from this checkout, installed or not (e.g. in a conda env), on the
# config's device (auto | cuda | cpu: negcse.runtime.device reads NEGCSE_DEVICE; a GPU profile says cuda)
shell.prefix(
    f"export PYTHONPATH={shlex.quote(str(PACKAGE_SRC))}${{{{PYTHONPATH:+:$PYTHONPATH}}}}; "
    f"export NEGCSE_DEVICE={shlex.quote(config['device'])}; "
)

# A local run on a machine with GPUs starts at most its GPUs x NEGCSE_JOBS_PER_GPU GPU jobs at
# once (a profile's gpu: 2 on a one-GPU box would start a job that waits for the other's slot)
if workflow.local_exec:
    _gpu = workflow.global_resources.get("gpu")
    _limit = job_limit(None if _gpu is None else _gpu.value)
    if _limit is not None:
        workflow.register_resource("gpu", _limit[0])
        logger.info(_limit[1])

PLAN = Plan(config, log=logger.info)
CORPUS = PLAN.corpus  # the main corpus (rule corpus)
CORPORA = PLAN.corpora  # the mixed ones (rule mixed_corpus, GCSE's domain setting)
MTEB_GROUP_PATTERN = _alternation(MTEB_GROUPS)


wildcard_constraints:
    **PLAN.wildcard_patterns(),


grid_path = PLAN.grid_path
mirror_arg = PLAN.mirror_arg


def ask(question):
    """An input or params function: the plan's answer for the job's wildcards (those it names)."""
    names = inspect.signature(question).parameters
    return lambda wildcards: question(
        **{k: v for k, v in wildcards.items() if k in names}
    )


def train_inputs(wildcards):
    try:
        return PLAN.train_inputs(**wildcards)
    except KeyError as err:
        raise WorkflowError(err.args[0]) from None


def column_args(wildcards, input):
    return PLAN.column_args(wildcards.method, input)


def evaluation_args(wildcards, input, output, threads):
    return PLAN.evaluation_args(
        dict(wildcards.items()), dict(input.items()), dict(output.items()), threads
    )


def evaluation_outputs(subject):
    """The plan's outputs of an evaluation job, those with report keywords in report()
    (captions relative to rules/; labels: the path's wildcards)."""
    out = {}
    for name, (path, keywords) in PLAN.evaluation_outputs(subject).items():
        out[name] = path
        if keywords:
            labels = {w: f"{{{w}}}" for w in re.findall(r"{(\w+)}", path)}
            caption = f"../{keywords['caption']}"
            out[name] = report(path, **{**keywords, "caption": caption}, labels=labels)
    return out


def table_report(attribute):
    """A spec attribute (report caption, category, subcategory) for report()."""
    return lambda wildcards: getattr(TABLES[wildcards.table], attribute)


def all_inputs(wildcards):
    """Every target (rule all). A dry run prints the GPU-hours estimate first, as `negcse
    estimate` does: Snakemake knows it is one (workflow.dryrun) once it builds the DAG, not
    when it reads the rule files."""
    if workflow.dryrun:
        costs = Path(workflow.basedir) / COSTS_FILE
        logger.info(
            f"{grid_table(PLAN, costs)}\n{seed_report(PLAN, load_costs(costs))}"
            if costs.is_file()
            else f"No GPU-hours estimate: {costs} is missing (benchmarks/gpu.py)"
        )
    return PLAN.all_targets()
