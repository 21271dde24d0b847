"""``methods.<m>.guides``: what the rules read (teacher folders, --guide arguments, the teachers'
run specs in the student's) and the config errors, on params.yaml plus RankCSE entries."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from negcse.workflow.config import ConfigError, check_config, project_config
from negcse.workflow.guide_config import guide_args, guide_models, guide_outputs, guide_specs

REPO = Path(__file__).resolve().parents[2]
RANKCSE = {
    "implementation": "rankcse",
    "params": {"teacher_weight": 0.33},
    "guides": {
        "teacher1": {"method": "simcse"},
        "teacher2": {"method": "simcse", "backbone": "bert-large-uncased", "seed": 42},
    },
}


@pytest.fixture(scope="module")
def base() -> dict:
    return project_config(REPO)


@pytest.fixture
def config(base: dict) -> dict:
    config = copy.deepcopy(base)
    config["methods"]["rankcse"] = copy.deepcopy(RANKCSE)
    hub = {"implementation": "rankcse", "params": {"teacher_weight": 1.0}}
    config["methods"]["rankcse_hub"] = {**hub, "guides": {"teacher1": {"model": "org/ckpt"}}}
    return config


def test_teacher_folders_and_guide_arguments(config: dict) -> None:
    check_config(config)  # the schema and the checks accept the entries
    models = guide_models(config, "rankcse", "bert-base-uncased", 43)
    assert models == {
        "teacher1": "results/models/simcse/bert-base-uncased/seed43",  # seed-matched
        "teacher2": "results/models/simcse/bert-large-uncased/seed42",  # pinned
    }
    assert guide_outputs(config, "rankcse", "bert-base-uncased", 43) == models
    assert guide_args(config, "rankcse", "bert-base-uncased", 43) == (
        "--guide teacher1=results/models/simcse/bert-base-uncased/seed43 "
        "--guide teacher2=results/models/simcse/bert-large-uncased/seed42"
    )
    # a released checkpoint is a guide argument, not a workflow input
    assert guide_outputs(config, "rankcse_hub", "roberta-base", 1) == {}
    assert guide_args(config, "rankcse_hub", "roberta-base", 1) == "--guide teacher1=org/ckpt"
    assert guide_args(config, "simcse", "roberta-base", 1) == ""


def test_a_teacher_setting_changes_the_students_spec_and_nothing_else(config: dict) -> None:
    before = guide_specs(config, "rankcse", "bert-base-uncased")
    assert before["teacher2"]["run"]["backbone"] == "bert-large-uncased"
    changed = copy.deepcopy(config)
    changed["methods"]["simcse"]["backbones"]["bert-large-uncased"]["train"]["learning_rate"] = 2e-5
    after = guide_specs(changed, "rankcse", "bert-base-uncased")
    assert after["teacher1"] == before["teacher1"]  # the base-size teacher is untouched
    assert after["teacher2"] != before["teacher2"]
    unrelated = copy.deepcopy(config)
    unrelated["methods"]["sncse"]["params"]["bml_weight"] = 2e-3
    assert guide_specs(unrelated, "rankcse", "bert-base-uncased") == before


@pytest.mark.parametrize(
    ("teachers", "message"),
    [
        ({"teacher1": {"method": "simcse"}}, r"guides on .* are \['teacher1', 'teacher2'\]"),
        (
            {"teacher1": {"method": "simcse", "model": "x"}, "teacher2": {"model": "y"}},
            r"guides.teacher1 \(bert-base-uncased\): give either",
        ),
        (
            {"teacher1": {"method": "simcse", "sede": 1}, "teacher2": {"model": "y"}},
            r"guides.teacher1 \(bert-base-uncased\): unknown key\(s\) \['sede'\]",
        ),
        (
            {"teacher1": {"method": "simcsee"}, "teacher2": {"model": "y"}},
            "'simcsee' is not a configured method",
        ),
        (
            {"teacher1": {"method": "rankcse"}, "teacher2": {"model": "y"}},
            "cycle: rankcse -> rankcse",
        ),
    ],
)
def test_bad_teachers_are_named(config: dict, teachers: dict, message: str) -> None:
    config["methods"]["rankcse"]["guides"] = teachers
    with pytest.raises(ConfigError, match=message):
        check_config(config)


def test_a_method_without_guides_takes_none(config: dict) -> None:
    config["methods"]["simcse"]["guides"] = {"teacher1": {"model": "y"}}
    with pytest.raises(ConfigError, match=r"methods.simcse.guides: the method's guides"):
        check_config(config)


def test_a_guide_with_a_default_may_be_left_out(config: dict, monkeypatch) -> None:
    # rankcse's teacher2 given a default model: the entry may name teacher1 alone
    from negcse.methods.base import Guide
    from negcse.methods.rankcse import RankCSE

    real = RankCSE.guides

    def with_default(self) -> tuple[Guide, ...]:
        return tuple(
            Guide(g.name, g.columns, g.pooler, default="splade-tiny") if g.name == "teacher2" else g
            for g in real(self)
        )

    monkeypatch.setattr(RankCSE, "guides", with_default)
    config["methods"]["rankcse"]["guides"] = {"teacher1": {"method": "simcse"}}
    check_config(config)
    assert guide_args(config, "rankcse", "bert-base-uncased", 1) == (
        "--guide teacher1=results/models/simcse/bert-base-uncased/seed1"
    )


def test_per_backbone_guides_replace_the_methods(config: dict) -> None:
    # released RoBERTa scripts: SimCSE RoBERTa-base and -large teachers
    roberta = {
        "teacher1": {"method": "simcse"},
        "teacher2": {"method": "simcse", "backbone": "roberta-large"},
    }
    config["methods"]["rankcse"]["backbones"] = {"roberta-base": {"guides": roberta}}
    check_config(config)
    assert guide_models(config, "rankcse", "roberta-base", 7) == {
        "teacher1": "results/models/simcse/roberta-base/seed7",
        "teacher2": "results/models/simcse/roberta-large/seed7",
    }
    assert guide_models(config, "rankcse", "bert-base-uncased", 7)["teacher2"] == (
        "results/models/simcse/bert-large-uncased/seed42"
    )
    config["methods"]["rankcse"]["backbones"]["roberta-base"]["guides"]["teacher2"] = {"modl": "x"}
    with pytest.raises(ConfigError, match=r"guides.teacher2 \(roberta-base\): give either"):
        check_config(config)
