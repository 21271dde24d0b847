"""The mirror/cache/network resolver: where files are found, corrupted files refused, and an
error that names every place tried."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from negcse.data import sources as resolve
from negcse.data.sources import ChecksumError, ResolveError, registry, resolve_data, resolve_model

pytestmark = pytest.mark.mirror
REL = "senteval/STS/STS13-en-test/STS.gs.FNWN.txt"


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("NEGCSE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("NEGCSE_OFFLINE", "1")
    return tmp_path


def _fake_mirror(root: Path, mirror: Path, rel: str, corrupt: bool = False) -> Path:
    dest = root / "data" / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(mirror / "data" / rel, dest)
    if corrupt:
        dest.write_bytes(dest.read_bytes() + b"0\n")  # one extra line
    return dest


def test_registry_pins_sha256_from_the_mirror_manifest(mirror: Path) -> None:
    manifest = {}
    for line in (mirror / "data" / "MANIFEST.tsv").read_text().splitlines()[1:]:
        cols = line.split("\t")
        manifest[cols[0]] = cols[6]
    pinned = {k: v.sha256 for k, v in registry().items() if v.sha256}
    assert len(pinned) > 100
    # the one pinned file the mirror lacks: its sha256 is the hub's record (docs/data.md)
    assert set(pinned) - set(manifest) == {"unlabeled/wiki1m/wiki1m_for_simcse.txt"}
    assert all(manifest[k] == sha for k, sha in pinned.items() if k in manifest)


def test_mirror_hit_is_verified(isolated: Path, mirror: Path) -> None:
    path = resolve_data(REL, mirror)
    assert path == mirror / "data" / REL


def test_corrupted_file_is_refused(isolated: Path, mirror: Path) -> None:
    fake = isolated / "m"
    bad = _fake_mirror(fake, mirror, REL, corrupt=True)
    with pytest.raises(ChecksumError, match=str(bad)):
        resolve_data(REL, fake)


def test_cache_is_used_when_mirror_lacks_file(isolated: Path, mirror: Path) -> None:
    cached = isolated / "cache" / "data" / REL
    cached.parent.mkdir(parents=True)
    shutil.copy(mirror / "data" / REL, cached)
    (isolated / "empty").mkdir()
    assert resolve_data(REL, isolated / "empty") == cached


def test_missing_everywhere_names_file_and_every_place(isolated: Path) -> None:
    (isolated / "empty").mkdir()
    with pytest.raises(ResolveError) as err:
        resolve_data(REL, isolated / "empty")
    msg = str(err.value)
    assert REL in msg
    assert f"mirror: {isolated / 'empty' / 'data' / REL}" in msg
    assert f"cache: {isolated / 'cache' / 'data' / REL}" in msg
    assert "network: https://" in msg


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port bound but not listening: every connection to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@pytest.fixture
def online(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Not in offline mode, no proxy, an empty mirror, and no probe remembered from elsewhere."""
    monkeypatch.setenv("NEGCSE_OFFLINE", "0")
    for name in ("HF_HUB_OFFLINE", *PROXY_VARS, "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    resolve._probe.cache_clear()
    (isolated / "empty").mkdir()
    yield isolated / "empty"
    resolve._probe.cache_clear()


PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy")


def test_unreachable_source_is_offline_with_one_logged_line(
    online: Path,
    closed_port: int,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A source whose host refuses the connection: no download attempts (no retries, nothing
    in the cache), one warning, and the ResolveError that lists every place tried."""
    entry = registry()[REL]
    url = f"http://127.0.0.1:{closed_port}/{REL}"
    monkeypatch.setitem(registry(), REL, resolve.DataFile(REL, entry.sha256, entry.lines, url))
    start = time.monotonic()
    with pytest.raises(ResolveError) as err:
        resolve_data(REL, online)
    assert time.monotonic() - start < resolve.CONNECT_TIMEOUT  # refused at once, not retried
    msg = str(err.value)
    assert f"mirror: {online / 'data' / REL}" in msg
    assert f"network: {url} (http://127.0.0.1:{closed_port}/ unreachable:" in msg
    assert "refused" in msg.lower()
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "treated as offline" in warnings[0].getMessage()
    assert not (online.parent / "cache").exists()
    assert "unreachable" in (resolve.data_unavailable(REL, online) or "")


def test_unreachable_proxy_makes_every_https_source_unavailable(
    online: Path, closed_port: int, mirror: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pinned https source through a proxy that refuses connections (as on a machine whose
    only way out is down): unavailable, unless a copy lies in the mirror or the cache."""
    for name in PROXY_VARS:
        monkeypatch.setenv(name, f"http://127.0.0.1:{closed_port}")
    reason = resolve.data_unavailable(REL, online)
    host = registry()[REL].url.split("/")[2]
    assert reason is not None and f"https://{host}/ unreachable:" in reason
    assert str(online) in reason  # names the mirror it looked in
    with pytest.raises(ResolveError, match="unreachable"):
        resolve_data(REL, online)
    assert resolve.data_unavailable(REL, mirror) is None  # the mirror's copy


def test_a_host_that_answers_is_reachable(online: Path) -> None:
    """Any HTTP answer, an error status too, means the network is there (a download then
    reports its own error)."""

    class NotFound(BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    httpd = HTTPServer(("127.0.0.1", 0), NotFound)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        assert resolve.unreachable(f"http://127.0.0.1:{httpd.server_address[1]}/a/b.txt") is None
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_unregistered_path_is_a_clear_error() -> None:
    with pytest.raises(KeyError, match="not a registered data file"):
        resolve_data("senteval/nope.txt")


def test_model_by_hub_id_and_by_name(isolated: Path, mirror: Path) -> None:
    hub_id = "sentence-transformers/all-MiniLM-L6-v2"
    assert resolve_model(hub_id, mirror) == str(mirror / "models" / hub_id)
    local = mirror / "models" / "splade-tiny"
    assert resolve_model(str(local)) == str(local.resolve())


def test_missing_model_lists_places(isolated: Path, mirror: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HOME", str(isolated / "hf"))
    with pytest.raises(ResolveError) as err:
        resolve_model("bert-base-uncased", mirror)
    msg = str(err.value)
    assert "model 'bert-base-uncased' not found" in msg
    assert f"mirror: {mirror / 'models' / 'bert-base-uncased'}" in msg
    assert "Hugging Face cache" in msg and "offline" in msg


def test_mirror_setting_must_be_a_folder(tmp_path: Path) -> None:
    with pytest.raises(ResolveError, match="is not a folder"):
        resolve.mirror_root(tmp_path / "nowhere")


def test_unpinned_file_is_taken_and_its_pins_logged(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A file registered without sha256 and line count (not knowable where it was
    registered, e.g. GCSE's NLI subset) is used as found, with the values to pin logged."""
    import hashlib

    nli = registry()["unlabeled/nli/nli_for_simcse.csv"]
    assert (nli.sha256, nli.lines) == (None, None)
    assert nli.url.endswith("princeton-nlp/datasets-for-simcse/resolve/main/nli_for_simcse.csv")
    rel = "unlabeled/test/unpinned.txt"
    monkeypatch.setitem(registry(), rel, resolve.DataFile(rel, None, None, "https://x.invalid/f"))
    cached = isolated / "cache" / "data" / rel
    cached.parent.mkdir(parents=True)
    content = b"a b\nc d\n"
    cached.write_bytes(content)
    (isolated / "empty").mkdir()
    assert resolve_data(rel, isolated / "empty") == cached
    assert f"2 lines, sha256 {hashlib.sha256(content).hexdigest()}" in caplog.text
