"""docs/your-method.md is true: its runnable blocks (the README runner's ``<!-- runnable -->``
marker, tests/test_readme.py) run in order in a fresh copy of the repository, with a throwaway
venv first on PATH that sees this project's packages (so `python -m pip install -e` installs the
tutorial's package there, not in the project's venv). They write a plug-in package (a generator
and a method), install it, run the smoke grid cut to SimCSE and the new method at one seed,
read its verdict, page and status, and export the model; then the results are checked, and
`git status` shows the committed files untouched (the tutorial's grid is a named one: its
tables and pages go under results/grids/my-negatives/, which git ignores). Every
command, profile and config file any docs page's blocks name exists (fast)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
from pathlib import Path

import pytest

from negcse.cli import command_names
from plugin_venv import make_venv, venv_env
from test_readme import commands, shell_blocks
from workflow_copy import committed_copy

REPO = Path(__file__).resolve().parents[1]
PAGE = "docs/your-method.md"


def test_every_command_the_docs_name_exists() -> None:
    """As the README's check: each `python -m negcse` command, profile and config file of the
    docs pages' shell blocks exists (a path outside the checkout, like the tutorial's own
    package, is the reader's)."""
    known = command_names()
    checked = 0
    for page in sorted((REPO / "docs").glob("*.md")):
        for line, body, _ in shell_blocks(page.read_text(encoding="utf-8")):
            for words in commands(body):
                where = f"{page.name}:{line}: {' '.join(words)}"
                if words[:3] == ["python", "-m", "negcse"] and len(words) > 3:
                    assert words[3].startswith("-") or words[3] in known, where
                    checked += 1
                for flag in ("--profile", "--configfile"):
                    for i, word in enumerate(words):
                        if word != flag:
                            continue
                        for value in words[i + 1 :]:
                            if value.startswith("-"):
                                break
                            if not value.startswith("../"):
                                assert (REPO / value).exists(), where
                                checked += 1
    assert checked >= 5


@pytest.mark.slow
@pytest.mark.mirror
def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    ws = committed_copy(tmp_path)
    blocks = [(n, body) for n, body, run in shell_blocks((ws / PAGE).read_text()) if run]
    assert len(blocks) >= 8
    python = make_venv(tmp_path / "venv")
    env = {**venv_env(python, ws / "src"), "OMP_NUM_THREADS": "1"}
    outputs = []
    for line, body in blocks:
        proc = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", body],
            cwd=ws,
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        assert proc.returncode == 0, (
            f"{PAGE}:{line}:\n{body}\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
        )
        outputs.append(proc.stdout + proc.stderr)
    joined = "\n".join(outputs)
    # the generator made the column the training read: each line's words, reordered
    corpus = (ws / "results/data/corpus/wiki-smoke.txt").read_text().splitlines()
    shuffled = (ws / "results/negatives/shuffled/wiki-smoke/w0/seed1.txt").read_text().splitlines()
    assert len(shuffled) == len(corpus)
    assert all(
        sorted(a.split()) == sorted(b.split()) for a, b in zip(corpus, shuffled, strict=True)
    )
    assert sum(a != b for a, b in zip(corpus, shuffled, strict=True)) > len(corpus) // 2
    meta = json.loads((ws / "results/models/shufcse/splade-tiny/seed1/negcse.json").read_text())
    assert meta["implementation"] == "shufcse" and meta["params"]["negative_dropout"] == 0.1
    # its verdict against SimCSE, its page, the status and the export
    # (one backbone: the table names it in its caption, not in a column)
    rows = [line for line in joined.splitlines() if line.startswith("| shufcse ")]
    assert any(re.match(r"\| shufcse \| STS avg\. \| SimCSE \| 1/1 \|.* no verdict \|", r) for r in rows), rows
    assert "# shufcse" in joined and "No paper prints numbers on splade-tiny" in joined
    assert re.search(r"^train\s+2\s+0\s+0\s+0\s+2$", joined, re.M)  # status: both trained
    assert "SNCSE-BERTbase" in joined or "GCSE" in joined  # the published BERT-base rows
    card = (tmp_path / "shufcse-splade-tiny" / "README.md").read_text()
    assert "model-index:" in card and "name: STS12" in card
    assert "(2, 128)" in joined  # sentence-transformers encoded with the exported folder
    assert importlib.util.find_spec("my_negatives") is None  # installed in the throwaway venv only
    # its own grid's pages, and the committed results as they were
    assert (ws / "results/grids/my-negatives/reports/methods/shufcse.md").is_file()
    assert not (ws / "results/reports/methods/shufcse.md").exists()
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ws,
                            capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert status == "", f"the tutorial changed the checkout:\n{status[:3000]}"
