"""Two people share results through a DVC remote on a real SSH server (Debian's sshd on
loopback, tests/ssh_server.py), as docs/collaborate.md tells them to.

Person A runs a small grid (one model of each kind the outputs need: SimCSE and UNA's SimCSE
baseline on splade-tiny, four steps, so a verdict and a paper page are written), records it with
``negcse dvc-lock`` (what the lead runs after ``make smoke``), commits, and ``dvc push``es.
Person B clones with a cache of their own and a key of their own: a fresh clone's ``dvc status``
lists only the heavy outputs; B pulls one model, then the evaluation files and analyses and
rebuilds the tables, verdicts and paper pages from them byte for byte, without training; then
pulls everything, runs the touch step, finds nothing to do, and changes one parameter with
``dvc exp run -S``: only SimCSE's jobs and the aggregates rerun and ``dvc metrics diff`` shows
SimCSE's average move.

Faults on the way, each against a remote folder of its own and on the small outputs (every
cached output but the models: :data:`SMALL`, a few MB, so that a fault case moves a tenth of
what the round trip does): the server killed mid-push and mid-pull (by a relay counting the
bytes, not at a guessed moment, a third of the way; the next push/pull completes, no object
under its final name is ever half-written), a corrupted object refused by DVC's hash check on
pull, a refused key (one line from ``negcse remote-check``), and a full remote disk (a tmpfs of
half their size; skipped where it cannot be mounted). A second protocol: WebDAV against a
real server from PyPI (wsgidav), with a password.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from negcse.workflow.config import deep_merge
from negcse.workflow.dvc_lock import cached_outs, stage, unexpected
from ssh_server import Relay, SSHServer, free_port, sshd_missing
from workflow_copy import CI_REDUCTIONS, committed_copy, jobs_with_wildcards, sh

pytestmark = [pytest.mark.slow, pytest.mark.mirror]
DOC = Path(__file__).resolve().parents[2] / "docs" / "collaborate.md"
REQUIRED_ENV = "NEGCSE_REQUIRE_SSHD"  # .ci/run sets it where sshd is installed
MODEL = "results/models/simcse/splade-tiny/seed1"
#: the fault cases' outputs: every cached one but the models (tests/workflow/test_dvc_remote.py)
SMALL = ["results/data", "results/features", "results/negatives", "results/eval",
         "results/analysis"]  # fmt: skip
#: a small object of them for the corrupted-object case
EVAL = "results/eval/sts/simcse/splade-tiny/seed1.json"
#: the smallest grid with a model, evaluations, tables, a verdict row and a paper page (UNA's)
TINY = {
    "grid": {"methods": ["simcse", "una_baseline"], "backbones": ["splade-tiny"], "seeds": [1]},
    "corpus": {"max_sentences": 256},
    "train_overrides": {"max_steps": 4, "eval_steps": 4, "checkpoint_steps": 4},
    "analysis": {"sentences": 100},
    # no untrained-backbone rows: one evaluation job less
    "evaluation": {"transfer": {"tasks": ["TREC"], "kfold": 2}, "baseline": False},
    "methods": {"simcse": {"seeds": [1]}},  # the smoke grid runs it at three
}
#: the rules that turn evaluation files into tables, verdicts and paper pages
REPORTING = ["table", "case_study_table", "headline_metrics", "paper_report", "method_report"]


def tiny_grid(ws: Path) -> None:
    """The smoke profile's config, CI's reductions and :data:`TINY` merged into one file."""
    smoke = ws / "tests/smoke/config.yaml"
    config = deep_merge(
        yaml.safe_load(smoke.read_text()), yaml.safe_load((ws / CI_REDUCTIONS).read_text())
    )
    config = deep_merge(config, TINY)
    config["grid"] = TINY["grid"]
    smoke.write_text(yaml.safe_dump(config, sort_keys=False))
    for folder in ("tables", "reports", "metrics"):  # the committed smoke grid's: not this grid's
        shutil.rmtree(ws / "results" / folder)
    (ws / "results/headline.json").unlink(missing_ok=True)


def doc_blocks() -> dict[str, str]:
    """docs/collaborate.md's two-person blocks: ``<!-- collaborate: NAME -->`` then a bash fence."""
    text = DOC.read_text(encoding="utf-8")
    found = re.findall(r"^<!-- collaborate: ([\w-]+) -->\n```bash\n(.*?)^```", text, re.S | re.M)
    return dict(found)


def run_block(name: str, ws: Path, home: Path, lab: str = "") -> str:
    """Run docs/collaborate.md's block ``name`` as that person would, in ``ws`` (bash -e)."""
    env = {
        **as_person(home),
        "LAB": lab,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        **{f"GIT_{who}_{what}": value for who in ("AUTHOR", "COMMITTER")
           for what, value in (("NAME", home.name), ("EMAIL", f"{home.name}@lab"))},
    }  # fmt: skip
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", doc_blocks()[name]],
        cwd=ws,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one stream, in order
        text=True,
        timeout=1800,
    )
    (ws / f"{name}.log").write_text(proc.stdout)
    assert proc.returncode == 0, f"docs/collaborate.md {name} failed:\n{proc.stdout[-6000:]}"
    return proc.stdout


def commit(repo: Path, message: str) -> None:
    sh(["git", "add", "-A"], repo)
    sh(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message], repo)


def as_person(home: Path) -> dict[str, str]:
    """The environment of a person's DVC commands: their $HOME (~/.ssh: key, known_hosts)."""
    return {**os.environ, "HOME": str(home)}


def size(ws: Path, targets: list[str]) -> int:
    """The bytes of the files under ``targets``."""
    return sum(p.stat().st_size for t in targets for p in (ws / t).rglob("*") if p.is_file())


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def objects(folder: Path) -> tuple[int, list[str], int]:
    """(objects, those whose content does not hash to their name, temporary files) of a DVC
    object store (``files/md5/ab/cdef...[.dir]``: the MD5 of the content)."""
    good, bad, tmp = 0, [], 0
    for path in folder.rglob("*"):
        if not path.is_file():
            continue
        if path.name.endswith(".tmp"):
            tmp += 1
            continue
        name = path.parent.name + path.name.removesuffix(".dir")
        if hashlib.md5(path.read_bytes()).hexdigest() == name:
            good += 1
        else:
            bad.append(str(path.relative_to(folder)))
    return good, bad, tmp


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    if reason := sshd_missing():
        if os.environ.get(REQUIRED_ENV):
            pytest.fail(f"{REQUIRED_ENV} is set but {reason}")
        pytest.skip(reason)
    ssh = SSHServer(tmp_path_factory.mktemp("sshd"))
    ssh.start()
    yield ssh
    ssh.stop()


@pytest.fixture(scope="module")
def homes(server: SSHServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Person A's and B's homes (keys the server accepts) and a stranger's (a key it does not)."""
    root = tmp_path_factory.mktemp("homes")
    return {
        "a": server.person(root / "a"),
        "b": server.person(root / "b"),
        "stranger": server.person(root / "stranger", authorized=False),
    }


@pytest.fixture(scope="module")
def remotes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The server's folders: lab/ (the shared remote) and one per fault test."""
    return tmp_path_factory.mktemp("srv")


@pytest.fixture(scope="module")
def person_a(
    tmp_path_factory: pytest.TempPathFactory,
    server: SSHServer,
    homes: dict[str, Path],
    remotes: Path,
) -> Path:
    """A runs the grid (as `make smoke` does), records it (`negcse dvc-lock`), commits the lock
    and the results with the lab's remote, and pushes: docs/collaborate.md's block a-share."""
    ws = committed_copy(tmp_path_factory.mktemp("a"), tiny_grid)
    (remotes / "lab").mkdir()  # the lab's folder on the server
    start = time.perf_counter()
    run_block("a-share", ws, homes["a"], f"ssh://127.0.0.1:{server.port}{remotes / 'lab'}")
    (ws / "a_seconds.txt").write_text(f"{time.perf_counter() - start:.1f}\n")
    return ws


def clone(a: Path, where: Path) -> Path:
    sh(["git", "clone", "-q", str(a), str(where)], where.parent)
    return where


def test_fresh_clone_status_lists_only_the_heavy_outputs(person_a: Path, tmp_path: Path) -> None:
    ws = clone(person_a, tmp_path / "clone")
    status = json.loads(sh(["dvc", "status", "--json"], ws).stdout)
    cached = cached_outs(stage(ws))
    assert unexpected(status, cached) == [], status
    (entry,) = status["workflow"]
    assert sorted(entry["changed outs"]) == sorted(cached)
    assert (ws / "dvc.lock").is_file() and (ws / "results/headline.json").is_file()


@pytest.fixture(scope="module")
def b_one_model(
    person_a: Path, homes: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """B's clone after block b-model: `dvc status`, `dvc pull <one model>`."""
    b = clone(person_a, tmp_path_factory.mktemp("b") / "negcse")
    run_block("b-model", b, homes["b"])
    return b


def test_b_pulls_one_model_byte_for_byte(b_one_model: Path, person_a: Path) -> None:
    b = b_one_model
    assert [p.relative_to(b) for p in (b / "results/models").glob("*/*/*")] == [Path(MODEL)]
    assert files(b / MODEL) == files(person_a / MODEL) != {}
    assert not (b / "results/eval").exists()  # nothing else came


@pytest.fixture(scope="module")
def b_rebuilt(b_one_model: Path, homes: dict[str, Path]) -> Path:
    """Block b-rebuild: B pulls the evaluation files and analyses and rebuilds every
    table, verdict and paper page from them: the reporting rules only (no training, no
    evaluation); the block ends with `git diff --exit-code results`."""
    b = b_one_model
    tables = (b / "results/tables/verdicts.csv").stat().st_mtime_ns
    run_block("b-rebuild", b, homes["b"])
    assert (b / "results/tables/verdicts.csv").stat().st_mtime_ns > tables  # rewritten
    return b


def test_b_rebuilds_tables_verdicts_and_pages_byte_identical(
    b_rebuilt: Path, person_a: Path
) -> None:
    b = b_rebuilt
    ran = {rule for rule, _ in jobs_with_wildcards((b / "b-rebuild.log").read_text())}
    assert {"table", "paper_report", "headline_metrics"} <= ran <= {*REPORTING, "all"}
    for folder in ("tables", "reports", "metrics"):
        theirs = files(person_a / "results" / folder)
        assert files(b / "results" / folder) == theirs and theirs, folder
    assert "verdicts.csv" in files(b / "results/tables") and "una.md" in files(
        b / "results/reports"
    )
    assert (b / "results/headline.json").read_bytes() == (
        person_a / "results/headline.json"
    ).read_bytes()
    assert sh(["git", "status", "--porcelain", "results"], b).stdout == ""
    assert not (b / "logs/train").exists()  # pulled, not retrained


@pytest.fixture(scope="module")
def b_full(b_rebuilt: Path, homes: dict[str, Path]) -> Path:
    """Block b-rerun: B pulls everything, runs the touch step, finds nothing to do, and runs
    an experiment (`dvc exp run -n t01 -S methods.simcse.params.temperature=0.1`)."""
    b = b_rebuilt
    for key, value in (("user.name", "b"), ("user.email", "b@lab")):
        sh(["git", "config", key, value], b)  # dvc exp commits the experiment
    start = time.perf_counter()
    run_block("b-rerun", b, homes["b"])
    (b / "b_rerun_seconds.txt").write_text(f"{time.perf_counter() - start:.1f}\n")
    return b


def rerun_log(b: Path) -> tuple[str, str]:
    """Block b-rerun's output: the pull and the touch step up to `snakemake -n`'s verdict, and
    the experiment's run after it."""
    log = (b / "b-rerun.log").read_text()
    assert "Nothing to be done" in log, log[-3000:]
    head, _, tail = log.partition("Nothing to be done")
    return head, tail


def test_b_after_pull_and_touch_has_nothing_to_do(b_full: Path) -> None:
    head, run = rerun_log(b_full)
    assert "--touch" in head and "Reproducing experiment 't01'" in run  # in the block's order
    # the touch step marks the pulled outputs current without running a job (it leaves each
    # job's log file empty): the only training and evaluation that wrote a log are the
    # experiment's, SimCSE's
    written = {p.relative_to(b_full / "logs").parts[:2] for p in (b_full / "logs").rglob("*.log")
               if p.stat().st_size and p.parts[-4] in ("train", "eval")}  # fmt: skip
    assert written == {("train", "simcse"), ("eval", "simcse")}, written


def test_b_experiment_reruns_only_simcse_and_diffs_it(b_full: Path) -> None:
    b = b_full
    _, run = rerun_log(b)
    jobs = jobs_with_wildcards(run)
    # a method's page (method_report) reads the tables: it is reporting, not per model
    per_model = [(r, w) for r, w in jobs if "method=" in w and r not in REPORTING]
    assert ("train", "wildcards: method=simcse, backbone=splade-tiny, seed=1") in per_model
    assert all(re.search(r"method=simcse(,|$)", w) for _, w in per_model), per_model
    assert all("method=" in w or r in (*REPORTING, "all") or r.endswith(("_figure", "_data"))
               for r, w in jobs), jobs  # fmt: skip
    assert "sts.simcse.splade-tiny.avg" in run  # the block's `dvc metrics diff` printed it
    diff = json.loads(sh(["dvc", "metrics", "diff", "--json", "HEAD", "t01"], b).stdout)
    moved = diff["results/headline.json"]
    assert "sts.simcse.splade-tiny.avg" in moved, diff
    assert not any(k.startswith("sts.una_baseline") for k in moved), diff
    sts = json.loads((b / "results/eval/sts/simcse/splade-tiny/seed1.json").read_text())
    assert moved["sts.simcse.splade-tiny.avg"]["new"] == pytest.approx(sts["avg"], abs=1e-4)
    full = json.loads(sh(["dvc", "metrics", "diff", "--json", "HEAD", "t01", "--targets",
                          "results/metrics"], b).stdout)  # fmt: skip
    assert "simcse.splade-tiny.avg" in full["results/metrics/sts.json"], full
    assert not any(k.startswith("una_baseline") for k in full["results/metrics/sts.json"])


# Faults.


def add_remote(ws: Path, name: str, port: int, folder: Path, local: bool = True) -> None:
    scope = ["--local"] if local else []
    sh(["dvc", "remote", "add", *scope, "-f", name, f"ssh://127.0.0.1:{port}{folder}"], ws)
    sh(["dvc", "remote", "modify", *scope, name, "verify", "true"], ws)


@pytest.fixture
def relay(server: SSHServer):
    r = Relay(server.port)
    yield r
    r.close()
    if server.proc is None:
        server.start()


def test_push_killed_midway_then_completes(person_a: Path, server: SSHServer, relay: Relay,
                                           homes: dict[str, Path], remotes: Path) -> None:  # fmt: skip
    folder = remotes / "killed-push"
    folder.mkdir()
    add_remote(person_a, "killed", relay.port, folder)
    relay.arm("up", size(person_a, SMALL) // 3, server.kill)
    # DVC's parallel transfers: several objects are in flight when the server dies. Which of
    # them finish first depends on their order and the load (none may), so the check is that
    # the kill came midway (not all went up) and that none is half-written under its final name
    push = ["dvc", "push", "-r", "killed", *SMALL]
    first = sh(push, person_a, check=False, env=as_person(homes["a"]))
    assert relay.tripped.is_set() and first.returncode != 0, first.stdout + first.stderr
    midway, bad, _ = objects(folder)
    assert bad == []
    server.start()
    sh(push, person_a, env=as_person(homes["a"]))
    local, local_bad, _ = objects(person_a / ".dvc/cache")
    good, bad, _ = objects(folder)
    assert bad == [] == local_bad and midway < good < local  # not the models: only SMALL went
    status = sh(["dvc", "status", "-c", "-r", "killed", *SMALL], person_a,
                env=as_person(homes["a"]))  # fmt: skip
    assert "in sync" in status.stdout


def test_pull_killed_midway_then_completes(person_a: Path, server: SSHServer, relay: Relay,
                                           homes: dict[str, Path], remotes: Path,
                                           tmp_path: Path) -> None:  # fmt: skip
    b = clone(person_a, tmp_path / "b")
    add_remote(b, "relay", relay.port, remotes / "lab")
    relay.arm("down", size(person_a, SMALL) // 3, server.kill)
    pull = ["dvc", "pull", "-r", "relay", *SMALL]
    first = sh(pull, b, check=False, env=as_person(homes["b"]))
    assert relay.tripped.is_set() and first.returncode != 0, first.stdout + first.stderr
    _good, bad, _ = objects(b / ".dvc/cache")
    assert bad == []  # the cache holds whole objects only
    for name, data in files(b / "results").items():  # and the workspace whole files only
        assert data == (person_a / "results" / name).read_bytes(), name
    server.start()
    sh(pull, b, env=as_person(homes["b"]))
    for out in SMALL:  # (results/features is empty in A's grid: no SAN, no UNA)
        assert files(b / out) == files(person_a / out), out
    assert files(b / "results/eval") != {}
    assert not (b / "results/models").exists()  # what was not asked for did not come


def test_corrupted_remote_object_is_refused_on_pull(person_a: Path, server: SSHServer,
                                                    homes: dict[str, Path], remotes: Path,
                                                    tmp_path: Path) -> None:  # fmt: skip
    """DVC's hash check (``verify = true`` on the lab's remote, docs/collaborate.md): an object
    whose bytes are not those its name hashes (here: an evaluation file cut in half, as an
    interrupted copy by other means would leave it) is not taken into cache or workspace."""
    folder = remotes / "corrupt"
    shutil.copytree(remotes / "lab", folder)
    data = (person_a / EVAL).read_bytes()
    digest = hashlib.md5(data).hexdigest()
    obj = folder / "files/md5" / digest[:2] / digest[2:]
    obj.write_bytes(data[: len(data) // 2])
    c = clone(person_a, tmp_path / "c")
    add_remote(c, "corrupt", server.port, folder)
    out = sh(["dvc", "pull", "-r", "corrupt", "results/eval"], c, check=False,
             env=as_person(homes["b"]))  # fmt: skip
    assert out.returncode != 0, out.stdout + out.stderr
    assert not (c / EVAL).exists()
    _, bad, _ = objects(c / ".dvc/cache")
    assert bad == [] and not (c / ".dvc/cache/files/md5" / digest[:2] / digest[2:]).exists()


def test_refused_key_is_one_clear_line(person_a: Path, homes: dict[str, Path]) -> None:
    stranger = as_person(homes["stranger"])
    assert sh(["dvc", "push"], person_a, check=False, env=stranger).returncode != 0
    check = sh(["python", "-m", "negcse", "remote-check"], person_a, check=False, env=stranger)
    assert check.returncode == 2 and check.stdout == ""  # a user error
    (line,) = check.stderr.strip().splitlines()
    assert line.startswith("negcse remote-check: error: remote 'lab' (ssh://127.0.0.1:")
    assert "refused the login" in line and "keyfile" in line
    ok = sh(
        ["python", "-m", "negcse", "remote-check", "--write"], person_a, env=as_person(homes["a"])
    )
    assert re.fullmatch(
        r"remote 'lab' \(ssh://127\.0\.0\.1:\d+/\S+\): reachable \(\d+ entries, [\d.]+ MB free\)\n",
        ok.stdout,
    )


def test_full_remote_disk_fails_cleanly_then_completes(person_a: Path, server: SSHServer,
                                                       homes: dict[str, Path], remotes: Path) -> None:  # fmt: skip
    folder = remotes / "full"
    folder.mkdir()
    half = size(person_a, SMALL) // 2 // 1024  # KiB
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={half}k", "tmpfs", str(folder)],
                           capture_output=True, text=True)  # fmt: skip
    if mount.returncode != 0:
        pytest.skip(f"cannot mount a {half} KiB tmpfs here (needs root): {mount.stderr.strip()}")
    push = ["dvc", "push", "-r", "full", *SMALL]
    try:
        add_remote(person_a, "full", server.port, folder)
        first = sh(push, person_a, check=False, env=as_person(homes["a"]))
        # SFTP carries no reason (OpenSSH's server answers a full disk with a bare "Failure")
        assert first.returncode != 0 and "failed to upload" in first.stderr, first.stderr
        check = sh(["python", "-m", "negcse", "remote-check", "--remote", "full"], person_a,
                   env=as_person(homes["a"]))  # fmt: skip
        free = re.search(r"reachable \(\d+ entries, ([\d.]+) MB free\)$", check.stdout.strip())
        assert free and float(free.group(1)) * 1e6 < half * 1024, check.stdout  # statvfs: nearly full
        _, bad, _ = objects(folder)
        assert bad == []
        sh(["mount", "-o", "remount,size=200m", str(folder)], person_a)
        sh(push, person_a, env=as_person(homes["a"]))
        good, bad, _ = objects(folder)
        assert bad == [] and 0 < good < objects(person_a / ".dvc/cache")[0]  # SMALL: no models
        status = sh(["dvc", "status", "-c", "-r", "full", *SMALL], person_a,
                    env=as_person(homes["a"]))  # fmt: skip
        assert "in sync" in status.stdout
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


# A second protocol: WebDAV, against a real server from PyPI (wsgidav on cheroot), with a user
# name and password (HTTP basic authentication) kept in each clone's uncommitted config.

WSGIDAV_CONFIG = """\
host: 127.0.0.1
port: {port}
server: cheroot
provider_mapping:
  "/": {root}
http_authenticator:
  accept_basic: true
  accept_digest: false
  default_to_digest: false
simple_dc:
  user_mapping:
    "*":
      a: {{password: pa}}
      b: {{password: pb}}
verbose: 1
"""


@pytest.fixture(scope="module")
def webdav(tmp_path_factory: pytest.TempPathFactory):
    """``wsgidav`` serving a folder (its negcse/ the lab's remote) on a free loopback port."""
    exe = Path(sys.executable).parent / "wsgidav"
    if not exe.is_file():
        pytest.skip("wsgidav is not installed (the dev extra: make setup)")
    root = tmp_path_factory.mktemp("webdav")
    (root / "store" / "negcse").mkdir(parents=True)
    port = free_port()
    (root / "wsgidav.yaml").write_text(WSGIDAV_CONFIG.format(port=port, root=root / "store"))
    with (root / "log").open("wb") as log:
        proc = subprocess.Popen([str(exe), "-c", str(root / "wsgidav.yaml")], stdout=log,
                                stderr=log)  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None, (root / "log").read_text()
            time.sleep(0.1)
    yield f"webdav://127.0.0.1:{port}/negcse", root / "store" / "negcse"
    proc.terminate()
    proc.wait(timeout=30)


def webdav_remote(ws: Path, url: str, user: str, password: str) -> None:
    sh(["dvc", "remote", "add", "--local", "-f", "dav", url], ws)
    for key, value in (("user", user), ("password", password), ("verify", "true")):
        sh(["dvc", "remote", "modify", "--local", "dav", key, value], ws)


def test_webdav_remote_push_and_pull_one_model(person_a: Path, webdav: tuple[str, Path],
                                               tmp_path: Path) -> None:  # fmt: skip
    url, folder = webdav
    webdav_remote(person_a, url, "a", "pa")
    sh(["dvc", "push", "-r", "dav"], person_a)
    good, bad, _ = objects(folder)
    assert bad == [] and good == objects(person_a / ".dvc/cache")[0]
    d = clone(person_a, tmp_path / "d")
    webdav_remote(d, url, "b", "wrong")
    check = sh(["python", "-m", "negcse", "remote-check", "--remote", "dav"], d, check=False)
    (line,) = check.stderr.strip().splitlines()
    assert check.returncode == 2 and "the server refused the login" in line, check.stderr
    sh(["dvc", "remote", "modify", "--local", "dav", "password", "pb"], d)
    sh(["dvc", "pull", "-r", "dav", MODEL], d)
    assert files(d / MODEL) == files(person_a / MODEL) != {}
