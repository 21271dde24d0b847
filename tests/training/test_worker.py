"""The warm worker (negcse.runtime.worker, `negcse worker`): a command run through it is the
command run in its own process. A real tiny SimCSE training on splade-tiny (the mirror) and its
STS evaluation give the same model bytes and the same JSON but for timing keys; a user error's
exit status and stderr pass through; SIGTERM to the client ends the child; with no server, or
a refusing one, the command runs in its own process; the client imports no torch."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from test_trainer import SETTINGS

from benchmark_module import load
from negcse.runtime.worker import ENV

pytestmark = pytest.mark.mirror


def _wait_for(check, what: str, limit: float = 300) -> None:
    """A hang guard, not a speed bar: poll ``check`` until true."""
    deadline = time.monotonic() + limit
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {limit} s")
        time.sleep(0.1)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory, mirror: Path) -> Path:
    tmp = tmp_path_factory.mktemp("worker")
    lines = (mirror / "data/unlabeled/wiki1m/wiki1m_random10k.txt").read_text().splitlines()
    (tmp / "corpus.txt").write_text("\n".join(lines[:96]) + "\n")
    run = {
        "method": "simcse",
        "implementation": "simcse",
        "backbone": "splade-tiny",
        "params": {"temperature": 0.05},
        "generators": {},
        "train": {**SETTINGS, "max_steps": 6, "eval_steps": 3, "checkpoint_steps": 3},
    }
    (tmp / "run.json").write_text(json.dumps(run))
    long_run = {**run, "train": {**run["train"], "max_steps": 100_000, "checkpoint_steps": 100_000}}
    (tmp / "long.json").write_text(json.dumps(long_run))
    return tmp


@pytest.fixture(scope="module")
def server(work: Path) -> Iterator[tuple[subprocess.Popen, Path]]:
    path = work / "w.sock"
    log = (work / "worker.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "negcse", "worker", "--socket", "w.sock"],
        cwd=work, stdout=log, stderr=log, env=os.environ.copy(),
    )  # fmt: skip
    _wait_for(lambda: path.exists() or process.poll() is not None, "the worker's socket")
    assert process.poll() is None, (work / "worker.log").read_text()
    yield process, path
    process.terminate()
    process.wait(timeout=60)
    log.close()
    assert not path.exists()  # removed at its end


def _negcse(work: Path, args: list[str], worker: str | None, **env: str):
    environ = {k: v for k, v in os.environ.items() if k != ENV}
    if worker is not None:
        environ[ENV] = worker
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-m", "negcse", *args], cwd=work, env=environ, capture_output=True,
        text=True, timeout=600,
    )  # fmt: skip


def _train_args(out: str, run: str = "run.json") -> list[str]:
    return [
        "train", "--run", run, "--seed", "5", "--corpus", "corpus.txt", "--out", out,
        "--checkpoint-dir", f"{out}-ckpt", "--threads", "1", "--no-progress",
    ]  # fmt: skip


def _one_run(work: Path, worker: str | None, keep: Path) -> Path:
    """Train and evaluate (STS-B) into the same paths, then move the model and its scores to
    ``keep``; the checkpoints go once the model is saved."""
    trained = _negcse(work, _train_args("model"), worker)
    assert trained.returncode == 0, trained.stderr
    evaluate = [
        "evaluate", "--only", "sts", "--model", "model", "--pooler", "auto", "--threads", "1",
        "--sts-tasks", "STSBenchmark", "--sts-out", "sts.json",
    ]  # fmt: skip
    evaluated = _negcse(work, evaluate, worker)
    assert evaluated.returncode == 0, evaluated.stderr
    (work / "model").rename(keep)
    (work / "sts.json").rename(keep / "sts.json")
    shutil.rmtree(work / "model-ckpt", ignore_errors=True)
    return keep


@pytest.mark.slow
def test_a_training_and_its_evaluation_through_the_worker_are_those_of_a_process_each(
    work: Path, server: tuple[subprocess.Popen, Path], tmp_path: Path
) -> None:
    before = (work / "worker.log").read_text()
    own = _one_run(work, None, tmp_path / "own")
    warm = _one_run(work, str(server[1]), tmp_path / "warm")
    served = (work / "worker.log").read_text()[len(before):]
    assert served.count("(train --run) stderr ") == 1 and served.count("(evaluate --only)") == 1
    # every file byte-identical, or JSON equal but for its timing keys (benchmarks/smoke_compare)
    kinds = load("smoke_compare").compare(own, warm)
    assert kinds["different"] == kinds["only_a"] == kinds["only_b"] == []
    assert "model.safetensors" in kinds["identical"] and "sts.json" in kinds["timing"]


def test_a_user_error_exits_2_with_the_same_one_line(
    work: Path, server: tuple[subprocess.Popen, Path]
) -> None:
    args = _train_args("nothing", run="no-such-run.json")
    own = _negcse(work, args, None)
    warm = _negcse(work, args, str(server[1]))
    assert own.returncode == warm.returncode == 2
    assert warm.stderr == own.stderr and len(own.stderr.strip().splitlines()) == 1
    assert "no-such-run.json" in own.stderr
    assert not (work / "nothing").exists()


def test_a_request_of_another_thread_count_runs_in_its_own_process(
    work: Path, server: tuple[subprocess.Popen, Path]
) -> None:
    args = _train_args("nothing", run="no-such-run.json")
    warm = _negcse(work, args, str(server[1]), OMP_NUM_THREADS="3")
    assert warm.returncode == 2 and "no-such-run.json" in warm.stderr
    assert "refused (environment OMP_NUM_THREADS)" in (work / "worker.log").read_text()


def _long_client(work: Path, server: tuple[subprocess.Popen, Path], out: str):
    """A client of a training that runs till stopped, once the server has forked its child:
    (the client, the child, the server's children as a function)."""
    process, path = server
    client = subprocess.Popen(
        [sys.executable, "-m", "negcse", *_train_args(out, run="long.json")],
        cwd=work, env={**os.environ, ENV: str(path)}, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    children = psutil.Process(process.pid).children
    _wait_for(lambda: len(children()) == 1, "the child")
    return client, children()[0], children


def test_sigterm_to_the_client_ends_its_child(
    work: Path, server: tuple[subprocess.Popen, Path]
) -> None:
    client, child, children = _long_client(work, server, "long")
    time.sleep(1)  # into its training loop
    client.send_signal(signal.SIGTERM)
    assert client.wait(timeout=120) == -signal.SIGTERM  # ended as its child did
    _wait_for(lambda: not psutil.pid_exists(child.pid), "the child's end")
    assert children() == []


def test_a_killed_client_leaves_no_orphan(
    work: Path, server: tuple[subprocess.Popen, Path]
) -> None:
    client, child, _ = _long_client(work, server, "long2")
    client.kill()  # no signal to forward: the server sees the connection close
    client.wait(timeout=60)
    _wait_for(lambda: not psutil.pid_exists(child.pid), "the orphan's end")


def test_no_server_or_a_dead_socket_runs_the_command_here(work: Path) -> None:
    dead = work / "dead.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(dead))
    listener.close()  # the file stays, nothing listens: connections are refused
    args = _train_args("nothing", run="no-such-run.json")
    own = _negcse(work, args, None)
    for worker in (str(work / "absent.sock"), str(dead)):
        result = _negcse(work, args, worker)
        assert (result.returncode, result.stderr) == (2, own.stderr), worker


@pytest.mark.parametrize("through_worker", [False, True])
def test_the_client_imports_no_torch(
    work: Path, server: tuple[subprocess.Popen, Path], through_worker: bool
) -> None:
    code = (
        "import runpy, sys\n"
        "sys.argv = ['negcse', 'train', '--help']\n"
        "try:\n    runpy.run_module('negcse', run_name='__main__', alter_sys=True)\n"
        "except SystemExit as exc:\n    code = exc.code\n"
        "sys.stdout.flush()\n"
        "print('\\nclient:', code, 'torch' in sys.modules)\n"
    )
    environ = {k: v for k, v in os.environ.items() if k != ENV}
    if through_worker:
        environ[ENV] = str(server[1])
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=work, env=environ, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert "--corpus" in result.stdout  # the help, printed by the child or here
    assert result.stdout.strip().splitlines()[-1] == "client: 0 False"


def test_a_request_of_other_interpreter_options_runs_in_its_own_process(
    work: Path, server: tuple[subprocess.Popen, Path]
) -> None:
    """`python -O` has other sys.flags than the server's interpreter: refused, run here."""
    environ = {**os.environ, ENV: str(server[1])}
    args = _train_args("nothing", run="no-such-run.json")
    result = subprocess.run(
        [sys.executable, "-O", "-m", "negcse", *args], cwd=work, env=environ,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2 and "no-such-run.json" in result.stderr
    assert "refused (interpreter options" in (work / "worker.log").read_text()


@pytest.mark.parametrize(
    ("socket_path", "says"),
    [
        ("missing/w.sock", "its folder missing does not exist"),
        ("x" * 120 + ".sock", "a Unix socket's path is at most 107 bytes"),
    ],
)
def test_a_socket_it_cannot_listen_on_is_one_line_before_any_import(
    tmp_path: Path, socket_path: str, says: str
) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "negcse", "worker", "--socket", socket_path],
        cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )  # fmt: skip
    assert out.returncode == 2 and out.stdout == ""
    (line,) = out.stderr.strip().splitlines()
    assert line == f"negcse worker: error: --socket {socket_path}: {says}"
    assert not (tmp_path / socket_path).exists()
