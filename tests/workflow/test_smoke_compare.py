"""benchmarks/smoke_compare.py on two small constructed runs: a file the same in both, a JSON
number changed, a JSON whose only change is a timing key, and a file only one run has."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmark_module import load

smoke_compare = load("smoke_compare")

EVAL = {"method": "simcse", "seconds": 12.5, "tasks": {"STSB": {"spearman": 0.7512, "seconds": 3}}}


def _run(root: Path, files: dict[str, object]) -> Path:
    for name, content in files.items():
        path = root / "results" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(json.dumps(content, indent=1))
    return root


def _timing_changed() -> dict:
    tasks = {"STSB": {"spearman": 0.7512, "seconds": 4.25}}
    return {**EVAL, "seconds": 99.0, "tasks": tasks}


def test_the_same_files_and_a_timing_change_are_no_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _run(tmp_path / "a", {"tables/sts.md": b"| a | 1 |\n", "eval/sts/s.json": EVAL})
    b = _run(
        tmp_path / "b", {"tables/sts.md": b"| a | 1 |\n", "eval/sts/s.json": _timing_changed()}
    )
    assert smoke_compare.main([str(a), str(b)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "identical 1, equal but timing keys 1, different 0, only in A 0, only in B 0"
    ]
    kinds = smoke_compare.compare(a / "results", b / "results")  # results/ itself works too
    assert kinds["identical"] == ["tables/sts.md"] and kinds["timing"] == ["eval/sts/s.json"]


def test_a_changed_number_and_a_missing_file_are_listed_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    changed = {**EVAL, "tasks": {"STSB": {"spearman": 0.7513, "seconds": 3}}}
    a = _run(tmp_path / "a", {"eval/sts/s.json": EVAL, "models/m/negcse.json": {"seed": 2}})
    b = _run(tmp_path / "b", {"eval/sts/s.json": changed, "tables/new.md": b"x\n"})
    assert smoke_compare.main([str(a), str(b)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "identical 0, equal but timing keys 0, different 1, only in A 1, only in B 1",
        "different: eval/sts/s.json",
        "only_a: models/m/negcse.json",
        "only_b: tables/new.md",
    ]
    # an ignored file is not compared
    assert smoke_compare.main([str(a), str(b), "--ignore", "eval/*", "--ignore", "*.md",
                               "--ignore", "models/*"]) == 0  # fmt: skip


def test_a_changed_byte_of_a_non_json_file_is_a_difference(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", {"figures/f.png": b"\x89PNG\x00", "tables/t.csv": b"a,b\n1,2\n"})
    b = _run(tmp_path / "b", {"figures/f.png": b"\x89PNG\x01", "tables/t.csv": b"a,b\n1,2\n"})
    kinds = smoke_compare.compare(a, b)
    assert kinds["different"] == ["figures/f.png"] and kinds["identical"] == ["tables/t.csv"]
