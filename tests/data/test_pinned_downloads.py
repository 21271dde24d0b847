"""Downloads are pinned: a hub model at the commit resources/hub_models.tsv names, a data file
against its sha256; what has no pin is refused (no request made) unless NEGCSE_ALLOW_UNPINNED
names it, and then what was fetched is logged to pin. A released checkpoint found nowhere is
written as unavailable when its evaluation job runs, and the tables leave it out."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shlex
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from negcse import cli
from negcse.commands.table import available
from negcse.data import sources
from negcse.data.packaged_models import packaged_models
from negcse.data.sources import (
    ALLOW_UNPINNED_ENV,
    HUB_BIN_PATTERNS,
    HUB_PATTERNS,
    ResolveError,
    hub_models,
    registry,
    resolve_data,
    resolve_model,
)
from negcse.llm.pinned import PINNED
from negcse.workflow.plan import Plan
from negcse.workflow.plan.load import workflow_config

REPO = Path(__file__).resolve().parents[2]


def test_every_hub_model_the_config_names_is_registered_and_pins_are_commits() -> None:
    """Backbones, generator models, guides and released checkpoints of params.yaml (the
    prefetch rule's list) are each in hub_models.tsv, a packaged model or a pinned LLM."""
    plan = Plan(workflow_config(REPO), log=lambda _: None)
    named = set(shlex.split(plan.prefetch_models()))
    assert {"bert-base-uncased", "tuner007/pegasus_paraphrase", "facebook/wmt19-en-de"} <= named
    known = set(hub_models()) | set(packaged_models()) | set(PINNED)
    assert named - known == set()
    for model in hub_models().values():
        assert model.revision is None or re.fullmatch(r"[0-9a-f]{40}", model.revision), model
        assert model.source
    assert hub_models()["bert-base-uncased"].revision == "86b5e0934494bd15c9632b12f734a8a67f723594"


@pytest.fixture
def online(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Not offline, an empty cache and Hugging Face cache, nothing allowed unpinned."""
    for name in ("NEGCSE_OFFLINE", "HF_HUB_OFFLINE", ALLOW_UNPINNED_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NEGCSE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    sources._probe.cache_clear()
    (tmp_path / "mirror").mkdir()
    return tmp_path / "mirror"


@pytest.fixture
def file_server(tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server of tmp_path/served, recording the paths asked for."""
    root = tmp_path / "served"
    root.mkdir()
    asked: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            super().do_GET()

        def do_HEAD(self) -> None:
            asked.append(self.path)
            super().do_HEAD()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", asked
    server.shutdown()
    server.server_close()


def test_an_unpinned_data_file_is_refused_then_fetched_when_allowed(
    online: Path,
    file_server: tuple[str, list[str]],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    url, asked = file_server
    rel = "unlabeled/test/unpinned.txt"
    content = b"one\ntwo\n"
    (tmp_path / "served" / "f.txt").write_bytes(content)
    monkeypatch.setitem(registry(), rel, sources.DataFile(rel, None, 2, f"{url}/f.txt"))

    with pytest.raises(ResolveError) as err:
        resolve_data(rel, online)
    assert f"network: {url}/f.txt (not downloaded: no pinned sha256 " in str(err.value)
    assert f"{ALLOW_UNPINNED_ENV}={rel})" in str(err.value)
    assert "no pinned sha256" in (sources.data_unavailable(rel, online) or "")
    assert asked == []  # refused before any request, the reachability probe included

    monkeypatch.setenv(ALLOW_UNPINNED_ENV, f"other/file.txt,{rel}")
    caplog.set_level(logging.WARNING)
    path = resolve_data(rel, online)
    assert path.read_bytes() == content
    digest = hashlib.sha256(content).hexdigest()
    assert f"fetched {rel} from {url}/f.txt: not pinned, sha256 {digest}" in caplog.text


def test_an_unpinned_model_is_refused_without_a_request(
    online: Path, file_server: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, asked = file_server
    monkeypatch.setenv("HF_ENDPOINT", url)
    name = "perceptiveshawty/rankcse-listmle-bert-base-uncased"
    assert hub_models()[name].revision is None
    with pytest.raises(ResolveError) as err:
        resolve_model(name, online)
    assert (
        f"Hugging Face hub: {name} (not downloaded: no pinned revision (resources/hub_models.tsv); "
        f"pin it there, or allow it with {ALLOW_UNPINNED_ENV}={name})"
    ) in str(err.value)
    assert asked == []


class _FakeHub:
    """Stands in for huggingface_hub.snapshot_download (the hub cannot be reached here): an
    empty local cache, then a snapshot folder named after the commit, with or without
    safetensors weights."""

    def __init__(self, root: Path, safetensors: bool) -> None:
        self.root, self.safetensors, self.calls = root, safetensors, []

    def __call__(self, repo_id: str, **kwargs: Any) -> str:
        self.calls.append(kwargs)
        if kwargs.get("local_files_only"):
            raise FileNotFoundError("not in the cache")
        folder = self.root / repo_id / (kwargs.get("revision") or "c0ffee" * 6 + "c0ff")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text("{}")
        weights = "model.safetensors" if self.safetensors else "pytorch_model.bin"
        if weights.endswith(".safetensors") or kwargs["allow_patterns"] == HUB_BIN_PATTERNS:
            (folder / weights).write_bytes(b"w")
        return str(folder)


def test_a_pinned_model_is_fetched_at_its_commit_and_an_allowed_one_logged(
    online: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import huggingface_hub

    monkeypatch.setattr(sources, "unreachable", lambda url: None)
    hub = _FakeHub(tmp_path / "snapshots", safetensors=True)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", hub)
    pin = hub_models()["bert-base-uncased"].revision
    path = resolve_model("bert-base-uncased", online)
    assert Path(path).name == pin
    assert hub.calls == [
        {"revision": pin, "local_files_only": True},
        {"revision": pin, "allow_patterns": HUB_PATTERNS},
    ]

    name = "aleversn/GCSE-BERT-base"  # unpinned, no safetensors: its PyTorch weights in a 2nd pass
    hub = _FakeHub(tmp_path / "snapshots", safetensors=False)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", hub)
    monkeypatch.setenv(ALLOW_UNPINNED_ENV, name)
    caplog.set_level(logging.WARNING)
    path = resolve_model(name, online)
    assert (Path(path) / "pytorch_model.bin").is_file()
    assert [c.get("allow_patterns") for c in hub.calls[1:]] == [HUB_PATTERNS, HUB_BIN_PATTERNS]
    assert f"model {name}: not pinned; downloaded the hub's main at commit {Path(path).name}" in (
        caplog.text
    )


def test_a_released_checkpoint_found_nowhere_is_written_unavailable_and_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("NEGCSE_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("NEGCSE_DEVICE", "cpu")
    out = tmp_path / "eval" / "released" / "x" / "bert.json"
    args = ["evaluate", "--model", "org/not-anywhere", "--pooler", "cls", "--only", "sts",
            "--sts-out", str(out), "--tag", "method=x", "--tag", "backbone=bert"]  # fmt: skip
    assert cli.main(args) == 2 and not out.exists()  # without the flag: an error
    assert cli.main([*args, "--unavailable-ok"]) == 0
    result = json.loads(out.read_text())
    assert result["method"] == "x" and result["model"] == "org/not-anywhere"
    assert result["unavailable"].startswith("model 'org/not-anywhere' not found. Tried:")

    real = tmp_path / "eval" / "released" / "y" / "bert.json"
    real.parent.mkdir(parents=True)
    real.write_text(json.dumps({"method": "y", "backbone": "bert", "avg": 70.0}))
    caplog.set_level(logging.WARNING)
    assert available([str(out), str(real)]) == [str(real)]
    assert "released checkpoint unavailable, its row left out: org/not-anywhere: model" in (
        caplog.text
    )
