"""Numeric training columns: .npy and one-number-per-line .tsv files aligned with the corpus,
read as float32 / int64 / bool, and bad files refused with an error naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from negcse.training.columns import read_column
from negcse.training.trainer import TrainData
from negcse.workflow.config import project_config


def test_text_and_numeric_columns(tmp_path: Path) -> None:
    (tmp_path / "neg.txt").write_text("x\ny\nz\n")
    (tmp_path / "score.tsv").write_text("0.5\n-2\n1e-3\n")
    np.save(tmp_path / "label.npy", np.array([3, 0, 1], dtype=np.int32))
    np.save(tmp_path / "mask.npy", np.array([True, False, True]))
    np.save(tmp_path / "soft.npy", np.arange(6, dtype=np.float64).reshape(3, 2))
    assert read_column(tmp_path / "neg.txt") == ["x", "y", "z"]
    score = read_column(tmp_path / "score.tsv")
    assert score.dtype == np.float32 and score.tolist() == pytest.approx([0.5, -2.0, 0.001])
    label = read_column(tmp_path / "label.npy")
    assert label.dtype == np.int64 and label.tolist() == [3, 0, 1]
    assert read_column(tmp_path / "mask.npy").tolist() == [True, False, True]
    soft = read_column(tmp_path / "soft.npy")
    assert soft.shape == (3, 2) and soft.dtype == np.float32


@pytest.mark.parametrize(
    ("name", "values", "message"),
    [
        ("nan.npy", np.array([1.0, np.nan, 2.0]), "line 2 is NaN or infinite"),
        ("inf.npy", np.array([[1.0, 0.0], [0.0, np.inf]]), "line 2 is NaN or infinite"),
        ("text.npy", np.array(["a", "b"]), "is not numeric"),
        ("cube.npy", np.zeros((2, 2, 2)), r"shape \(2, 2, 2\)"),
        ("scalar.npy", np.array(1.0), r"shape \(\)"),
    ],
)
def test_bad_npy_names_the_file(
    tmp_path: Path, name: str, values: np.ndarray, message: str
) -> None:
    np.save(tmp_path / name, values)
    with pytest.raises(ValueError, match=rf"{name}: .*{message}|{name}: {message}"):
        read_column(tmp_path / name)


def test_pickled_or_damaged_npy_is_refused(tmp_path: Path) -> None:
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match=r"obj.npy: not a numeric .npy array"):
        read_column(tmp_path / "obj.npy")
    (tmp_path / "junk.npy").write_bytes(b"not numpy")
    with pytest.raises(ValueError, match=r"junk.npy: not a numeric .npy array"):
        read_column(tmp_path / "junk.npy")


def test_bad_tsv_line_is_named(tmp_path: Path) -> None:
    (tmp_path / "w.tsv").write_text("1\n0.5\nhigh\n")
    with pytest.raises(ValueError, match=r"w.tsv:3: 'high' is not a number"):
        read_column(tmp_path / "w.tsv")
    (tmp_path / "n.tsv").write_text("1\nnan\n")
    with pytest.raises(ValueError, match=r"n.tsv: line 2 is NaN or infinite"):
        read_column(tmp_path / "n.tsv")


def test_misaligned_numeric_column_names_its_file(tmp_path: Path) -> None:
    np.save(tmp_path / "w.npy", np.ones(2))
    weights = read_column(tmp_path / "w.npy")
    with pytest.raises(
        ValueError, match=r"w.npy \(column 'weight'\) has 2 lines but the corpus has 3"
    ):
        TrainData(
            {"sentence": ["a", "b", "c"], "weight": weights}, {"weight": str(tmp_path / "w.npy")}
        )


def test_train_command_reports_a_bad_column_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from negcse.cli import main

    (tmp_path / "corpus.txt").write_text("a\nb\n")
    np.save(tmp_path / "w.npy", np.array([1.0, np.nan]))
    run = {"method": "simcse", "implementation": "simcse", "backbone": "splade-tiny"}
    defaults = project_config(Path(__file__).resolve().parents[2], check=False)
    run |= {"params": {}, "train": defaults["train"]}
    args = [
        "train",
        "--run",
        json.dumps(run),
        "--seed",
        "1",
        "--corpus",
        str(tmp_path / "corpus.txt"),
    ]
    args += ["--column", f"weight={tmp_path / 'w.npy'}", "--out", str(tmp_path / "out")]
    args += ["--checkpoint-dir", str(tmp_path / "ckpt"), "--no-progress"]
    assert main(args) == 2
    # the lines that name the column (an earlier test's logging setup may add INFO lines)
    err = [line for line in capsys.readouterr().err.splitlines() if "w.npy" in line]
    assert err == [
        f"negcse train: error: {tmp_path / 'w.npy'}: line 2 is NaN or infinite (1 such line(s))"
    ]
    assert not (tmp_path / "out").exists() and not (tmp_path / "ckpt").exists()
