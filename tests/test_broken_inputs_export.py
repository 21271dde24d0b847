"""The broken-input matrix of the model's travelling surfaces: ``negcse export``, the model card,
a model's record (``negcse.json``) as export and ``negcse evaluate`` read it, and the tags and
names that reach a table. Each case runs ``python -m negcse`` in this process and must exit 2
with one error line naming the file and key (or the argument), no traceback, and leave nothing
written; the escaping cases must give the right output instead (exit 0, the text inert).

The inputs are those of tests/test_broken_inputs.py (a copy of the mirror's splade-tiny as the
trained model, its record ``META``, STS and transfer evaluations tagged as its own)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from huggingface_hub import ModelCard

from negcse.tables.render import Column, render_latex, render_markdown
from negcse.text import names
from negcse.text.latex import latex_escape
from negcse.text.markup import markdown_escape
from negcse.workflow.config import ConfigError, check_config, project_config
from test_broken_inputs import META, SENTENCES, _json, _lines, _model, _sts_file, _transfer_file
from test_broken_inputs import run_cli as _run_cli

pytestmark = pytest.mark.mirror
REPO = Path(__file__).resolve().parents[1]
#: a backbone tag that would add a fabricated verdict row to a Markdown table, unescaped
FORGED = "tiny |\n| SNCSE | STS avg. | SimCSE | 3/3 | +9.99 | [+9.00, +10.00] | reproduced"


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    return _run_cli([str(a) for a in args], capsys)


def error_line(code: int, err: str) -> str:
    """The one error line of a user error (exit 2, no traceback)."""
    assert "Traceback" not in err, err[-3000:]
    assert code == 2, (code, err[-3000:])
    errors = [line for line in err.splitlines() if "error" in line.lower()]
    assert len(errors) == 1, err[-3000:]
    return errors[0]


def files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


@pytest.fixture
def model(tmp_path: Path, mirror: Path) -> Path:
    """A trained model as the workflow lays it out, with its STS and transfer files beside it."""
    folder = _model(tmp_path / "results/models/simcse/tiny/seed1", mirror, META)
    for name, make in (("sts", _sts_file), ("transfer", _transfer_file)):
        path = tmp_path / f"results/eval/{name}/simcse/tiny/seed1.json"
        path.parent.mkdir(parents=True)
        make(path, "simcse", 1)
    return folder


def export(model: Path, to: Path, *more: Any) -> list[Any]:
    return ["export", model, "--to", to, *more]


def evaluate(model: Path, tmp_path: Path, *more: Any) -> list[Any]:
    """``negcse evaluate`` of ``model``'s analysis, written under ``tmp_path/out``."""
    sentences = _lines(tmp_path / "s.txt", SENTENCES)
    negations = _lines(tmp_path / "n.txt", [s.upper() for s in SENTENCES])
    return ["evaluate", "--model", model, "--only", "analysis", "--analysis-out",
            tmp_path / "out/a.json", "--analysis-sentences", sentences, "--analysis-negations",
            negations, "--threads", "1", *more]  # fmt: skip


# -- the model's record (negcse.json): one validator, for export, the card and evaluate ---------


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"seed": None}, "seed"),
        ({"backbone": None}, "backbone"),
        ({"best_stsb_dev": "abc"}, "best_stsb_dev"),
        ({"train": "fast"}, "train"),
        ({"params": [0.05]}, "params"),
        ({"seed": [1]}, "seed"),
        ({"backbone": "tiny|\n## Licence"}, "backbone"),
        ({"seed": 1.0}, "seed"),
        ({"best_stsb_dev": 150.0}, "best_stsb_dev"),
        ({"best_step": 9, "best_stsb_dev": 80.0}, "best_step"),
    ],
    ids=["no-seed", "no-backbone", "score-text", "train-text", "params-list", "seed-list",
         "backbone-markup", "seed-float", "score-out-of-range", "best-after-last-step"],
)  # fmt: skip
def test_export_refuses_a_bad_record(
    change: dict[str, Any], key: str, model: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    meta = {k: v for k, v in {**META, **change}.items() if v is not None}
    _json(model / "negcse.json", meta)
    line = error_line(*run_cli(export(model, tmp_path / "out/exported"), capsys))
    assert str(model / "negcse.json") in line and f"{key}" in line, line
    assert files(tmp_path / "out") == []


def test_a_record_with_a_key_twice_is_refused(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """JSON readers keep the last of two values without a word: `"seed": 1, "seed": 2` is
    refused (every JSON file negcse reads), not read as seed 2."""
    text = json.dumps(META)
    (model / "negcse.json").write_text(text.replace('"seed": 1', '"seed": 1, "seed": 2'))
    line = error_line(*run_cli(export(model, tmp_path / "out/exported"), capsys))
    assert str(model / "negcse.json") in line and "key 'seed' written twice" in line, line
    assert files(tmp_path / "out") == []


def test_evaluate_reads_the_record_through_the_same_validator(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A record's wrong type stops ``negcse evaluate`` before the model loads (the table notes
    ``llm`` and ``substitute`` come from it)."""
    _json(model / "negcse.json", {**META, "llm": "smollm2"})
    line = error_line(*run_cli(evaluate(model, tmp_path), capsys))
    assert str(model / "negcse.json") in line and "llm" in line, line
    assert files(tmp_path / "out") == []


# -- export's folders ------------------------------------------------------------------------------


def test_export_into_the_model_folder_is_refused(
    model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The model (a DVC output) gains nothing: no export folder and no temporary copy."""
    before = files(model)
    line = error_line(*run_cli(export(model, model / "export"), capsys))
    assert "--to" in line and str(model / "export") in line, line
    assert files(model) == before
    error_line(*run_cli(export(model, model / "a" / ".." / "b"), capsys))
    assert files(model) == before


@pytest.mark.parametrize("where", ["dangling-link", "under-a-file"])
def test_export_to_a_path_that_is_no_new_folder_is_refused(
    where: str, model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A link (to nothing) is not a new folder, and a file is no parent: one line naming --to,
    before anything is written (the link's target is not created)."""
    (tmp_path / "out").mkdir()
    if where == "dangling-link":
        to = tmp_path / "out/x"
        to.symlink_to(tmp_path / "nowhere")
    else:
        (tmp_path / "out/f").write_text("a file\n")
        to = tmp_path / "out/f/x"
    line = error_line(*run_cli(export(model, to), capsys))
    assert f"--to {to}" in line and ("exists" in line or "out/f is not a folder" in line), line
    assert files(tmp_path / "out") == (["x"] if where == "dangling-link" else ["f"])
    assert not (tmp_path / "nowhere").exists()


def test_export_of_a_missing_folder_names_dvc_pull(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "results/models/simcse/tiny/seed9"
    line = error_line(*run_cli(export(missing, tmp_path / "out/exported"), capsys))
    assert str(missing) in line and f"dvc pull {missing}" in line, line
    assert files(tmp_path / "out") == []


# -- export's evaluation files -----------------------------------------------------------------------


def test_sts_given_a_transfer_file_is_refused(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    transfer = tmp_path / "results/eval/transfer/simcse/tiny/seed1.json"
    line = error_line(*run_cli(export(model, tmp_path / "out/x", "--sts", transfer), capsys))
    assert str(transfer) in line and "--sts" in line and "a transfer evaluation" in line, line
    assert files(tmp_path / "out") == []


def test_transfer_given_an_sts_file_is_refused(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sts = tmp_path / "results/eval/sts/simcse/tiny/seed1.json"
    line = error_line(*run_cli(export(model, tmp_path / "out/x", "--transfer", sts), capsys))
    assert str(sts) in line and "--transfer" in line and "an STS evaluation" in line, line
    assert files(tmp_path / "out") == []


def _untagged(path: Path, model: str) -> Path:
    result = json.loads(_sts_file(path, "simcse", 2).read_text())
    for key in ("method", "backbone", "seed"):
        del result[key]
    return _json(path, {**result, "model": model})


def test_a_transfer_fold_count_that_is_not_one_is_refused(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The card names the fold count of each task without a split: a count is an integer >= 2
    (text made a "ten-fold" card line, text beside a number a traceback)."""
    path = tmp_path / "results/eval/transfer/simcse/tiny/seed1.json"
    result = json.loads(path.read_text())
    result["details"]["CR"]["kfold"], result["details"]["TREC"]["kfold"] = "ten", 10
    _json(path, result)
    line = error_line(*run_cli(export(model, tmp_path / "out/x"), capsys))
    assert str(path) in line and "details.CR.kfold" in line and "'ten'" in line, line
    assert files(tmp_path / "out") == []


def test_an_untagged_evaluation_of_another_model_is_refused(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = _untagged(tmp_path / "other.json", "results/models/sncse/tiny/seed2")
    line = error_line(*run_cli(export(model, tmp_path / "out/x", "--sts", other), capsys))
    assert str(other) in line and "method, backbone, seed" in line, line
    assert files(tmp_path / "out") == []


def test_an_untagged_evaluation_of_this_model_folder_is_its_own(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without tags, the model folder the evaluation records identifies it: this one's is
    accepted, and its numbers are the card's."""
    own = _untagged(tmp_path / "own.json", str(model))
    code, err = run_cli(export(model, tmp_path / "out/x", "--sts", own), capsys)
    assert code == 0, err[-3000:]
    card = ModelCard.load(tmp_path / "out/x/README.md")
    scores = {r.dataset_name: r.metric_value for r in card.data.eval_results}
    assert scores["STS12 (SentEval protocol)"] == round(json.loads(own.read_text())["STS12"], 2)


def test_a_bad_hub_repo_id_is_refused_before_anything_is_written(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for repo in ("bad repo id!!", "", "a/b/c"):
        args = export(model, tmp_path / "out/x", "--push-to-hub", repo)
        line = error_line(*run_cli(args, capsys))
        assert f"--push-to-hub {repo!r}" in line, line
        assert files(tmp_path / "out") == []


# -- a config.json that disagrees with the weights ---------------------------------------------


def _wrong_hidden_size(model: Path) -> None:
    config = json.loads((model / "config.json").read_text())
    _json(model / "config.json", {**config, "hidden_size": 2 * config["hidden_size"]})


def test_export_of_a_config_that_disagrees_with_the_weights(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _wrong_hidden_size(model)
    line = error_line(*run_cli(export(model, tmp_path / "out/x"), capsys))
    assert str(model) in line and "config.json does not match its weights" in line, line
    assert files(tmp_path / "out") == []


def test_evaluate_of_a_config_that_disagrees_with_the_weights(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _wrong_hidden_size(model)
    line = error_line(*run_cli(evaluate(model, tmp_path), capsys))
    assert str(model) in line and "config.json does not match its weights" in line, line
    assert files(tmp_path / "out") == []


# -- escaping: a card field or a table cell is inert text -------------------------------------------

HOSTILE_CORPUS = "wiki.txt`\n\n<script>alert(1)</script>\n\n## Licence: MIT, do anything\n\n"


def test_the_card_escapes_every_field(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    meta = {**META, "corpus_file": HOSTILE_CORPUS, "params": {"x|y": "`<b>`\n## Z"},
            "generators": {"g": "<img src=x>"}}  # fmt: skip
    _json(model / "negcse.json", meta)
    code, err = run_cli(export(model, tmp_path / "out/x"), capsys)
    assert code == 0, err[-3000:]
    text = (tmp_path / "out/x/README.md").read_text()
    assert "<script>" not in text and "<img" not in text and "<b>" not in text
    headings = re.findall(r"^#+ .*$", text, re.M)
    assert headings.count("## Licence") == 1 and not [h for h in headings if "MIT" in h]
    assert not re.search(r"^## Z", text, re.M)
    # the text is still there, as text: one line, its markup escaped
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    (row,) = [line for line in text.splitlines() if line.startswith("| x")]
    assert row.startswith("| x\\|y | ") and "&lt;b&gt;" in row and row.count(" | ") == 1, row
    assert ModelCard.load(tmp_path / "out/x/README.md").data.license == "other"


def test_no_field_of_the_card_makes_a_link_or_leaves_a_code_span(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A backtick closes a code span whatever escapes it (no backslash escape works inside one):
    a field outside the names is text, and ``[text](url)`` / ``![alt](url)`` stay text."""
    from markdown_it import MarkdownIt

    link = "x` [Licence: MIT, do anything](https://evil.example) ![t](https://evil.example/p) `y"
    meta = {**META, "corpus_file": link, "params": {"[k](https://evil.example)": link}}
    _json(model / "negcse.json", meta)
    code, err = run_cli(export(model, tmp_path / "out/x"), capsys)
    assert code == 0, err[-3000:]
    text = (tmp_path / "out/x/README.md").read_text()
    html = MarkdownIt("commonmark").enable("table").render(text.split("---", 2)[2])
    assert "<a " not in html and "<img" not in html, html
    assert html.count("Licence: MIT, do anything") == 2  # the text is still there, as text
    assert markdown_escape("[a](u) ![b](v)") == "[a]\\(u) ![b]\\(v)"


def test_no_text_shows_in_another_order_than_it_reads() -> None:
    """A bidirectional override ("good<U+202E>txt.exe" shows as "goodexe.txt") is a space, in
    Markdown and LaTeX alike."""
    assert markdown_escape("good\u202etxt.exe \u2067x\u2069") == "good txt.exe  x "
    assert latex_escape("good\u202etxt") == "good txt"


def test_markdown_escape_keeps_text_on_one_line_and_inert() -> None:
    assert markdown_escape("a|b\nc\r\nd\u2028e") == "a\\|b c  d e"
    assert markdown_escape("<script>&amp;") == "&lt;script&gt;&amp;amp;"
    assert markdown_escape("`x` \\") == "\\`x\\` \\\\"
    assert markdown_escape("SNCSE (PL) [+0.10, +0.20] sncse_pl ±") == (
        "SNCSE (PL) [+0.10, +0.20] sncse_pl ±"
    )


def test_a_markdown_table_holds_its_rows_whatever_a_cell_holds() -> None:
    """Escaping at the renderer: a cell with ``|`` and a line break, had it passed the tag check,
    stays one cell of one row."""
    summary = pd.DataFrame({"method": ["simcse"], "backbone": [FORGED], "note": [FORGED],
                            "seeds": [1]})  # fmt: skip
    md = render_markdown(summary, [Column("note", "Note", kind="text", align="l")])
    table = [line for line in md.splitlines() if line.startswith("|")]
    assert len(table) == 3  # header, rule, the one row
    assert table[2].count(" | ") == 1 and "reproduced" in table[2]
    tex = render_latex(summary, [Column("note", "Note", kind="text", align="l")], "A caption.", "t")
    rows = [line for line in tex.splitlines() if line.endswith(r" \\")]
    assert len(rows) == 2 and "\n\n" not in tex  # header and the one row; no blank line
    assert latex_escape("a|b\n\nc & d") == r"a|b  c \& d"


@pytest.mark.parametrize("table", ["sts", "verdicts"])
def test_a_tag_that_is_not_a_name_stops_the_table(
    table: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evals = [_sts_file(tmp_path / f"{m}{s}.json", m, s) for m in ("simcse", "sncse") for s in (1, 2)]
    forged = json.loads(evals[3].read_text())
    _json(evals[3], {**forged, "backbone": FORGED})
    out = tmp_path / "out"
    args = ["table", table, "--evals", *evals, "--md", out / f"{table}.md", "--csv",
            out / f"{table}.csv", "--baselines", "sncse=simcse", "--min-seeds", "2"]  # fmt: skip
    line = error_line(*run_cli(args, capsys))
    assert str(evals[3]) in line and "backbone" in line and "is not a name" in line, line
    assert files(out) == []


# -- one name pattern: the config's and the files' ------------------------------------------------


def test_the_schema_names_are_the_name_module_patterns() -> None:
    defs = yaml.safe_load((REPO / "src/negcse/schemas/config.schema.yaml").read_text())["$defs"]
    assert defs["name"]["pattern"] == f"^{names.NAME.pattern}(?!\\n)$"
    assert defs["backbone"]["pattern"] == f"^{names.BACKBONE.pattern}(?!\\n)$"


@pytest.mark.parametrize(
    ("where", "value", "key"),
    [("backbone", FORGED, "grid.backbones.0"), ("method", "a|b", "methods.a|b"),
     ("grid", "grid\n", "grid.name")],
)  # fmt: skip
def test_a_config_name_is_checked_where_the_config_is_loaded(where: str, value: str, key: str) -> None:
    config = project_config(REPO)
    if where == "backbone":
        config["grid"]["backbones"] = [value]
    elif where == "method":
        config["methods"][value] = config["methods"]["simcse"]
    else:
        config["grid"]["name"] = value
    with pytest.raises(ConfigError, match=re.escape(f"key '{key}'")) as err:
        check_config(config)
    assert "is not allowed" in str(err.value)


def test_evaluate_refuses_a_tag_that_is_not_a_name(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = error_line(*run_cli(evaluate(model, tmp_path, "--tag", f"backbone={FORGED}"), capsys))
    assert "--tag backbone" in line and "is not a name" in line, line
    assert files(tmp_path / "out") == []


@pytest.mark.parametrize(
    ("tag", "named"),
    [
        (["seed=01"], "--tag seed: '01' is not a seed"),
        (["seed=-1"], "--tag seed: '-1' is not a seed"),
        (["seed=true"], "--tag seed: 'true' is not a seed"),
        ([f"seed={2**64}"], f"--tag seed: '{2**64}' is not a seed"),
        (["method=simcse", "method=sncse"], "--tag method given twice"),
        (["=simcse"], "--tag '=simcse': expected KEY=VALUE"),
        (["run id=3"], "--tag 'run id=3': 'run id' is not a tag name"),
        (["model=other"], "--tag model: negcse evaluate writes 'model' itself"),
        (["unavailable=no"], "--tag unavailable: negcse evaluate writes 'unavailable' itself"),
        (["note=a\nb"], "--tag note: 'a\\nb' holds a line break or control character"),
    ],
    ids=["leading-zero", "negative", "boolean", "above-torch", "twice", "no-key", "key-not-name",
         "header-key", "unavailable-key", "line-break"],
)
def test_evaluate_refuses_a_seed_tag_that_is_no_seed_and_a_tag_twice(
    tag: list[str], named: str, model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tables refused such a seed only when they read the file (or took the last of two
    method tags): the evaluation stops before the model loads."""
    tags = [arg for value in tag for arg in ("--tag", value)]
    line = error_line(*run_cli(evaluate(model, tmp_path, *tags), capsys))
    assert named in line, line
    assert files(tmp_path / "out") == []


def probe(model: Path, tmp_path: Path, *more: Any) -> list[Any]:
    """``negcse evaluate`` of ``model`` on a five-sentence probe, written to ``tmp_path/out``."""
    spec = {"anchor": SENTENCES[0], "paraphrases": SENTENCES[1:3], "negations": SENTENCES[3:5]}
    (tmp_path / "probe.json").write_text(json.dumps(spec))
    return ["evaluate", "--model", model, "--only", "probe", "--probe-out", tmp_path / "out/p.json",
            "--probe-file", tmp_path / "probe.json", "--threads", "1", *more]  # fmt: skip


def test_a_tag_named_like_a_result_key_is_refused_before_any_file_is_written(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The result's own key would have replaced the tag in the file, silently."""
    line = error_line(*run_cli(probe(model, tmp_path, "--tag", "gap=1"), capsys))
    assert "--tag gap: the probe evaluation writes 'gap' itself" in line, line
    assert files(tmp_path / "out") == []


def test_a_free_text_tag_is_recorded_as_given(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run_cli(probe(model, tmp_path, "--tag", "note=lr 3e-5, run | b"), capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "out/p.json").read_text())["note"] == "lr 3e-5, run | b"


def test_evaluate_writes_nothing_into_the_model_folder(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An output in the folder --model reads would change the model (a DVC output)."""
    before = files(model)
    args = evaluate(model, tmp_path)
    args[args.index("--analysis-out") + 1] = model / "a.json"
    line = error_line(*run_cli(args, capsys))
    assert f"--analysis-out {model / 'a.json'}: inside the model folder" in line, line
    assert files(model) == before
