"""Checks of the published-results data entry against the papers' own arithmetic and text."""

from __future__ import annotations

import csv
import math
import os
import re
from importlib import resources
from pathlib import Path

import pandas as pd
import pytest

from negcse.tables.published import (
    COLUMNS,
    PAPERS,
    TASKS,
    PublishedDataError,
    load_published,
    parse_published,
    published_avg,
)
from negcse.tables.published import STS_RESOURCE as RESOURCE
from negcse.tables.published_csv import CSVSpec, Row, Score, parse_frame, parse_rows

PAPERS_DIR = Path(os.environ.get("NEGCSE_PAPERS", "/work/shared/papers"))

# Rows whose printed average is not the mean of their printed scores. The printed value is
# kept; each one says so in its `note`.
AVG_EXCEPTIONS: dict[tuple[str, str, str, str], str] = {
    ("san-hince", "Table 3", "sncse", "roberta-large"): (
        "printed 80.86, scores average 81.00; Table 8 repeats 80.86, so a score is likely mistyped"
    ),
    ("san-hince", "Table 9", "promptbert", "bert-base-uncased"): (
        "PromptBERT row (78.54 vs 78.52) is copied identically by san-hince, gcse and osscse"
    ),
    ("gcse", "Table 2", "promptbert", "bert-base-uncased"): "same PromptBERT row as above",
    ("osscse", "Table 4", "promptbert", "bert-base-uncased"): "same PromptBERT row as above",
    ("osscse", "Table 4", "esimcse", "roberta-large"): (
        "printed 79.40, scores average 79.45 (SNCSE Table 2 prints 79.45 for the same scores)"
    ),
}

# Headline averages (METHODS.md) and where the papers print them.
HEADLINES = [
    # method, backbone, paper (None: own paper), expected avg
    ("simcse", "bert-base-uncased", None, 76.25),
    ("simcse", "bert-large-uncased", None, 78.41),
    ("simcse", "roberta-base", None, 76.57),
    ("simcse", "roberta-large", None, 78.90),
    ("sncse", "bert-base-uncased", None, 78.97),
    ("sncse", "bert-large-uncased", None, 80.19),
    ("sncse", "roberta-base", None, 79.23),
    ("sncse", "roberta-large", None, 81.77),
    ("sncse_pl", "bert-base-uncased", None, 77.11),
    ("sncse_nl", "bert-base-uncased", None, 74.37),
    ("sncse_infonce", "bert-base-uncased", None, 78.21),
    ("simcse", "bert-base-uncased", "una", 75.32),
    ("una", "bert-base-uncased", None, 76.14),
    ("una_paraphrase", "bert-base-uncased", None, 76.71),
    ("una_both", "bert-base-uncased", None, 77.67),
    ("simcse", "roberta-base", "una", 76.49),
    ("una", "roberta-base", None, 76.74),
    ("una_paraphrase", "roberta-base", None, 77.68),
    ("una_both", "roberta-base", None, 78.20),
    ("simcse", "bert-base-uncased", "san-hince", 76.64),
    ("simcse_san", "bert-base-uncased", None, 77.05),
    ("sncse", "bert-base-uncased", "san-hince", 78.65),
    ("sncse_san", "bert-base-uncased", None, 79.13),
    ("rankcse", "bert-base-uncased", "san-hince", 80.16),
    ("rankcse_san", "bert-base-uncased", None, 80.33),
    ("rlrd", "bert-base-uncased", "san-hince", 80.87),
    ("rlrd_san", "bert-base-uncased", None, 81.01),
    ("san_scale10", "bert-base-uncased", None, 76.94),
    ("san_scale30", "bert-base-uncased", None, 75.82),
    ("san_scale40", "bert-base-uncased", None, 76.55),
    ("gcse", "bert-base-uncased", None, 81.61),
    ("osscse", "bert-base-uncased", None, 79.08),
    ("osscse", "bert-large-uncased", None, 80.47),
    ("osscse", "roberta-base", None, 80.46),
    ("osscse", "roberta-large", None, 81.68),
]


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return load_published()


@pytest.fixture(scope="module")
def raw_rows() -> list[dict[str, str]]:
    """The CSV as printed strings (for the number of printed decimals)."""
    text = resources.files("negcse.resources").joinpath(RESOURCE).read_text("utf-8")
    return list(csv.DictReader(text.splitlines()))


def _decimals(value: str) -> int:
    return len(value.split(".")[1]) if "." in value else 0


def test_schema_and_types(table: pd.DataFrame) -> None:
    from negcse.data.sts import STS_TASKS

    assert TASKS == STS_TASKS
    assert tuple(table.columns) == COLUMNS
    for col in (*TASKS, "avg"):
        assert table[col].dtype == "float64"
    assert set(table["paper"]) == set(PAPERS)
    assert table["avg"].notna().all()
    assert table["table"].str.fullmatch(r"(Table|Figure) [A-Z]?\d+").all()
    # UNA prints fractions, the others percentages
    assert (table.loc[table["paper"] == "una", "scale"] == "fraction").all()
    assert (table.loc[table["paper"] != "una", "scale"] == "percent").all()
    keys = table[["paper", "table", "label", "method", "backbone"]]
    assert not keys.duplicated().any(), keys[keys.duplicated(keep=False)]


def test_printed_avg_is_mean_of_seven(raw_rows: list[dict[str, str]]) -> None:
    bad: dict[tuple[str, str, str, str], float] = {}
    checked = 0
    for r in raw_rows:
        if not all(r[t] for t in TASKS):
            continue
        checked += 1
        mean = sum(float(r[t]) for t in TASKS) / len(TASKS)
        # one unit of the last printed digit: 0.01 for 2 decimals (x100 for fractions);
        # Mirror-BERT is printed to 3 decimals in UNA Table D8 (0.1 after conversion)
        tol = max(0.01, 10.0 ** -min(_decimals(r["avg"]), 2)) + 1e-9
        if abs(mean - float(r["avg"])) > tol:
            bad[(r["paper"], r["table"], r["method"], r["backbone"])] = round(mean, 3)
    assert checked > 150
    assert set(bad) == set(AVG_EXCEPTIONS), bad
    noted = {
        (r["paper"], r["table"], r["method"], r["backbone"])
        for r in raw_rows
        if "disagrees" in r["note"]
    }
    assert noted == set(AVG_EXCEPTIONS)


def _number_stream(paper: str) -> list[float]:
    text = (PAPERS_DIR / f"{paper}.txt").read_text("utf-8")
    text = re.sub(r"<[^>]+>", "", text)
    return [float(t) for t in re.findall(r"\d*\.\d+|\d+", text)]


def _contains_run(stream: list[float], run: list[float]) -> bool:
    n = len(run)
    return any(
        all(math.isclose(stream[i + k], run[k], abs_tol=1e-6) for k in range(n))
        for i in range(len(stream) - n + 1)
        if math.isclose(stream[i], run[0], abs_tol=1e-6)
    )


@pytest.mark.skipif(not PAPERS_DIR.is_dir(), reason="paper texts not available")
def test_rows_are_printed_in_the_papers(table: pd.DataFrame) -> None:
    """Every complete row's 8 numbers appear consecutively in its paper's text, and every
    average-only row's number appears there (fractions compared after x100)."""
    missing = []
    for paper, rows in table.groupby("paper"):
        stream = _number_stream(str(paper))
        for _, r in rows.iterrows():
            factor = 100.0 if r["scale"] == "fraction" else 1.0
            scaled = [v * factor for v in stream]
            values = [r[c] for c in (*TASKS, "avg") if not math.isnan(r[c])]
            if not _contains_run(scaled, values):
                missing.append((paper, r["table"], r["label"], r["backbone"]))
    assert not missing


def test_una_seed_means(table: pd.DataFrame) -> None:
    d7 = table[(table["paper"] == "una") & (table["table"] == "Table D7")]
    for method in ("simcse", "una_both"):
        rows = d7[d7["method"] == method]
        seeds = rows[rows["label"].str.contains("seed")]
        mean_row = rows[rows["label"].str.contains("Mean")]
        assert len(seeds) == 10 and len(mean_row) == 1
        assert abs(seeds["avg"].mean() - mean_row["avg"].iloc[0]) <= 0.01 + 1e-9


def test_quoted_simcse_agrees_across_papers(table: pd.DataFrame) -> None:
    """SimCSE's own published numbers are quoted identically wherever they are quoted."""
    quoted = table[(table["method"] == "simcse") & table["note"].str.contains("quoted")]
    assert set(quoted["paper"]) == {"sncse", "san-hince", "gcse", "osscse"}
    for backbone, rows in quoted.groupby("backbone"):
        scores = rows[[*TASKS, "avg"]].drop_duplicates()
        assert len(scores) == 1, (backbone, rows[["paper", "table", "avg"]])
    assert quoted.groupby("backbone")["avg"].first().to_dict() == {
        "bert-base-uncased": 76.25,
        "bert-large-uncased": 78.41,
        "roberta-base": 76.57,
        "roberta-large": 78.90,
    }


@pytest.mark.parametrize(("method", "backbone", "paper", "expected"), HEADLINES)
def test_headline_averages(method: str, backbone: str, paper: str | None, expected: float) -> None:
    assert published_avg(method, backbone, paper) == pytest.approx(expected, abs=1e-9)


def test_gcse_llm_range(table: pd.DataFrame) -> None:
    main = table[
        (table["paper"] == "gcse")
        & (table["table"] == "Table 2")
        & (table["method"] == "gcse")
        & (table["backbone"] == "bert-base-uncased")
    ]
    assert len(main) == 5 and main["note"].str.startswith("LLM: ").all()
    assert main["avg"].min() == 81.61 and main["avg"].max() == 81.98
    assert main.loc[main["avg"].idxmax(), "note"] == "LLM: Deepseek-V3-0324"


def test_published_avg_absent_and_bad_paper() -> None:
    assert published_avg("sncse_pl", "roberta-base") is None
    assert published_avg("no_such_method", "bert-base-uncased") is None
    assert published_avg("simcse_san", "bert-base-uncased", "sncse") is None
    # a baseline with no own paper: the first paper that prints it
    assert published_avg("diffcse", "bert-base-uncased") == pytest.approx(78.49)
    with pytest.raises(ValueError, match="unknown paper"):
        published_avg("sncse", "bert-base-uncased", "sncse2")


def test_bad_value_names_line_and_column(tmp_path: Path) -> None:
    text = resources.files("negcse.resources").joinpath(RESOURCE).read_text("utf-8")
    lines = text.splitlines()
    fields = next(csv.reader([lines[4]]))
    fields[COLUMNS.index("STS13")] = "8x.41"
    lines[4] = ",".join(f'"{f}"' for f in fields)
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(PublishedDataError, match=r"bad\.csv:5: column 'STS13': '8x\.41'"):
        load_published(bad)

    fields[COLUMNS.index("STS13")] = "182.41"
    with pytest.raises(PublishedDataError, match=r":5: column 'STS13': 182\.41 is outside"):
        parse_published("\n".join([*lines[:4], ",".join(f'"{f}"' for f in fields)]), "x.csv")

    with pytest.raises(PublishedDataError, match=r"x\.csv:1: header"):
        parse_published("paper,table\n", "x.csv")

    fields[COLUMNS.index("STS13")] = "82.41"
    fields[COLUMNS.index("paper")] = "simcse"
    with pytest.raises(PublishedDataError, match=r":2: column 'paper': 'simcse'"):
        parse_published("\n".join([lines[0], ",".join(f'"{f}"' for f in fields)]), "x.csv")


class _RowError(ValueError):
    pass


_SPEC = CSVSpec(
    columns=("name", "kind", "score", "extra"),
    text=("name",),
    choices={"kind": ("a", "b")},
    scores={"score": Score(), "extra": Score(empty_is_nan=True)},
    error=_RowError,
)


def test_shared_csv_helper_names_source_line_and_column() -> None:
    text = "name,kind,score,extra\nx,a,50,\n\ny,b,0,100\n"
    rows = list(parse_rows(text, _SPEC, "t.csv"))
    assert [row.line for row in rows] == [2, 4]  # the empty line 3 is skipped
    assert rows[0].raw["kind"] == "a" and rows[0].scores["score"] == 50.0
    frame = parse_frame(text, _SPEC, "t.csv")
    assert list(frame.columns) == list(_SPEC.columns) and frame["extra"].dtype == "float64"
    assert math.isnan(frame["extra"].iloc[0]) and frame["extra"].iloc[1] == 100.0

    def bad(row: str) -> str:
        return f"name,kind,score,extra\nx,a,50,\n{row}\n"

    cases = [
        (bad("y,a,50"), r"^t\.csv:3: expected 4 fields, got 3$"),
        (bad(" ,a,50,"), r"^t\.csv:3: column 'name' is empty$"),
        (bad("y,a,100.5,"), r"^t\.csv:3: column 'score': 100\.5 is outside the 0-100 scale$"),
        (bad("y,a,50,-1"), r"^t\.csv:3: column 'extra': -1\.0 is outside the 0-100 scale$"),
        (bad("y,a,nan,"), r"^t\.csv:3: column 'score': nan is outside"),
        (bad("y,a,5o,"), r"^t\.csv:3: column 'score': '5o' is not a number$"),
        (bad("y,a,,"), r"^t\.csv:3: column 'score' is empty$"),
        (bad("y,c,50,"), r"^t\.csv:3: column 'kind': 'c' is not one of \('a', 'b'\)$"),
        ("name,kind\n", r"^t\.csv:1: header must be name,kind,score,extra, got name,kind$"),
    ]
    for text, message in cases:
        with pytest.raises(_RowError, match=message):
            parse_frame(text, _SPEC, "t.csv")

    def check(row: Row) -> None:  # a table's own rule, named by column
        if row.raw["name"] == "z":
            raise row.error("name", "is reserved")

    with pytest.raises(_RowError, match=r"^t\.csv:3: column 'name': is reserved$"):
        parse_frame(bad("z,a,1,"), _SPEC, "t.csv", check)
