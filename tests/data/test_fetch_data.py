"""`fetch-data`: verification manifest, and filling a mirror laid out like ../shared/mirror."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from negcse.data.sources import registry, resolve_data, resolve_model

pytestmark = pytest.mark.mirror


def test_fill_mirror_round_trip(tmp_path: Path, mirror: Path, monkeypatch) -> None:
    out = tmp_path / "newmirror"
    cmd = [
        sys.executable,
        "-m",
        "negcse",
        "fetch-data",
        "--files",
        "senteval/STS/STS13-en-test/*",
        "--models",
        "splade-tiny",
        "--fill-mirror",
        str(out),
        "--manifest",
        str(tmp_path / "m.tsv"),
    ]
    subprocess.run(cmd, check=True, capture_output=True)
    rows = (tmp_path / "m.tsv").read_text().splitlines()[1:]
    wanted = [r for r in registry() if r.startswith("senteval/STS/STS13-en-test/")]
    assert len(rows) == len(wanted) > 0
    for row in rows:
        rel, sha, _ = row.split("\t")
        assert (
            hashlib.sha256((out / "data" / rel).read_bytes()).hexdigest()
            == sha
            == registry()[rel].sha256
        )
    # the new folder works as a mirror on its own
    monkeypatch.setenv("NEGCSE_CACHE", str(tmp_path / "cache"))
    assert resolve_data(wanted[0], out) == out / "data" / wanted[0]
    assert resolve_model("splade-tiny", out) == str(out / "models" / "splade-tiny")


def test_unknown_glob_fails(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "negcse", "fetch-data", "--files", "nope/*"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0 and "no registered data file matches" in proc.stderr
