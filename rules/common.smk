# Helpers and input functions shared by the rule files; the config is validated here.
import json
import re
import shlex
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

# The workflow uses the package of its own checkout, installed or not.
PACKAGE_SRC = Path(workflow.basedir) / "src"
sys.path.insert(0, str(PACKAGE_SRC))

from negcse.config import (
    ConfigError,
    check_config,
    check_config_files,
    resolve_method,
    schema_path,
)
from negcse.tables.specs import TABLES

# Jobs run `python -m negcse` from this checkout, installed or not (e.g. in a conda env).
shell.prefix(
    f"export PYTHONPATH={shlex.quote(str(PACKAGE_SRC))}${{{{PYTHONPATH:+:$PYTHONPATH}}}}; "
)

# The suite's own checks first: their messages name the key (Snakemake's `validate` would print
# the whole config); `validate` then only fills in the schema's defaults.
_CLI_FILES = [str(f) for f in workflow.overwrite_configfiles or []]
CONFIG_FILES = [
    str(f) for f in workflow.configfiles if str(f) not in _CLI_FILES
] + _CLI_FILES
try:
    check_config(config, source=" merged with ".join(CONFIG_FILES) or "the config")
    check_config_files(config, CONFIG_FILES)
except ConfigError as exc:
    raise WorkflowError(str(exc)) from None
validate(config, schema_path(), set_default=True)

METHODS = config["grid"]["methods"]
BACKBONES = config["grid"]["backbones"]
SEEDS = config["grid"]["seeds"]
CORPUS = config["corpus"]["name"]


def _alternation(values):
    return "|".join(re.escape(str(v)) for v in values)


wildcard_constraints:
    method=_alternation(config["methods"]),
    backbone=_alternation(BACKBONES),
    seed=r"\d+",
    corpus=r"[A-Za-z0-9_.-]+",


def mirror_arg():
    """`--mirror DIR` when the config names a mirror (else $NEGCSE_MIRROR applies)."""
    return f"--mirror {shlex.quote(config['mirror'])}" if config.get("mirror") else ""


def quoted(values):
    """Config values as shell words: spaces and metacharacters stay inert."""
    return " ".join(shlex.quote(str(v)) for v in values)


def evaluation_parts(wildcards, input, output, threads):
    """The commands of one evaluation job (rules/evaluate.smk), joined by `::` for
    `negcse batch`: STS, transfer, splits + probe and, for a trained model, the analyses. The
    model is the trained folder, or the backbone itself for the untrained baseline."""
    if "method" in wildcards.keys():
        model, pooler = input.model, "auto"
        tags = [f"method={wildcards.method}", f"backbone={wildcards.backbone}"]
        tags.append(f"seed={wildcards.seed}")
    else:
        model, pooler = wildcards.backbone, config["evaluation"]["baseline_pooler"]
        tags = ["method=untrained", f"backbone={wildcards.backbone}"]
    common = (
        f"--model {quoted([model])} --pooler {quoted([pooler])} "
        f"--batch-size {config['evaluation']['batch_size']} --threads {threads} {mirror_arg()} "
        + " ".join(f"--tag {quoted([tag])}" for tag in tags)
    )
    protocol = f"--protocol {config['evaluation']['protocol']}"
    parts = [
        f"evaluate-sts {common} {protocol} --out {quoted([output.sts])}",
        f"evaluate-transfer {common} {transfer_args()} --out {quoted([output.transfer])}",
        f"evaluate-splits {common} {protocol} {splits_args()} --out {quoted([output.splits])} "
        f"--probe-out {quoted([output.probe])}",
    ]
    if "analysis" in output.keys():
        parts.append(
            f"analyze-model {common} {analysis_args()} --sentences {quoted([input.sentences])} "
            f"--negations {quoted([input.negations])} --out {quoted([output.analysis])} "
            f"--rank-tex {quoted([output.rank])} --case-tex {quoted([output.case])}"
        )
    return " :: ".join(parts)


def run_spec(wildcards):
    """Everything that determines one training run; a change here reruns exactly that run."""
    return json.dumps(
        resolve_method(config, wildcards.method, wildcards.backbone), sort_keys=True
    )


def prefetch_models():
    """Every model the config names: backbones, and generator models (e.g. an MLM)."""
    names = list(BACKBONES)
    for settings in (config.get("generators") or {}).values():
        if isinstance(settings, dict):
            names += [
                v
                for k, v in settings.items()
                if k in ("model", "mlm") and isinstance(v, str)
            ]
    return quoted(dict.fromkeys(names))


def all_targets():
    """Every table and figure; each pulls in the evaluations (and trainings) behind it."""
    return table_targets() + ["results/plots/training_curves.csv"] + analysis_targets()


# Generator outputs a method's columns come from: column name -> function(wildcards) -> path.
# Rule files that add generators register their columns here.
COLUMN_FILES = {}


def method_columns(method):
    from negcse.methods.registry import method_class

    return method_class(config["methods"][method]["implementation"]).columns


def train_inputs(wildcards):
    inputs = {"corpus": f"results/data/corpus/{CORPUS}.txt"}
    for column in method_columns(wildcards.method):
        if column not in COLUMN_FILES:
            raise ValueError(
                f"no rule produces column '{column}' (method {wildcards.method})"
            )
        inputs[column] = COLUMN_FILES[column](wildcards)
    return inputs


def column_args(wildcards, input):
    return " ".join(
        f"--column {c}={input[c]}" for c in method_columns(wildcards.method)
    )


# MTEB (rules/mteb.smk): reranking and classification of every trained model, paper grid only.
MTEB_GROUPS = ["reranking", "classification"]
MTEB_GROUP_PATTERN = _alternation(MTEB_GROUPS)


# Transfer tasks (rules/transfer.smk) and analyses (rules/analysis.smk).


def transfer_args():
    """Tasks, folds and classifier of evaluate-transfer (evaluation.transfer)."""
    settings = config["evaluation"]["transfer"]
    return (
        f"--tasks {quoted(settings['tasks'])} --kfold {settings['kfold']} "
        f"--classifier {settings['classifier']}"
    )


def analysis_negation_args():
    """The SNCSE negation settings of the training data (generators.negation)."""
    negation = (config.get("generators") or {}).get("negation") or {}
    return "--reference-quirks" if negation.get("reference_quirks") else ""


def analysis_args():
    s = config["analysis"]
    return (
        f"--protocol {config['evaluation']['protocol']} --min-gold {s['min_gold']} "
        f"--max-overlap {s['max_overlap']} --overlap {s['overlap']} "
        f"--rank-tasks {quoted(s['rank_tasks'])} --top-k {s['top_k']} --ties {s['ties']} "
        f"--error-threshold {s['error_threshold']} --partner-seed {s['seed']}"
    )


def analysis_jsons(backbones=None):
    return expand(
        "results/analysis/{method}/{backbone}/seed{seed}/analysis.json",
        method=METHODS,
        backbone=backbones or BACKBONES,
        seed=SEEDS,
    )


def analysis_figure_inputs(wildcards):
    if wildcards.figure == "training_curves":
        return expand(
            "results/models/{method}/{backbone}/seed{seed}",
            method=METHODS,
            backbone=[wildcards.backbone],
            seed=SEEDS,
        )
    return analysis_jsons([wildcards.backbone])


def analysis_targets():
    figures = expand(
        "results/figures/{backbone}/{figure}.{ext}",
        backbone=BACKBONES,
        figure=["soft_negatives", "hard_positives", "training_curves"],
        ext=["png", "pdf"],
    )
    per_model = expand(
        "results/analysis/{method}/{backbone}/seed{seed}/{name}.tex",
        method=METHODS,
        backbone=BACKBONES,
        seed=SEEDS,
        name=["rank_errors", "case_study"],
    )
    return figures + per_model


# OssCSE Cont./Oppn. splits and Appendix B probe (rules/evaluate.smk, tables: rules/tables.smk).


def splits_args():
    """`--datasets ...` when evaluation.splits.datasets names a reduced set (smoke); else all."""
    settings = config["evaluation"].get("splits") or {}
    datasets = settings.get("datasets")
    return f"--datasets {quoted(datasets)}" if datasets else ""


# Tables (rules/tables.smk): one job per spec of negcse.tables.specs.TABLES.


def table_enabled(spec):
    """False when the table needs an evaluation setting that is off (e.g. evaluation.mteb)."""
    return spec.when is None or bool(config["evaluation"][spec.when])


def table_evals(spec, backbones=None):
    """The files a table reads: every trained model's, then (evaluation.baseline) each
    untrained backbone's."""
    backbones = backbones or BACKBONES
    files = expand(
        spec.inputs, **spec.expand, method=METHODS, backbone=backbones, seed=SEEDS
    )
    if spec.untrained and config["evaluation"]["baseline"]:
        files += expand(spec.untrained, backbone=backbones)
    return files


def table_inputs(wildcards):
    return table_evals(TABLES[wildcards.table])


def case_study_inputs(wildcards):
    return table_evals(TABLES["case_study"], [wildcards.backbone])


def table_report(attribute):
    """A spec attribute (report caption, category, subcategory) for report()."""
    return lambda wildcards: getattr(TABLES[wildcards.table], attribute)


def grid_tables():
    """The grid-wide tables of this config; a table switched off is logged (MTEB: the offline
    smoke grid's mirror has no MTEB data)."""
    from snakemake.logging import logger

    names = []
    for name, spec in TABLES.items():
        if spec.per_backbone:
            continue
        if table_enabled(spec):
            names.append(name)
        elif name == "mteb":
            logger.info(
                "MTEB evaluation skipped: evaluation.mteb is false (the MTEB datasets are not "
                "in the offline mirror; set it true where they are cached or can be downloaded)"
            )
        else:
            logger.info(f"{name} table skipped: evaluation.{spec.when} is false")
    return names


GRID_TABLES = grid_tables()


def table_targets():
    """Every table: LaTeX, CSV, Markdown and DVC metrics of each grid-wide one, and the case
    study of each backbone."""
    return (
        expand(
            "results/tables/{table}.{ext}", table=GRID_TABLES, ext=["tex", "csv", "md"]
        )
        + expand("results/metrics/{table}.json", table=GRID_TABLES)
        + expand("results/tables/case_study_{backbone}.tex", backbone=BACKBONES)
    )


# Dry run: the estimated GPU hours of the grid, from benchmarks/gpu_costs.csv (benchmarks/gpu.py).
def _is_dry_run(argv):
    short = [a for a in argv if a.startswith("-") and not a.startswith("--")]
    return any(a in ("--dry-run", "--dryrun") for a in argv) or any(
        "n" in a[1:] and a[1:].isalpha() for a in short
    )


def print_gpu_estimate():
    """Called by the Snakefile after every rule file (COLUMN_FILES complete)."""
    if not _is_dry_run(sys.argv[1:]):
        return
    from snakemake.iocontainers import Wildcards
    from snakemake.logging import logger
    from negcse.gpu_estimate import (
        WIKI1M,
        estimate,
        format_table,
        gpu_generators,
        load_costs,
        method_columns,
    )

    costs_file = Path(workflow.basedir) / "benchmarks" / "gpu_costs.csv"
    if not costs_file.is_file():
        logger.info(
            f"No GPU-hours estimate: {costs_file} is missing (benchmarks/gpu.py)"
        )
        return
    corpus_file = Path(f"results/data/corpus/{CORPUS}.txt")
    if corpus_file.is_file():
        with corpus_file.open("rb") as fh:
            sentences = sum(1 for _ in fh)
    else:
        sentences = config["corpus"].get("max_sentences") or WIKI1M
    paths = []
    for method in METHODS:
        for backbone in BACKBONES:
            for seed in SEEDS:
                wc = Wildcards(
                    fromdict={"method": method, "backbone": backbone, "seed": seed}
                )
                for column in method_columns(config, method):
                    if column in COLUMN_FILES:
                        paths.append((column, str(COLUMN_FILES[column](wc))))
    costs = load_costs(costs_file)
    rows = estimate(config, costs, sentences, gpu_generators(config, paths))
    mteb = len(table_evals(TABLES["mteb"])) if table_enabled(TABLES["mteb"]) else 0
    unpriced = f"{mteb} MTEB evaluation jobs" if mteb else ""
    logger.info(
        format_table(rows, costs, sentences, "benchmarks/gpu_costs.csv", unpriced)
    )
