"""`make smoke`'s first command on a machine without a network and without any offline setting,
with a mirror that lacks an optional file (SAN's released POS lexicon): the smoke profile runs
SimCSE+SAN through to its STS table, and every record names the spaCy lexicon it was made with
(file, lexicon stats, the model's negcse.json, the evaluation and the table row), never the
released one."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from workflow_copy import CI_REDUCTIONS, SMOKE, committed_copy, sh

pytestmark = [pytest.mark.slow, pytest.mark.mirror]
LACKING = "san/vocab_pos_end.txt"  # registered, optional: the workflow falls back to spaCy
OVERLAY = "tests/smoke/no-network.yaml"
TARGET = "results/tables/sts.md"
SUBSTITUTE = "SAN lexicon: spacy (released table unavailable)"


def one_san_method(ws: Path) -> None:
    """SimCSE+SAN alone, one seed, no untrained row, over the smoke grid and CI's reductions;
    no committed results (a fresh run writes every table)."""
    overlay = {"grid": {"methods": ["simcse_san"], "seeds": [1]}, "evaluation": {"baseline": False}}
    (ws / OVERLAY).write_text(yaml.safe_dump(overlay))
    shutil.rmtree(ws / "results")


def mirror_without(mirror: Path, root: Path, relative_path: str) -> Path:
    """A copy of ``mirror`` (links, every level down to the file's folder) without one data file."""
    parts = Path("data", relative_path).parts
    src, dest = mirror, root
    for depth, name in enumerate(parts):
        dest.mkdir()
        for entry in src.iterdir():
            if entry.name != name:
                (dest / entry.name).symlink_to(entry)
        if depth == len(parts) - 1:
            break
        src, dest = src / name, dest / name
    return root


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port bound but not listening: connections to it are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def no_network_prefix() -> list[str]:
    """``unshare -rn`` (a network namespace with no interface up) where this user may make one;
    the refusing proxy below cuts the network either way."""
    try:
        ok = subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode == 0
    except FileNotFoundError:
        ok = False
    return ["unshare", "-rn"] if ok else []


def test_smoke_without_network_or_offline_setting_names_the_spacy_substitute(
    tmp_path: Path, mirror: Path, closed_port: int
) -> None:
    ws = committed_copy(tmp_path, one_san_method)
    lacking = mirror_without(mirror, tmp_path / "mirror", LACKING)
    assert not (lacking / "data" / LACKING).exists() and (lacking / "data/senteval").is_dir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("NEGCSE_OFFLINE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "NO_PROXY",
                     "no_proxy")
    }  # fmt: skip
    proxy = f"http://127.0.0.1:{closed_port}"
    env |= {k: proxy for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")}
    env |= {"NEGCSE_MIRROR": str(lacking), "NEGCSE_CACHE": str(tmp_path / "cache"),
            "HF_HOME": str(tmp_path / "hf")}  # fmt: skip
    configs = ["--configfile", "tests/smoke/config.yaml", CI_REDUCTIONS, OVERLAY]
    run = sh([*no_network_prefix(), *SMOKE, TARGET, *configs], ws, env=env, timeout=1800)
    log = run.stdout + run.stderr
    assert "SAN's released POS lexicon (san/vocab_pos_end.txt) is in no mirror" in log
    assert "unreachable" in log  # found out from the network itself, not from a setting
    features = ws / "results/features/pos_lexicon"
    assert sorted(p.name for p in features.iterdir()) == ["splade-tiny.stats.json", "splade-tiny.tsv"]
    assert json.loads((features / "splade-tiny.stats.json").read_text())["source"] == "spacy"
    written = [str(p.relative_to(ws)) for p in (ws / "results").rglob("*")]
    assert not [p for p in written if "released" in p or "_rel" in p]
    meta = json.loads((ws / "results/models/simcse_san/splade-tiny/seed1/negcse.json").read_text())
    assert meta["san_lexicon"] == "spacy (released table unavailable)"
    assert meta["substitutes"] == [SUBSTITUTE]
    evaluation = json.loads((ws / "results/eval/sts/simcse_san/splade-tiny/seed1.json").read_text())
    assert evaluation["substitute"] == SUBSTITUTE
    table = (ws / TARGET).read_text()
    rows = [r for r in table.splitlines() if r.startswith("| SimCSE+SAN")]
    # the row is marked, the caption says what the mark means
    assert len(rows) == 1
    mark = rows[0].split(" | ")[0].removeprefix("| SimCSE+SAN ")
    assert mark in ("†", "‡") and f"{mark} {SUBSTITUTE}." in table
