"""benchmarks/smoke_time.py, the 2-idle-core estimate of README's smoke time: a Snakemake log
read back into jobs and their DAG, replayed on 2 cores against schedules worked out by hand."""

from __future__ import annotations

from datetime import datetime

import pytest

from benchmark_module import load

smoke_time = load("smoke_time")

LOG = """Select jobs to execute...

[Fri Nov 27 10:20:27 2026]
localrule corpus:
    output: results/data/corpus/c.txt
    log: logs/data/corpus_c.log
    jobid: 4
    benchmark: benchmarks/rules/data/corpus_c.tsv
    reason: Missing output files: results/data/corpus/c.txt
    resources: tmpdir=/tmp

[Fri Nov 27 10:20:29 2026]
Finished jobid: 4 (Rule: corpus)
1 of 3 steps (33%) done

[Fri Nov 27 10:20:29 2026]
rule train:
    input: results/data/corpus/c.txt, results/other.txt
    output: results/models/simcse/b/seed1
    jobid: 2
    wildcards: method=simcse, backbone=b, seed=1
    threads: 2
    resources: tmpdir=/tmp, gpu=1

[Fri Nov 27 10:21:09 2026]
Finished jobid: 2 (Rule: train)
"""


def test_the_log_gives_each_job_its_rule_files_threads_and_wall_time() -> None:
    jobs = smoke_time.parse_log(LOG)
    corpus, train = jobs[4], jobs[2]
    assert (corpus.rule, corpus.outputs, corpus.inputs) == ("corpus", ["results/data/corpus/c.txt"], [])
    assert corpus.benchmark == "benchmarks/rules/data/corpus_c.tsv" and corpus.threads == 1
    assert corpus.start == datetime(2026, 11, 27, 10, 20, 27) and corpus.wall == 2.0
    assert train.inputs == ["results/data/corpus/c.txt", "results/other.txt"]
    assert (train.threads, train.benchmark, train.wall) == (2, None, 40.0)


def job(name: str, cpu: float, inputs: tuple[str, ...] = (), threads: int = 1):
    j = smoke_time.Job(name, datetime(2026, 1, 1), list(inputs), [name], threads)
    j.cpu = cpu
    return j


def test_replay_on_two_cores_by_hand() -> None:
    # a (10 s) feeds b (5) and c (5): b and c run side by side after a -> 15 s, path 15
    jobs = {1: job("a", 10), 2: job("b", 5, ("a",)), 3: job("c", 5, ("a",))}
    assert smoke_time.replay(jobs) == (15.0, 15.0)
    # four independent 6-s jobs: two rounds of two -> 12 s (CPU / 2), path 6
    jobs = {i: job(f"j{i}", 6) for i in range(4)}
    assert smoke_time.replay(jobs) == (12.0, 6.0)
    # the longest path first: x (2) -> y (10) beside z (10), w (2): x starts first with z
    # (x then y: 12; z then w: 12) -> 12, not 14 as z and w first would give
    jobs = {1: job("x", 2), 2: job("y", 10, ("x",)), 3: job("z", 10), 4: job("w", 2)}
    assert smoke_time.replay(jobs) == (12.0, 12.0)
    # a 2-thread job holds both cores: 8 CPU-s in 4 s, then two 3-s jobs side by side -> 7 s
    jobs = {1: job("llm", 8, threads=2), 2: job("p", 3, ("llm",)), 3: job("q", 3, ("llm",))}
    assert smoke_time.replay(jobs) == (7.0, 7.0)


def test_what_if_scales_and_drops_jobs_by_their_first_output() -> None:
    # eval/a and eval/b (8 s each) after train (4): 4 + 8 = 12 s on two cores; halving the
    # evaluations gives 4 + 4 = 8; dropping eval/b too leaves train then eval/a: 4 + 4 = 8
    jobs = {1: job("train", 4), 2: job("eval/a", 8, ("train",)), 3: job("eval/b", 8, ("train",))}
    assert smoke_time.replay(jobs) == (12.0, 12.0)
    halved = smoke_time.adjust(jobs, ["eval/*=0.5"], [])
    assert [j.cpu for j in halved.values()] == [4.0, 4.0, 4.0]
    assert smoke_time.replay(halved) == (8.0, 8.0)
    assert list(smoke_time.adjust(halved, [], ["eval/b"])) == [1, 2]
    with pytest.raises(SystemExit, match="matches no job"):
        smoke_time.adjust(jobs, [], ["eval/c"])


def test_total_cpu_reads_user_and_system_time() -> None:
    text = "\tUser time (seconds): 100.25\n\tSystem time (seconds): 9.75\n\tPercent of CPU: 30%\n"
    assert smoke_time.total_cpu(text) == 110.0


def test_a_job_served_by_the_worker_takes_its_childs_cpu_by_its_log() -> None:
    """The worker's log (negcse.runtime.worker) names each child's stderr, the job's log; its
    user + system seconds are summed per log, lines of other kinds are not read."""
    served = smoke_time.worker_cpu(
        "negcse worker: 45 modules loaded, listening on .snakemake/negcse-worker.sock\n"
        "negcse worker: pid 7 (train --run) stderr logs/data/corpus_c.log exit 0, "
        "8.50 s user 0.25 s sys\n"
        "negcse worker: refused (environment OMP_NUM_THREADS): runs in its own process\n"
        "negcse worker: pid 9 (table sts) stderr logs/tables/sts.log exit -15, 1.00 s user 0.5 s sys\n"
    )
    assert served == {"logs/data/corpus_c.log": 8.75, "logs/tables/sts.log": 1.5}
    jobs = smoke_time.parse_log(LOG)
    assert jobs[4].log == "logs/data/corpus_c.log"
