"""Small file helpers: atomic writes so a failed command leaves no partial output.

A temporary file or folder is made beside its target (``.<name>.tmp-<pid>-<random>``), with the
modes a plain ``open`` or ``mkdir`` would give (the umask applies, not ``mkstemp``'s 0600), synced
to disk and renamed into place only on success. Temporaries of the same target left by a killed
process (its pid no longer running) are removed when the target is written again. An
operating-system error while writing (a full disk: ENOSPC) names the target, not the temporary;
so does a writer's own error (``torch.save``'s RuntimeError) when the disk is then full.

JSON lines are written with ``ensure_ascii`` (U+2028, U+2029 and U+0085 become ``\\u`` escapes, so
no reader that splits on Unicode line breaks can cut a row) and read on ``"\\n"`` only.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import shutil
import sqlite3
import stat
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

import yaml

from negcse.errors import UserError
from negcse.finite import check_tree

_TMP_MARK = ".tmp-"


def _tmp_name(dest: Path) -> Path:
    return dest.parent / f".{dest.name}{_TMP_MARK}{os.getpid()}-{secrets.token_hex(4)}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def remove_stale_temporaries(dest: Path) -> list[Path]:
    """Delete the temporaries of ``dest`` whose writing process is gone; return them."""
    removed = []
    prefix = f".{dest.name}{_TMP_MARK}"
    if not dest.parent.is_dir():
        return removed
    for entry in dest.parent.iterdir():
        if not entry.name.startswith(prefix):
            continue
        pid_text = entry.name[len(prefix) :].split("-", 1)[0]
        if not pid_text.isdigit() or _pid_alive(int(pid_text)):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                entry.unlink()
        removed.append(entry)
    return removed


def umask_mode() -> int:
    """The mode a plain ``open`` gives a new file under the current umask (0o666 & ~umask).
    Read from /proc where it can be: setting the umask to read it is a race with other threads."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        with open("/proc/self/status", encoding="ascii") as fh:
            line = next(ln for ln in fh if ln.startswith("Umask:"))
        return 0o666 & ~int(line.split()[1], 8)
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _naming(dest: Path, tmp: Path, exc: OSError) -> OSError:
    """``exc`` naming the target instead of the temporary (``dest``, or the file under it), or
    ``dest`` when it names no file (a failed write on a full disk names none)."""
    name = None if exc.filename is None else str(exc.filename)
    if name is not None and not name.startswith(str(tmp)):
        return exc
    target = str(dest) + ("" if name is None else name[len(str(tmp)) :])
    return OSError(exc.errno, exc.strerror or str(exc), target)


def _disk_full(folder: Path) -> bool:
    """No block left for this user on ``folder``'s file system."""
    try:
        return os.statvfs(folder).f_bavail == 0
    except OSError:
        return False


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as exc:  # some file systems cannot sync a folder
        if exc.errno not in (errno.EINVAL, errno.EBADF, errno.EISDIR):
            raise
    finally:
        os.close(fd)


def _open_modes(root: Path) -> None:
    """Give every file under ``root`` at least the mode a plain ``open`` gives (writers such as
    safetensors' ``save_file`` create theirs 0600, whatever the umask)."""
    mode = umask_mode()
    for folder, _, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            current = path.lstat().st_mode
            if stat.S_ISREG(current) and (current | mode) != current:
                os.chmod(path, stat.S_IMODE(current) | mode)


def _fsync_tree(root: Path) -> None:
    for folder, _, files in os.walk(root):
        for name in files:
            _fsync_path(Path(folder) / name)
        _fsync_path(Path(folder))


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A fresh, empty temporary file beside ``path`` for writers that take a file name
    (``torch.save``, ``savefig``); it is synced and renamed to ``path`` only on success."""
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(dest)
    tmp = _tmp_name(dest)
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # umask applies
    try:
        yield tmp
        _fsync_path(tmp)
        os.replace(tmp, dest)
        _fsync_path(dest.parent)
    except OSError as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise _naming(dest, tmp, exc) from exc
    except Exception as exc:
        full = _disk_full(dest.parent)  # before the temporary's space is freed
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if full:  # torch.save says "unexpected pos" or "file write failed", naming no file
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dest)) from exc
        raise
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_open(
    path: str | os.PathLike[str], mode: str = "w", encoding: str = "utf-8"
) -> Iterator[TextIO]:
    """Write to a temporary file beside ``path``; rename into place only on success."""
    with atomic_path(path) as tmp, open(tmp, mode, encoding=encoding, newline="\n") as fh:
        yield fh


@contextlib.contextmanager
def atomic_set(*paths: str | os.PathLike[str]) -> Iterator[list[Path]]:
    """Fresh temporaries for several outputs that belong together (a table's formats, aligned
    columns), in order; on success each is synced, every old file of the set removed, then each
    temporary renamed into place. A failure before that leaves the old set as it was; one
    during it (a kill) leaves part of the new set and nothing of the old, so no reader ever
    sees files of two runs side by side (a missing one makes the job rerun)."""
    dests = [Path(p) for p in paths]
    tmps: list[Path] = []
    try:
        for dest in dests:
            dest.parent.mkdir(parents=True, exist_ok=True)
            remove_stale_temporaries(dest)
            tmps.append(_tmp_name(dest))
            os.close(os.open(tmps[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        yield tmps
        for tmp in tmps:
            _fsync_path(tmp)
        for dest in dests:
            with contextlib.suppress(FileNotFoundError):
                dest.unlink()
        for tmp, dest in zip(tmps, dests, strict=True):
            os.replace(tmp, dest)
        for folder in dict.fromkeys(d.parent for d in dests):
            _fsync_path(folder)
    except BaseException as exc:
        for tmp in tmps:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        if isinstance(exc, OSError):  # named after the output, not its temporary
            name = str(exc.filename or "")
            pairs = list(zip(dests, tmps, strict=False))
            dest, tmp = next(((d, t) for d, t in pairs if name.startswith(str(t))), pairs[0])
            raise _naming(dest, tmp, exc) from exc
        raise


def write_texts(texts: Mapping[str | os.PathLike[str], str]) -> None:
    """Several text files written as one set (:func:`atomic_set`): all of them or none."""
    with atomic_set(*texts) as tmps:
        for tmp, text in zip(tmps, texts.values(), strict=True):
            with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)


def json_text(path: str | os.PathLike[str], data: Any) -> str:
    """``data`` as :func:`write_json` writes it (a NaN or infinite number is an error naming
    ``path`` and the key)."""
    check_tree(data, str(path))
    return json.dumps(data, indent=2, sort_keys=False) + "\n"


def write_json(path: str | os.PathLike[str], data: Any) -> None:
    """``data`` as indented JSON, atomically; a NaN or infinite number in it is an error naming
    the key, and nothing is written (a NaN read back would pass for a number)."""
    check_tree(data, str(path))
    with atomic_open(path) as fh:
        json.dump(data, fh, indent=2, sort_keys=False)
        fh.write("\n")


def lines_text(lines: Iterable[str]) -> str:
    """One line per item, a line break inside an item made a space."""
    return "".join(line.replace("\n", " ") + "\n" for line in lines)


def write_lines(path: str | os.PathLike[str], lines: list[str]) -> None:
    with atomic_open(path) as fh:
        fh.write(lines_text(lines))


def write_jsonl(path: str | os.PathLike[str], rows: Iterable[Any]) -> None:
    """One JSON value per line, ASCII only (see the module's note on line breaks)."""
    with atomic_open(path) as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=True) + "\n")


def read_jsonl(path: str | os.PathLike[str]) -> list[Any]:
    """The values of a JSON-lines file, split on "\\n" only; a bad line (invalid JSON, a NaN
    or infinite number) raises :class:`~negcse.errors.UserError` naming the file and the line."""
    rows = []
    for number, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}: line {number} is not valid JSON ({exc.msg})") from None
        check_tree(rows[-1], f"{path}: line {number}")
    return rows


class _RepeatedKey(Exception):
    """A key written twice in one JSON object (its name: ``args[0]``)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _RepeatedKey(key)
        out[key] = value
    return out


def read_json(path: str | os.PathLike[str], kind: type = dict) -> Any:
    """A JSON file's value, which must be a ``kind`` (dict: an object) and hold no NaN or
    infinite number nor a key twice in one object; every failure (missing, not UTF-8, invalid
    JSON, a repeated key, another type, a NaN) is a one-line :class:`~negcse.errors.UserError` or
    OSError naming the file (and the key)."""
    text = read_text(path)
    if not text.strip():
        raise UserError(f"{path}: empty file (expected JSON)")
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg} "
            "(cut off or damaged?)"
        ) from None
    except RecursionError:
        raise UserError(f"{path}: JSON nested too deeply") from None
    except _RepeatedKey as exc:
        raise UserError(
            f"{path}: key '{exc.args[0]}' written twice in one object (JSON readers keep the "
            "last without a word); keep one"
        ) from None
    if not isinstance(value, kind):
        names = {dict: "an object", list: "a list"}
        raise UserError(
            f"{path}: expected {names.get(kind, kind.__name__)} at the top level, got "
            f"{type(value).__name__}"
        )
    check_tree(value, str(path))
    return value


def read_text(path: str | os.PathLike[str]) -> str:
    """A UTF-8 text file's content, "\\r" kept; bytes that are not UTF-8 raise a
    :class:`~negcse.errors.UserError` naming the file, the line and the byte offset."""
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UserError(
            f"{path}: not UTF-8 text (line {line}, byte {exc.start}: {exc.reason}); "
            "convert it to UTF-8"
        ) from None


def read_lines(path: str | os.PathLike[str], *, nonempty: bool = False) -> list[str]:
    """Lines split on "\n" only (not on Unicode line breaks such as U+2028), "\r" dropped,
    so files written line by line stay aligned with each other. Not UTF-8: a one-line
    :class:`~negcse.errors.UserError`; with ``nonempty``, so is a file without a line."""
    text = read_text(path)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if nonempty and not lines:
        raise UserError(f"{path}: empty file (one sentence per line expected)")
    return [line.removesuffix("\r") for line in lines]


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Build a folder under a temporary name; it replaces ``path`` only on success. Its files
    get at least the umask's modes."""
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(dest)
    tmp = _tmp_name(dest)
    tmp.mkdir(mode=0o777)  # umask applies
    try:
        yield tmp
        _open_modes(tmp)
        _fsync_tree(tmp)
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
        _fsync_path(dest.parent)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise _naming(dest, tmp, exc) from exc
    except Exception as exc:
        full = _disk_full(dest.parent)  # before the temporary's space is freed
        shutil.rmtree(tmp, ignore_errors=True)
        if full:  # safetensors' and torch's writers raise their own errors, naming no file
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dest)) from exc
        raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def open_sqlite(
    path: str | os.PathLike[str], schema: str, wal: bool = False
) -> sqlite3.Connection:
    """A SQLite cache file (made with ``schema`` when new), checked whole before use
    (``PRAGMA quick_check``: a cut or damaged file is found now, not at the page a later
    query reads); one that is no usable database is a one-line
    :class:`~negcse.errors.UserError` naming it, an unreadable one an OSError naming it. A
    missing or empty file is a new cache.
    ``wal``: write-ahead logging (several processes writing one cache)."""
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.is_dir():
        raise IsADirectoryError(errno.EISDIR, "a folder where a cache file belongs", str(dest))
    if dest.exists():  # SQLite says "unable to open database file" of an unreadable one
        with open(dest, "rb"):
            pass
    try:
        db = sqlite3.connect(str(dest))
        try:
            problems = [row[0] for row in db.execute("PRAGMA quick_check")]
            if problems != ["ok"]:
                raise sqlite3.DatabaseError("; ".join(map(str, problems[:2])))
            if wal:
                db.execute("PRAGMA journal_mode=WAL")
            db.execute(schema)
            db.commit()
        except BaseException:
            db.close()
            raise
    except sqlite3.DatabaseError as err:
        raise UserError(
            f"{dest}: not a usable cache ({err}); move it aside to start an empty one (its "
            "entries are computed again)"
        ) from None
    return db


def check_writable(*paths: str | os.PathLike[str] | None, folder: bool = False) -> None:
    """Fail before any expensive work when an output could not be written: its nearest
    existing parent must be a writable folder, and a file output must not be a folder."""
    for value in paths:
        if value is None or str(value) == "":
            continue
        dest = Path(value).expanduser()
        if dest.is_dir() and not folder:
            raise IsADirectoryError(errno.EISDIR, "output is an existing folder", str(dest))
        parent = dest.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "output's parent is not a folder", str(parent))
        probe = _tmp_name(parent / "write-check")
        try:  # the real test (os.access answers yes to root even on read-only file systems)
            os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except OSError as exc:
            raise type(exc)(exc.errno, f"cannot write there ({exc.strerror})", str(parent)) from None
        os.unlink(probe)


#: libyaml's parser where PyYAML was built with it (its wheels are): the safe loader's values
#: and error marks, parsed ~10x faster than by the pure-Python one. Every Snakemake process
#: parses the config files and the config schema.
YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def yaml_value(text: str) -> Any:
    """``yaml.safe_load(text)``, through :data:`YAML_LOADER`."""
    return yaml.load(text, Loader=YAML_LOADER)
