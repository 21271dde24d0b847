"""Published transfer numbers (GCSE Table 7, OssCSE Table 5), the transfer table and the
transfer evaluation's ``--pooler auto`` / ``--tag``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from negcse.tables.published import (
    TRANSFER_COLUMNS,
    TRANSFER_TASKS,
    PublishedDataError,
    load_published,
    load_published_transfer,
    parse_published_transfer,
    published_transfer,
)

STS_KEYS = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness", "avg"]
SCORES = [*TRANSFER_TASKS, "avg"]


def test_gcse_table7_baselines_are_its_table2_sts_rows() -> None:
    """The flagged rows equal, number for number, the same method's STS row of GCSE Table 2."""
    transfer = load_published_transfer()
    sts = load_published()
    flagged = transfer[transfer["status"] == "sts_numbers"]
    assert sorted(set(flagged["method"])) == ["diffcse", "pcl", "rankcse", "simcse"]
    assert len(flagged) == 14
    for _, row in flagged.iterrows():
        match = sts[
            (sts["paper"] == "gcse")
            & (sts["method"] == row["method"])
            & (sts["backbone"] == row["backbone"])
        ]
        assert len(match) == 1, (row["method"], row["backbone"])
        assert match[STS_KEYS].to_numpy()[0].tolist() == row[SCORES].tolist()
    # and no row kept as a transfer result repeats an STS row
    ok = transfer[transfer["status"] == "transfer"]
    sts_rows = {tuple(r) for r in sts[STS_KEYS].to_numpy().tolist()}
    assert not any(tuple(r) in sts_rows for r in ok[SCORES].to_numpy().tolist())


def test_printed_averages_match_the_printed_accuracies() -> None:
    frame = load_published_transfer()
    mean = frame[list(TRANSFER_TASKS)].mean(axis=1)
    assert ((mean - frame["avg"]).abs() <= 0.006).all()
    assert len(frame) == 43  # 40 GCSE Table 7 rows + 3 OssCSE Table 5 rows


def test_headline_rows() -> None:
    assert published_transfer("gcse", "bert-base-uncased") == 86.97  # first LLM, ChatGLM3-6B
    assert published_transfer("osscse", "roberta-base") == 87.02
    assert published_transfer("simcse", "roberta-base") == 84.84  # OssCSE Table 5
    assert published_transfer("simcse", "bert-base-uncased") is None  # only STS numbers
    assert published_transfer("sncse", "bert-base-uncased") is None
    assert published_transfer("osscse", "roberta-base", ["CR", "TREC"]) == pytest.approx(
        (88.13 + 88.80) / 2
    )
    with pytest.raises(ValueError, match="subset"):
        published_transfer("gcse", "bert-base-uncased", ["STS12"])


def test_bad_file_names_line_and_column() -> None:
    header = ",".join(TRANSFER_COLUMNS)
    row = "gcse,Table 7,x,gcse,b,1,2,3,4,5,6,7,4,transfer,"
    assert len(parse_published_transfer(f"{header}\n{row}\n")) == 1
    with pytest.raises(PublishedDataError, match=r":2: column 'status'"):
        parse_published_transfer(f"{header}\n{row.replace('transfer', 'maybe')}\n")
    with pytest.raises(PublishedDataError, match=r":2: column 'MR': 'x1'"):
        parse_published_transfer(f"{header}\n{row.replace(',1,', ',x1,')}\n")


def _eval(tmp: Path, name: str, tasks: dict[str, float], kfold: int = 10, **tags) -> str:
    details = {t: {"acc": v, "kfold": None if t == "SST2" else kfold} for t, v in tasks.items()}
    avg = sum(tasks.values()) / len(tasks)
    extra = {"MRPC_f1": 80.0} if "MRPC" in tasks else {}
    path = tmp / f"{name}.json"
    path.write_text(json.dumps({**tags, **tasks, **extra, "avg": avg, "details": details}))
    return str(path)


def test_reduced_table_says_so_and_compares_the_same_tasks(tmp_path: Path) -> None:
    from negcse.cli import main

    evals = [
        _eval(
            tmp_path,
            "a",
            {"CR": 80.0, "TREC": 90.0},
            5,
            method="osscse",
            backbone="roberta-base",
            seed="1",
        ),
        _eval(
            tmp_path,
            "b",
            {"CR": 82.0, "TREC": 90.0},
            5,
            method="osscse",
            backbone="roberta-base",
            seed="2",
        ),
    ]
    tex, csv = tmp_path / "t.tex", tmp_path / "t.csv"
    assert main(["table", "transfer", "--evals", *evals, "--tex", str(tex), "--csv", str(csv)]) == 0
    text = tex.read_text()
    assert "REDUCED protocol" in text and "tasks CR, TREC only, 5-fold CV" in text
    row = next(line for line in text.splitlines() if line.startswith("OssCSE"))
    paper = (88.13 + 88.80) / 2  # OssCSE Table 5, the same two tasks
    diff = f"{85.5 - paper:.2f}".replace("-", "$-$")  # a true minus sign
    assert f"{paper:.2f} & {diff}" in row  # ours: mean of 85 and 86


def test_full_table_uses_printed_average_and_f1_column(tmp_path: Path) -> None:
    from negcse.cli import main

    tasks = dict.fromkeys(TRANSFER_TASKS, 85.0)
    evals = [_eval(tmp_path, "g", tasks, method="gcse", backbone="bert-base-uncased", seed="1")]
    tex, md = tmp_path / "t.tex", tmp_path / "t.md"
    assert main(["table", "transfer", "--evals", *evals, "--tex", str(tex), "--md", str(md)]) == 0
    text = tex.read_text()
    assert "SentEval test mode" in text and "REDUCED" not in text
    assert "MRPC & MRPC F1 & Avg." in text
    assert "86.97 & $-$1.97" in text
    assert "| MRPC F1 |" in md.read_text() and "| −1.97 |" in md.read_text()


@pytest.mark.mirror
@pytest.mark.slow
def test_evaluate_transfer_auto_pooler_and_tags(tmp_path: Path, splade_tiny: Path) -> None:
    from negcse.cli import main

    model = tmp_path / "model"
    model.mkdir()
    for f in splade_tiny.iterdir():
        (model / f.name).symlink_to(f)
    (model / "negcse.json").write_text(json.dumps({"eval_pooler": "mean"}))
    out = tmp_path / "t.json"
    args = ["evaluate", "--only", "transfer", "--model", str(model), "--pooler", "auto"]
    args += ["--transfer-out", str(out), "--transfer-tasks", "TREC", "--transfer-kfold", "2"]
    args += ["--tag", "method=x", "--tag", "seed=3"]
    assert main([*args, "--threads", "1"]) == 0
    result = json.loads(out.read_text())
    assert result["pooler"] == "mean"
    assert (result["method"], result["seed"], result["senteval_seed"]) == ("x", "3", 1111)
    assert result["details"]["TREC"]["kfold"] == 2 and 0 < result["TREC"] <= 100
