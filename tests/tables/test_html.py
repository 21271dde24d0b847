"""The HTML twin of each table (what `snakemake --report` shows inline) and the report's
declarations: every table rendered as a table, in its spec's category."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from negcse.tables.html import markdown_html
from negcse.tables.render import plain_caption
from negcse.tables.specs import TABLES

REPO = Path(__file__).resolve().parents[2]


def test_markdown_blocks_become_html_by_hand() -> None:
    md = (
        "## MTEB reranking\n\nMAP ×100 <of> A & B.\n\n1. a / b (3.00)\n2. c / d (0.50)\n\n"
        "| Method | Avg. |\n|---|---|\n| x_1 | **61.00 ± 1.41** |\n| untrained | 50.00 |\n"
    )
    page = markdown_html(md, "t<1>")
    assert "<title>t&lt;1&gt;</title>" in page
    body = page[page.index("<body>") + 7 : page.index("</body>")].strip().splitlines()
    assert body == [
        "<h2>MTEB reranking</h2>",
        "<p>MAP ×100 &lt;of&gt; A &amp; B.</p>",
        "<ol><li>a / b (3.00)</li><li>c / d (0.50)</li></ol>",
        "<table><thead><tr><th>Method</th><th>Avg.</th></tr></thead><tbody>"
        "<tr><td>x_1</td><td><b>61.00 ± 1.41</b></td></tr>"
        "<tr><td>untrained</td><td>50.00</td></tr></tbody></table>",
    ]
    with pytest.raises(ValueError, match="header and a separator"):
        markdown_html("| a |\n| b |\n", "t")


def test_plain_caption_by_hand() -> None:
    latex = r"Spearman $\times$100, mean $\pm$ std; $\Delta$ = ours $-$ paper, ``all'', App.~J, a\_b 5\%"
    assert plain_caption(latex) == 'Spearman ×100, mean ± std; Δ = ours − paper, "all", App. J, a_b 5%'


def test_the_table_command_writes_the_html_page(tmp_path: Path) -> None:
    from negcse.cli import main
    from negcse.tables.published import TASKS

    evals = []
    for name, method, seed, avg in (("a", "simcse", "1", 70.0), ("b", "simcse", "2", 72.0),
                                    ("u", "untrained", "", 90.0), ("r", "ckpt", "0", 95.0)):  # fmt: skip
        path = tmp_path / f"{name}.json"
        scores = dict.fromkeys(TASKS, 50.0)
        path.write_text(json.dumps({"method": method, "backbone": "b", "seed": seed, **scores,
                                    "avg": avg}))  # fmt: skip
        evals.append(str(path))
    out = tmp_path / "sts.html"
    args = ["table", "sts", "--evals", *evals, "--html", str(out), "--released", "ckpt"]
    assert main(args) == 0
    page = out.read_text()
    assert "<p>STS test sets, Spearman ×100 of cosine similarity" in page
    # simcse's avg (71 +- 1.41) in bold; the untrained 90 and the released checkpoint's 95 not
    assert "<td><b>71.00 ± 1.41</b></td>" in page
    assert "<td>90.00</td>" in page and "<td>95.00</td>" in page


@pytest.fixture(scope="module")
def workflow():
    """The smoke workflow as Snakemake parses it (nothing runs)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    with SnakemakeApi(OutputSettings()) as api:
        yield api.workflow(
            resource_settings=ResourceSettings(),
            config_settings=ConfigSettings(configfiles=[REPO / "tests/smoke/config.yaml"]),
            snakefile=REPO / "Snakefile",
            workdir=REPO,
        )._workflow


def _reported(workflow, rule: str) -> dict[str, object]:
    """Output name -> its report() object, for the outputs that have one."""
    outputs = workflow.get_rule(rule).output
    return {name: outputs[i].flags["report"] for i, name in enumerate(outputs.keys())
            if "report" in outputs[i].flags}  # fmt: skip


def test_the_report_shows_each_table_as_html_in_its_category(workflow) -> None:
    from snakemake.iocontainers import Wildcards

    table = _reported(workflow, "table")
    assert list(table) == ["html"]  # the .tex, .csv, .md are downloads beside it, not entries
    for name, spec in TABLES.items():
        if spec.per_backbone:
            continue
        wildcards = Wildcards(fromdict={"table": name})
        assert table["html"].category(wildcards) == spec.category
        assert table["html"].subcategory(wildcards) == spec.subcategory
    assert {TABLES[n].category for n in ("splits", "probe")} == {"OssCSE splits and probe"}
    case = _reported(workflow, "case_study_table")
    assert list(case) == ["html"] and case["html"].category == TABLES["case_study"].category
    assert case["html"].subcategory == TABLES["case_study"].subcategory
    assert list(_reported(workflow, "analysis_figure")) == ["png"]


def test_the_case_study_has_csv_markdown_and_html_twins(tmp_path: Path) -> None:
    from negcse.analysis.run import GCSE_CASES
    from negcse.cli import main

    evals = []
    for seed, first, fp in (("1", 0.5, 20.0), ("2", 0.7, 30.0)):
        cases = [{"pred_norm": first}] + [{"pred_norm": 0.2}] * (len(GCSE_CASES) - 1)
        case = {"gcse_cases": cases, "false_positive_rate": fp, "false_negative_rate": 10.0,
                "label_range": [0.0, 5.0]}  # fmt: skip
        path = tmp_path / f"m{seed}.json"
        path.write_text(json.dumps({"method": "m_1", "backbone": "b", "seed": seed,
                                    "case_study": case}))  # fmt: skip
        evals.append(str(path))
    out = {ext: tmp_path / f"case.{ext}" for ext in ("tex", "csv", "md", "html")}
    args = [f"--{ext}={path}" for ext, path in out.items()]
    assert main(["table", "case_study", "--evals", *evals, *args]) == 0
    # pair 1: mean normalized 0.6 -> 3.00 on 0-5, gold 3.00: error 0; pair 2: 0.2 -> 1.00, gold
    # 0.50: error 0.5; FP the mean of 20 and 30
    csv = out["csv"].read_text().splitlines()
    assert csv[0].startswith("method,backbone,pair1_score,pair1_error,pair2_score,pair2_error,")
    assert csv[0].endswith(",false_positive_rate,false_negative_rate")
    assert csv[1].startswith("m_1,b,3.0000000000,0.0000000000,1.0000000000,0.5000000000,")
    assert csv[1].endswith(",25.0000000000,10.0000000000")
    md = out["md"].read_text()
    assert f"1. {GCSE_CASES[0][0]} / {GCSE_CASES[0][1]} (3.00)" in md
    assert "| m_1 | 3.00 (0.000) | 1.00 (0.500) | " in md and md.endswith(" | 25.0 / 10.0 |\n")
    assert "App. J" in md and "\\" not in md
    assert "<td>3.00 (0.000)</td>" in out["html"].read_text()
    assert r"m\_1 & 3.00 (0.000) & 1.00 (0.500) & " in out["tex"].read_text()
