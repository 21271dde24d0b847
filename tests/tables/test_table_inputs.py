"""`negcse table` refuses inputs whose mean +- std would be wrong (issue 24): two evaluations of
one (method, backbone, seed) counted as two seeds, and a row whose seeds were scored under
different STS protocols (SentEval's processed files and MTEB's raw text give other numbers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from negcse.cli import main
from negcse.tables.build import TableInputError, check_evaluations
from negcse.tables.published import TASKS


def _sts(tmp: Path, name: str, method: str, seed: str | None, protocol: str, avg: float) -> str:
    values = {task: avg for task in TASKS}
    tags = {"method": method, "backbone": "splade-tiny", **({"seed": seed} if seed else {})}
    path = tmp / f"{name}.json"
    path.write_text(json.dumps({**tags, **values, "avg": avg, "protocol": protocol}))
    return str(path)


def _table(tmp: Path, evals: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["table", "sts", "--evals", *evals, "--md", str(tmp / "out" / "sts.md")])
    return code, capsys.readouterr().err


def test_one_run_evaluated_twice_is_refused_naming_both_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "out").mkdir()
    first = _sts(tmp_path, "a", "simcse", "1", "senteval", 60.0)
    copy = _sts(tmp_path, "a_copy", "simcse", "1", "senteval", 70.0)  # would read 65 +- 7.07
    other = _sts(tmp_path, "b", "simcse", "2", "senteval", 62.0)
    code, err = _table(tmp_path, [first, other, copy], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"negcse table: error: {first} and {copy}: two evaluations of simcse on splade-tiny, "
        "seed 1; a row averages one per seed (remove one)"
    ]
    assert list((tmp_path / "out").iterdir()) == []
    untrained = [_sts(tmp_path, f"u{i}", "untrained", None, "senteval", 50.0) for i in (1, 2)]
    with pytest.raises(TableInputError, match="two evaluations of untrained on splade-tiny, no"):
        check_evaluations(untrained)


def test_a_row_mixing_sts_protocols_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "out").mkdir()
    senteval = _sts(tmp_path, "s1", "simcse", "1", "senteval", 60.0)
    mteb = _sts(tmp_path, "s2", "simcse", "2", "mteb", 64.0)
    code, err = _table(tmp_path, [senteval, mteb], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"negcse table: error: {senteval} (senteval protocol) and {mteb} (mteb protocol): the "
        "row simcse on splade-tiny mixes STS protocols; evaluate every seed under one "
        "(evaluation.protocol)"
    ]
    assert list((tmp_path / "out").iterdir()) == []


def test_distinct_seeds_under_one_protocol_make_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "out").mkdir()
    evals = [
        _sts(tmp_path, "s1", "simcse", "1", "mteb", 60.0),
        _sts(tmp_path, "s2", "simcse", "2", "mteb", 62.0),
        _sts(tmp_path, "u", "untrained", None, "mteb", 50.0),  # another row, the same protocol
    ]
    code, _ = _table(tmp_path, evals, capsys)
    assert code == 0
    assert "61.00 ± 1.41" in (tmp_path / "out" / "sts.md").read_text()  # mean, std of 60 and 62


def test_mteb_groups_are_checked_apart(tmp_path: Path) -> None:
    """One run has a reranking and a classification file; two files of one group repeat it."""
    paths = []
    for name, group in (("r", "reranking"), ("c", "classification"), ("r2", "reranking")):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"method": "m", "backbone": "b", "seed": "1", "group": group}))
        paths.append(str(path))
    check_evaluations(paths[:2], "reranking")
    check_evaluations(paths[:2], "classification")
    with pytest.raises(TableInputError, match=f"{paths[0]} and {paths[2]}: two evaluations"):
        check_evaluations(paths, "reranking")
