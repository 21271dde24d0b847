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
                 *common]) == 2  # fmt: skip
    assert "--paper 'simcse': known papers sncse, una" in capsys.readouterr().err
    assert main(["paper-report", "--paper", "una", "--verdicts", str(tables["sts"]),
                 *common]) == 2  # fmt: skip
    assert "sts.csv: no column verdict, baseline, vs_baseline," in capsys.readouterr().err
    assert not (tmp_path / "x.md").exists()
