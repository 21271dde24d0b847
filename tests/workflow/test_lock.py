"""The locked environment: the locks agree with pyproject's dependency list, the rules' conda
environment is generated from the CUDA lock, and an environment installed by ``make setup``
holds exactly the locked versions."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from negcse.runtime.lock_record import installed_lock
from negcse.workflow.lockfile import (
    LLM_EXTRAS,
    NOT_IN_RULES,
    conda_yaml,
    disagreements,
    file_sha256,
    parse_lock,
    project_requirements,
    runtime_closure,
)

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = REPO / "pyproject.toml"
LOCKS = {"cpu": REPO / "locks" / "cpu.txt", "cuda": REPO / "locks" / "cuda.txt"}


@pytest.mark.parametrize("kind", sorted(LOCKS))
def test_lock_agrees_with_pyproject(kind: str) -> None:
    assert disagreements(PYPROJECT, LOCKS[kind]) == []


def test_locks_differ_only_in_the_torch_build() -> None:
    cpu, cuda = parse_lock(LOCKS["cpu"]), parse_lock(LOCKS["cuda"])
    assert cpu["torch"].version == "2.13.0+cpu" and cuda["torch"].version == "2.13.0"
    assert not any(n.startswith("nvidia-") for n in cpu)
    assert "nvidia-cudnn-cu13" in cuda
    shared = set(cpu) & set(cuda) - {"torch"}
    assert {n: cpu[n].version for n in shared} == {n: cuda[n].version for n in shared}
    # what only the CUDA lock has is there for torch's CUDA build
    assert all(
        not cuda[n].via or "torch" in cuda[n].via or n.startswith(("cuda-", "nvidia-"))
        for n in set(cuda) - set(cpu)
    )


def _pyproject_with(tmp_path: Path, old: str, new: str) -> Path:
    text = PYPROJECT.read_text("utf-8")
    assert old in text
    out = tmp_path / "pyproject.toml"
    out.write_text(text.replace(old, new), encoding="utf-8")
    return out


def test_a_dependency_outside_the_lock_is_reported(tmp_path: Path) -> None:
    changed = _pyproject_with(
        tmp_path, '"sacremoses>=0.1",', '"sacremoses>=0.1",\n  "rich-argparse>=1",'
    )
    problems = disagreements(changed, LOCKS["cpu"])
    assert problems == [
        f"{LOCKS['cpu']}: 'rich-argparse>=1' ([project] dependencies) is not locked"
    ]


def test_a_range_that_excludes_the_pin_is_reported(tmp_path: Path) -> None:
    pinned = parse_lock(LOCKS["cpu"])["transformers"].version
    changed = _pyproject_with(tmp_path, '"transformers>=4.45,<5"', '"transformers>=4.45,<4.46"')
    problems = disagreements(changed, LOCKS["cpu"])
    assert len(problems) == 1
    assert f"transformers=={pinned} is outside 'transformers<4.46,>=4.45'" in problems[0]


def test_a_lock_entry_without_hash_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "lock.txt"
    bad.write_text("numpy==2.4.6 \\\n    --hash=sha256:" + "a" * 64 + "\nscipy==1.16.0\n")
    with pytest.raises(ValueError, match=r"'scipy==1.16.0' has no --hash"):
        parse_lock(bad)


def test_conda_env_is_generated_from_the_cuda_lock() -> None:
    expected = conda_yaml(PYPROJECT, LOCKS["cuda"], "locks/cuda.txt")
    assert (REPO / "envs" / "negcse.yaml").read_text("utf-8") == expected, (
        "envs/negcse.yaml is out of date: run `make lock` (or "
        "python -m negcse.workflow.lockfile conda locks/cuda.txt envs/negcse.yaml)"
    )


def test_llm_conda_env_is_generated_and_adds_the_llm_clients() -> None:
    expected = conda_yaml(PYPROJECT, LOCKS["cuda"], "locks/cuda.txt", LLM_EXTRAS)
    text = (REPO / "envs" / "llm.yaml").read_text("utf-8")
    assert text == expected, "envs/llm.yaml is out of date: run `make lock`"
    base = (REPO / "envs" / "negcse.yaml").read_text("utf-8")
    pins = {line.strip() for line in text.splitlines() if line.startswith("      - ")}
    base_pins = {line.strip() for line in base.splitlines() if line.startswith("      - ")}
    assert base_pins < pins
    names = {p.removeprefix("- ").split("==")[0] for p in pins - base_pins}
    assert {"openai", "gguf", "json-repair", "accelerate"} <= names


def test_conda_env_holds_the_runtime_closure_only() -> None:
    closure = runtime_closure(PYPROJECT, LOCKS["cuda"])
    lock = parse_lock(LOCKS["cuda"])
    groups = project_requirements(PYPROJECT)
    runtime = {canonicalize_name(r.name) for g in ("", "spacy-model", "models") for r in groups[g]}
    assert runtime - set(NOT_IN_RULES) <= set(closure)
    # run the workflow, not inside it: left out with what only they need
    for name in (*NOT_IN_RULES, "pytest", "ruff", "snakefmt", "uv", "dvc-data", "sshfs"):
        assert name not in closure
    # needed through a runtime package's requirements (torch -> nvidia, transformers -> tokenizers)
    assert {"nvidia-cudnn-cu13", "tokenizers", "safetensors", "huggingface-hub"} <= set(closure)
    # a package required both by dvc and by a runtime package stays (requests: via datasets too)
    assert "dvc" in lock["requests"].via and "requests" in closure
    assert all(closure[n].version == lock[n].version for n in closure)


def test_installed_lock_reads_the_setup_record(tmp_path: Path) -> None:
    assert installed_lock(tmp_path) is None
    sha = file_sha256(LOCKS["cpu"])
    (tmp_path / "negcse-lock.txt").write_text(f"locks/cpu.txt {sha}\n")
    assert installed_lock(tmp_path) == {"lock": "locks/cpu.txt", "lock_sha256": sha}
    (tmp_path / "negcse-lock.txt").write_text("locks/cpu.txt\n")
    with pytest.raises(ValueError, match="negcse-lock.txt: expected"):
        installed_lock(tmp_path)


def test_this_environment_equals_its_lock() -> None:
    """In a venv made by `make setup` (CI's): `pip freeze` equals the lock for every package."""
    record = installed_lock()
    if record is None:
        pytest.skip(f"{sys.prefix} was not installed from a lock (no negcse-lock.txt)")
    lock = REPO / record["lock"]
    assert file_sha256(lock) == record["lock_sha256"], (
        f"{lock} changed since this environment was installed from it: run make setup"
    )
    freeze = subprocess.run(
        [sys.executable, "-m", "pip", "freeze", "--all"], check=True, capture_output=True, text=True
    ).stdout
    installed = {}
    for line in freeze.splitlines():
        name, sep, version = line.partition("==")
        if sep:
            installed[canonicalize_name(name)] = version
    locked = {name: entry.version for name, entry in parse_lock(lock).items()}
    assert {n: installed.get(n) for n in locked} == locked


def test_conda_env_pins_everything_its_packages_require() -> None:
    """The rules' pip list is complete: each pinned package's own requirements (read from the
    installed metadata, markers evaluated here) are pinned too, so pip adds nothing unlocked."""
    if installed_lock() is None:
        pytest.skip(f"{sys.prefix} was not installed from a lock (no negcse-lock.txt)")
    closure = runtime_closure(PYPROJECT, LOCKS["cuda"])
    cpu = parse_lock(LOCKS["cpu"])
    missing = []
    for name in closure:
        if name not in cpu:  # CUDA-only wheels (nvidia-*) are not installed in the CPU venv
            continue
        for text in metadata.requires(name) or []:
            req = Requirement(text)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            if canonicalize_name(req.name) not in closure:
                missing.append(f"{name} requires {req}")
    assert missing == []


def _make_n(venv: Path, *args: str) -> str:
    out = subprocess.run(
        ["make", "-n", f"{venv}/.installed", f"VENV={venv}", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout + out.stderr


def test_setup_follows_the_requested_lock_not_file_times(tmp_path: Path) -> None:
    """A venv installed from the CPU lock (its record and a stamp newer than every file): make
    setup has nothing to do for that lock; for the CUDA lock it starts from a fresh venv; a
    CUDA venv stays one when no LOCK is named; for the same lock file with other content
    (re-locked) it installs again over it."""
    venv = tmp_path / "venv"
    venv.mkdir()
    record = venv / "negcse-lock.txt"
    record.write_text(f"locks/cpu.txt {file_sha256(LOCKS['cpu'])}\n")
    (venv / ".installed").touch()
    assert "up to date" in _make_n(venv)
    assert "up to date" in _make_n(venv, "LOCK=locks/cpu.txt")

    switch = _make_n(venv, "LOCK=locks/cuda.txt")
    assert "locks/cuda.txt requested: a fresh venv" in switch and f"rm -rf {venv}" in switch
    assert "uv pip install" in switch and "negcse doctor --lock locks/cuda.txt" in switch

    # without LOCK, the lock installed is kept: a CUDA venv stays one
    record.write_text(f"locks/cuda.txt {file_sha256(LOCKS['cuda'])}\n")
    assert "up to date" in _make_n(venv)
    back = _make_n(venv, "LOCK=locks/cpu.txt")
    assert "holds locks/cuda.txt, locks/cpu.txt requested: a fresh venv" in back

    record.write_text(f"locks/cpu.txt {'0' * 64}\n")  # the lock file changed since setup
    relock = _make_n(venv)
    assert "uv pip install" in relock and "-r locks/cpu.txt" in relock
    assert "rm -rf" not in relock  # the same lock file: installed over, no fresh venv
