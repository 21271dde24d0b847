"""A warm worker: one process imports torch, transformers and the commands' modules once, then
forks a child per ``python -m negcse ...`` it is asked to run.

The server (:func:`serve`, ``negcse worker --socket PATH``) listens on a Unix socket. A client
(:func:`client_exit_code`, called by ``python -m negcse`` when ``$NEGCSE_WORKER`` names a socket)
sends its ``sys.argv``, working folder, environment, interpreter and interpreter options, and
passes its stdin, stdout and stderr with ``SCM_RIGHTS``. The server forks; the child takes the
client's folder, environment, descriptors and default signal handlers and runs the module
``negcse`` as ``python -m negcse`` runs it (:func:`runpy.run_module`); the commands seed
themselves. The server sends the client the child's pid (the client forwards SIGTERM, SIGINT and
SIGHUP to it), then its exit status; a client that goes away without it gets its child
terminated. A request whose interpreter, interpreter options, folder or load-time environment
(:data:`LOAD_TIME_ENV`: what the preloaded modules read when imported, as thread counts) differ
from the server's is refused, and the client runs the command in its own process, as it does
when no server answers. Each child's exit status and CPU seconds go to the server's stderr, with
the file its stderr went to (a Snakemake job's log); a job's own resource record (Snakemake's
benchmark file) sees only the client.

Fork safety: the server imports modules but runs no torch op, so neither torch's nor BLAS's
thread pools exist at fork.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import io
import json
import logging
import os
import re
import runpy
import selectors
import signal
import socket
import struct
import sys
import tempfile
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

#: the environment variable that names the server's socket
ENV = "NEGCSE_WORKER"
#: commands that always run in their own process (the server itself)
IN_PROCESS = frozenset({"worker"})
#: environment variables read when a preloaded module is imported (thread counts, library and
#: cache settings, the interpreter's own): a request must carry the server's values
LOAD_TIME_ENV = re.compile(
    r"^(OMP_|GOTO_|OPENBLAS_|MKL_|VECLIB_|NUMEXPR_|KMP_|PYTHON|HF_|HUGGINGFACE_|TRANSFORMERS_"
    r"|TORCH|CUDA_|NVIDIA_|LD_|MPL|NEGCSE_|USE_|TOKENIZERS_)|^(PATH|VIRTUAL_ENV|HOME|XDG_CACHE_HOME)$"
)
_HEADER = struct.Struct("!Q")
_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
#: True in a child the server forked: its ``python -m negcse`` runs in place
_in_child = False


# --- client -----------------------------------------------------------------------------------


def _command(argv: Sequence[str]) -> str | None:
    words = [a for a in argv if not a.startswith("-")]
    return words[0] if words else None


def _open_fds() -> list[int]:
    """Descriptors 0-2, each open one or /dev/null in its place (passed as they are)."""
    fds = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            fds.append(fd)
        except OSError:
            fds.append(os.open(os.devnull, os.O_RDWR))
    return fds


def client_exit_code(argv: Sequence[str]) -> int | None:
    """Run ``python -m negcse *argv`` in the worker that ``$NEGCSE_WORKER`` names and return its
    exit status; None when it must run here (no server, refused, a command of
    :data:`IN_PROCESS`, or already in a worker's child)."""
    path = os.environ.get(ENV)
    if not path or _in_child or _command(argv) in IN_PROCESS:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        request = json.dumps(
            {
                "argv": sys.argv,
                "cwd": os.getcwd(),
                "env": dict(os.environ),
                "executable": sys.executable,
                "flags": list(sys.flags),
            }
        ).encode()
        socket.send_fds(sock, [_HEADER.pack(len(request))], _open_fds())
        sock.sendall(request)
        replies = sock.makefile("rb")
        first = replies.readline().decode().split()
    except OSError:
        sock.close()
        return None
    if first[:1] != ["pid"]:  # refused: run here
        sock.close()
        return None
    pid = int(first[1])

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):  # it has ended: its status follows
            os.kill(pid, signum)

    for signum in _SIGNALS:  # the child is not in this process group: pass signals on
        signal.signal(signum, forward)
    line = replies.readline().decode().split()
    sock.close()
    if line[:1] != ["exit"]:
        print(
            f"negcse: error: the worker at {path} stopped before its child {pid} finished",
            file=sys.stderr,
        )
        return 1
    code = int(line[1])
    if code < 0:  # killed by a signal: end the same way, as a process of its own would
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


# --- server -----------------------------------------------------------------------------------


@dataclass
class _Job:
    conn: socket.socket
    pid: int
    pidfd: int
    argv: list[str]
    stderr: str  # where the client's stderr goes (a job's log file), for the CPU record


def _refusal(request: dict[str, Any], env_at_start: dict[str, str]) -> str | None:
    if request["executable"] != sys.executable:
        return f"interpreter {request['executable']} (the worker's: {sys.executable})"
    if request.get("flags") != list(sys.flags):
        return f"interpreter options {request.get('flags')} (the worker's: {list(sys.flags)})"
    if request["cwd"] != os.getcwd():
        return f"folder {request['cwd']} (the worker's: {os.getcwd()})"
    env = request["env"]
    keys = {k for k in [*env, *env_at_start] if LOAD_TIME_ENV.match(k) and k != ENV}
    differ = sorted(k for k in keys if env.get(k) != env_at_start.get(k))
    return f"environment {', '.join(differ)}" if differ else None


def _recv_request(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    header, fds, _flags, _addr = socket.recv_fds(conn, _HEADER.size, 3)
    if len(header) != _HEADER.size or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        raise OSError("an incomplete request")
    (size,) = _HEADER.unpack(header)
    data = bytearray()
    while len(data) < size:
        chunk = conn.recv(min(size - len(data), 1 << 20))
        if not chunk:
            for fd in fds:
                os.close(fd)
            raise OSError("an incomplete request")
        data += chunk
    return json.loads(data), fds


def _stream(fd: int, mode: str, like: Any) -> io.TextIOWrapper:
    """A text stream over ``fd`` as Python's startup makes one: line-buffered at a terminal
    (stderr always), with the encoding and error handler of the stream it replaces."""
    return io.TextIOWrapper(
        open(fd, mode + "b", closefd=False),
        encoding=getattr(like, "encoding", None),
        errors=getattr(like, "errors", None),
        line_buffering=mode == "w" and (fd == 2 or os.isatty(fd)),
    )


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _run_child(
    request: dict[str, Any], fds: list[int], module: str, set_by_imports: dict[str, str]
) -> None:
    """In the forked child: become the client's ``python -m <module>`` and exit with its
    status (never returns). ``set_by_imports``: what the preloaded modules added to the
    environment, as they would have in the client's own process."""
    global _in_child
    _in_child = True
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())  # the server blocks them at fork
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        sys.stdin = _stream(0, "r", sys.__stdin__)
        sys.stdout = _stream(1, "w", sys.__stdout__)
        sys.stderr = _stream(2, "w", sys.__stderr__)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update({**set_by_imports, **request["env"]})
        tempfile.tempdir = None  # read again from $TMPDIR
        logging.root.handlers.clear()
        logging.root.setLevel(logging.WARNING)
        sys.argv = list(request["argv"])
        try:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exc:
            code = _exit_code(exc)
        except KeyboardInterrupt:
            traceback.print_exc()
            code = -signal.SIGINT
        except BaseException:
            sys.excepthook(*sys.exc_info())
            code = 1
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        if code < 0:  # as an interrupted Python ends: by the signal
            signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
        os._exit(code & 0xFF)


def preload(modules: Iterable[str]) -> list[str]:
    """Import ``modules`` (a name that is not installed is skipped); the names imported."""
    done = []
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
        done.append(name)
    return done


class _Stop(Exception):
    pass


def _stop(_signum: int, _frame: object) -> None:
    raise _Stop


def serve(path: str, module: str, modules: Iterable[str]) -> int:
    """Preload ``modules``, then serve requests on the socket ``path`` until SIGTERM, SIGINT,
    or the parent process ends; each request runs ``python -m <module>`` in a forked child."""
    env_at_start = dict(os.environ)
    loaded = preload(modules)
    set_by_imports = {k: v for k, v in os.environ.items() if k not in env_at_start}
    parent = os.getppid()
    if os.path.exists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    jobs: dict[int, _Job] = {}  # by pid
    log = sys.stderr
    print(f"negcse worker: {len(loaded)} modules loaded, listening on {path}", file=log, flush=True)
    for signum in _SIGNALS:
        signal.signal(signum, _stop)
    try:
        while os.getppid() == parent:
            for key, _events in selector.select(timeout=1.0):
                # no stop between a fork and its record: the signals wait till the step is done
                signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
                if key.fileobj is listener:
                    _accept(listener, selector, jobs, (module, env_at_start, set_by_imports), log)
                elif key.data[0] == "exit":
                    _reap(jobs.pop(key.data[1]), selector, log)
                elif key.data[1] in jobs:  # the client went away before its child ended
                    job = jobs[key.data[1]]
                    selector.unregister(job.conn)
                    os.kill(job.pid, signal.SIGTERM)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
    except _Stop:
        pass
    finally:
        signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        for job in list(jobs.values()):
            os.kill(job.pid, signal.SIGTERM)
            _reap(job, selector, log)
        selector.close()
        listener.close()
        if os.path.exists(path):
            os.unlink(path)
    return 0


def _accept(
    listener: socket.socket,
    selector: selectors.BaseSelector,
    jobs: dict[int, _Job],
    setting: tuple[str, dict[str, str], dict[str, str]],
    log: Any,
) -> None:
    """A request: refused, or run in a forked child. ``setting``: the module to run, the
    environment the server started with and what its imports added."""
    module, env_at_start, set_by_imports = setting
    conn, _ = listener.accept()
    conn.settimeout(30)
    try:
        request, fds = _recv_request(conn)
    except (OSError, ValueError) as exc:
        print(f"negcse worker: a request dropped: {exc}", file=log, flush=True)
        conn.close()
        return
    refusal = _refusal(request, env_at_start)
    if refusal:
        for fd in fds:
            os.close(fd)
        print(f"negcse worker: refused ({refusal}): runs in its own process", file=log, flush=True)
        conn.sendall(f"refused {refusal}\n".encode())
        conn.close()
        return
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        for fileobj in [listener, *(job.conn for job in jobs.values()), conn]:
            fileobj.close()
        for job in jobs.values():
            os.close(job.pidfd)
        selector.close()
        _run_child(request, fds, module, set_by_imports)
    stderr = _target(fds[2])
    for fd in fds:
        os.close(fd)
    job = _Job(conn, pid, os.pidfd_open(pid), list(request["argv"]), stderr)
    jobs[pid] = job
    try:
        conn.sendall(f"pid {pid}\n".encode())
    except OSError:
        os.kill(pid, signal.SIGTERM)
    selector.register(job.pidfd, selectors.EVENT_READ, ("exit", pid))
    selector.register(conn, selectors.EVENT_READ, ("client", pid))


def _target(fd: int) -> str:
    """The file a descriptor writes to, relative to the working folder where it is under it."""
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return "?"
    relative = os.path.relpath(target)
    return target if relative.startswith("..") else relative


def _reap(job: _Job, selector: selectors.BaseSelector, log: Any) -> None:
    _pid, status, usage = os.wait4(job.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    for fileobj in (job.pidfd, job.conn):
        with contextlib.suppress(KeyError, ValueError):
            selector.unregister(fileobj)
    os.close(job.pidfd)
    with contextlib.suppress(OSError):
        job.conn.sendall(f"exit {code}\n".encode())
    job.conn.close()
    command = " ".join(job.argv[1:3])
    print(
        f"negcse worker: pid {job.pid} ({command}) stderr {job.stderr} exit {code}, "
        f"{usage.ru_utime:.2f} s user {usage.ru_stime:.2f} s sys",
        file=log,
        flush=True,
    )
