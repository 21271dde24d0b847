"""``methods.<m>.teachers``: what the rules read (teacher folders, --guide arguments, the teachers'
run specs in the student's) and the config errors, on params.yaml plus RankCSE entries."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from negcse.config import ConfigError, check_config, load_config
from negcse.teachers import guide_args, teacher_models, teacher_outputs, teacher_specs

REPO = Path(__file__).resolve().parents[2]
RANKCSE = {
    "implementation": "rankcse",
    "params": {"teacher_weight": 0.33},
    "teachers": {
        "teacher1": {"method": "simcse"},
        "teacher2": {"method": "simcse", "backbone": "bert-large-uncased", "seed": 42},
    },
}


@pytest.fixture(scope="module")
def base() -> dict:
    return load_config(REPO / "params.yaml")


@pytest.fixture
def config(base: dict) -> dict:
    config = copy.deepcopy(base)
    config["methods"]["rankcse"] = copy.deepcopy(RANKCSE)
    hub = {"implementation": "rankcse", "params": {"teacher_weight": 1.0}}
    config["methods"]["rankcse_hub"] = {**hub, "teachers": {"teacher1": {"model": "org/ckpt"}}}
    return config


def test_teacher_folders_and_guide_arguments(config: dict) -> None:
    check_config(config)  # the schema and the checks accept the entries
    models = teacher_models(config, "rankcse", "bert-base-uncased", 43)
    assert models == {
        "teacher1": "results/models/simcse/bert-base-uncased/seed43",  # seed-matched
        "teacher2": "results/models/simcse/bert-large-uncased/seed42",  # pinned
    }
    assert teacher_outputs(config, "rankcse", "bert-base-uncased", 43) == models
    assert guide_args(config, "rankcse", "bert-base-uncased", 43) == (
        "--guide teacher1=results/models/simcse/bert-base-uncased/seed43 "
        "--guide teacher2=results/models/simcse/bert-large-uncased/seed42"
    )
    # a released checkpoint is a guide argument, not a workflow input
    assert teacher_outputs(config, "rankcse_hub", "roberta-base", 1) == {}
    assert guide_args(config, "rankcse_hub", "roberta-base", 1) == "--guide teacher1=org/ckpt"
    assert guide_args(config, "simcse", "roberta-base", 1) == ""


def test_a_teacher_setting_changes_the_students_spec_and_nothing_else(config: dict) -> None:
    before = teacher_specs(config, "rankcse", "bert-base-uncased")
    assert before["teacher2"]["run"]["backbone"] == "bert-large-uncased"
    changed = copy.deepcopy(config)
    changed["methods"]["simcse"]["backbones"]["bert-large-uncased"]["train"]["learning_rate"] = 2e-5
    after = teacher_specs(changed, "rankcse", "bert-base-uncased")
    assert after["teacher1"] == before["teacher1"]  # the base-size teacher is untouched
    assert after["teacher2"] != before["teacher2"]
    unrelated = copy.deepcopy(config)
    unrelated["methods"]["sncse"]["params"]["bml_weight"] = 2e-3
    assert teacher_specs(unrelated, "rankcse", "bert-base-uncased") == before


@pytest.mark.parametrize(
    ("teachers", "message"),
    [
        ({"teacher1": {"method": "simcse"}}, r"guides on .* are \['teacher1', 'teacher2'\]"),
        (
            {"teacher1": {"method": "simcse", "model": "x"}, "teacher2": {"model": "y"}},
            "teachers.teacher1: give either",
        ),
        (
            {"teacher1": {"method": "simcse", "sede": 1}, "teacher2": {"model": "y"}},
            r"teachers.teacher1: unknown key\(s\) \['sede'\]",
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
    config["methods"]["rankcse"]["teachers"] = teachers
    with pytest.raises(ConfigError, match=message):
        check_config(config)


def test_a_method_without_guides_takes_no_teachers(config: dict) -> None:
    config["methods"]["simcse"]["teachers"] = {"teacher1": {"model": "y"}}
    with pytest.raises(ConfigError, match=r"methods.simcse.teachers: the method's guides"):
        check_config(config)
