"""A new table is one spec: a toy spec registered in a fixture renders through `negcse table`."""

from __future__ import annotations

import json
from csv import DictReader
from pathlib import Path

import pytest

from negcse.tables import build
from negcse.tables.render import Column
from negcse.tables.specs import TABLES, TableSpec


@pytest.fixture
def toy_table(monkeypatch: pytest.MonkeyPatch) -> TableSpec:
    spec = TableSpec(
        name="toy",
        inputs="results/eval/toy/{method}/{backbone}/seed{seed}.json",
        columns=(Column("score", "Score"), Column("err_rate", "Err. %", bold="min", scale=100,
                                                   source="error")),
        metric="score",
        caption="Toy scores, mean $\\pm$ std over seeds.",
        summary="Toy scores.",
        category="Toy",
        build=build.summary_table,
    )  # fmt: skip
    monkeypatch.setitem(TABLES, "toy", spec)
    return spec


def test_a_toy_spec_renders_every_twin(toy_table: TableSpec, tmp_path: Path) -> None:
    from negcse.cli import main

    evals = []
    for method, seed, score, error in (("a_1", 1, 60.0, 0.10), ("a_1", 2, 64.0, 0.20),
                                       ("b", 1, 61.0, 0.05)):  # fmt: skip
        path = tmp_path / f"{method}{seed}.json"
        tags = {"method": method, "backbone": "bb", "seed": str(seed)}
        path.write_text(json.dumps({**tags, "score": score, "error": error}))
        evals.append(str(path))
    out = {ext: tmp_path / f"toy.{ext}" for ext in ("tex", "csv", "md", "json")}
    args = ["table", "toy", "--evals", *evals, "--tex", str(out["tex"]), "--csv", str(out["csv"])]
    assert main([*args, "--md", str(out["md"]), "--metrics", str(out["json"])]) == 0
    # a_1: score mean 62, sample std of (60, 64) = 2.83 (best: bold); error x100: 15 +- 7.07
    tex = out["tex"].read_text()
    assert r"Method & Score & Err. \% \\" in tex  # one backbone: named in the caption
    assert r"a\_1 & \textbf{62.00 $\pm$ 2.83} & 15.00 $\pm$ 7.07 \\" in tex
    assert r"b & 61.00 & \textbf{5.00} \\" in tex  # lowest error in bold, one seed
    assert r"\caption{Toy scores, mean $\pm$ std over seeds. Backbone: bb.}" in tex
    assert "tab:toy" in tex and r"\begin{table}[tp]" in tex  # narrow: one column
    md = out["md"].read_text()
    assert md.startswith("Toy scores, mean ± std over seeds. Backbone: bb.\n\n")
    assert "| a_1 | **62.00 ± 2.83** | 15.00 ± 7.07 |" in md
    csv = out["csv"].read_text().splitlines()
    assert csv[0] == (
        "method,backbone,score_mean,score_std,err_rate_mean,err_rate_std,seeds,trained,"
        "score_seed1,score_seed2"
    )
    # every float as stored: the std of (60, 64) is 2 sqrt(2), of (10, 20) 5 sqrt(2); the
    # headline's (the spec's metric) value at each seed (b ran seed 1 only)
    assert csv[1] == f"a_1,bb,62.0,{2 * 2**0.5!r},15.0,{5 * 2**0.5!r},2,True,60.0,64.0"
    assert csv[2] == "b,bb,61.0,0.0,5.0,0.0,1,True,61.0,"
    assert json.loads(out["json"].read_text()) == {
        "a_1": {"bb": {"score": 62.0}},
        "b": {"bb": {"score": 61.0}},
    }


def _two_evals(tmp_path: Path, head: dict[str, str]) -> list[str]:
    """Evaluation JSONs of the toy table: one under ``head``, one of a plain method b."""
    evals = []
    for extra in (head, {"method": "b", "backbone": "bb"}):
        path = tmp_path / f"{extra['method']}.json"
        path.write_text(json.dumps({**extra, "seed": "1", "score": 60.0, "error": 0.1}))
        evals.append(str(path))
    return evals


def test_the_llm_that_wrote_the_data_names_the_row(toy_table: TableSpec, tmp_path: Path) -> None:
    """A model whose negcse.json records an LLM (GCSE) is evaluated with it in the JSON
    header; its table row reads ``method (llm)`` and the CSV carries an llm column."""
    import argparse

    from negcse.cli import main
    from negcse.model_cli import header

    model = tmp_path / "model"
    model.mkdir()
    meta = {"eval_pooler": "cls", "llm": {"backend": "openai", "model": "deepseek-chat"}}
    (model / "negcse.json").write_text(json.dumps(meta))
    args = argparse.Namespace(model=str(model), pooler="cls", tag=["method=g", "backbone=bb"])
    head = header(args)
    assert head["llm"] == "deepseek-chat"
    assert "llm" not in header(argparse.Namespace(model=str(tmp_path), pooler="cls", tag=[]))
    evals = _two_evals(tmp_path, head)
    out = {ext: tmp_path / f"toy.{ext}" for ext in ("tex", "csv", "md")}
    args = ["table", "toy", "--evals", *evals, "--tex", str(out["tex"]), "--csv", str(out["csv"])]
    assert main([*args, "--md", str(out["md"])]) == 0
    md = out["md"].read_text()
    assert "| g † |" in md and "| b |" in md and "† data written by the LLM deepseek-chat." in md
    csv = out["csv"].read_text().splitlines()
    assert csv[0].endswith(",seeds,llm,trained,score_seed1")
    assert ",1,deepseek-chat,True," in csv[1] and ",1,,True," in csv[2]


def test_a_substituted_resource_names_the_row(toy_table: TableSpec, tmp_path: Path) -> None:
    """A model trained on data made with a planned substitute (negcse.json ``substitutes``: SAN's
    spaCy lexicon for the released one) carries it into its evaluation and its row's name."""
    import argparse

    from negcse.cli import main
    from negcse.model_cli import header

    model = tmp_path / "model"
    model.mkdir()
    note = "SAN lexicon: spacy (released table unavailable)"
    meta = {"eval_pooler": "cls", "san_lexicon": "spacy (released table unavailable)",
            "substitutes": [note]}  # fmt: skip
    (model / "negcse.json").write_text(json.dumps(meta))
    head = header(argparse.Namespace(model=str(model), pooler="cls", tag=["method=s", "backbone=bb"]))
    assert head["substitute"] == note and "llm" not in head
    released = {**meta, "san_lexicon": "released"}
    del released["substitutes"]
    (model / "negcse.json").write_text(json.dumps(released))
    assert "substitute" not in header(argparse.Namespace(model=str(model), pooler="cls", tag=[]))
    evals = _two_evals(tmp_path, head)
    md = tmp_path / "toy.md"
    csv = tmp_path / "toy.csv"
    assert main(["table", "toy", "--evals", *evals, "--md", str(md), "--csv", str(csv)]) == 0
    assert "| s † |" in md.read_text() and "| b |" in md.read_text()
    assert f"Backbone: bb. † {note}." in md.read_text()
    rows = list(DictReader(csv.open()))
    assert (rows[0]["seeds"], rows[0]["substitute"]) == ("1", note)


def test_unknown_table_names_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    from negcse.cli import main

    assert main(["table", "nope", "--evals", "x.json"]) == 2
    assert "unknown table 'nope'; known: sts, transfer, mteb" in capsys.readouterr().err
