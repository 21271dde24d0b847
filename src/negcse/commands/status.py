"""``negcse status``: where a workflow run stands, on one screen.

    python -m negcse status --profile profiles/smoke            # once
    python -m negcse status --profile profiles/local --watch 60  # redrawn every minute

Jobs done, running, failed and pending per rule, each failure with its log's last line, and a
wall-clock ETA: the cost model's seconds of what is left (``benchmarks/gpu_costs.csv``, as
``negcse estimate``) times the pace measured in this run (on a GPU run with the model's GPU hours
beside it). Snakemake's own state is read, nothing is run: the DAG of the profile's config (as
``snakemake -n`` builds it, without taking the lock), the outputs' existence and times, its job
records (``.snakemake/incomplete/``, ``.snakemake/metadata/``) and its latest run log
(``.snakemake/log/``), whatever the run's verbosity (``--quiet rules`` too); works beside a
running Snakemake.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from negcse.errors import UserError
from negcse.finite import positive_float
from negcse.io_utils import yaml_value
from negcse.runtime.lazy import LazyModule
from negcse.workflow import status as status_lib
from negcse.workflow.config import ConfigError, load_yaml
from negcse.workflow.plan.load import profile_configfiles

if TYPE_CHECKING:
    import snakemake.api as snakemake_api
    import snakemake.exceptions as snakemake_exceptions
    import snakemake.settings.types as snakemake_settings

    from negcse.runtime import device
    from negcse.workflow import gpu_estimate
else:  # snakemake and the registries: imported when the command runs, not for --help
    snakemake_api = LazyModule("snakemake.api")
    snakemake_exceptions = LazyModule("snakemake.exceptions")
    snakemake_settings = LazyModule("snakemake.settings.types")
    gpu_estimate = LazyModule("negcse.workflow.gpu_estimate")
    device = LazyModule("negcse.runtime.device")

NAME = "status"
HELP = "jobs done / running / failed / pending per rule, failures' last log line, and an ETA"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", metavar="DIR", help="the Snakemake profile of the run")
    p.add_argument(
        "--configfile",
        nargs="+",
        default=[],
        metavar="FILE",
        help="configs merged over config/defaults.yaml and params.yaml, as snakemake's "
        "--configfile (replaces the profile's)",
    )
    p.add_argument("--directory", default=".", help="the workflow's folder (default: here)")
    p.add_argument(
        "--watch",
        nargs="?",
        type=positive_float,
        const=30.0,
        metavar="SECONDS",
        help="redraw every SECONDS (default 30) until nothing is left or Ctrl-C",
    )


def _profile(profile: str | None) -> dict[str, Any]:
    if not profile:
        return {}
    path = Path(profile) / "profile.yaml"
    try:
        return yaml_value(path.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise UserError(f"{path}: cannot read the profile ({exc.strerror})") from None


def build_dag(
    workdir: Path, configfiles: Sequence[str], profile: dict[str, Any]
) -> tuple[list[status_lib.Job], dict[str, Any]]:
    """Snakemake's DAG of the default target as a dry run builds it (no lock taken; incomplete
    outputs do not stop it, and the profile's rerun triggers apply): its jobs, in order, and
    the workflow's config (its defaults filled in)."""
    settings = snakemake_settings
    triggers = profile.get("rerun-triggers")
    dag_settings = (
        settings.DAGSettings(
            rerun_triggers={settings.RerunTrigger[t.upper().replace("-", "_")] for t in triggers}
        )
        if triggers
        else settings.DAGSettings()
    )
    output = settings.OutputSettings(
        quiet={settings.Quietness.ALL}, dryrun=True, enable_file_logging=False
    )
    with snakemake_api.SnakemakeApi(output) as api:
        workflow_api = api.workflow(
            resource_settings=snakemake_settings.ResourceSettings(),
            config_settings=snakemake_settings.ConfigSettings(
                configfiles=[Path(f).resolve() for f in configfiles]
            ),
            storage_settings=snakemake_settings.StorageSettings(),
            snakefile=(workdir / "Snakefile").resolve(),
            workdir=workdir.resolve(),
        )
        workflow_api.dag(dag_settings)
        workflow = workflow_api._workflow  # the parsed workflow (Snakemake's API gives no DAG)
        workflow._prepare_dag(
            forceall=False, ignore_incomplete=True, lock_warn_only=True, nolock=True
        )
        workflow._build_dag()
        dag = workflow.dag
        jobs = [
            status_lib.Job(
                rule=job.rule.name,
                wildcards=dict(job.wildcards_dict),
                outputs=tuple(str(f) for f in job.output),
                logs=tuple(str(f) for f in job.log),
                needrun=bool(dag.needrun(job)),
            )
            for level in dag.toposorted()
            for job in sorted(level, key=lambda j: (j.rule.name, str(j.output)))
        ]
        config = dict(workflow.config)
    return jobs, config


def snakemake_running(workdir: Path) -> bool:
    """A Snakemake process works in ``workdir`` (Linux: /proc), else its locks exist."""
    target = workdir.resolve()
    proc = Path("/proc")
    if proc.is_dir():
        for entry in proc.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmd = (entry / "cmdline").read_bytes().split(b"\0")
                runs = any(b"snakemake" in w for w in cmd[:3]) and not {b"-n", b"--dry-run"} & set(
                    cmd
                )
                if runs and Path(os.readlink(entry / "cwd")) == target:
                    return True
            except OSError:
                continue
        return False
    return any((workdir / ".snakemake" / "locks").glob("*.lock"))


def runs_on_gpu(profile: dict[str, Any], config: dict[str, Any]) -> bool:
    """Whether the run's model jobs use a GPU: the device setting its jobs get (the profile's
    ``config: device``, else the workflow config's, else ``$NEGCSE_DEVICE``), ``auto`` as the
    jobs resolve it on this machine."""
    overrides = profile.get("config")
    setting = (overrides.get("device") if isinstance(overrides, dict) else None) or config.get(
        "device"
    )
    want = device.requested(str(setting) if setting else None)
    return want.startswith("cuda") or (want == "auto" and device.cuda_missing() is None)


def snapshot(args: argparse.Namespace) -> tuple[str, bool]:
    """The screen, and whether anything is left to run."""
    workdir = Path(args.directory)
    profile = _profile(args.profile)
    configfiles = args.configfile or (profile_configfiles(args.profile) if args.profile else [])
    configfiles = [str(workdir / f) if not Path(f).is_absolute() else f for f in configfiles]
    for path in configfiles:  # Snakemake's refusal of one names no file
        own = load_yaml(path)
        if not isinstance(own, dict) or not own:
            raise ConfigError(
                f"{path}: expected a mapping of keys at the top level, got {own!r:.40}"
            )
    logging.disable(logging.WARNING)  # the workflow's parse notes (skipped tables...) stay out
    try:
        jobs, config = build_dag(workdir, configfiles, profile)
    except snakemake_exceptions.WorkflowError as exc:  # a bad config: the workflow's own message
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        # "<files>: invalid config:" and the keys below it, as `snakemake -n` shows them
        raise UserError(" ".join([*lines[:1], "; ".join(lines[1:])]).strip() or repr(exc)) from None
    finally:
        logging.disable(logging.NOTSET)
    run_path = status_lib.latest_run_log(workdir)
    run = status_lib.RunLog()
    if run_path is not None:
        run = status_lib.parse_run_log(run_path.read_text(errors="replace"))
    active = snakemake_running(workdir)

    def mtime(path: str) -> float | None:
        full = workdir / path
        return full.stat().st_mtime if full.exists() else None

    outputs = (o for job in jobs if job.needrun for o in job.outputs)
    records = status_lib.job_records(workdir, outputs)
    statuses = status_lib.classify(jobs, run, active, mtime, records)
    costs_file = workdir / gpu_estimate.COSTS_FILE
    if costs_file.is_file():
        seconds = gpu_estimate.job_seconds(config, costs_file)
    else:
        logger.warning("%s is missing: no ETA (benchmarks/gpu.py writes it)", costs_file)
        seconds = lambda job: 0.0  # noqa: E731
    now = time.time() if active or run_path is None else run_path.stat().st_mtime
    start = run.start.timestamp() if run.start else None
    estimate = status_lib.eta(statuses, seconds, start, now)
    where = f"profile {args.profile}" if args.profile else "no profile"
    configs = ", ".join(configfiles) or "config/defaults.yaml + params.yaml"
    if active and start is not None:
        elapsed = status_lib.duration(time.time() - start)
        state = f"Snakemake running since {run.start:%H:%M} ({elapsed})"
    elif run.start:
        state = f"no Snakemake running; the last run started {run.start:%Y-%m-%d %H:%M}"
    else:
        state = "no run yet"
    header = f"negcse status ({where}; {configs}): {state}"
    text = status_lib.render(statuses, estimate, header, gpu=runs_on_gpu(profile, config))
    return text, any(s.state != "done" for s in statuses)


def run(args: argparse.Namespace) -> int:
    if not (Path(args.directory) / "Snakefile").is_file():
        raise UserError(f"{args.directory}: no Snakefile (run it in the workflow's folder)")
    while True:
        text, left = snapshot(args)
        if args.watch is None:
            print(text)
            return 0
        sys.stdout.write("\033[2J\033[H" + text + "\n")
        sys.stdout.flush()
        if not left:
            return 0
        try:
            time.sleep(args.watch)
        except KeyboardInterrupt:
            return 0
