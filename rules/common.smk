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

from negcse.workflow.config import (
    ConfigError,
    check_config,
    check_config_files,
    check_unique_keys,
    column_readers,
    grid_output,
    grid_runs,
    method_baselines,
    method_corpus,
    released_models,
    resolve_method,
    schema_path,
)
from negcse.analysis.groups import method_groups
from negcse.generators import registry as generators
from negcse.workflow.guide_config import (
    config_guide_models,
    guide_args,
    guide_backbones,
    guide_outputs,
    guide_specs,
)
from negcse.tables.specs import TABLES
from negcse.tables.reports import grid_papers, page_methods

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
    check_unique_keys(CONFIG_FILES)
    check_config(config, source=" merged with ".join(CONFIG_FILES) or "the config")
    check_config_files(config, CONFIG_FILES)
except ConfigError as exc:
    raise WorkflowError(str(exc)) from None
validate(config, schema_path(), set_default=True)

METHODS = config["grid"]["methods"]
BACKBONES = config["grid"]["backbones"]
# the main corpus (rule corpus) and the mixed ones (rule mixed_corpus, GCSE's domain setting)
CORPUS = config["corpus"]["name"]
CORPORA = list(config.get("corpora") or {})


def _alternation(values):
    return "|".join(re.escape(str(v)) for v in values)


wildcard_constraints:
    method=_alternation(config["methods"]),
    backbone=_alternation([*BACKBONES, *guide_backbones(config)]),
    seed=r"\d+",
    corpus=r"[A-Za-z0-9_.-]+",


def grid_path(path):
    """A grid-wide output or log path (tables, metrics, figures, curves): as written for the
    default grid, under results/grids/<grid.name>/ for a named one (its own folder)."""
    return grid_output(config, path)


if config["grid"].get("name"):
    from snakemake.logging import logger

    logger.info(
        f"grid '{config['grid']['name']}' (grid.name): its tables, metrics, figures and "
        f"curves go under {grid_path('results/tables')[: -len('tables')]}, not over the "
        "default grid's results/tables"
    )


def mirror_arg():
    """`--mirror DIR` when the config names a mirror (else $NEGCSE_MIRROR applies)."""
    return f"--mirror {shlex.quote(config['mirror'])}" if config.get("mirror") else ""


def quoted(values):
    """Config values as shell words: spaces and metacharacters stay inert."""
    return " ".join(shlex.quote(str(v)) for v in values)


def evaluation_args(wildcards, input, output, threads):
    """The arguments of `negcse evaluate` for one evaluation job (rules/evaluate.smk): STS,
    transfer, splits, probe and, for a trained model, the analyses. The model is the trained
    folder, or the backbone itself for the untrained baseline."""
    if "method" in wildcards.keys():
        model, pooler = input.model, "auto"
        tags = [f"method={wildcards.method}", f"backbone={wildcards.backbone}"]
        tags.append(f"seed={wildcards.seed}")
    elif "released" in wildcards.keys():  # a paper's checkpoint: its hub id, its pooler
        entry = config["released"][wildcards.released]
        model, pooler = entry["models"][wildcards.backbone], entry["pooler"]
        tags = [
            f"method={wildcards.released}",
            f"backbone={wildcards.backbone}",
            "seed=0",
        ]
    else:
        model, pooler = wildcards.backbone, config["evaluation"]["baseline_pooler"]
        tags = ["method=untrained", f"backbone={wildcards.backbone}"]
    only = ["sts", "transfer", "splits", "probe"]
    protocol = config["evaluation"]["protocol"]
    args = [
        f"--model {quoted([model])} --pooler {quoted([pooler])} "
        f"--batch-size {config['evaluation']['batch_size']} --threads {threads} {mirror_arg()}",
        " ".join(f"--tag {quoted([tag])}" for tag in tags),
        f"--sts-protocol {protocol} --sts-pairs --sts-out {quoted([output.sts])}",
        f"{transfer_args()} --transfer-out {quoted([output.transfer])}",
        f"--splits-protocol {protocol} {splits_args()} --splits-out {quoted([output.splits])}",
        f"--probe-out {quoted([output.probe])}",
    ]
    if "analysis" in output.keys():
        only.append("analysis")
        args.append(
            f"{analysis_args()} --analysis-sentences {quoted([input.sentences])} "
            f"--analysis-negations {quoted([input.negations])} "
            f"--analysis-out {quoted([output.analysis])} "
            f"--analysis-rank-tex {quoted([output.rank])} "
            f"--analysis-case-tex {quoted([output.case])}"
        )
    return f"--only {','.join(only)} " + " ".join(args)


def run_spec(wildcards):
    """Everything that determines one training run; a change here reruns exactly that run
    (and, through ``guide_runs``, a changed teacher reruns its students)."""
    spec = resolve_method(config, wildcards.method, wildcards.backbone)
    guides = guide_specs(config, wildcards.method, wildcards.backbone)
    if guides:
        spec["guide_runs"] = guides
    return json.dumps(spec, sort_keys=True)


def prefetch_models():
    """Every model the config names: backbones, and the models of the generators (their
    specs' ``models``: an MLM, the paraphraser, the translation pivots; per-method overrides
    too)."""
    models = [
        *BACKBONES,
        *generators.config_models(config, column_readers(config)),
        *config_guide_models(config),
        *(model for _, _, model in released_models(config)),
    ]
    return quoted(dict.fromkeys(models))


def all_targets():
    """Every table and figure; each pulls in the evaluations (and trainings) behind it."""
    curves = grid_path("results/plots/training_curves.csv")
    return table_targets() + [curves] + analysis_targets() + report_targets()


# Generated columns: a train job reads the file of each column its method declares, made by
# the column's generator (src/negcse/generators/specs/; its rules: rules/generators.smk).


def method_class_of(method):
    from negcse.methods.registry import method_class

    return method_class(config["methods"][method]["implementation"])


def method_columns(method):
    return method_class_of(method).columns


def column_file(wildcards, column):
    """The file of a generated column that a train job (method, seed) reads."""
    try:
        return generators.column_file(
            config,
            column,
            wildcards.method,
            wildcards.seed,
            method_corpus(config, wildcards.method),
            wildcards.backbone,
        )
    except KeyError as err:
        raise WorkflowError(f"{err.args[0]} (method {wildcards.method})") from None


def train_inputs(wildcards):
    """The corpus, the method's columns and its guide runs (teachers train first)."""
    corpus_column = method_class_of(wildcards.method).corpus_column
    inputs = {
        "corpus": (
            f"results/data/corpus/{method_corpus(config, wildcards.method)}.txt"
            if corpus_column is None
            else column_file(wildcards, corpus_column)
        )
    }
    for column in method_columns(wildcards.method):
        inputs[column] = column_file(wildcards, column)
    guides = guide_outputs(config, wildcards.method, wildcards.backbone, wildcards.seed)
    inputs.update({f"guide_{name}": path for name, path in guides.items()})
    return inputs


def guide_arguments(wildcards):
    """`--guide NAME=MODEL` for each guide of the method (teacher folders or released names)."""
    return guide_args(config, wildcards.method, wildcards.backbone, wildcards.seed)


def column_args(wildcards, input):
    return " ".join(
        f"--column {quoted([f'{c}={input[c]}'])}"
        for c in method_columns(wildcards.method)
    )


# MTEB (rules/mteb.smk): reranking and classification of every trained model, paper grid only.
MTEB_GROUPS = ["reranking", "classification"]
MTEB_GROUP_PATTERN = _alternation(MTEB_GROUPS)


# Transfer tasks (rules/transfer.smk) and analyses (rules/analysis.smk).


def transfer_args():
    """Tasks, folds and classifier of the transfer evaluation (evaluation.transfer)."""
    settings = config["evaluation"]["transfer"]
    return (
        f"--transfer-tasks {quoted(settings['tasks'])} --transfer-kfold {settings['kfold']} "
        f"--transfer-classifier {settings['classifier']}"
    )


def analysis_negation_args():
    """The SNCSE negation settings of the training data (generators.negation)."""
    negation = (config.get("generators") or {}).get("negation") or {}
    return "--reference-quirks" if negation.get("reference_quirks") else ""


def analysis_args():
    """Settings of the analysis evaluation (analysis)."""
    s = config["analysis"]
    return (
        f"--analysis-protocol {config['evaluation']['protocol']} "
        f"--analysis-min-gold {s['min_gold']} --analysis-max-overlap {s['max_overlap']} "
        f"--analysis-overlap {s['overlap']} --analysis-rank-tasks {quoted(s['rank_tasks'])} "
        f"--analysis-top-k {s['top_k']} --analysis-ties {s['ties']} "
        f"--analysis-error-threshold {s['error_threshold']} "
        f"--analysis-partner-seed {s['seed']}"
    )


def run_files(patterns, backbones=None, **more):
    """``patterns`` for every (method, backbone, seed) of the grid (each method with its own
    seeds: methods.<m>.seeds), with ``more`` expanded as Snakemake's expand does."""
    return [
        path
        for method, backbone, seed in grid_runs(config, backbones)
        for path in expand(
            patterns, method=method, backbone=backbone, seed=str(seed), **more
        )
    ]


# Figures: one per kind, backbone and group of at most 8 methods with their baseline
# (negcse.analysis.groups, from methods.<m>.baseline).
FIGURE_GROUPS = {
    group.name: group for group in method_groups(METHODS, method_baselines(config))
}


def analysis_figure_inputs(wildcards):
    """The group's runs on the backbone, the baseline's first (its line is drawn first)."""
    pattern = (
        "results/models/{method}/{backbone}/seed{seed}"
        if wildcards.figure == "training_curves"
        else "results/analysis/{method}/{backbone}/seed{seed}/analysis.json"
    )
    runs = grid_runs(config, [wildcards.backbone])
    return [
        pattern.format(method=m, backbone=b, seed=seed)
        for method in FIGURE_GROUPS[wildcards.group].methods
        for m, b, seed in runs
        if m == method
    ]


def figure_baseline_arg(wildcards):
    baseline = FIGURE_GROUPS[wildcards.group].baseline
    return f"--baseline {shlex.quote(baseline)}" if baseline else ""


def analysis_targets():
    figures = expand(
        grid_path("results/figures/{backbone}/{figure}/{group}.{ext}"),
        backbone=BACKBONES,
        figure=["soft_negatives", "hard_positives", "training_curves"],
        group=list(FIGURE_GROUPS),
        ext=["png", "pdf"],
    )
    per_model = run_files(
        "results/analysis/{method}/{backbone}/seed{seed}/{name}.tex",
        name=["rank_errors", "case_study"],
    )
    return figures + per_model


# OssCSE Cont./Oppn. splits and Appendix B probe (rules/evaluate.smk, tables: rules/tables.smk).


def splits_args():
    """`--splits-datasets ...` when evaluation.splits.datasets names a reduced set (smoke);
    else all."""
    settings = config["evaluation"].get("splits") or {}
    datasets = settings.get("datasets")
    return f"--splits-datasets {quoted(datasets)}" if datasets else ""


# Tables (rules/tables.smk): one job per spec of negcse.tables.specs.TABLES.


def table_enabled(spec):
    """False when the table needs an evaluation setting that is off (e.g. evaluation.mteb)."""
    return spec.when is None or bool(config["evaluation"][spec.when])


def table_evals(spec, backbones=None):
    """The files a table reads: every trained model's, then (evaluation.baseline) each
    untrained backbone's."""
    backbones = backbones or BACKBONES
    files = run_files(spec.inputs, backbones, **spec.expand)
    if spec.untrained and config["evaluation"]["baseline"]:
        files += expand(spec.untrained, backbone=backbones)
    if spec.released:  # the released checkpoints' rows
        files += [
            spec.released.format(released=name, backbone=backbone)
            for name, backbone, _ in RELEASED
            if backbone in backbones
        ]
    return files


def released_runs():
    """The released checkpoints to evaluate (evaluation.released); where they cannot be
    downloaded (offline, or the hub does not answer), one in no mirror or cache is left out
    with a logged message."""
    from snakemake.logging import logger

    from negcse.data.sources import (
        ResolveError,
        hub_endpoint,
        offline,
        resolve_model,
        unreachable,
    )

    runs = []
    for name, backbone, model in released_models(config):
        no_network = "offline" if offline() else unreachable(hub_endpoint())
        if no_network:
            try:
                resolve_model(model, config.get("mirror") or None, network=False)
            except ResolveError:
                logger.info(
                    f"released checkpoint {model} ({name}, {backbone}) skipped: {no_network}, "
                    "and in no mirror or cache (fetch it on a networked machine: rule prefetch)"
                )
                continue
        runs.append((name, backbone, model))
    return runs


RELEASED = released_runs()


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
    """Every table: LaTeX, CSV, Markdown, HTML (the report's) and DVC metrics of each
    grid-wide one, and the case study of each backbone."""
    return (
        expand(
            grid_path("results/tables/{table}.{ext}"),
            table=GRID_TABLES,
            ext=["tex", "csv", "md", "html"],
        )
        + expand(grid_path("results/metrics/{table}.json"), table=GRID_TABLES)
        + expand(
            grid_path("results/tables/case_study_{backbone}.{ext}"),
            backbone=BACKBONES,
            ext=["tex", "csv", "md", "html"],
        )
    )


# One page per paper (rules/reports.smk): the papers with a method in the grid.
PAPER_PAGES = grid_papers(METHODS)


def paper_figures(wildcards):
    """The PNG figures of every group drawing one of the paper's methods or baselines."""
    methods = set(page_methods(wildcards.paper, METHODS, method_baselines(config)))
    groups = [g.name for g in FIGURE_GROUPS.values() if methods & set(g.methods)]
    return expand(
        grid_path("results/figures/{backbone}/{figure}/{group}.png"),
        backbone=BACKBONES,
        figure=["soft_negatives", "hard_positives", "training_curves"],
        group=groups,
    )


def report_targets():
    return expand(
        grid_path("results/reports/{paper}.{ext}"),
        paper=PAPER_PAGES,
        ext=["md", "html"],
    )


# Dry run: the estimated GPU hours of the grid, from benchmarks/gpu_costs.csv (benchmarks/gpu.py).
def _is_dry_run(argv):
    short = [a for a in argv if a.startswith("-") and not a.startswith("--")]
    return any(a in ("--dry-run", "--dryrun") for a in argv) or any(
        "n" in a[1:] and a[1:].isalpha() for a in short
    )


def print_gpu_estimate():
    """Called by the Snakefile after every rule file."""
    if not _is_dry_run(sys.argv[1:]):
        return
    from snakemake.iocontainers import Wildcards
    from snakemake.logging import logger
    from negcse.workflow.gpu_estimate import (
        corpus_size,
        estimate,
        format_table,
        gpu_generators,
        load_costs,
        method_columns,
        mteb_jobs,
    )

    costs_file = Path(workflow.basedir) / "benchmarks" / "gpu_costs.csv"
    if not costs_file.is_file():
        logger.info(
            f"No GPU-hours estimate: {costs_file} is missing (benchmarks/gpu.py)"
        )
        return

    paths = []
    for method, backbone, seed in grid_runs(config):
        wc = Wildcards(fromdict={"method": method, "backbone": backbone, "seed": seed})
        for column in method_columns(config, method):
            paths.append((column, column_file(wc, column)))
    mteb_files = table_evals(TABLES["mteb"]) if table_enabled(TABLES["mteb"]) else []
    costs = load_costs(costs_file)
    rows = estimate(
        config,
        costs,
        gpu_generators(config, paths),
        mteb_jobs(mteb_files, BACKBONES),
    )
    sentences = corpus_size(config, CORPUS)
    logger.info(format_table(rows, costs, sentences, "benchmarks/gpu_costs.csv"))
