"""`profiles/slurm` on a real SLURM cluster: munge, slurmctld and slurmd started on loopback
(one node, two fake GPUs), the reduced smoke grid (tests/slurm/config.yaml) submitted through
the SLURM executor, a training job cancelled with `scancel` and resumed by the same command, and
the tables compared with the same grid run by `--profile profiles/smoke`.

Needs root (slurmd runs jobs as their user) and Debian's `slurmctld slurmd slurm-client munge`
(`.ci/run` installs them); skipped with the reason where either is missing."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from workflow_copy import CI_REDUCTIONS

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.mirror]
REPO = Path(__file__).resolve().parents[1]
CONFIGS = ["--configfile", "tests/smoke/config.yaml", CI_REDUCTIONS, "tests/slurm/config.yaml"]
SMOKE = ["snakemake", "--profile", "profiles/smoke", *CONFIGS]
# The command docs/paper-grid.md gives, plus the CI cluster's site settings. `--retries 0`: the cancelled
# job fails the first command (as when preempted more often than the profile's retries allow);
# the same command again resumes it.
SLURM = [
    "snakemake",
    "--profile",
    "profiles/slurm",
    "--profile",
    "tests/slurm",
    *CONFIGS,
    "--retries",
    "0",
]
TOOLS = (
    "mungekey",
    "munged",
    "slurmctld",
    "slurmd",
    "sbatch",
    "srun",
    "squeue",
    "scancel",
    "scontrol",
)
# the grid's rules with gpu=1 (no untrained-backbone row: tests/slurm/config.yaml)
GPU_RULES = {"train", "evaluate_model"}
# the rules that run on the submitting host (`localrule: True`: they fetch data, which a compute
# node may not reach, or write tables, figures and pages in seconds); every other job is submitted
LOCAL_RULES = {"sts_data", "corpus", "mixed_corpus", "prefetch", "transfer_data", "mteb_data",
               "analysis_sentences", "analysis_negations", "analysis_figure",
               "training_curves_data", "table", "headline_metrics", "case_study_table",
               "paper_report", "method_report"}  # fmt: skip
# set by .ci/run where it installed (or found) SLURM: then a missing piece fails the test
REQUIRED_ENV = "NEGCSE_REQUIRE_SLURM"
SBIN = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])


def _missing() -> str | None:
    absent = [tool for tool in TOOLS if shutil.which(tool, path=SBIN) is None]
    if absent:
        return (
            f"SLURM/munge not installed ({', '.join(absent)} missing): "
            "apt-get install slurmctld slurmd slurm-client munge"
        )
    if os.geteuid() != 0:
        return "needs root: slurmd runs each job as its submitting user"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def sh(cmd: list[str], cwd: Path, check: bool = True, timeout: int = 2400) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    out = proc.stdout + proc.stderr
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{out[-8000:]}")
    return out


SLURM_CONF = """\
ClusterName=negcse-test
SlurmctldHost=localhost
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={root}/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# the node is what this file says (CPUs, memory for the rules' mem_mb), not what slurmd detects
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=5
# finished jobs stay visible to squeue, the status command without slurmdbd (the executor
# needs at least 3 x its first status interval)
MinJobAge=3600
GresTypes=gpu
NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=65536 Gres=gpu:2 State=UNKNOWN
PartitionName=ci-cpu Nodes=localhost Default=YES MaxTime=INFINITE State=UP
PartitionName=ci-gpu Nodes=localhost MaxTime=INFINITE State=UP
"""
# Two "GPUs" for scheduling only: SLURM counts them and sets CUDA_VISIBLE_DEVICES; the device
# files are placeholders (torch on this CPU machine sees no GPU either way).
GRES_CONF = "NodeName=localhost Name=gpu File=/dev/null,/dev/zero\n"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A one-node SLURM cluster on loopback; every daemon it starts is stopped afterwards."""
    reason = _missing()
    if reason and os.environ.get(REQUIRED_ENV):  # .ci/run installed SLURM: a skip would hide it
        pytest.fail(f"{REQUIRED_ENV} is set but {reason}")
    if reason:
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("slurm")
    for sub in ("munge", "state", "spool", "log"):
        (root / sub).mkdir(mode=0o700)
    conf = root / "slurm.conf"
    conf.write_text(
        SLURM_CONF.format(
            root=root,
            ctld_port=_free_port(),
            slurmd_port=_free_port(),
            cpus=max(2, os.cpu_count() or 2),
        )
    )
    (root / "gres.conf").write_text(GRES_CONF)
    key = root / "munge" / "munge.key"
    subprocess.run(["mungekey", "-c", "-k", str(key)], check=True, env={"PATH": SBIN})
    # Inside a job the SLURM executor runs the rule through `srun`, after removing every SLURM_*
    # variable, SLURM_CONF included: a real cluster's srun finds /etc/slurm/slurm.conf, this
    # one's finds its config through a wrapper first on PATH (jobs inherit PATH).
    (root / "bin").mkdir()
    srun = root / "bin" / "srun"
    srun.write_text(f'#!/bin/sh\nSLURM_CONF={conf} exec {shutil.which("srun", path=SBIN)} "$@"\n')
    srun.chmod(0o755)
    saved = {key: os.environ.get(key) for key in ("SLURM_CONF", "PATH")}
    os.environ["SLURM_CONF"] = str(conf)  # the client commands, Snakemake and its jobs use it
    os.environ["PATH"] = os.pathsep.join([str(root / "bin"), os.environ["PATH"]])
    env = {**os.environ, "PATH": os.pathsep.join([os.environ["PATH"], "/usr/sbin", "/sbin"])}
    daemons: list[subprocess.Popen[bytes]] = []

    def start(*cmd: str) -> None:
        log = (root / "log" / f"{cmd[0]}.out").open("wb")
        daemons.append(subprocess.Popen(cmd, stdout=log, stderr=log, env=env))

    try:
        munge = root / "munge"
        start(
            "munged", "--foreground", "--force", f"--key-file={key}",
            f"--socket={munge}/munge.socket", f"--pid-file={munge}/munged.pid",
            f"--log-file={munge}/munged.log", f"--seed-file={munge}/munged.seed",
        )  # fmt: skip
        deadline = time.time() + 30
        while not (munge / "munge.socket").exists() and time.time() < deadline:
            time.sleep(0.2)
        start("slurmctld", "-D", "-f", str(conf))
        start("slurmd", "-D", "-N", "localhost", "-f", str(conf))
        state, deadline = "", time.time() + 90
        while time.time() < deadline:
            probe = subprocess.run(
                ["sinfo", "-h", "-N", "-o", "%t"], capture_output=True, text=True, env=env
            )
            state = " ".join(sorted(set(probe.stdout.split())))  # one line per partition
            if state == "idle":
                break
            time.sleep(0.5)
        logs = "\n".join(f"{p.name}:\n{p.read_text()[-2000:]}" for p in (root / "log").glob("*"))
        assert state == "idle", f"the test cluster did not come up (node: {state!r})\n{logs}"
        yield root
    finally:
        ids = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True, env=env)
        if ids.stdout.split():
            subprocess.run(["scancel", *ids.stdout.split()], env=env, check=False)
            time.sleep(6)  # KillWait: the jobs' processes are gone before slurmd stops
        for proc in reversed(daemons):  # slurmd, slurmctld, munged
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def copy_tree(dest: Path) -> Path:
    """The project's files as on disk (tracked and new, not ignored ones), without results."""
    names = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, names):
        src = REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


@pytest.fixture(scope="module")
def smoke_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reduced grid on this machine with `--profile profiles/smoke`: the reference."""
    ws = copy_tree(tmp_path_factory.mktemp("smoke"))
    sh(SMOKE, ws)
    return ws


@dataclass
class SlurmRun:
    ws: Path
    first: str  # Snakemake's output, the run in which a training job was cancelled
    second: str  # the same command again
    cancelled: str  # SLURM job id of the cancelled training job
    seconds: float  # both commands, wall time


def jobs_of(comment_part: str) -> list[str]:
    """SLURM ids of the running jobs whose comment (the executor's rule_<rule>_wildcards_...)
    contains `comment_part`."""
    out = subprocess.run(
        ["squeue", "-h", "-t", "RUNNING", "-o", "%i|%k"], capture_output=True, text=True
    ).stdout
    return [
        i for i, _, k in (line.partition("|") for line in out.splitlines()) if comment_part in k
    ]


@pytest.fixture(scope="module")
def slurm_run(cluster: Path, tmp_path_factory: pytest.TempPathFactory) -> SlurmRun:
    ws = copy_tree(tmp_path_factory.mktemp("slurm"))
    start = time.perf_counter()
    with (ws / "first.log").open("w") as log:
        proc = subprocess.Popen(SLURM, cwd=ws, stdout=log, stderr=subprocess.STDOUT, text=True)
        try:
            state = ws / "results/checkpoints/sncse/splade-tiny/seed1/last.pt"
            deadline = time.time() + 1800  # its queue waits behind the grid's first jobs
            while not state.exists() and time.time() < deadline and proc.poll() is None:
                time.sleep(0.1)
            assert state.exists(), "the SNCSE training job wrote no checkpoint"
            ids = jobs_of("rule_train_wildcards_sncse_splade-tiny_1")  # its one seed
            assert len(ids) == 1, f"running SNCSE training jobs: {ids}"
            subprocess.run(["scancel", ids[0]], check=True)
            assert proc.wait(timeout=2400) != 0, "the run with a cancelled job succeeded"
        finally:
            if proc.poll() is None:
                proc.terminate()
                proc.wait()
    first = (ws / "first.log").read_text()
    second = sh(SLURM, ws)  # the same command again
    (ws / "second.log").write_text(second)
    seconds = time.perf_counter() - start
    (ws / "slurm_seconds.txt").write_text(f"{seconds:.1f}\n")
    print(f"SLURM grid: {seconds:.1f} s (both commands)")
    return SlurmRun(ws, first, second, ids[0], seconds)


def submitted(output: str) -> dict[int, tuple[str, str]]:
    """Snakemake job id -> (rule, SLURM job id) for every job the run submitted, and
    (rule, "") for the jobs it ran on the submitting host (local rules but ``all``)."""
    rules: dict[int, str] = {}
    rule = None
    for line in output.splitlines():
        if m := re.match(r"^(localrule|rule) (\w+):", line):
            rule = None if m.group(2) == "all" else m.group(2)
        elif rule and (m := re.match(r"^\s+jobid: (\d+)$", line)):
            rules[int(m.group(1))] = rule
            rule = None
    slurm = {
        int(m.group(1)): m.group(2)
        for m in re.finditer(r"Job (\d+) has been submitted with SLURM jobid (\d+)", output)
    }
    return {job: (name, slurm.get(job, "")) for job, name in rules.items()}


def show_job(jobid: str) -> dict[str, str]:
    out = subprocess.run(
        ["scontrol", "show", "job", "-o", jobid], capture_output=True, text=True, check=True
    ).stdout
    return dict(re.findall(r"(\w+)=(\S*)", out))


def job_stats(output: str) -> Counter[str]:
    """The first 'Job stats' table of a Snakemake run: rule -> number of jobs to run."""
    block = output.split("Job stats:")[1].split("\n\n")[0]
    return Counter(
        {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", block, re.M)}
    )


def test_every_job_but_the_local_rules_ran_as_a_slurm_job(slurm_run: SlurmRun) -> None:
    jobs = [*submitted(slurm_run.first).values(), *submitted(slurm_run.second).values()]
    outside = sorted({rule for rule, slurm_id in jobs if not slurm_id})
    assert outside and set(outside) <= LOCAL_RULES, "jobs run outside SLURM"
    assert not [rule for rule, slurm_id in jobs if slurm_id and rule in LOCAL_RULES]
    # every job the first run planned ran once, the cancelled training twice; `all` (no command)
    # is Snakemake's own
    expected = job_stats(slurm_run.first)
    assert expected.pop("total") == sum(expected.values()) and expected.pop("all") == 1
    expected["train"] += 1
    assert Counter(rule for rule, _ in jobs) == expected
    for rule, slurm_id in jobs:
        if not slurm_id:
            continue
        record = show_job(slurm_id)
        state = "CANCELLED" if slurm_id == slurm_run.cancelled else "COMPLETED"
        assert record["JobState"] == state, (rule, slurm_id, record["JobState"])
        assert record["Comment"].startswith(f"rule_{rule}"), (rule, record["Comment"])
    submitted_rules = {rule for rule, slurm_id in jobs if slurm_id}
    assert submitted_rules >= GPU_RULES | {"negation"}
    assert set(outside) >= {"corpus", "sts_data", "table", "paper_report"}


def test_gpu_rules_ask_for_one_gpu_in_the_gpu_partition(slurm_run: SlurmRun) -> None:
    """The submission of a gpu=1 rule requests a GPU (sbatch --gpus=1, in SLURM's record of
    the job) and lands in the GPU partition of tests/slurm/partitions.yaml; CPU jobs ask none."""
    jobs = [*submitted(slurm_run.first).values(), *submitted(slurm_run.second).values()]
    assert not GPU_RULES & LOCAL_RULES
    for rule, slurm_id in jobs:
        if not slurm_id:  # a local rule's job (the test above)
            continue
        record = show_job(slurm_id)
        gpus = re.search(r"gres[:/]gpu[:=](\d+)", record.get("TresPerJob", ""))
        if rule in GPU_RULES:
            assert gpus and gpus.group(1) == "1", (rule, record.get("TresPerJob"))
            assert record["Partition"] == "ci-gpu", (rule, record["Partition"])
        else:
            assert not gpus, (rule, record.get("TresPerJob"))
            assert record["Partition"] == "ci-cpu", (rule, record["Partition"])


def test_cancelled_training_resumes_with_the_metrics_of_an_uninterrupted_run(
    slurm_run: SlurmRun, smoke_ws: Path
) -> None:
    ws = slurm_run.ws
    assert "Error in rule train" in slurm_run.first
    log = (ws / "logs/train/sncse/splade-tiny/seed1.log").read_text()
    assert "resumed from" in log
    model = "results/models/sncse/splade-tiny/seed1/train_log.json"
    resumed = json.loads((ws / model).read_text())["curve"]
    uninterrupted = json.loads((smoke_ws / model).read_text())["curve"]
    assert resumed[:-1] == uninterrupted[:-1]
    sts = "results/eval/sts/sncse/splade-tiny/seed1.json"
    after, reference = (json.loads((w / sts).read_text()) for w in (ws, smoke_ws))
    for key in ("STS12", "STS16", "STSBenchmark", "SICKRelatedness", "avg", "stsb_dev"):
        assert after[key] == reference[key], key


def test_tables_identical_to_the_smoke_profile_run(slurm_run: SlurmRun, smoke_ws: Path) -> None:
    tables = sorted(p.relative_to(smoke_ws) for p in (smoke_ws / "results/tables").iterdir())
    assert len(tables) >= 10
    assert (
        sorted(p.relative_to(slurm_run.ws) for p in (slurm_run.ws / "results/tables").iterdir())
        == tables
    )
    for table in tables:
        assert (slurm_run.ws / table).read_bytes() == (smoke_ws / table).read_bytes(), table
    assert "Nothing to be done" in sh([*SLURM, "-n"], slurm_run.ws)
