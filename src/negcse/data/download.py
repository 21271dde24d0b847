"""Fill the local cache from a data file's pinned source: progress bar, sha256, nothing partial.

A file is downloaded into ``<cache>/.partial/``, verified against the registry's sha256, and only
then moved into place, so an interrupted or corrupted download leaves nothing in the cache. A
failure raises :class:`DownloadError` with one line naming the file, the source and the checksum.

``NEGCSE_DATA_URL`` replaces every pinned source with ``<base>/<relative path>`` (an HTTP copy of
a mirror's ``data/`` folder, e.g. an institute's file server); the pinned checksums still apply.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from tqdm import tqdm

logger = logging.getLogger(__name__)

DATA_URL_ENV = "NEGCSE_DATA_URL"
PARTIAL = ".partial"
CHUNK = 1 << 16
RETRY_DELAY = 2.0  # seconds, doubled after each failed attempt


class DownloadError(OSError):
    """A data file could not be fetched or did not have its pinned sha256 (one-line message)."""


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
            actual = _stream(url, fd, relative_path, timeout)
            if sha256 is not None and actual != sha256:
                raise DownloadError(
                    f"data file '{relative_path}' from {url}: sha256 {actual} does not match the "
                    f"pinned {sha256}; nothing was written to the cache"
                )
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # normal modes on a shared cache, not mkstemp's 0600
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp.replace(dest)
            logger.info("fetched %s from %s (sha256 verified)", relative_path, url)
            return dest
        except DownloadError:
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
