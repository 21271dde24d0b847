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
PAPERS = method_papers(workflow_config(REPO))


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
    args += ["--papers", *(f"{m}={p}" for m, p in PAPERS.items())]
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
    lines = [line for line in claims.splitlines() if line.startswith("| SNCSE")]
    assert [line.split(" | ")[:2] for line in lines] == [
        ["| SNCSE", "tiny"], ["| SNCSE (PL)", "tiny"], ["| SNCSE (PL)", "BERT-base"]
    ]  # fmt: skip
    assert "direction check" in lines[0] and "| reproduced |" in lines[2]
    # the words of the table, defined on the page
    for words in ("*direction check: inconclusive* (the interval holds 0)",
                  "*Seeds* n/m: our runs of the method / of its baseline",
                  "*95% PI (one run)*, the interval of one more run of ours"):  # fmt: skip
        assert words in claims, words
    assert "UNA" not in claims and "OssCSE" not in claims  # other papers' rows
    assert "(../figures/forest/sncse.png)" in claims
    assert forest.is_file() and forest.with_suffix(".pdf").is_file()
    sts = page.split("## STS average")[1].split("## Released")[0]
    # the paper's methods and the baseline (simcse) they are compared with: SimCSE's family
    # first, then SNCSE's, grid order within
    assert [line.split(" | ")[0] for line in sts.splitlines() if line.startswith("| ")][1:] == [
        "| SimCSE", "| SNCSE", "| SNCSE (PL)"
    ]  # fmt: skip
    # one backbone, named above the table; Paper and Δ empty in every row: left out
    assert "| SimCSE | 3 | 60.00 ± 0.50 |" in sts and "Backbone: tiny." in sts
    released = page.split("## Released checkpoints")[1]
    assert "| SimCSE (released) |" in released  # SimCSE's, our simcse is on the page
    figures = page.split("## Figures")[1]
    assert "### Negations and random pairs: cosine similarity (SNCSE Figure 4)" in figures
    assert "![SimCSE + SNCSE, tiny](../figures/tiny/soft_negatives/simcse+sncse.png)" in figures
    assert page.startswith("# SNCSE") and "Verdicts after the correction over the paper's family: " in page
    html = out.with_suffix(".html").read_text()
    assert "<h1>SNCSE" in html
    assert '<img src="../figures/tiny/soft_negatives/simcse+sncse.png" alt="SimCSE + SNCSE, tiny"' in html


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
                 *common]) == 2  # fmt: skip
    assert "--paper 'simcse': known papers sncse, una" in capsys.readouterr().err
    assert main(["paper-report", "--paper", "una", "--verdicts", str(tables["sts"]),
                 *common]) == 2  # fmt: skip
    assert "sts.csv: no column paper_name, comparison, verdict, vs_baseline_ci" in (
        capsys.readouterr().err
    )
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
    assert page.startswith("# mine") and "against its baseline SimCSE" in page
    assert "no paper here" not in page  # SimCSE has a paper; none of the suite's tests `mine`
    assert "No paper's claims about it are tested here" in page
    claims = page.split("## Against its baseline")[1].split("## STS average")[0]
    assert "| mine | STS avg. | SimCSE | 2/2 |" in claims  # one backbone: in the note above
    assert "*Seeds* n/m" in claims and "*direction check: as claimed*" in claims  # the legend
    sts_part = page.split("## STS average")[1].split("## Beside")[0]
    assert [r.split(" | ")[0] for r in sts_part.splitlines() if r.startswith("| ")][1:] == [
        "| SimCSE", "| mine"
    ]  # fmt: skip
    beside = page.split("## Beside the published rows: BERT-base")[1]
    rows = [r.split(" | ") for r in beside.splitlines() if r.startswith("| ") and "---" not in r]
    assert len(rows) - 1 == 121 + 2  # every published BERT-base row, and ours, by average
    where = {(r[0].removeprefix("| "), r[1]): i for i, r in enumerate(rows[1:])}
    sncse, simcse = ("SNCSE-BERTbase", "sncse Table 2"), ("SimCSE-BERTbase", "sncse Table 2")
    assert where[sncse] < where[("mine", "ours")] < where[simcse]
    assert rows[1 + where[simcse]][-1] == "76.25 |" and rows[1 + where[sncse]][-1] == "78.97 |"
    # no paper on the backbone: said so
    tiny = with_published(sts.assign(backbone="tiny"))
    paths["published"].write_text(to_csv(tiny))
    paths["sts"].write_text(to_csv(frames["sts"].assign(backbone="tiny")))
    assert main(args) == 0
    assert "No paper prints numbers on tiny" in out.read_text()


def test_page_of_a_paper_shows_its_rows_per_seed_scores(
    tables: dict[str, Path], tmp_path: Path
) -> None:
    """--seed-strip: the STS CSV's avg_seed<n> columns of the paper's methods and their
    baselines, drawn and linked at the end of the page."""
    from negcse.commands.plot_seeds import seed_rows

    sts = pd.read_csv(tables["sts"])
    for seed in (1, 2, 3):
        sts[f"avg_seed{seed}"] = sts["avg_mean"] + (seed - 2) * 0.5
    tables["sts"].write_text(to_csv(sts))
    out = tmp_path / "reports" / "sncse.md"
    strip = tmp_path / "figures" / "seeds" / "sncse.png"
    assert main(_args(tables, out, "--seed-strip", str(strip))) == 0
    assert out.read_text().endswith("![Per-seed STS averages](../figures/seeds/sncse.png)\n")
    assert strip.is_file() and strip.with_suffix(".pdf").is_file()
    labels, values = seed_rows(sts[sts["method"].isin(["simcse", "sncse"])], "avg", 1)
    assert values == [[59.5, 60.0, 60.5], [62.5, 63.0, 63.5]] and len(labels) == 2


def test_names_holding_a_comma_are_listed_apart() -> None:
    from negcse.tables.reports import runs_sentence

    assert runs_sentence(["sncse", "sncse_pl"]) == "SNCSE, SNCSE (PL)"
    assert runs_sentence(["una", "una_random_select", "una_random_replace"]) == (
        "UNA; UNA, random selection; UNA, random replacement"
    )



def test_a_figure_is_captioned_with_every_method_it_draws(tmp_path: Path) -> None:
    """The smoke grid's UNA figure, named for the roots of its trees
    (una_baseline+simcse_dropout15), names every method drawn in it: SimCSE+SAN, under SimCSE
    (dropout 0.15), too."""
    import yaml

    from negcse.tables.reports import figure_groups, figure_section
    from negcse.workflow.config import method_baselines, project_config

    repo = Path(__file__).resolve().parents[2]
    methods = yaml.safe_load((repo / "tests/smoke/config.yaml").read_text())["grid"]["methods"]
    groups = figure_groups(methods, method_baselines(project_config(repo, check=False)))
    path = str(tmp_path / "figures/tiny/training_curves/una_baseline+simcse_dropout15.png")
    section = "\n".join(figure_section([path], str(tmp_path / "reports"), groups))
    caption = ("*SimCSE; SimCSE (UNA's run); UNA; UNA, random selection; UNA, random "
               "replacement; UNA, random sel. + repl.; SimCSE (dropout 0.15); SimCSE+SAN (tiny)*")
    assert caption in section, section
