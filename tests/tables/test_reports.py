"""One page per paper and one per method of no paper (negcse.tables.reports, `negcse
paper-report`) from the tables' CSV twins; a method's paper as its params block declares it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from negcse.cli import main
from negcse.tables.build import Options
from negcse.tables.render import to_csv
from negcse.tables.reports import grid_papers, own_pages, page_methods
from negcse.tables.verdicts import checkpoint_frame, verdict_frame
from negcse.workflow.config import method_papers
from negcse.workflow.plan.load import workflow_config

SMOKE = ["simcse", "una", "una_random_select", "sncse", "sncse_pl", "osscse", "simcse_san",
         "sncse_san", "una_baseline", "simcse_dropout15"]  # fmt: skip
BASELINES = {"una": "una_baseline", "una_random_select": "una", "sncse": "simcse",
             "sncse_pl": "sncse", "osscse": "simcse", "simcse_san": "simcse_dropout15",
             "sncse_san": "sncse", "una_baseline": "simcse", "simcse_dropout15": "simcse"}  # fmt: skip


REPO = Path(__file__).resolve().parents[2]
PAPERS = method_papers(workflow_config(REPO / "params.yaml"))


def test_methods_map_to_the_papers_their_blocks_declare() -> None:
    assert [PAPERS.get(m) for m in SMOKE] == [
        None, "una", "una", "sncse", "sncse", "osscse", "san-hince", "san-hince", "una", None
    ]  # fmt: skip
    assert PAPERS["gcse_wo_stage2"] == "gcse" and PAPERS["rlrd_san"] == "san-hince"
    assert PAPERS["rankcse"] == "san-hince"  # a SAN baseline: on SAN's page
    assert grid_papers(SMOKE, PAPERS) == ["sncse", "una", "san-hince", "osscse"]  # PAPERS order
    assert own_pages(SMOKE, PAPERS) == ["simcse", "simcse_dropout15"]
    # SAN's page: its two methods and their baselines, in grid order
    assert page_methods("san-hince", SMOKE, BASELINES, PAPERS) == [
        "sncse", "simcse_san", "sncse_san", "simcse_dropout15"
    ]  # fmt: skip
    # a method of yours, declared with a paper, joins that paper's page
    assert (
        page_methods("sncse", [*SMOKE, "mine"], {"mine": "sncse"}, {**PAPERS, "mine": "sncse"})[-1]
        == "mine"
    )


@pytest.fixture
def tables(tmp_path: Path) -> dict[str, Path]:
    from test_verdicts import _write

    evals = [_write(tmp_path, m, s, 0.5 if m == "sncse" else 1.5) for m in SMOKE for s in (1, 2)]
    evals.append(_write(tmp_path, "simcse_checkpoint", 0, 1.0))
    sts = pd.DataFrame(
        {"method": SMOKE, "backbone": "tiny", "avg_mean": [60.0 + i for i in range(len(SMOKE))],
         "avg_std": 0.5, "seeds": 2, "paper": float("nan"), "diff": float("nan")}
    )  # fmt: skip
    frames = {
        "sts": sts,
        "verdicts": verdict_frame(evals, Options(BASELINES)),
        "checkpoints": checkpoint_frame(evals),
    }
    paths = {}
    # the transfer claims: the same frame, one row's verdict changed, so the page shows which
    frames["transfer_verdicts"] = frames["verdicts"].assign(
        verdict=lambda f: f["verdict"].where(f["method"] != "sncse_pl", "reversed"),
        paper_delta_inside="",  # no paper number: an empty column, float NaN when read back
    )
    for name, frame in frames.items():
        paths[name] = tmp_path / f"{name}.csv"
        paths[name].write_text(to_csv(frame))
    return paths


def test_page_of_a_paper(tables: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "reports" / "sncse.md"
    figure = tmp_path / "figures" / "tiny" / "soft_negatives" / "simcse+sncse.png"
    args = ["paper-report", "--paper", "sncse", "--methods", *SMOKE, "--baselines"]
    args += [f"{m}={b}" for m, b in BASELINES.items()]
    args += ["--papers", *(f"{m}={p}" for m, p in PAPERS.items())]
    args += ["--sts", str(tables["sts"]), "--verdicts", str(tables["verdicts"])]
    args += ["--checkpoints", str(tables["checkpoints"]), "--figures", str(figure)]
    args += ["--out", str(out), "--html", str(out.with_suffix(".html"))]
    args += ["--transfer-verdicts", str(tables["transfer_verdicts"])]
    assert main(args) == 0
    page = out.read_text()
    claims = page.split("## Claims")[1].split("## Transfer claims")[0]
    transfer = page.split("## Transfer claims")[1].split("## STS average")[0]
    assert "reversed" not in claims and "nan" not in transfer
    assert [line.split(" | ")[0] for line in transfer.splitlines() if "reversed" in line] == [
        "| sncse_pl"
    ]
    assert "| sncse | tiny | 2 | simcse |" in claims and "| reproduced |" in claims
    assert "| sncse_pl | tiny | 2 | sncse |" in claims
    assert "una" not in claims and "osscse" not in claims  # other papers' rows
    sts = page.split("## STS average")[1].split("## Released")[0]
    # the paper's methods and the baseline (simcse) they are compared with, in grid order
    assert [line.split(" | ")[0] for line in sts.splitlines() if line.startswith("| ")][1:] == [
        "| simcse", "| sncse", "| sncse_pl"
    ]  # fmt: skip
    assert "| simcse | tiny | 2 | 60.00 ± 0.50 | -- | -- |" in sts
    released = page.split("## Released checkpoints")[1]
    assert "| simcse_checkpoint | tiny |" in released  # SimCSE's, our simcse is on the page
    assert "(../figures/tiny/soft_negatives/simcse+sncse.png)" in page
    assert page.startswith("# SNCSE") and "Verdicts: " in page
    assert "<h2>SNCSE" in out.with_suffix(".html").read_text()


def test_unknown_paper_and_bad_csv(tables: dict[str, Path], tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    common = ["--methods", "simcse", "--sts", str(tables["sts"]), "--checkpoints",
              str(tables["checkpoints"]), "--out", str(tmp_path / "x.md")]  # fmt: skip
    assert main(["paper-report", "--paper", "simcse", "--verdicts", str(tables["sts"]),
                 *common]) == 1  # fmt: skip
    assert "--paper 'simcse': known papers sncse, una" in capsys.readouterr().err
    assert main(["paper-report", "--paper", "una", "--verdicts", str(tables["sts"]),
                 *common]) == 1  # fmt: skip
    assert "sts.csv: no column verdict, vs_baseline_ci" in capsys.readouterr().err
    assert not (tmp_path / "x.md").exists()


def test_page_of_a_method_of_no_paper(tmp_path: Path) -> None:
    """`mine` (no paper) against its baseline simcse on BERT-base: its claim, its STS rows and
    its place among the published BERT-base rows, by average (SNCSE Table 2's SNCSE-BERTbase
    78.97 above it, SimCSE's own 76.25 below)."""
    from test_verdicts import _write

    from negcse.tables.published_view import with_published

    backbone = "bert-base-uncased"
    evals = [_write(tmp_path, m, s, n, backbone) for m, n in (("mine", 0.5), ("simcse", 1.5))
             for s in (1, 2)]  # fmt: skip
    sts = pd.DataFrame(
        {"method": ["simcse", "mine"], "backbone": backbone, "avg_mean": [76.0, 77.5],
         "avg_std": 0.5, "seeds": 2, "trained": True}
    )  # fmt: skip
    for task in ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness"):
        sts[f"{task}_mean"], sts[f"{task}_std"] = 70.0, 0.1
    frames = {
        "sts": sts.assign(paper=float("nan"), diff=float("nan")),
        "verdicts": verdict_frame(evals, Options({"mine": "simcse"})),
        "checkpoints": checkpoint_frame(evals),
        "published": with_published(sts),
    }
    paths = {}
    for name, frame in frames.items():
        paths[name] = tmp_path / f"{name}.csv"
        paths[name].write_text(to_csv(frame))
    out = tmp_path / "reports" / "methods" / "mine.md"
    args = ["paper-report", "--method", "mine", "--methods", "simcse", "mine"]
    args += ["--baselines", "mine=simcse", "--published", str(paths["published"])]
    args += [f"--{k}={paths[k]}" for k in ("sts", "verdicts", "checkpoints")]
    args += ["--out", str(out), "--html", str(out.with_suffix(".html"))]
    assert main(args) == 0
    page = out.read_text()
    assert page.startswith("# mine") and "against its baseline `simcse`" in page
    claims = page.split("## Claims")[1].split("## STS average")[0]
    assert f"| mine | {backbone} | 2 | simcse |" in claims
    sts_part = page.split("## STS average")[1].split("## Beside")[0]
    assert [r.split(" | ")[0] for r in sts_part.splitlines() if r.startswith("| ")][1:] == [
        "| simcse", "| mine"
    ]  # fmt: skip
    beside = page.split(f"## Beside the published rows: {backbone}")[1]
    rows = [r.split(" | ") for r in beside.splitlines() if r.startswith("| ") and "---" not in r]
    assert len(rows) - 1 == 121 + 2  # every published BERT-base row, and ours
    where = {(r[0].removeprefix("| "), r[2]): i for i, r in enumerate(rows[1:])}
    sncse, simcse = ("SNCSE-BERTbase", "sncse Table 2"), ("SimCSE-BERTbase", "sncse Table 2")
    assert where[sncse] < where[("mine", "ours")] < where[simcse]
    assert rows[1 + where[simcse]][-1] == "76.25 |" and rows[1 + where[sncse]][-1] == "78.97 |"
    # no paper on the backbone: said so
    tiny = with_published(sts.assign(backbone="tiny"))
    paths["published"].write_text(to_csv(tiny))
    paths["sts"].write_text(to_csv(frames["sts"].assign(backbone="tiny")))
    assert main(args) == 0
    assert "No paper prints numbers on tiny" in out.read_text()
