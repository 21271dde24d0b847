"""The evaluation jobs (rules/evaluate.smk): one per trained run, untrained backbone and released
checkpoint, each running every evaluation that declares a :class:`~negcse.evaluation.registry.Job`
as one ``negcse evaluate --only ...``. Inputs, outputs and arguments come from those
declarations: adding an evaluation is its module alone."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from negcse.evaluation.registry import Job, quoted, workflow_evaluations


@dataclass(frozen=True)
class Subject:
    """A kind of model an evaluation job evaluates: its rule and its part of the paths."""

    kind: str  # trained | untrained | released
    rule: str
    model: str  # {model} in the evaluations' paths

    @property
    def log(self) -> str:
        return f"logs/eval/{self.model}.log"

    @property
    def benchmark(self) -> str:
        return f"benchmarks/rules/eval/{self.model}.tsv"


SUBJECTS = (
    Subject("trained", "evaluate_model", "{method}/{backbone}/seed{seed}"),
    Subject("untrained", "evaluate_untrained", "untrained/{backbone}"),
    Subject("released", "evaluate_released", "released/{released}/{backbone}"),
)
#: the folder rule ``train`` writes
MODEL_DIR = "results/models/{method}/{backbone}/seed{seed}"


def jobs(kind: str) -> list[tuple[str, Job]]:
    """The evaluations a job of ``kind`` runs, in order."""
    return [(name, job) for name, job in workflow_evaluations() if kind in job.models]


def _option(name: str, option: str) -> str:
    return f"--{name}-{option.replace('_', '-')}"


def inputs(subject: Subject) -> dict[str, str]:
    """Input name -> path: the trained model's folder, then each evaluation's files."""
    out = {"model": MODEL_DIR} if subject.kind == "trained" else {}
    for _, job in jobs(subject.kind):
        out.update(job.needs)
        out.update(job.reads)
    return out


def outputs(subject: Subject) -> dict[str, tuple[str, Mapping[str, Any] | None]]:
    """Output name -> (path, report() keywords or None), each evaluation's in order."""
    out: dict[str, tuple[str, Mapping[str, Any] | None]] = {}
    for name, job in jobs(subject.kind):
        paths = {name: job.out, **{key: path for key, (_, path) in job.writes.items()}}
        for key, path in paths.items():
            out[key] = (path.format(name=name, model=subject.model), job.reports.get(key))
    return out


def subject_of(wildcards: Mapping[str, str]) -> Subject:
    if "method" in wildcards:
        return SUBJECTS[0]
    return SUBJECTS[2] if "released" in wildcards else SUBJECTS[1]


def model_and_tags(
    config: Mapping[str, Any], wildcards: Mapping[str, str], model_dir: str | None
) -> tuple[str, str, list[str]]:
    """(model, pooler, tags): the trained folder, a released checkpoint's hub id and its
    pooler, or the untrained backbone with evaluation.baseline_pooler."""
    backbone = wildcards["backbone"]
    kind = subject_of(wildcards).kind
    if kind == "trained":
        tags = [
            f"method={wildcards['method']}",
            f"backbone={backbone}",
            f"seed={wildcards['seed']}",
        ]
        return str(model_dir), "auto", tags
    if kind == "released":
        entry = config["released"][wildcards["released"]]
        tags = [f"method={wildcards['released']}", f"backbone={backbone}", "seed=0"]
        return entry["models"][backbone], entry["pooler"], tags
    tags = ["method=untrained", f"backbone={backbone}"]
    return backbone, config["evaluation"]["baseline_pooler"], tags


def mirror_arg(config: Mapping[str, Any]) -> str:
    """`--mirror DIR` when the config names a mirror (else $NEGCSE_MIRROR applies)."""
    return f"--mirror {quoted([config['mirror']])}" if config.get("mirror") else ""


def evaluation_args(
    config: Mapping[str, Any],
    wildcards: Mapping[str, str],
    input: Mapping[str, str],
    output: Mapping[str, str],
    threads: int,
) -> str:
    """The arguments of `negcse evaluate` for one evaluation job."""
    model, pooler, tags = model_and_tags(config, wildcards, input.get("model"))
    args = [
        f"--model {quoted([model])} --pooler {quoted([pooler])} "
        f"--batch-size {config['evaluation']['batch_size']} --threads {threads} "
        f"{mirror_arg(config)}",
        " ".join(f"--tag {quoted([tag])}" for tag in tags),
    ]
    selected = jobs(subject_of(wildcards).kind)
    for name, job in selected:
        options = job.options(name, config)
        words = [options] if options else []
        words += [f"{_option(name, opt)} {quoted([input[opt]])}" for opt in job.reads]
        words.append(f"{_option(name, 'out')} {quoted([output[name]])}")
        words += [
            f"{_option(name, opt)} {quoted([output[key]])}" for key, (opt, _) in job.writes.items()
        ]
        args.append(" ".join(words))
    # a released checkpoint found nowhere when the job runs is written as unavailable
    ok = " --unavailable-ok" if subject_of(wildcards).kind == "released" else ""
    return f"--only {','.join(name for name, _ in selected)}{ok} " + " ".join(args)
