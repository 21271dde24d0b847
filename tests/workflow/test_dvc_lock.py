"""negcse dvc-lock's checks (the whole command runs in tests/workflow/test_dvc_remote.py): the
outputs a clone pulls, what counts as a clean clone's `dvc status`, and the refusals."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from negcse.errors import UserError
from negcse.workflow.dvc_lock import (
    cached_outs,
    check_committed,
    clone_status,
    stage,
    unexpected,
)

REPO = Path(__file__).resolve().parents[2]
HEAVY = ["results/data", "results/features", "results/negatives", "results/gcse",
         "results/models", "results/eval", "results/analysis"]  # fmt: skip


def test_cached_outs_are_the_heavy_folders() -> None:
    # dvc.yaml: the tables, figures, pages and metrics are in git (cache: false), the rest in
    # DVC's cache
    assert cached_outs(stage(REPO)) == HEAVY


def test_a_clone_of_the_committed_tree_reports_no_changed_dependency() -> None:
    """``dvc status`` in a copy of what git holds: dvc.lock matches the stage's dependencies and
    the committed outputs; only the heavy outputs, never pulled here, are absent."""
    wrong = unexpected(clone_status(REPO), HEAVY)
    assert wrong == [], (
        "dvc.lock does not record the committed tree (a dependency of the workflow stage "
        f"changed since the run): {wrong}; rerun the grid (`make smoke`) and `make dvc-lock`, "
        "then commit results/ and dvc.lock"
    )


def test_the_package_code_is_no_dependency_of_the_stage() -> None:
    """Snakemake reruns no job when src/ changes: a src edit must not dirty `dvc status`."""
    deps = [d if isinstance(d, str) else next(iter(d)) for d in stage(REPO)["deps"]]
    assert "src" not in deps and {"Snakefile", "rules", "config/defaults.yaml"} <= set(deps)


def test_only_absent_heavy_outputs_are_expected() -> None:
    clean = {"workflow": [{"changed outs": {"results/models": "deleted",
                                            "results/eval": "not in cache"}}]}  # fmt: skip
    assert unexpected(clean, HEAVY) == []
    assert unexpected({}, HEAVY) == []
    stale = {
        "workflow": [
            {"changed deps": {"src": "modified"}},
            {"changed outs": {"results/tables": "modified", "results/models": "deleted"}},
        ]
    }
    assert unexpected(stale, HEAVY) == [
        "workflow: {'changed deps': {'src': 'modified'}}",
        "workflow: results/tables modified",
    ]


def test_uncommitted_workflow_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "dvc.yaml").write_text("stages:\n  workflow:\n    cmd: x\n    deps: [src]\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    for cmd in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"],
    ):
        subprocess.run(cmd, cwd=tmp_path, check=True)  # fmt: skip
    check_committed(tmp_path, stage(tmp_path))  # clean: nothing to say
    (tmp_path / "src" / "a.py").write_text("x = 2\n")
    (tmp_path / "src" / "new.py").write_text("")
    with pytest.raises(UserError, match=r"commit the workflow's files first \(2 changed, e\.g\. "):
        check_committed(tmp_path, stage(tmp_path))
