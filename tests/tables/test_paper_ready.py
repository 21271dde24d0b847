"""Tables a paper can \\input: bold only for the best trained method in the metric's direction,
every generated .tex compiles with pdflatex and fits a two-column page, large grids split."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from scipy.stats import spearmanr

from negcse.analysis.latex import case_comparison_table, case_study_table, rank_error_table
from negcse.analysis.run import GCSE_CASES
from negcse.evaluation.splits import TABLE2_DATASETS
from negcse.tables.build import Options
from negcse.tables.published import TASKS, TRANSFER_TASKS
from negcse.tables.render import MAX_ROWS, Column, collect, render_latex, render_markdown, summarize
from negcse.tables.specs import TABLES, table_spec
from negcse.workflow.config import method_baselines, method_papers

REPO = Path(__file__).resolve().parents[2]


def _write(tmp: Path, name: str, **values: object) -> Path:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(values))
    return path


# --- bold: the best trained method, in the direction the metric improves -------------------------


def test_bold_skips_reference_rows_and_follows_each_column_direction(tmp_path: Path) -> None:
    # score: higher is better; err: lower is better. The untrained backbone and the released
    # checkpoint hold the best values of both columns, and are never bold.
    rows = [
        ("a", "x", "1", 60.0, 5.0), ("a", "x", "2", 62.0, 7.0),  # score 61, err 6
        ("b", "x", "1", 70.0, 10.0), ("b", "x", "2", 70.0, 12.0),  # score 70, err 11
        ("untrained", "x", "", 90.0, 0.5),
        ("ckpt", "x", "0", 95.0, 0.1),
        ("a", "y", "1", 40.0, 20.0),  # alone on backbone y: its best in both columns
    ]  # fmt: skip
    evals = [
        _write(tmp_path, f"{m}-{b}-{s}", method=m, backbone=b, seed=s, score=v, err=e)
        for m, b, s, v, e in rows
    ]
    columns = (Column("score", "Score"), Column("err", "Err.", bold="min"))
    summary = summarize(collect(evals, ["score", "err"]), ["score", "err"], released=["ckpt"])
    assert dict(zip(summary["method"] + "/" + summary["backbone"], summary["trained"],
                    strict=True)) == {"a/x": True, "b/x": True, "untrained/x": False,
                                      "ckpt/x": False, "a/y": True}  # fmt: skip
    lines = render_latex(summary, columns, "cap", "tab:t").splitlines()
    assert r"a & x & 61.00$_{\pm 1.41}$ & \textbf{6.00}$_{\pm 1.41}$ \\" in lines
    assert r"b & x & \textbf{70.00}$_{\pm 0.00}$ & 11.00$_{\pm 1.41}$ \\" in lines
    assert r"untrained & x & 90.00 & 0.50 \\" in lines
    assert r"ckpt & x & 95.00 & 0.10 \\" in lines
    assert r"a & y & \textbf{40.00} & \textbf{20.00} \\" in lines
    md = render_markdown(summary, columns)
    assert "| b | x | **70.00 ± 0.00** | 11.00 ± 1.41 |" in md
    assert "| untrained | x | 90.00 | 0.50 |" in md and "| ckpt | x | 95.00 | 0.10 |" in md


def test_the_specs_state_where_lower_is_better() -> None:
    directions = {c.key: c.bold for c in table_spec("analysis").columns}
    assert directions == {
        "Soft-neg. peak": None, "Random peak": None, "Hard-pos. mean": "max",
        "Hard-pos. std": None, "FP": "min", "FN": "min",
    }  # fmt: skip
    assert {c.key: c.bold for c in table_spec("probe").columns if c.kind == "mean"} == {
        "paraphrase": "max", "negation": "min", "gap": "max"
    }


# --- every table, at the paper grid's size, compiles and fits the page ----------------------------


def _evaluation(method: str, backbone: str, seed: str, i: int) -> dict[str, object]:
    """One file with every key the grid-wide tables read but transfer's (sts, splits, probe,
    analysis), values spread so that the columns are as wide as real ones; each STS task's
    number and the average are those of its pairs, as in a file `negcse evaluate` writes."""
    value = 40.0 + (i * 7.31) % 50
    out: dict[str, object] = {"method": method, "backbone": backbone, "seed": seed}
    gold = [float(g % 6) for g in range(40)]  # the verdicts' pairs: a small test set per task
    cosine = [g * (i % 3) / 3 + ((i * 7 + j * 3) % 11) / 4 for j, g in enumerate(gold)]
    pairs = {"cosine": cosine, "gold": gold, "subset_sizes": [20, 20]}
    out["details"] = {t: {"pairs": pairs} for t in TASKS}
    out |= dict.fromkeys(TASKS, 100 * float(spearmanr(cosine, gold).statistic))
    out["avg"] = out[TASKS[0]]
    out |= {k: value for k in ("cont", "oppn", "cont_rule", "oppn_rule")}
    out["datasets"] = list(TABLE2_DATASETS)
    out |= {"paraphrase": 0.8, "negation": 0.9, "gap": -0.1}
    out |= {k: value / 100 for k in ("soft_negative_peak", "random_peak", "hard_positive_mean",
                                     "hard_positive_std")}  # fmt: skip
    out |= {"false_positive_rate": value / 2, "false_negative_rate": value / 3}
    return out


def _transfer(method: str, backbone: str, seed: str, i: int) -> dict[str, object]:
    """The transfer evaluation of the same run: every task's accuracy that of its record."""
    right = round((40.0 + (i * 7.31) % 50) * 10)  # the record: 1,000 test examples a task
    test = {"correct": "1" * right + "0" * (1000 - right)}  # negcse.evaluation.transfer's form
    out: dict[str, object] = {"method": method, "backbone": backbone, "seed": seed}
    out |= {k: right / 10 for k in (*TRANSFER_TASKS, "avg", "MRPC_f1")}
    out["details"] = {t: {"kfold": 10, "acc": right / 10, "test": test} for t in TRANSFER_TASKS}
    return out


def _transfer_twin(path: str) -> str:
    return path.removesuffix(".json") + ".transfer.json"


@pytest.fixture(scope="module")
def paper_grid(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Options]:
    """params.yaml's grid (56 methods, the longest names), two backbones, two seeds, the
    untrained backbones and the released checkpoint."""
    tmp = tmp_path_factory.mktemp("evals")
    config = yaml.safe_load((REPO / "params.yaml").read_text())
    runs = []
    for backbone in ("bert-base-uncased", "roberta-large"):
        for i, method in enumerate(config["grid"]["methods"]):
            for seed in ("1", "2"):
                runs.append((f"{method}-{backbone}-{seed}", method, backbone, seed, i + int(seed)))
        runs.append((f"u-{backbone}", "untrained", backbone, "", 3))
        runs.append((f"r-{backbone}", "gcse_checkpoint", backbone, "0", 5))
    files = []
    for name, *run in runs:  # an STS (and more) file and its transfer twin per run
        files.append(_write(tmp, name, **_evaluation(*run)))
        _write(tmp, f"{name}.transfer", **_transfer(*run))
    options = Options(
        method_baselines(config), tuple(config["released"]), papers=method_papers(config)
    )
    return [str(f) for f in files], options


def _compile(tex: str, tmp: Path) -> str:
    """pdflatex on ``tex`` in a two-column article; its log."""
    (tmp / "table.tex").write_text(tex)
    (tmp / "doc.tex").write_text(
        "\\documentclass[twocolumn]{article}\n\\usepackage[T1]{fontenc}\n"
        "\\usepackage{booktabs,graphicx}\n\\begin{document}\nText.\n\\input{table}\n"
        "\\end{document}\n"
    )
    run = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
        cwd=tmp, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    log = (tmp / "doc.log").read_text(errors="replace")
    assert run.returncode == 0, log[-3000:]
    return log


def _assert_fits(log: str) -> None:
    overfull = [float(x) for x in re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\)", log)]
    assert all(x <= 1.0 for x in overfull), f"wider than the text by {max(overfull)} pt"
    assert "Float too large for page" not in log


needs_pdflatex = pytest.mark.skipif(
    shutil.which("pdflatex") is None,
    reason="pdflatex not installed (Debian: texlive-latex-base texlive-latex-recommended)",
)


@needs_pdflatex
@pytest.mark.parametrize("name", [n for n, s in TABLES.items() if s.columns or n == "transfer"])
def test_each_table_of_the_paper_grid_compiles_within_the_page(
    name: str, paper_grid: tuple[list[str], Options], tmp_path: Path
) -> None:
    evals, options = paper_grid
    twins = [_transfer_twin(path) for path in evals]
    evals = {"transfer": twins, "verdicts": [*evals, *twins]}.get(name, evals)
    spec = table_spec(name)
    tex = spec.build(spec, evals, options).tex
    # 56 methods on two backbones: three families of at most MAX_ROWS per backbone; the
    # released checkpoints (one here) and the verdicts (the claims' methods: fewer than
    # MAX_ROWS) a table per backbone; the published rows beside ours, 30 rows a table:
    # BERT-base 60 + 121, RoBERTa-large 60 + 30
    expected = {"checkpoints": 2, "verdicts": 2, "published": 7 + 3}.get(name, 6)
    assert tex.count("\\begin{table*}") == expected
    _assert_fits(_compile(tex, tmp_path))


@needs_pdflatex
def test_mteb_tables_of_the_paper_grid_compile_within_the_page(
    paper_grid: tuple[list[str], Options], tmp_path: Path
) -> None:
    from negcse.data.mteb_tasks import GROUP_METRICS, GROUPS

    files = []
    for path in paper_grid[0]:
        result = json.loads(Path(path).read_text())
        for group, tasks in GROUPS.items():
            scores = dict.fromkeys(GROUP_METRICS[group], 0.4567)
            mteb = {k: result[k] for k in ("method", "backbone", "seed")}
            mteb |= {"group": group, "mteb_version": "1.0", "avg": scores}
            mteb |= {task.name: scores for task in tasks}
            files.append(str(_write(tmp_path, f"{Path(path).stem}-{group}", **mteb)))
    spec = table_spec("mteb")
    tex = spec.build(spec, files, paper_grid[1]).tex
    assert tex.count("\\begin{table*}") == 12  # 2 groups x 2 backbones x 3 families
    _assert_fits(_compile(tex, tmp_path))


@needs_pdflatex
def test_the_analysis_tables_compile_within_the_page(tmp_path: Path) -> None:
    methods = {
        f"simcse_san_tau0.0{i}_p0.15": {"pred_norm": [0.5] * len(GCSE_CASES),
                                        "false_positive_rate": 29.0, "false_negative_rate": 14.0}
        for i in range(14)
    }  # fmt: skip
    tex = case_comparison_table(GCSE_CASES, methods, 0.0, 5.0, "cap", "tab:cases")
    long = "A man with a hat is playing a guitar in front of a very large crowd of people . " * 2
    pair = {"sent1": long, "sent2": long, "gold": 4.2, "cosine": 0.5, "r_g": 1.0, "r_e": 900.5}
    tex += rank_error_table({"STS14": {"top": [pair] * 5}}, "cap", "tab:rank")
    case = {"label_range": [0.0, 5.0], "top_false_positives": [{**pair, "pred_norm": 0.9,
            "gold_norm": 0.2}] * 3, "top_false_negatives": []}  # fmt: skip
    tex += case_study_table(case, "cap", "tab:case")
    _assert_fits(_compile(tex, tmp_path))


def test_a_large_grid_splits_by_backbone_and_family(paper_grid: tuple[list[str], Options]) -> None:
    evals, options = paper_grid
    spec = table_spec("sts")
    tex = spec.build(spec, evals, options).tex
    parts = tex.split("\\begin{table*}")[1:]
    for i, part in enumerate(parts, start=1):
        rows = [line for line in part.splitlines() if line.endswith("\\\\") and " & " in line]
        trained = [r for r in rows[1:] if not r.startswith(("untrained", "gcse\\_checkpoint"))]
        assert 0 < len(trained) <= MAX_ROWS
        assert sum(r.startswith("untrained &") for r in rows) == 1  # the reference row, each part
        assert f"\\label{{tab:sts-{i}}}" in part and f"part {i} of 6" in part
    assert "(bert-base-uncased, part 1 of 6)" in parts[0] and "(roberta-large, part 6 of 6)" in parts[5]
