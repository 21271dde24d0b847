"""The DVC remote a lab shares results through, checked in one line (``negcse remote-check``).

DVC reports a refused SSH key as a three-line "unexpected error" on push, and ``dvc pull -q``
prints nothing at all; this connects to the remote with DVC's own file system (same URL,
credentials and ``~/.ssh``) and says what is wrong in one line naming the remote, or that it
answers. ``write=True`` also writes and removes a small file (what ``dvc push`` needs).
"""

from __future__ import annotations

import errno
import os
import posixpath
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dvc.config import NoRemoteError
from dvc.exceptions import DvcException
from dvc.repo import Repo
from fsspec.asyn import sync

from negcse.errors import UserError


@dataclass(frozen=True)
class RemoteStatus:
    name: str
    url: str
    files: int  # entries at the remote's top (DVC's files/ folder, ...)
    free: int | None = None  # bytes free on the remote's disk (SSH: statvfs), None: unknown

    def line(self) -> str:
        free = "" if self.free is None else f", {self.free / 1e6:.1f} MB free"
        return f"remote '{self.name}' ({self.url}): reachable ({self.files} entries{free})"


def free_bytes(fs: Any, path: str) -> int | None:
    """Free bytes on an SSH remote's disk (SFTP statvfs, which OpenSSH serves): an SFTP write
    to a full disk fails with a bare "Failure", so this is how a full disk shows. None for
    other remotes or servers without statvfs."""
    inner = getattr(fs, "fs", None)
    if getattr(fs, "protocol", None) != "ssh" or not hasattr(inner, "_pool"):
        return None

    async def statvfs() -> int:
        async with inner._pool.get() as channel:
            attrs = await channel.statvfs(path)
            return int(attrs.bavail * attrs.frsize)

    try:
        return sync(inner.loop, statvfs)
    except Exception:  # statvfs is an OpenSSH extension: unknown elsewhere
        return None


def _reason(exc: BaseException, name: str) -> str:
    """What the user does about ``exc``, a connection or file error of the remote."""
    text = str(exc) or type(exc).__name__
    if isinstance(exc, PermissionError) and "Permission denied for user" in text:
        return (
            f"the server refused the login ({text}): give the server's administrator your public "
            f"key (~/.ssh/id_ed25519.pub), or name your key with "
            f"`dvc remote modify --local {name} keyfile PATH`"
        )
    if "401" in text or "Not Authorized" in text:
        return (
            f"the server refused the login ({text}): check your user name and password "
            f"(`dvc remote modify --local {name} user NAME`, `... password SECRET`)"
        )
    if isinstance(exc, NotImplementedError):  # fsspec's http file system lists nothing
        return (
            f"its file system ({type(exc).__name__} on listing) cannot list a folder, which "
            "remote-check needs: an http remote is checked by `dvc pull` or `dvc push`"
        )
    if isinstance(exc, ConnectionRefusedError):
        return f"nothing answers there ({text}): is the server up, the host and port right?"
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return f"the remote's disk is full ({text})"
    if isinstance(exc, FileNotFoundError):
        return f"the remote folder does not exist ({text})"
    if "Host key" in text or "host key" in text:
        return f"the server's host key is not the one in ~/.ssh/known_hosts ({text})"
    return f"{type(exc).__name__}: {text}"


def _check_local(repo: Any, remote: Any, where: str) -> None:
    """A local remote is a folder (or none yet: `dvc push` creates it) outside the repository's
    DVC folder and not the checkout itself: an empty url resolves to .dvc, whose listing would
    pass for a remote's, and a file's listing is the file."""
    if type(remote.fs).__name__ != "LocalFileSystem":
        return
    path = Path(remote.path).resolve()
    if path.exists() and not path.is_dir():
        raise UserError(
            f"{where}: a file, not a folder: `dvc remote modify {remote.name} url FOLDER`"
        )
    own = Path(repo.dvc_dir).resolve()
    if path in (Path(repo.root_dir).resolve(), own) or own in path.parents:
        raise UserError(
            f"{where}: resolves to this repository's own folder (an empty or relative url in "
            f".dvc/config?): `dvc remote modify {remote.name} url PATH`"
        )


def check_remote(root: str = ".", name: str | None = None, write: bool = False) -> RemoteStatus:
    """Connect to the remote ``name`` (DVC's default remote when None) and list its top;
    :class:`UserError` with one line naming the remote and the reason when that fails."""
    try:
        with Repo(root) as repo:
            remote = repo.cloud.get_remote(name)
            url = remote.fs.unstrip_protocol(remote.path)
            where = f"remote '{remote.name}' ({url})"
            _check_local(repo, remote, where)
            free = None
            try:
                try:
                    files = len(remote.fs.ls(remote.path))
                except FileNotFoundError:  # not yet: `dvc push` creates it (SSH)
                    files = 0
                free = free_bytes(remote.fs, remote.path) if files else None
                if write:
                    remote.fs.makedirs(remote.path, exist_ok=True)
                    probe = posixpath.join(remote.path, f".negcse-check-{secrets.token_hex(4)}")
                    remote.fs.pipe(probe, os.urandom(1024))
                    remote.fs.rm(probe)
            except Exception as exc:  # each file system's own errors (webdav4's HTTPError, ...)
                full = f" ({free / 1e6:.1f} MB free)" if free is not None else ""
                raise UserError(f"{where}: {_reason(exc, remote.name)}{full}") from None
            return RemoteStatus(remote.name, url, files, free)
    except NoRemoteError as exc:
        first = str(exc).splitlines()[0].rstrip(".")
        raise UserError(f"{first}: `dvc remote add -d NAME URL`, or `--remote NAME`") from None
    except DvcException as exc:
        raise UserError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
