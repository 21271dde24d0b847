"""A fresh machine without the mirror: the resolver fills an empty cache from the registry's
sources. The sources are a real HTTP server on loopback serving copies of the data files (made in a
temporary folder at test time), reached through ``NEGCSE_DATA_URL``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from http_source import Server, serve_copies, served_files

from negcse.data.download import DATA_URL_ENV, DownloadError, source_url
from negcse.data.sources import registry, resolve_data, sha256_of

pytestmark = pytest.mark.mirror


@pytest.fixture
def server(tmp_path: Path, mirror: Path) -> Iterator[Server]:
    with serve_copies(mirror, tmp_path / "served") as srv:
        yield srv


@pytest.fixture
def fresh_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, server: Server) -> Path:
    """No mirror, online, an empty cache, the registry's sources on the loopback server."""
    monkeypatch.delenv("NEGCSE_MIRROR", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("NEGCSE_OFFLINE", "0")
    monkeypatch.setenv("NEGCSE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(DATA_URL_ENV, server.url)
    return tmp_path / "cache"


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []


def test_empty_cache_fills_from_the_sources_and_second_run_asks_nothing(
    fresh_machine: Path, server: Server, mirror: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    wanted = served_files(mirror)
    assert len(wanted) > 130
    for rel in wanted:
        path = resolve_data(rel)
        assert path == fresh_machine / "data" / rel
        # arrived byte for byte (the mirror's copy is the independent truth) and verified
        assert path.read_bytes() == (mirror / "data" / rel).read_bytes()
        assert sha256_of(path) == registry()[rel].sha256
    assert sorted(server.requests) == sorted(f"/{rel}" for rel in wanted)
    assert "B/s" in capfd.readouterr().err  # the progress bar
    assert len(_files(fresh_machine)) == len(wanted)  # nothing else (no partial file)

    for rel in wanted:
        resolve_data(rel)
    assert len(server.requests) == len(wanted)  # the second run made no request


def test_a_corrupted_byte_is_refused_and_nothing_is_left(
    fresh_machine: Path, server: Server
) -> None:
    rel = "senteval/STS/STS13-en-test/STS.input.FNWN.txt"
    served = server.root / rel
    data = bytearray(served.read_bytes())
    data[len(data) // 2] ^= 0x01
    served.write_bytes(bytes(data))
    pinned = registry()[rel].sha256
    with pytest.raises(DownloadError) as err:
        resolve_data(rel)
    msg = str(err.value)
    assert "\n" not in msg
    assert f"'{rel}'" in msg and f"{server.url}/{rel}" in msg
    assert f"pinned {pinned}" in msg and sha256_of(served) in msg
    assert _files(fresh_machine) == []
    assert not (fresh_machine / ".partial").exists()
    assert len(server.requests) == 1  # a checksum mismatch is not retried


def test_a_missing_source_is_one_line_naming_file_source_and_checksum(
    fresh_machine: Path, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    import negcse.data.download

    monkeypatch.setattr(negcse.data.download, "RETRY_DELAY", 0.0)
    rel = "senteval/SICK/SICK_test_annotated.txt"
    (server.root / rel).unlink()
    with pytest.raises(DownloadError) as err:
        resolve_data(rel)
    msg = str(err.value)
    assert "\n" not in msg and "404" in msg
    assert f"'{rel}'" in msg and f"{server.url}/{rel}" in msg
    assert registry()[rel].sha256 in msg
    assert _files(fresh_machine) == []
    assert len(server.requests) == 3  # retried


def test_source_is_the_pinned_url_unless_overridden(monkeypatch: pytest.MonkeyPatch) -> None:
    rel = "senteval/STS/STS13-en-test/STS.input.FNWN.txt"
    pinned = registry()[rel].url
    monkeypatch.delenv(DATA_URL_ENV, raising=False)
    assert source_url(rel, pinned) == pinned
    monkeypatch.setenv(DATA_URL_ENV, "https://files.example.org/negcse/data/")
    assert source_url(rel, pinned) == f"https://files.example.org/negcse/data/{rel}"


def test_a_file_inside_a_release_archive_is_extracted_and_verified(
    tmp_path: Path, server: Server, mirror: Path
) -> None:
    """STS12 train is pinned as a member of the SemEval release archive (``<tgz>::<member>``):
    the member is extracted, checked against the registry's sha256 (the mirror's copy is the
    truth), and neither the archive nor a partial file is left behind."""
    import tarfile
    import zipfile

    from negcse.data.download import ArchiveMemberError, fetch

    rel = "raw/STS12-en-train/STS.input.MSRpar.txt"
    entry = registry()[rel]
    assert entry.url.endswith("sts2012-train.tgz::STS2012-train/STS.input.MSRpar.txt")
    member = "STS2012-train/STS.input.MSRpar.txt"
    with tarfile.open(server.root / "sts2012-train.tgz", "w:gz") as tar:
        tar.add(mirror / "data" / rel, arcname=member)
    with zipfile.ZipFile(server.root / "sts2012-train.zip", "w") as zf:
        zf.write(mirror / "data" / rel, arcname=member)
    cache = tmp_path / "cache"
    for archive in ("sts2012-train.tgz", "sts2012-train.zip"):
        dest = cache / "data" / archive / rel
        got = fetch(rel, f"{server.url}/{archive}::{member}", dest, entry.sha256, cache)
        assert got.read_bytes() == (mirror / "data" / rel).read_bytes()
    with pytest.raises(ArchiveMemberError, match="no file 'STS2012-train/absent.txt'"):
        fetch(rel, f"{server.url}/sts2012-train.tgz::STS2012-train/absent.txt",
              cache / "x" / rel, entry.sha256, cache)
    with pytest.raises(DownloadError, match="sha256 .* does not match"):
        fetch(rel, f"{server.url}/sts2012-train.tgz::{member}", cache / "y" / rel, "0" * 64, cache)
    assert sorted(p.relative_to(cache).parts[1] for p in _files(cache)) == [
        "sts2012-train.tgz", "sts2012-train.zip"
    ]  # the two verified files only
    assert server.requests.count("/sts2012-train.tgz") == 3  # a missing member is not retried
