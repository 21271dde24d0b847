"""The fidelity table (negcse.workflow.fidelity, `negcse fidelity`): docs/fidelity-table.md is
the page params.yaml and the declared sources give, every deviation has a reason, and the
check fails when a default drifts from what is declared."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from negcse.cli import main
from negcse.generators.registry import SubstituteWarning
from negcse.workflow.fidelity import (
    FidelityError,
    fill_pages,
    load_reference,
    render,
    rows,
    unchecked,
    undeclared,
    unreferenced,
)
from negcse.workflow.plan.load import workflow_config

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "fidelity-table.md"
#: the prose pages whose tables are generated blocks
PROSE = sorted(p for p in (REPO / "docs").glob("fidelity*.md") if p != PAGE)

pytestmark = pytest.mark.mirror  # SAN's released POS table is planned from the mirror


@pytest.fixture(scope="module")
def config() -> dict:
    return workflow_config(REPO)


@pytest.fixture(scope="module")
def ref() -> dict:
    return load_reference()


def test_the_page_is_what_params_yaml_and_the_sources_give(config: dict, ref: dict) -> None:
    """Regenerate with `negcse fidelity --out docs/fidelity-table.md` after a change of
    params.yaml or src/negcse/resources/fidelity.yaml."""
    found = rows(config, ref)
    assert render(config, ref, found) == PAGE.read_text(encoding="utf-8")
    assert {r.method for r in found} == set(config["methods"])
    assert undeclared(found) == []
    assert unreferenced(found) == []
    assert unchecked(config, ref, found) == []


def _row(found, method: str, backbone: str, key: str):
    (hit,) = [r for r in found if (r.method, r.backbone, r.key) == (method, backbone, key)]
    return hit


def test_a_drifted_default_fails_until_declared(config: dict, ref: dict) -> None:
    """GCSE's stage 1 with the shared default schedule (no warmup, the run's own horizon) and
    fp16: three undeclared deviations from cse_trainer.py; declaring a reason clears one."""
    drifted = copy.deepcopy(config)
    train = drifted["methods"]["gcse_stage1"]["train"]
    del train["warmup_steps"], train["schedule_horizon"]
    train["precision"] = "auto"
    found = rows(drifted, ref, ["gcse_stage1"], ["bert-base-uncased"])
    missing = {r.key: (r.ours, r.released.value) for r in undeclared(found)}
    assert missing == {
        "train.warmup_steps": (None, 190),
        "train.schedule_horizon": (None, 80000),
        "train.precision": ("auto", "fp32"),
    }
    declared = copy.deepcopy(ref)
    declared["methods"]["gcse_stage1"]["why"] = {"train.precision": "a reason"}
    found = rows(drifted, declared, ["gcse_stage1"], ["bert-base-uncased"])
    assert {r.key for r in undeclared(found)} == {"train.warmup_steps", "train.schedule_horizon"}
    assert render(drifted, declared, found) != render(config, declared, found[:0])


def test_declarations_inherit_scope_and_compare_what_the_papers_ran(
    config: dict, ref: dict
) -> None:
    """`like` starts from another entry; `only` limits a block to the backbones its script
    ran; `scope` limits the rows (a grid search on BERT-base); `auto` precision stands for
    fp16 (CUDA); guides read `run M` on the student's backbone and seed."""
    found = rows(config, ref)
    grid = [r for r in found if r.method == "simcse_san_tau0.07_p0.15"]
    assert {r.backbone for r in grid} == {"bert-base-uncased"}
    tau2 = _row(found, "simcse_san_tau0.07_p0.15", "bert-base-uncased", "params.tau2")
    assert (tau2.ours, tau2.released.value, tau2.deviates) == (0.07, 0.08, True)
    assert "grid search" in (tau2.reason or "")
    una = _row(found, "una_both", "roberta-base", "train.scheduler")
    assert (una.ours, una.released.value, una.released.source) == (
        "constant",
        "constant",
        "una-run",
    )
    large = _row(found, "una", "roberta-large", "train.scheduler").released  # no script
    assert (large.stated, large.source) == (False, "una-none")
    fp16 = _row(found, "simcse", "bert-base-uncased", "train.precision")
    assert (fp16.ours, fp16.released.value, fp16.deviates) == ("auto", "fp16", False)
    teacher = _row(found, "rankcse_san", "bert-base-uncased", "guides.teacher2")
    assert (teacher.ours, teacher.deviates) == ("run simcse_san on bert-large-uncased", False)
    stage1 = _row(found, "gcse", "roberta-base", "guides.evaluation")
    assert stage1.ours == "run gcse_stage1"
    bml = _row(found, "rlrd_san", "roberta-large", "params.bml_weight")
    assert (bml.ours, bml.released.value, bml.deviates) == (5e-4, 5e-4, False)


def test_a_planned_substitute_is_a_visible_row_and_warning(
    config: dict, ref: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SAN's released POS table found nowhere: resolving the config outside the workflow
    warns (SubstituteWarning, not only a log line) and the table row says what was used."""
    from negcse.generators.specs import san

    monkeypatch.setenv("NEGCSE_CACHE", str(tmp_path / "cache"))
    lacking = tmp_path / "mirror"
    (lacking / "data").mkdir(parents=True)
    offline = copy.deepcopy(config) | {"mirror": str(lacking)}
    san.released_table_unavailable.cache_clear()
    try:
        with pytest.warns(SubstituteWarning, match="spaCy lexicon is used instead"):
            found = rows(offline, ref, ["simcse_san"], ["bert-base-uncased"])
    finally:
        san.released_table_unavailable.cache_clear()
    lexicon = _row(found, "simcse_san", "bert-base-uncased", "generators.san.lexicon")
    assert lexicon.ours == "spacy (released table unavailable)" and lexicon.deviates
    assert lexicon.planned and undeclared(found) == []
    assert "substituted where planned" in render(offline, ref, found)


def test_the_command_checks_the_page(tmp_path: Path) -> None:
    params = str(REPO / "params.yaml")
    assert main(["fidelity", "--params", params, "--check", str(PAGE)]) == 0
    stale = tmp_path / "page.md"
    stale.write_text(PAGE.read_text(encoding="utf-8").replace("| 190 |", "| 200 |", 1))
    assert main(["fidelity", "--params", params, "--check", str(stale)]) == 1
    out = tmp_path / "out.md"
    assert main(["fidelity", "--params", params, "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == PAGE.read_text(encoding="utf-8")


def test_changing_a_default_without_a_declared_value_fails_the_check(
    tmp_path: Path, ref: dict
) -> None:
    """UNA's loss switched to SimCSE's asymmetric InfoNCE and OssCSE's temperature to 0.06:
    the page regenerated from that config still fails --check, naming both (UNA's released
    loss, una.py; OssCSE's 'exactly the same settings with SimCSE': 0.05)."""
    overlay = tmp_path / "drift.yaml"
    overlay.write_text(
        "methods:\n  una: {params: {objective: infonce}}\n  osscse: {params: {temperature: 0.06}}\n"
    )
    params = str(REPO / "params.yaml")
    drifted = workflow_config(REPO, [overlay])
    found = rows(drifted, ref, ["una", "osscse"], ["bert-base-uncased"])
    missing = {(r.method, r.key): (r.ours, r.target.value) for r in undeclared(found)}
    assert missing == {
        ("una", "params.objective"): ("infonce", "symmetric"),
        ("osscse", "params.temperature"): (0.06, 0.05),
    }
    page = tmp_path / "page.md"
    args = ["fidelity", "--params", params, "--configfile", str(overlay)]
    assert main([*args, "--out", str(page)]) == 1  # written, and the drift reported
    assert main([*args, "--check", str(page)]) == 1
    assert main(["fidelity", "--params", params, "--check", str(PAGE)]) == 0


def test_a_setting_without_any_reference_fails(config: dict, ref: dict) -> None:
    """Take UNA's loss out of the reference: the row has no released or paper value and no
    'none' statement, so the check is blind to it and fails; a `none` (not released, with its
    source) is a reference, and the row shows it."""
    blind = copy.deepcopy(ref)
    for block in blind["methods"]["una"]["released"]:
        (block.get("values") or {}).pop("params.objective", None)
    found = rows(config, blind, ["una"], ["bert-base-uncased"])
    assert [(r.key, r.ours) for r in unreferenced(found)] == [("params.objective", "symmetric")]
    stated = copy.deepcopy(blind)
    stated["methods"]["una"]["released"].append(
        {"source": "una-none", "none": ["params.objective"]}
    )
    found = rows(config, stated, ["una"], ["bert-base-uncased"])
    assert unreferenced(found) == []
    row = _row(found, "una", "bert-base-uncased", "params.objective")
    assert (row.released.stated, row.target, row.deviates) == (False, None, False)
    assert "| `params.objective` | all | symmetric | not released [una-none] | — |" in render(
        config, stated, found
    )


def test_rankcse_san_roberta_teachers_are_the_released_variables(config: dict, ref: dict) -> None:
    """47103 / 48101: teacher 2 is $BC_SIMCSE_ROBERTA_LARGE_PATH, the hub SimCSE RoBERTa-large
    (env-setup/03): the suite's own run is a deviation with its reason; teacher 1's variable is
    defined nowhere: not released, its pooler too, with what the suite uses."""
    found = rows(config, ref, ["rankcse_san"])
    for backbone in ("roberta-base", "roberta-large"):
        two = _row(found, "rankcse_san", backbone, "guides.teacher2")
        assert two.released.value == "model princeton-nlp/unsup-simcse-roberta-large"
        assert (two.released.source, two.ours, two.deviates) == (
            "san-env",
            "run simcse on roberta-large",
            True,
        )
        assert "seed-matched" in two.reason
        for key in ("guides.teacher1", "params.teacher1_pooler"):
            one = _row(found, "rankcse_san", backbone, key)
            assert (one.released.stated, one.released.source, one.deviates) == (
                False,
                "san-roberta-teacher1",
                False,
            )
            assert one.reason
        assert _row(found, "rankcse_san", backbone, "params.teacher2_pooler").released.value == (
            "cls_before_pooler"
        )
    bert = _row(found, "rankcse_san", "bert-base-uncased", "guides.teacher1")
    assert bert.released.value == "model voidism/diffcse-bert-base-uncased-sts"
    assert ref["sources"]["san-roberta-teacher1"].count("BC_SIMCSE_ROBERTA_BASE_PATH") == 1


def test_the_evaluation_pooler_is_a_row(config: dict, ref: dict) -> None:
    """Every method's evaluation pooler beside the released one: SimCSE's [CLS] without the
    MLP, SNCSE's and RLRD's anchor prompt at [MASK], GCSE's test [CLS]."""
    found = rows(config, ref, ["simcse", "sncse", "rlrd", "gcse"], ["bert-base-uncased"])
    got = {r.method: (r.ours, r.released.value) for r in found if r.key == "eval.pooler"}
    assert got == {
        "simcse": ("cls_before_pooler", "cls_before_pooler"),
        "sncse": ("prompt_sncse_anchor", "prompt_sncse_anchor"),
        "rlrd": ("prompt_sncse_anchor", "prompt_sncse_anchor"),
        "gcse": ("cls_before_pooler", "cls_before_pooler"),
    }


def test_the_prose_pages_tables_are_generated_from_the_same_rows(config: dict, ref: dict) -> None:
    """Each prose page holds at least one marked block, and every block is what the table
    page's rows give for its methods (regenerate with `negcse fidelity --out
    docs/fidelity-table.md --pages docs/fidelity*.md`)."""
    found = rows(config, ref)
    for page in PROSE:
        text = page.read_text(encoding="utf-8")
        assert "<!-- fidelity-table: " in text, page.name
        assert fill_pages(text, config, ref, found, page.name) == text, page.name
    gcse = (REPO / "docs" / "fidelity-gcse.md").read_text(encoding="utf-8")
    sigma = "| `params.sigma` | all | **0.01** | 0.0085 [gcse-stage2] | 0.01 [gcse-paper] |"
    assert "#### gcse_paper\n" in gcse and sigma in gcse
    # a block is rewritten from the rows, whatever it held
    stale = "<!-- fidelity-table: una -->\nold rows\n<!-- /fidelity-table -->\n"
    filled = fill_pages(stale, config, ref, found)
    assert "old rows" not in filled and "| `params.objective` |" in filled
    with pytest.raises(FidelityError, match="p.md: fidelity-table block names \\['nope'\\]"):
        fill_pages(stale.replace(": una", ": nope"), config, ref, found, "p.md")


def test_the_command_checks_and_fills_the_prose_pages(tmp_path: Path) -> None:
    params = str(REPO / "params.yaml")
    page = tmp_path / "fidelity-una.md"
    text = (REPO / "docs" / "fidelity-una.md").read_text(encoding="utf-8")
    page.write_text(text, encoding="utf-8")
    check = ["fidelity", "--params", params, "--method", "una", "--check"]
    out = tmp_path / "table.md"
    assert main(["fidelity", "--params", params, "--method", "una", "--out", str(out)]) == 0
    assert main([*check, str(out), "--pages", str(page)]) == 0
    page.write_text(text.replace("| symmetric |", "| infonce |", 1), encoding="utf-8")
    assert main([*check, str(out), "--pages", str(page)]) == 1
    assert (
        main(
            [
                "fidelity",
                "--params",
                params,
                "--method",
                "una",
                "--out",
                str(out),
                "--pages",
                str(page),
            ]
        )
        == 0
    )
    assert page.read_text(encoding="utf-8") == text
