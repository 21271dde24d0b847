"""One page per paper (negcse.tables.reports, `negcse paper-report`) from the tables' CSV twins."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from negcse.cli import main
from negcse.tables.build import Options
from negcse.tables.render import to_csv
from negcse.tables.reports import grid_papers, method_paper, page_methods
from negcse.tables.verdicts import checkpoint_frame, verdict_frame

SMOKE = ["simcse", "una", "una_random_select", "sncse", "sncse_pl", "osscse", "simcse_san",
         "sncse_san", "una_baseline", "simcse_dropout15"]  # fmt: skip
BASELINES = {"una": "una_baseline", "una_random_select": "una", "sncse": "simcse",
             "sncse_pl": "sncse", "osscse": "simcse", "simcse_san": "simcse_dropout15",
             "sncse_san": "sncse", "una_baseline": "simcse", "simcse_dropout15": "simcse"}  # fmt: skip


def test_methods_map_to_their_papers() -> None:
    assert [method_paper(m) for m in SMOKE] == [
        None, "una", "una", "sncse", "sncse", "osscse", "san-hince", "san-hince", "una", None
    ]  # fmt: skip
    assert method_paper("gcse_wo_stage2") == "gcse" and method_paper("rlrd_san") == "san-hince"
    assert grid_papers(SMOKE) == ["sncse", "una", "san-hince", "osscse"]  # PAPERS order
    # SAN's page: its two methods and their baselines, in grid order
    assert page_methods("san-hince", SMOKE, BASELINES) == [
        "sncse", "simcse_san", "sncse_san", "simcse_dropout15"
    ]  # fmt: skip


@pytest.fixture
def tables(tmp_path: Path) -> dict[str, Path]:
    from test_verdicts import _write

    evals = [_write(tmp_path, m, s, 0.5 if m == "sncse" else 1.5, "tiny")
             for m in SMOKE for s in (1, 2, 3)]  # fmt: skip
    evals += [_write(tmp_path, "sncse_pl", s, 0.8, "bert-base-uncased") for s in (1, 2, 3)]
    evals += [_write(tmp_path, "sncse", s, 0.5, "bert-base-uncased") for s in (1, 2, 3)]
    evals.append(_write(tmp_path, "simcse_checkpoint", 0, 1.0, "tiny"))
    sts = pd.DataFrame(
        {"method": SMOKE, "backbone": "tiny", "avg_mean": [60.0 + i for i in range(len(SMOKE))],
         "avg_std": 0.5, "seeds": 3, "paper": float("nan"), "diff": float("nan")}
    )  # fmt: skip
    frames = {
        "sts": sts,
        "verdicts": verdict_frame(evals, Options(BASELINES)),
        "checkpoints": checkpoint_frame(evals),
    }
    paths = {}
    for name, frame in frames.items():
        paths[name] = tmp_path / f"{name}.csv"
        paths[name].write_text(to_csv(frame))
    return paths


def _args(tables: dict[str, Path], out: Path, *more: str) -> list[str]:
    figure = out.parent.parent / "figures" / "tiny" / "soft_negatives" / "simcse+sncse.png"
    args = ["paper-report", "--paper", "sncse", "--methods", *SMOKE, "--baselines"]
    args += [f"{m}={b}" for m, b in BASELINES.items()]
    args += ["--sts", str(tables["sts"]), "--verdicts", str(tables["verdicts"])]
    args += ["--checkpoints", str(tables["checkpoints"]), "--figures", str(figure)]
    return [*args, "--out", str(out), "--html", str(out.with_suffix(".html")), *more]


def test_page_of_a_paper(tables: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "reports" / "sncse.md"
    forest = tmp_path / "figures" / "forest" / "sncse.png"
    assert main(_args(tables, out, "--forest", str(forest))) == 0
    page = out.read_text()
    claims = page.split("## Claims")[1].split("## STS average")[0]
    # the paper's claims, on its backbone a verdict, on ours a direction check
    lines = [line for line in claims.splitlines() if line.startswith("| sncse")]
    assert [line.split(" | ")[:2] for line in lines] == [
        ["| sncse", "tiny"], ["| sncse_pl", "tiny"], ["| sncse_pl", "bert-base-uncased"]
    ]  # fmt: skip
    assert "direction check" in lines[0] and "| reproduced |" in lines[2]
    assert "una" not in claims and "osscse" not in claims  # other papers' rows
    assert "(../figures/forest/sncse.png)" in claims
    assert forest.is_file() and forest.with_suffix(".pdf").is_file()
    sts = page.split("## STS average")[1].split("## Released")[0]
    # the paper's methods and the baseline (simcse) they are compared with, in grid order
    assert [line.split(" | ")[0] for line in sts.splitlines() if line.startswith("| ")][1:] == [
        "| simcse", "| sncse", "| sncse_pl"
    ]  # fmt: skip
    assert "| simcse | tiny | 3 | 60.00 ± 0.50 | -- | -- |" in sts
    released = page.split("## Released checkpoints")[1]
    assert "| simcse_checkpoint | tiny |" in released  # SimCSE's, our simcse is on the page
    assert "(../figures/tiny/soft_negatives/simcse+sncse.png)" in page
    assert page.startswith("# SNCSE") and "Verdicts after Holm's correction: " in page
    assert "<h2>SNCSE" in out.with_suffix(".html").read_text()


def test_a_reduced_scale_page_says_so_first(tables: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "reports" / "sncse.md"
    note = "Reduced-scale run (40 training steps a run): it checks the plumbing, not the papers."
    assert main(_args(tables, out, "--scale-note", note)) == 0
    assert out.read_text().splitlines()[0] == f"**{note}**"
    assert note in out.with_suffix(".html").read_text().split("<h2>")[0]


def test_unknown_paper_and_bad_csv(tables: dict[str, Path], tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    common = ["--methods", "simcse", "--sts", str(tables["sts"]), "--checkpoints",
              str(tables["checkpoints"]), "--out", str(tmp_path / "x.md")]  # fmt: skip
    assert main(["paper-report", "--paper", "simcse", "--verdicts", str(tables["sts"]),
                 *common]) == 1  # fmt: skip
    assert "--paper 'simcse': known papers sncse, una" in capsys.readouterr().err
    assert main(["paper-report", "--paper", "una", "--verdicts", str(tables["sts"]),
                 *common]) == 1  # fmt: skip
    assert "sts.csv: no column paper_name, comparison, verdict, vs_baseline_ci" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "x.md").exists()
