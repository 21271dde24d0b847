"""The smoke grid's time on 2 idle cores, estimated from a run on a loaded machine.

A run on a shared box takes as long as the other work lets it; its CPU does not. This reads a
finished `snakemake --profile profiles/smoke` run (its printed log, which lists every job's
inputs, outputs, threads and benchmark file, and the `benchmarks/rules/**.tsv` those write) and
replays its DAG on 2 cores, each job taking its CPU seconds (over its threads), the longest
remaining path first. A job's CPU is its benchmark file's `cpu_time` (none for tables, figures
and small local jobs) plus a share, by wall time, of the CPU that the run's total
(`/usr/bin/time -v`, less Snakemake's own) has beyond the benchmark files: Snakemake samples a
job's CPU every 0.5 s for 15 s, then every 30 s, so a long job's last seconds go unsampled, and
on a loaded machine every running job gets about the same CPU per wall second. Snakemake's own
CPU (its scheduler, `--scheduler-cpu`) is added over the 2 cores. A job that ran in the warm
worker's child (`runtime.worker`) takes that child's CPU from the worker's log
(`.snakemake/negcse-worker.log`) as well.

    python benchmarks/smoke_time.py RUN_DIR --scheduler-cpu S   # run.log, time.txt, benchmarks/

What-if replays of the same run: ``--scale GLOB=FACTOR`` multiplies the CPU of the jobs whose
first output matches GLOB (a speedup measured on one such job), ``--drop GLOB`` leaves those
jobs out (a smaller grid); both repeat.
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import heapq
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

CORES = 2
STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ [\d:]+ \d{4})\]$")


@dataclass
class Job:
    rule: str
    start: datetime
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    threads: int = 1
    benchmark: str | None = None
    log: str | None = None
    end: datetime | None = None
    cpu: float = 0.0

    @property
    def wall(self) -> float:
        return (self.end - self.start).total_seconds() if self.end else 0.0


def parse_log(text: str) -> dict[int, Job]:
    """Every job of a Snakemake log printed with job details (not --quiet)."""
    jobs: dict[int, Job] = {}
    stamp: datetime | None = None
    current: Job | None = None
    for line in text.splitlines():
        if m := STAMP.match(line):
            stamp = datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y")
        elif m := re.match(r"^(?:local)?rule (\w+):$", line):
            assert stamp is not None
            current = Job(m.group(1), stamp)
        elif current and (m := re.match(r"^    (\w+): (.*)$", line)):
            key, value = m.groups()
            if key in ("input", "output"):
                setattr(current, f"{key}s", value.split(", "))
            elif key == "threads":
                current.threads = int(value)
            elif key == "benchmark":
                current.benchmark = value
            elif key == "log":
                current.log = value.split(", ")[0]
            elif key == "jobid":
                jobs[int(value)] = current
        elif m := re.match(r"^Finished jobid: (\d+)", line):
            jobs[int(m.group(1))].end = stamp
    return jobs


WORKER_LINE = re.compile(r"\) stderr (\S+) exit -?\d+, ([\d.]+) s user ([\d.]+) s sys$")


def worker_cpu(text: str) -> dict[str, float]:
    """The CPU seconds of each job that ran in the warm worker's child (its server log,
    ``.snakemake/negcse-worker.log``), by the job's log file: a benchmark file sees only the
    client."""
    found = {}
    for line in text.splitlines():
        if m := WORKER_LINE.search(line):
            found[m.group(1)] = found.get(m.group(1), 0.0) + float(m.group(2)) + float(m.group(3))
    return found


def total_cpu(time_txt: str) -> float:
    """User + system seconds from `/usr/bin/time -v`."""
    values = dict(re.findall(r"^\s*(User|System) time \(seconds\): ([\d.]+)$", time_txt, re.M))
    return float(values["User"]) + float(values["System"])


def replay(jobs: dict[int, Job]) -> tuple[float, float]:
    """(makespan on CORES cores, longest path): each job runs cpu / threads seconds on
    min(threads, CORES) cores, the job with the longest remaining path first."""
    producer = {out: jid for jid, job in jobs.items() for out in job.outputs}
    deps = {
        jid: {producer[i] for i in job.inputs if i in producer and producer[i] != jid}
        for jid, job in jobs.items()
    }
    users: dict[int, set[int]] = {jid: set() for jid in jobs}
    for jid, ds in deps.items():
        for d in ds:
            users[d].add(jid)
    span = {jid: jobs[jid].cpu / min(jobs[jid].threads, CORES) for jid in jobs}
    tail: dict[int, float] = {}

    def path(jid: int) -> float:  # the longest path from the job's start to the end
        if jid not in tail:
            tail[jid] = span[jid] + max((path(u) for u in users[jid]), default=0.0)
        return tail[jid]

    longest = max(path(j) for j in jobs)
    waiting = {jid: len(ds) for jid, ds in deps.items()}
    ready = [(-path(j), j) for j, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    running: list[tuple[float, int]] = []
    now, free = 0.0, CORES
    while ready or running:
        held = []
        while ready:
            _, jid = heapq.heappop(ready)
            need = min(jobs[jid].threads, CORES)
            if need <= free:
                free -= need
                heapq.heappush(running, (now + span[jid], jid))
            else:
                held.append((-path(jid), jid))
        for item in held:
            heapq.heappush(ready, item)
        now, jid = heapq.heappop(running)
        free += min(jobs[jid].threads, CORES)
        for user in users[jid]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, (-path(user), user))
    return now, longest


def adjust(jobs: dict[int, Job], scale: list[str], drop: list[str]) -> dict[int, Job]:
    """The jobs with ``GLOB=FACTOR`` CPU scalings applied and the ``drop`` globs' jobs left out
    (matched on a job's first output; a pattern that matches no job is an error)."""

    def matching(pattern: str) -> list[int]:
        hits = [
            j for j, job in jobs.items() if job.outputs and fnmatch.fnmatch(job.outputs[0], pattern)
        ]
        if not hits:
            raise SystemExit(f"{pattern!r} matches no job's first output")
        return hits

    for item in scale:
        pattern, sep, factor = item.rpartition("=")
        if not sep:
            raise SystemExit(f"--scale {item!r}: expected GLOB=FACTOR")
        for j in matching(pattern):
            jobs[j].cpu *= float(factor)
    dropped = {j for pattern in drop for j in matching(pattern)}
    return {j: job for j, job in jobs.items() if j not in dropped}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="the run's folder: run.log, time.txt, benchmarks/")
    parser.add_argument(
        "--scheduler-cpu",
        type=float,
        default=0.0,
        help="CPU seconds of the snakemake process itself (/proc/PID/stat)",
    )
    parser.add_argument(
        "--scale",
        action="append",
        default=[],
        metavar="GLOB=FACTOR",
        help="multiply the CPU of the jobs whose first output matches GLOB by FACTOR",
    )
    parser.add_argument(
        "--drop",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out the jobs whose first output matches GLOB",
    )
    args = parser.parse_args()
    jobs = parse_log((args.run / "run.log").read_text())
    unfinished = [j.rule for j in jobs.values() if j.end is None]
    if unfinished:
        raise SystemExit(f"{args.run / 'run.log'}: {len(unfinished)} jobs never finished")
    worker_log = args.run / ".snakemake" / "negcse-worker.log"
    served = worker_cpu(worker_log.read_text()) if worker_log.exists() else {}
    for job in jobs.values():
        if job.benchmark:
            with (args.run / job.benchmark).open() as fh:
                job.cpu = float(next(csv.DictReader(fh, delimiter="\t"))["cpu_time"])
        job.cpu += served.get(job.log or "", 0.0)
    cpu = total_cpu((args.run / "time.txt").read_text())
    measured = sum(j.cpu for j in jobs.values())
    unsampled = max(cpu - args.scheduler_cpu - measured, 0.0)
    walls = sum(j.wall * j.threads for j in jobs.values())
    for job in jobs.values():  # the CPU the benchmark files miss, by wall time
        job.cpu += unsampled * job.wall * job.threads / walls
    jobs = adjust(jobs, args.scale, args.drop)
    makespan, longest = replay(jobs)
    makespan += args.scheduler_cpu / CORES
    wall = (max(j.end for j in jobs.values()) - min(j.start for j in jobs.values())).seconds
    sampled = sum(1 for j in jobs.values() if j.benchmark)
    print(
        f"jobs: {len(jobs)}; measured wall {wall} s; CPU (user+sys) {cpu:.0f} s: benchmark "
        f"files {measured:.0f} s ({sampled} jobs), Snakemake {args.scheduler_cpu:.0f} s, "
        f"unsampled {unsampled:.0f} s"
    )
    if args.scale or args.drop:
        print(
            f"what-if: {len(jobs)} jobs, CPU {sum(j.cpu for j in jobs.values()):.0f} s "
            "(CPU / 2 below is the measured run's)"
        )
    print(
        f"on {CORES} idle cores: {makespan:.0f} s ({makespan / 60:.1f} min) replayed; "
        f"CPU / {CORES} = {cpu / CORES:.0f} s; longest path {longest:.0f} s"
    )
    by_rule: dict[str, list[float]] = {}
    for job in jobs.values():
        by_rule.setdefault(job.rule, []).append(job.cpu)
    print("rule | jobs | CPU s (sum) | CPU s (max)")
    for rule, cpus in sorted(by_rule.items(), key=lambda kv: -sum(kv[1])):
        print(f"{rule} | {len(cpus)} | {sum(cpus):.0f} | {max(cpus):.1f}")


if __name__ == "__main__":
    main()
