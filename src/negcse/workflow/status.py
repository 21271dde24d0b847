"""Where a workflow run stands, from Snakemake's own state (no scheduler of ours): each job of the
DAG is done (its outputs exist and are up to date), running (started by the live Snakemake run
and not finished), failed (its outputs still missing after the latest run ended it) or pending;
an ETA from the cost model (:mod:`negcse.workflow.gpu_estimate`) scaled by the pace measured in
this run: the wall time since the run started over the modelled seconds of the jobs it
finished. ``negcse status`` builds the DAG and prints :func:`render`.

Two records say which jobs a run started and ended, whatever its verbosity: Snakemake's job
records under ``.snakemake/`` (:func:`job_records`: an ``incomplete/`` marker per output of a
job that started and has not finished, a ``metadata/`` record per output of a job that ended,
with its end time) and the ``rule X:`` / ``Error in rule X:`` blocks of its run log, which
``--quiet rules`` leaves out.
"""

from __future__ import annotations

import json
import re
from base64 import urlsafe_b64decode
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

STATES = ("done", "running", "failed", "pending")
#: the first line of a run log's header: ``  Date: 2024-05-01 12:00:00``
_DATE = re.compile(r"^\s*Date:\s*(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", re.M)
_BLOCK = re.compile(r"^(?:local)?rule (\w+):\n((?:    .*\n?)+)", re.M)
_ERROR = re.compile(r"^Error in rule (\w+):\n((?:    .*\n?)+)", re.M)
_FINISHED = re.compile(r"^Finished jobid: (\d+)", re.M)


@dataclass(frozen=True)
class Job:
    """One job of the DAG: its rule, wildcards, outputs and logs; ``needrun``: Snakemake would
    run it (outputs missing or out of date)."""

    rule: str
    wildcards: Mapping[str, str]
    outputs: tuple[str, ...]
    logs: tuple[str, ...]
    needrun: bool

    def label(self) -> str:
        words = " ".join(f"{k}={v}" for k, v in self.wildcards.items())
        return f"{self.rule} {words}".strip()


@dataclass
class RunLog:
    """What one Snakemake run log (``.snakemake/log/<time>.snakemake.log``) says: when the run
    started, the outputs of each job it started (by its jobid), those it finished and those that
    failed (jobid -> their outputs)."""

    start: datetime | None = None
    started: dict[int, tuple[str, ...]] = field(default_factory=dict)
    finished: set[int] = field(default_factory=set)
    failed: dict[int, tuple[str, ...]] = field(default_factory=dict)

    def outputs(self, jobids: Iterable[int]) -> set[str]:
        return {o for j in jobids for o in self.started.get(j, ())}


def _field(block: str, name: str) -> str:
    m = re.search(rf"^    {name}: (.*)$", block, re.M)
    return m.group(1).strip() if m else ""


def _paths(value: str) -> tuple[str, ...]:
    value = value.split(" (check log file", 1)[0]
    return tuple(p.strip() for p in value.split(",") if p.strip())


def parse_run_log(text: str) -> RunLog:
    log = RunLog()
    date = _DATE.search(text)
    if date:
        try:
            log.start = datetime.strptime(date.group(1), "%Y-%m-%d %H:%M:%S")
        except ValueError:  # an impossible date (2026-02-30): a log no run wrote; no start
            log.start = None
    for m in _BLOCK.finditer(text):
        jobid = _field(m.group(2), "jobid")
        if jobid.isdigit():
            log.started[int(jobid)] = _paths(_field(m.group(2), "output"))
    log.finished = {int(j) for j in _FINISHED.findall(text)}
    for m in _ERROR.finditer(text):
        jobid = _field(m.group(2), "jobid")
        outputs = _paths(_field(m.group(2), "output"))
        log.failed[int(jobid) if jobid.isdigit() else -len(log.failed) - 1] = outputs
    return log


@dataclass
class JobRecords:
    """Snakemake's records of job outputs (``.snakemake/``): ``started`` maps an output of a job
    that started and did not finish (its ``incomplete/`` marker) to the marker's time, ``ended``
    an output of a job that ended, run or failed, to the end time of its ``metadata/`` record."""

    started: dict[str, float] = field(default_factory=dict)
    ended: dict[str, float] = field(default_factory=dict)


def _record_key(parts: Sequence[str]) -> str | None:
    """The output path a record's file name encodes: url-safe base64, cut into chunks of the
    file system's name length (every chunk but the last starts with ``@``)."""
    name = "".join(part[1:] if part.startswith("@") else part for part in parts)
    try:
        return urlsafe_b64decode(name.encode("ascii")).decode("utf-8")
    except (ValueError, UnicodeError):
        return None


def _records(folder: Path) -> dict[str, Path]:
    """Output path -> its record file, for every record under ``folder``."""
    if not folder.is_dir():
        return {}
    found = {}
    for path in folder.rglob("*"):
        if path.is_file() and (key := _record_key(path.relative_to(folder).parts)) is not None:
            found[key] = path
    return found


def job_records(workdir: Path, outputs: Iterable[str]) -> JobRecords:
    """Snakemake's records of ``outputs`` in ``workdir/.snakemake`` (file backend)."""
    wanted = set(outputs)
    base = workdir / ".snakemake"
    records = JobRecords()
    for key, path in _records(base / "incomplete").items():
        if key in wanted:
            records.started[key] = path.stat().st_mtime
    for key, path in _records(base / "metadata").items():
        if key not in wanted:
            continue
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        end = record.get("endtime") if isinstance(record, dict) else None
        if isinstance(end, int | float) and not record.get("incomplete"):
            records.ended[key] = float(end)
    return records


def latest_run_log(workdir: Path) -> Path | None:
    """Snakemake's newest run log of ``workdir`` (their names sort by time) that records a run
    (its header's date: a dry run's log, where one is kept, is empty)."""
    logs = sorted((workdir / ".snakemake" / "log").glob("*.snakemake.log"), reverse=True)
    for path in logs:
        with path.open(encoding="utf-8", errors="replace") as fh:
            if _DATE.search(fh.read(4096)):
                return path
    return None


#: a tqdm progress bar's redraw (``train x:  40%|####  | 16/40 [00:04<00:06, 3.9it/s]``)
_BAR = re.compile(r"\d+%\|.*\|.*\[.*\]$")


def last_line(path: str | Path) -> str:
    """The last non-empty line of a log that is not a progress bar (a failed job's error; a
    bar that closes at exit redraws after it), else the bar's last state; or why there is none."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log file)"
    lines = [ln.strip() for ln in re.split(r"[\r\n]+", text) if ln.strip()]
    plain = [ln for ln in lines if not _BAR.search(ln)]
    return (plain or lines or ["(empty log)"])[-1]


@dataclass(frozen=True)
class JobStatus:
    job: Job
    state: str
    #: when it finished in the run being watched (its outputs' newest mtime), else None
    finished_at: float | None = None


def classify(
    jobs: Sequence[Job],
    run: RunLog,
    active: bool,
    mtime: Callable[[str], float | None],
    records: JobRecords | None = None,
) -> list[JobStatus]:
    """Each job's state. Done: Snakemake would not run it. Running: the active run started it
    and neither finished nor failed it (the log's blocks, or an output's ``incomplete`` marker).
    Failed: the latest run failed it (the log's error block, or a job record that ended in this
    run while the job still needs to run). Pending: the rest. ``mtime`` gives an output's
    modification time (None: missing); a job done since the run started gets ``finished_at``."""
    records = records or JobRecords()
    start = run.start.timestamp() if run.start else None
    failed = run.outputs(run.failed) | {o for outs in run.failed.values() for o in outs}
    if start is not None:
        failed |= {o for o, end in records.ended.items() if end >= start}
    running = run.outputs(set(run.started) - run.finished - set(run.failed)) if active else set()
    if active:
        running |= set(records.started)
    out = []
    for job in jobs:
        outputs = set(job.outputs)
        if not job.needrun:
            times = [t for t in map(mtime, job.outputs) if t is not None]
            finished = max(times) if times and start is not None and max(times) >= start else None
            out.append(JobStatus(job, "done", finished))
        elif outputs & running:
            out.append(JobStatus(job, "running"))
        elif outputs & failed:
            out.append(JobStatus(job, "failed"))
        else:
            out.append(JobStatus(job, "pending"))
    return out


@dataclass(frozen=True)
class Eta:
    """``remaining``: modelled seconds of the jobs not done; ``pace``: wall seconds per modelled
    second in this run (None: no modelled job finished yet); ``seconds``: their product."""

    remaining: float
    done: float
    pace: float | None
    jobs_done: int

    @property
    def seconds(self) -> float | None:
        return None if self.pace is None else self.remaining * self.pace


def eta(
    statuses: Sequence[JobStatus],
    seconds: Callable[[Job], float],
    start: float | None,
    now: float,
) -> Eta:
    """The cost model's seconds of the unfinished jobs, scaled by this run's pace: wall time
    since ``start`` over the modelled seconds of the jobs finished since then."""
    remaining = sum(seconds(s.job) for s in statuses if s.state != "done")
    finished = [s for s in statuses if s.finished_at is not None]
    done = sum(seconds(s.job) for s in finished)
    pace = (now - start) / done if start is not None and done > 0 else None
    return Eta(remaining, done, pace, len(finished))


def duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    if minutes < 1:
        return "under a minute"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"


def render(
    statuses: Sequence[JobStatus],
    estimate: Eta,
    header: str,
    max_failures: int = 5,
    gpu: bool = True,
) -> str:
    """One screen: jobs per rule and state, the failures with their log's last line, the ETA:
    wall-clock time either way; on a GPU run (``gpu``) with the cost model's GPU hours beside
    it, on a CPU run with no GPU figure (the model's GPU seconds only weigh the jobs there)."""
    order = list(dict.fromkeys(s.job.rule for s in statuses))
    counts = Counter((s.job.rule, s.state) for s in statuses)
    width = max([len("rule"), *map(len, order)])
    lines = [header, "", f"{'rule':<{width}}  " + "  ".join(f"{h:>7}" for h in (*STATES, "total"))]
    for rule in order:
        row = [counts[(rule, state)] for state in STATES]
        lines.append(f"{rule:<{width}}  " + "  ".join(f"{n:>7}" for n in (*row, sum(row))))
    totals = [sum(counts[(r, state)] for r in order) for state in STATES]
    lines.append(f"{'total':<{width}}  " + "  ".join(f"{n:>7}" for n in (*totals, sum(totals))))
    failures = [s for s in statuses if s.state == "failed"]
    if failures:
        lines += ["", f"Failed ({len(failures)}):"]
        for s in failures[:max_failures]:
            log = s.job.logs[0] if s.job.logs else ""
            tail = last_line(log) if log else "(no log)"
            lines.append(f"  {s.job.label()}: {log}: {tail}")
        if len(failures) > max_failures:
            lines.append(f"  ... and {len(failures) - max_failures} more")
    lines.append("")
    left = sum(1 for s in statuses if s.state != "done")
    if not left:
        lines.append("Nothing left to run.")
    elif estimate.seconds is not None and gpu:
        lines.append(
            f"ETA: {duration(estimate.seconds)} for {left} jobs (cost model: "
            f"{estimate.remaining / 3600:.2f} GPU-h left, x{estimate.pace:.2f} the measured pace "
            f"of the {estimate.jobs_done} jobs done in this run)"
        )
    elif estimate.seconds is not None:
        lines.append(
            f"ETA: {duration(estimate.seconds)} of wall clock for {left} jobs on the CPU (the "
            f"pace of the {estimate.jobs_done} jobs done in this run, applied to the cost model's "
            "relative job sizes)"
        )
    elif gpu:
        lines.append(
            f"ETA: not yet measured ({left} jobs, cost model {estimate.remaining / 3600:.2f} "
            "GPU-h on its GPU; the pace is known once a priced job of this run finishes)"
        )
    else:
        lines.append(
            f"ETA: not yet measured ({left} jobs on the CPU; the pace is known once a priced "
            "job of this run finishes)"
        )
    return "\n".join(lines)
