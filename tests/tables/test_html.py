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


def test_markdown_becomes_html_by_hand() -> None:
    md = (
        "## MTEB reranking\n\nMAP ×100 <of> A & B, `code`.\n\n1. a / b (3.00)\n2. c / d (0.50)\n\n"
        "| Method | Avg. |\n|---|---|\n| x_1 | **61.00 ± 1.41** |\n| untrained | 50.00 |\n\n"
        "![a figure](../figures/b/k/g.png)\n\n<script>alert(1)</script>\n"
    )
    page = markdown_html(md, "t<1>")
    assert "<title>t&lt;1&gt;</title>" in page
    body = page[page.index("<body>") + 7 : page.index("</body>")].replace("\n", "")
    assert body == (
        "<h2>MTEB reranking</h2>"
        "<p>MAP ×100 &lt;of&gt; A &amp; B, <code>code</code>.</p>"
        "<ol><li>a / b (3.00)</li><li>c / d (0.50)</li></ol>"
        "<table><thead><tr><th>Method</th><th>Avg.</th></tr></thead><tbody>"
        "<tr><td>x_1</td><td><strong>61.00 ± 1.41</strong></td></tr>"
        "<tr><td>untrained</td><td>50.00</td></tr></tbody></table>"
        '<p><img src="../figures/b/k/g.png" alt="a figure" /></p>'
        "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"  # raw HTML is text, never passed through
    )


def test_plain_caption_by_hand() -> None:
    latex = r"Spearman $\times$100, mean $\pm$ std; $\Delta$ = ours $-$ paper, ``all'', App.~J, a\_b 5\%"
    assert plain_caption(latex) == 'Spearman ×100, mean ± std; Δ = ours − paper, "all", App. J, a_b 5%'
    latex = r"$\Delta_{\mathrm{paper}}$ and $\Delta$~base, gold $\geq$ 4, \$5"
    assert plain_caption(latex) == "Δ paper and Δ base, gold ≥ 4, $5"


def test_every_caption_reads_as_plain_text() -> None:
    """No LaTeX is left in any spec's caption once made plain (what Markdown and HTML show)."""
    for spec in TABLES.values():
        text = plain_caption(spec.caption)
        assert "\\" not in text and "$" not in text and "``" not in text, (spec.name, text)
    from negcse.tables.build import MTEB_CAPTIONS

    for caption in MTEB_CAPTIONS.values():
        assert "\\" not in plain_caption(caption) and "$" not in plain_caption(caption)


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
    right = '<td style="text-align:right">'  # numbers right-aligned, names left
    assert f"{right}<strong>71.00 ± 1.41</strong></td>" in page
    assert f"{right}90.00</td>" in page and f"{right}95.00</td>" in page
    assert '<td style="text-align:left">SimCSE</td>' in page
    # the same caption as the LaTeX table's, with what the layout adds (one backbone, the
    # empty columns left out); rows by display name, the reference rows last
    md = markdown_of(out)
    assert "Backbone: b. Left out, empty in every row: Paper, Δ." in page
    assert [line.split(" | ")[0] for line in md if line.startswith("| ")] == [
        "| Method", "| SimCSE", "| Untrained", "| ckpt"
    ]


def markdown_of(page: Path) -> list[str]:
    """The table rows of an HTML table page, back as Markdown-like lines (first cells)."""
    import re

    rows = re.findall(r"<tr>(.*?)</tr>", page.read_text(), re.S)
    return ["| " + " | ".join(re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r)) for r in rows]


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
    assert csv[1].startswith("m_1,b,3.0,0.0,1.0,0.5,")  # every float as stored
    assert csv[1].endswith(",25.0,10.0")
    md = out["md"].read_text()
    assert f"(1) {GCSE_CASES[0][0]} / {GCSE_CASES[0][1]} (3.00); (2) " in md  # in the caption
    assert "| m_1 | 3.00 (0.000) | 1.00 (0.500) | " in md and md.endswith(" | 25.0 / 10.0 |\n")
    assert "App. J" in md and "\\" not in md and "Backbone: b." in md
    assert '<td style="text-align:right">3.00 (0.000)</td>' in out["html"].read_text()
    assert r"m\_1 & 3.00 (0.000) & 1.00 (0.500) & " in out["tex"].read_text()


def test_the_report_lists_only_what_git_holds(workflow) -> None:
    """`snakemake --report` needs every file it lists: in a fresh clone only git's are there
    (the per-model analyses live in the DVC cache), so every reported output is one git keeps."""
    import re
    import subprocess

    reported = [
        re.sub(r"\{[^}]*\}", "x", str(out))
        for rule in workflow.rules
        for out in rule.output
        if "report" in out.flags
    ]
    assert any("figures" in p for p in reported) and any("reports" in p for p in reported)
    ignored = subprocess.run(["git", "check-ignore", *reported], cwd=REPO, capture_output=True,
                             text=True).stdout.split()  # fmt: skip
    assert not ignored, f"reported outputs git ignores: {ignored}"
