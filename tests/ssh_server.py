"""A real OpenSSH server on loopback for the DVC remote tests (tests/workflow/test_dvc_remote.py):
Debian's ``sshd`` (package openssh-server, installed by .ci/run) with a throwaway host key, on a
free port above 1024, serving SFTP to the keys of :meth:`SSHServer.person`; and a TCP relay in
front of it that counts the bytes it forwards, so a test can kill the server in the middle of a
transfer (after so many bytes), not at a guessed moment.

Each person has a home of their own (``~/.ssh/id_ed25519`` and ``known_hosts``, which holds the
server's host key: the host is checked, as on a lab's machine); DVC's SSH client (asyncssh)
reads both from $HOME, so a person's DVC commands run with ``HOME`` set to it.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

SSHD = "/usr/sbin/sshd"


def sshd_missing() -> str | None:
    """Why no server can start here, or None."""
    if not Path(SSHD).is_file() or shutil.which("ssh-keygen") is None:
        return f"{SSHD} or ssh-keygen not found (Debian package openssh-server)"
    if os.geteuid() != 0:
        return "sshd is started as root here (its privilege separation folder /run/sshd)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    assert port > 1024
    return port


def keygen(path: Path) -> str:
    """A new ed25519 key pair at ``path`` (no passphrase); the public key's line."""
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", path.name, "-f", str(path)],
        check=True,
    )
    return path.with_suffix(".pub").read_text().strip()


def descendants(pid: int) -> list[int]:
    """``pid``'s child processes, their children, ... (from /proc)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


class SSHServer:
    """``sshd -D`` on 127.0.0.1:``port``: public-key login only, for ``user`` (this process's
    user), SFTP in-process (internal-sftp). :meth:`kill` SIGKILLs it and every session process
    it forked (a crash, not a shutdown); :meth:`start` again serves the same port and host key."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.user = getpass.getuser()
        self.port = free_port()
        root.mkdir(parents=True, exist_ok=True)
        self.host_key = keygen(root / "host_ed25519")
        self.authorized = root / "authorized_keys"
        self.authorized.write_text("")
        self.log = root / "sshd.log"
        self.config = root / "sshd_config"
        self.config.write_text(
            "\n".join(
                [
                    f"Port {self.port}",
                    "ListenAddress 127.0.0.1",
                    f"HostKey {root / 'host_ed25519'}",
                    f"AuthorizedKeysFile {self.authorized}",
                    f"PidFile {root / 'sshd.pid'}",
                    f"AllowUsers {self.user}",
                    "PubkeyAuthentication yes",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "UsePAM no",
                    "StrictModes no",  # the test's folders are world-readable temporary dirs
                    "PermitRootLogin prohibit-password",
                    "Subsystem sftp internal-sftp",
                    "LogLevel VERBOSE",
                    "",
                ]
            )
        )
        self.proc: subprocess.Popen[bytes] | None = None

    def person(self, home: Path, authorized: bool = True) -> Path:
        """A home for one person: a key of their own (listed in authorized_keys unless not
        ``authorized``) and the server's host key in known_hosts."""
        ssh = home / ".ssh"
        ssh.mkdir(parents=True)
        public = keygen(ssh / "id_ed25519")
        if authorized:
            with self.authorized.open("a") as fh:
                fh.write(public + "\n")
        host = " ".join(self.host_key.split()[:2])
        (ssh / "known_hosts").write_text(f"[127.0.0.1]:{self.port} {host}\n")
        return home

    def start(self) -> None:
        Path("/run/sshd").mkdir(exist_ok=True)  # privilege separation folder (as root)
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [SSHD, "-D", "-e", "-f", str(self.config)], stdout=log, stderr=log
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd exited ({self.proc.returncode}):\n{self.log.read_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    if s.recv(4).startswith(b"SSH-"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"sshd did not answer on port {self.port}:\n{self.log.read_text()}")

    def kill(self) -> None:
        """SIGKILL the server and its session processes, as a crash or power cut would."""
        if self.proc is None:
            return
        for pid in [*descendants(self.proc.pid), self.proc.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.proc = None

    stop = kill


class Relay:
    """A TCP relay on 127.0.0.1 to ``port``, counting the bytes it forwards each way; once
    ``trip`` is set, ``trip[2]()`` runs (once) when the bytes in direction ``trip[0]`` ("up":
    client to server, "down": server to client) pass ``trip[1]``."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.sock.getsockname()[1])
        self.bytes = {"up": 0, "down": 0}
        self.trip: tuple[str, int, Callable[[], None]] | None = None
        self.tripped = threading.Event()
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self, direction: str, after: int, action: Callable[[], None]) -> None:
        with self.lock:
            self.bytes = {"up": 0, "down": 0}
            self.trip = (direction, after, action)
            self.tripped.clear()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                client.close()
                continue
            for src, dst, way in ((client, server, "up"), (server, client, "down")):
                threading.Thread(target=self._pipe, args=(src, dst, way), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, way: str) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
                self._count(way, len(data))
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()

    def _count(self, way: str, n: int) -> None:
        action = None
        with self.lock:
            self.bytes[way] += n
            if self.trip and self.trip[0] == way and self.bytes[way] >= self.trip[1]:
                action, self.trip = self.trip[2], None
        if action is not None:
            action()
            self.tripped.set()

    def close(self) -> None:
        self.sock.close()
