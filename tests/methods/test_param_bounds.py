"""Method params are typed and bounded twice: in each params dataclass (exact, with the key in
the message) and in the config schema (``$defs.params``, the keys the methods share). The issue's
cases: a SimCSE temperature of -0.05 trained with the objective inverted, 0 passed the dry run
and ended in NaN, "0.05" passed the dry run and failed in training with a traceback."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import jsonschema
import pytest

from negcse.methods.params import ParamError, check_value
from negcse.methods.registry import METHODS, _load_all, build_method
from negcse.workflow.config import ConfigError, check_config, project_config, schema

REPO = Path(__file__).resolve().parents[2]

#: what a hand-written value may look like: numbers around every bound, strings, booleans, null
PROBES = [-1, -0.05, 0, 0.05, 0.5, 1, 1.5, 2.5, 125, "0.05", True, False, None]
CHOICES = ["symmetric", "infonce", "paper", "released", "listmle", "listnet", "agent", "fixed"]
CHOICES += ["prompts", "sentence"]
PROBES += [*CHOICES, "prompt", "loss", "decoupled", "cls", "hinge"]
#: fields a method checks more strictly than the shared schema key can (UNA's alpha is a step
#: count, SNCSE's and OssCSE's alpha a margin)
STRICTER_THAN_SCHEMA = {("UnaParams", "alpha")}


def _params_classes() -> dict[str, type]:
    _load_all()
    return {cls.Params.__name__: cls.Params for cls in METHODS.values()}


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (-0.05, "must be > 0, got -0.05"),
        (0, "must be > 0, got 0"),
        ("0.05", "must be a number, got '0.05' (a string)"),
    ],
    ids=["negative", "zero", "string"],
)
def test_issue_temperatures_fail_the_config_check_naming_the_key(value, reason: str) -> None:
    # the dataclass alone (what `negcse train` builds from a run spec) names the key
    with pytest.raises(ParamError) as caught:
        build_method("simcse", {"temperature": value}, "b", where="methods.simcse.params")
    assert str(caught.value) == f"methods.simcse.params.temperature: {reason}"
    # the config check (the dry run) stops it first, at the schema, naming the key
    config = project_config(REPO, check=False)
    config["methods"]["simcse"]["params"] = {"temperature": value}
    with pytest.raises(ConfigError, match=r"key 'methods\.simcse\.params\.temperature': "):
        check_config(config)


def test_schema_never_refuses_what_a_method_accepts_and_agrees_on_bounds() -> None:
    shared = schema()["$defs"]["params"]["properties"]
    for name, cls in _params_classes().items():
        for field in dataclasses.fields(cls):
            assert field.name in shared, f"{name}.{field.name} has no type in the schema"
            validator = jsonschema.Draft202012Validator(shared[field.name])
            for value in PROBES:
                method_ok = check_value(cls, field.name, value) is None
                schema_ok = validator.is_valid(value)
                if (name, field.name) in STRICTER_THAN_SCHEMA:
                    assert schema_ok or not method_ok, (name, field.name, value)
                else:
                    assert method_ok == schema_ok, (name, field.name, value, method_ok)


def test_bounds_by_hand() -> None:
    """Each kind of bound at its edge, from the papers' meaning of the value."""
    cases = {
        ("simcse_san", "p2", 0.0): None,  # no dropout on the SAN pass
        ("simcse_san", "p2", 1.0): "must be in [0, 1), got 1.0",  # every unit dropped
        ("simcse_san", "p2", None): None,  # the model's own dropout
        ("rankcse", "teacher_weight", 1.0): None,  # teacher1 alone
        ("rankcse", "teacher_weight", 0.0): "must be in (0, 1], got 0.0",
        ("una", "alpha", 0): None,  # never inject negatives
        ("una", "alpha", 5.0): "must be an integer, got 5.0",
        ("rlrd", "agent_update_steps", 0): "must be >= 1, got 0",
        ("sncse", "bml_weight", -1e-3): "must be >= 0, got -0.001",
        ("gcse", "decay", "false"): "must be true or false, got 'false' (a string)",
        ("osscse", "recall", "adam"): "must be one of loss, decoupled, got 'adam'",
    }
    for (impl, key, value), expected in cases.items():
        if expected is None:
            build_method(impl, {key: value}, "b")
            continue
        with pytest.raises(ParamError) as caught:
            build_method(impl, {key: value}, "b", where=f"methods.{impl}.params")
        assert str(caught.value) == f"methods.{impl}.params.{key}: {expected}"


def test_bad_value_in_a_backbone_override_names_the_override() -> None:
    config = project_config(REPO, check=False)
    config["methods"]["una"]["backbones"] = {"bert-base-uncased": {"params": {"alpha": 2.5}}}
    with pytest.raises(ConfigError) as caught:
        check_config(config)
    assert str(caught.value) == (
        "params.yaml: methods.una.backbones.bert-base-uncased.params.alpha: "
        "must be an integer, got 2.5"
    )


def test_a_check_across_keys_names_one_of_them() -> None:
    with pytest.raises(ParamError, match=r"^methods\.rlrd\.params\.weighting: agent weighs two"):
        build_method("rlrd", {"teacher_weight": 1.0}, "b", where="methods.rlrd.params")
    build_method("rlrd", {"teacher_weight": 1.0, "weighting": "fixed"}, "b")
