"""Fill the local cache from a data file's pinned source: progress bar, sha256, nothing partial.

A file is downloaded into ``<cache>/.partial/``, verified against the registry's sha256, and only
then moved into place, so an interrupted or corrupted download leaves nothing in the cache. A
failure raises :class:`DownloadError` with one line naming the file, the source and the checksum.

A pinned source ``<archive URL>::<member>`` is a file inside a ``.tar.gz``/``.tgz``/``.zip``
release (STS12 train, PAWS): the archive is downloaded to ``.partial/``, the member extracted,
verified and moved into place, and the archive deleted.

``NEGCSE_DATA_URL`` replaces every pinned source with ``<base>/<relative path>`` (an HTTP copy of
a mirror's ``data/`` folder, e.g. an institute's file server); the pinned checksums still apply.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from tqdm import tqdm

from negcse.io_utils import umask_mode

logger = logging.getLogger(__name__)

DATA_URL_ENV = "NEGCSE_DATA_URL"
PARTIAL = ".partial"
CHUNK = 1 << 16
RETRY_DELAY = 2.0  # seconds, doubled after each failed attempt
ARCHIVE_SEP = "::"  # <archive URL>::<member path inside it>


class DownloadError(OSError):
    """A data file could not be fetched or did not have its pinned sha256 (one-line message)."""


class ArchiveMemberError(DownloadError):
    """The downloaded archive is not a tar/zip or lacks the pinned member (not retried)."""


def source_url(relative_path: str, pinned_url: str) -> str:
    """The URL to fetch from: ``$NEGCSE_DATA_URL/<relative_path>`` when set, else the pinned one."""
    base = os.environ.get(DATA_URL_ENV, "").strip()
    return f"{base.rstrip('/')}/{relative_path}" if base else pinned_url


def fetch(
    relative_path: str,
    url: str,
    dest: Path,
    sha256: str | None,
    cache: Path,
    retries: int = 3,
    timeout: float = 30.0,
) -> Path:
    """Download ``url`` to ``dest`` (under ``cache``), verified against ``sha256`` when pinned.

    Network errors are retried (``retries`` attempts in all); a checksum mismatch is not.
    """
    partial_dir = cache / PARTIAL
    last: Exception | None = None
    for attempt in range(1, retries + 1):
        partial_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=partial_dir, prefix=dest.name + ".")
        tmp = Path(tmp_name)
        try:
            archive_url, _, member = url.partition(ARCHIVE_SEP)
            if member:
                actual = _stream_member(
                    archive_url, member, fd, partial_dir, relative_path, timeout
                )
            else:
                actual = _stream(url, fd, relative_path, timeout)
            if sha256 is not None and actual != sha256:
                raise DownloadError(
                    f"data file '{relative_path}' from {url}: sha256 {actual} does not match the "
                    f"pinned {sha256}; nothing was written to the cache"
                )
            os.chmod(tmp, umask_mode())  # normal modes on a shared cache, not mkstemp's 0600
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp.replace(dest)
            if sha256 is None:  # allowed unpinned (NEGCSE_ALLOW_UNPINNED): what to pin
                logger.warning(
                    "fetched %s from %s: not pinned, sha256 %s (pin it in resources/datasets.tsv)",
                    relative_path,
                    url,
                    actual,
                )
            else:
                logger.info("fetched %s from %s (sha256 verified)", relative_path, url)
            return dest
        except DownloadError:  # a checksum or archive error: not retried
            raise
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            last = exc
            logger.warning("download of %s failed (attempt %d/%d): %s", url, attempt, retries, exc)
            if attempt < retries:
                time.sleep(RETRY_DELAY * 2 ** (attempt - 1))
        finally:
            tmp.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                partial_dir.rmdir()  # only when empty (no other download under way)
    raise DownloadError(
        f"data file '{relative_path}' could not be downloaded from {url} (pinned sha256 "
        f"{sha256 or 'none'}): {last}"
    )


def _stream(url: str, fd: int, label: str, timeout: float) -> str:
    """Write the response body to ``fd`` with a byte progress bar; its sha256."""
    digest = hashlib.sha256()
    with (
        os.fdopen(fd, "wb") as out,
        urllib.request.urlopen(url, timeout=timeout) as resp,
        tqdm(
            total=int(resp.headers.get("Content-Length") or 0) or None,
            unit="B",
            unit_scale=True,
            desc=label,
            leave=False,
            mininterval=0.5,
        ) as bar,
    ):
        while block := resp.read(CHUNK):
            out.write(block)
            digest.update(block)
            bar.update(len(block))
        out.flush()
        os.fsync(out.fileno())
    return digest.hexdigest()


def _stream_member(
    archive_url: str, member: str, fd: int, partial_dir: Path, label: str, timeout: float
) -> str:
    """Download the archive at ``archive_url`` beside the partial file, write its ``member`` to
    ``fd``; the member's sha256. The archive is deleted either way."""
    afd, archive_name = tempfile.mkstemp(dir=partial_dir, prefix="archive.")
    archive = Path(archive_name)
    try:
        try:
            _stream(archive_url, afd, f"{label} (archive)", timeout)
        except BaseException:
            os.close(fd)
            raise
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            with _open_member(archive, archive_url, member) as src:
                while block := src.read(CHUNK):
                    out.write(block)
                    digest.update(block)
            out.flush()
            os.fsync(out.fileno())
        return digest.hexdigest()
    finally:
        archive.unlink(missing_ok=True)


@contextlib.contextmanager
def _open_member(archive: Path, url: str, member: str):  # type: ignore[no-untyped-def]
    if tarfile.is_tarfile(archive):
        with tarfile.open(archive) as tar:
            try:
                src = tar.extractfile(member)
            except KeyError:
                src = None
            if src is None:
                raise ArchiveMemberError(f"{url}: no file '{member}' in the archive")
            with src:
                yield src
    elif zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            if member not in zf.namelist():
                raise ArchiveMemberError(f"{url}: no file '{member}' in the archive")
            with zf.open(member) as src:
                yield src
    else:
        raise ArchiveMemberError(f"{url}: not a tar or zip archive (member '{member}' wanted)")
