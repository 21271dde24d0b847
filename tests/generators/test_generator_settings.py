"""A generator's settings dataclass is the one source of its defaults, bounds and help: the
config schema, the command's options and the command line a job passes are derived from it,
and parse back to the same settings (GCSE's two commands: views of its settings). Its steps are
the workflow's rules."""

from __future__ import annotations

import argparse
import logging
import shlex
from types import ModuleType

import pytest

from negcse.commands import gcse_denoise, gcse_synthesize
from negcse.gcse.released import RELEASED_BUGS
from negcse.generators.registry import settings, spec
from negcse.generators.settings import add_options, as_dict, defaults, from_args, options
from negcse.generators.specs.gcse import (
    GcseDenoising,
    GcseSettings,
    GcseSynthesis,
    denoise_args,
    synthesis_args,
    thresholds,
)
from negcse.generators.specs.paraphrase import ParaphraseSettings
from negcse.generators.specs.san import SanSettings
from negcse.generators.specs.una import UnaSettings
from negcse.generators.steps import all_steps, column_output


def test_schema_and_defaults_come_from_the_fields() -> None:
    una = spec("una")
    assert una.defaults == {
        "beta": 0.5,
        "window": 4000,
        "select": "tfidf",
        "replace": "window",
        "scores": "sentence",
        "with_paraphrases": False,
        "chunk_size": 10_000,
    }
    beta = una.schema["beta"]
    assert (beta["type"], beta["minimum"]) == ("number", 0)
    assert una.schema["select"]["enum"] == ["tfidf", "random"]
    assert spec("san").schema["scale"]["exclusiveMinimum"] == 0


@pytest.mark.parametrize(
    ("bad", "key"),
    [({"window": 0}, "window"), ({"select": "idf"}, "select"), ({"beta": -1}, "beta")],
)
def test_an_instance_checks_its_values_naming_the_key(bad: dict, key: str) -> None:
    with pytest.raises(ValueError, match=f"^{key}: "):
        UnaSettings(**bad)


def _parse(cls: type, line: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_options(parser, cls)
    return parser.parse_args(shlex.split(line))


def test_command_line_parses_back_to_the_settings() -> None:
    una = UnaSettings(beta=0.25, select="random", chunk_size=7)
    line = options(una, UnaSettings)
    assert line == (
        "--beta 0.25 --window 4000 --select random --replace window --scores sentence "
        "--chunk-size 7"
    )  # with_paraphrases picks the TF-IDF input: no option
    assert from_args(_parse(UnaSettings, line), UnaSettings) == una
    # the parser's defaults are the fields' (nothing written twice)
    assert from_args(_parse(UnaSettings, ""), UnaSettings) == UnaSettings()
    for fallback in (True, False):  # flags: --reference-quirks when true, --no-fallback when false
        san = SanSettings(mlm="org/mlm", fallback=fallback, reference_quirks=not fallback)
        assert from_args(_parse(SanSettings, options(san, SanSettings)), SanSettings) == san
    pegasus = ParaphraseSettings(model="my models/it's $(here)")
    line = options(pegasus, ParaphraseSettings)
    assert line.startswith("--model 'my models/it'\"'\"'s $(here)' --num-beams 10")
    assert from_args(_parse(ParaphraseSettings, line), ParaphraseSettings) == pegasus


def test_a_bad_option_names_the_option() -> None:
    with pytest.raises(ValueError, match="^--window: "):
        from_args(_parse(UnaSettings, "--window 0"), UnaSettings)


def test_each_step_is_one_rule_of_todays_names() -> None:
    assert sorted(step.name for step in all_steps()) == [
        "back_translation",
        "gcse_denoise",
        "gcse_synthesize",
        "negation",
        "osscse_paraphrase",
        "paraphrase",
        "pos_lexicon",
        "san_negatives",
        "surface_edits",
        "tfidf",
        "tfidf_with_paraphrases",
        "una_negatives",
    ]


def test_column_output_names_the_file_and_the_step_that_writes_it() -> None:
    config = {
        "generators": {"una": {"beta": 0.3}},
        "methods": {"m": {"implementation": "una", "generators": {"una": {"window": 50}}}},
    }
    assert column_output(config, "una_negative", "m", 2, "wiki") == (
        "results/negatives/una/wiki/tfidf-window_b0.3_r50_sentence_c10000/seed2.txt",
        "una_negatives",
    )
    assert settings(config, "una")["window"] == defaults(UnaSettings)["window"] == 4000
    path, step = column_output(config, "gcse_positive", "m", 1, "wiki", "bert")
    assert path.endswith("/gcse_positive/bert/seed1.txt") and step == "gcse_denoise"


# --- GCSE: two commands, each a view of GcseSettings ---------------------------------------

#: where a GCSE command's default is not the config's: a job's command line passes nothing for
#: that value (null max_sources: every line; extension false: no --extension), so the option's
#: absence means it (documented in the help, "the config's: ...")
GCSE_COMMAND_DEFAULTS = {"max_sources": None, "extension": False}
GCSE_FILES = {
    gcse_synthesize: ["--input", "i.txt", "--output", "o.jsonl", "--report", "r.json"],
    gcse_denoise: ["--candidates", "c.jsonl", "--model", "m", "--anchors", "a", "--positives",
                   "p", "--negatives", "n", "--report", "r.json"],
}  # fmt: skip


def _command(module: ModuleType, line: str = "") -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    return parser.parse_args([*GCSE_FILES[module], *shlex.split(line)])


def _settings_options(module: ModuleType) -> dict[str, object]:
    """The command's defaults of the options in its settings group (dest -> default)."""
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    (group,) = [g for g in parser._action_groups if g.title == "settings (generators.gcse)"]
    return {a.dest: a.default for a in group._group_actions}


def test_every_gcse_setting_is_an_option_of_a_gcse_command_with_its_default() -> None:
    config = defaults(GcseSettings)
    synthesize, denoise = _settings_options(gcse_synthesize), _settings_options(gcse_denoise)
    assert set(denoise) == {"mode", "filter", "alpha", "beta", "choice", "order",
                            "augment_anchors"}  # fmt: skip
    assert synthesize["mode"] == denoise["mode"] == config["mode"] == "released"
    for name, value in config.items():
        if name == "released_bugs":  # synthesis: --released-bug; denoising: two options
            assert synthesize[name] == value == []
            assert (denoise["order"], denoise["augment_anchors"]) == ("roles", False)
            continue
        found = [ns[name] for ns in (synthesize, denoise) if name in ns]
        want = GCSE_COMMAND_DEFAULTS.get(name, value)
        assert found == [want] * (2 if name == "mode" else 1), name
    # the documented differences are real ones, and stated in the help
    assert all(config[k] != v for k, v in GCSE_COMMAND_DEFAULTS.items())
    parser = argparse.ArgumentParser()
    gcse_synthesize.add_arguments(parser)
    text = " ".join(parser.format_help().split())
    assert "(default: None; the config's: 64000)" in text and "(config default: true)" in text
    assert "(default: THUDM/glm-4-9b-chat-hf)" in text  # the workflow's LLM: one default


def test_gcse_job_command_lines_are_written_out() -> None:
    """Today's command lines, as the rules wrote them before the options were derived."""
    config = defaults(GcseSettings)
    assert synthesis_args(config) == (
        "--mode released --positives 1 --negatives 1 --seed 0 --max-chars 2000 "
        "--max-sources 64000 --max-new-tokens 512 --temperature 0.6 --top-p 0.95 "
        "--backend transformers --model THUDM/glm-4-9b-chat-hf --batch-size 8 --extension"
    )
    assert denoise_args(config) == (
        "--mode released --alpha 0.8 --beta 0.75 --choice first --order roles"
    )
    paper = config | {
        "mode": "paper", "backend": "openai", "base_url": "https://a b/v1", "api_key_env": "K",
        "concurrency": 1, "request_budget": 5, "positives": 0, "max_sources": None,
        "extension": False, "prefer_related": False, "neighbour_model": "bert-base-uncased",
        "released_bugs": ["sampled_extraction", "listed_order", "keep_unparsed"],
        "filter": False, "alpha": 0.95,
    }  # fmt: skip
    assert synthesis_args(paper) == (
        "--mode paper --positives 0 --negatives 1 --seed 0 --max-chars 2000 "
        "--max-new-tokens 512 --temperature 0.6 --top-p 0.95 --backend openai "
        "--model THUDM/glm-4-9b-chat-hf --batch-size 8 --no-prefer-related "
        "--released-bug keep_unparsed --released-bug sampled_extraction "
        "--base-url 'https://a b/v1' --api-key-env K --max-in-flight 1 --request-budget 5"
    )  # released mode's neighbour_model and the denoising bug are not passed
    assert denoise_args(paper) == "--mode paper --no-filter"
    released = config | {
        "model": "my model's $(x)", "neighbour_model": "enc", "prefer_related": False,
        "released_bugs": ["anchor_augmentation", "listed_order", "subject_key"], "beta": 0.5,
    }  # fmt: skip
    assert synthesis_args(released).endswith(
        "--model 'my model'\"'\"'s $(x)' --batch-size 8 --extension --neighbour-model enc "
        "--released-bug subject_key"
    )
    assert denoise_args(released) == (
        "--mode released --alpha 0.8 --beta 0.5 --choice first --order listed --augment-anchors"
    )


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"mode": "paper", "prefer_related": False, "extension": False, "max_sources": None},
        {"backend": "openai", "base_url": "http://h:1/v1", "api_key_env": "", "concurrency": 3,
         "request_budget": 9, "model": "my llm's", "temperature": 0, "choice": "random"},
        {"released_bugs": sorted(RELEASED_BUGS), "neighbour_model": "enc dir", "alpha": 0.9},
        {"filter": False, "released_bugs": ["anchor_augmentation"], "mode": "paper", "beta": 0},
    ],
)  # fmt: skip
def test_a_jobs_gcse_command_lines_parse_back_to_its_settings(changes: dict) -> None:
    s = as_dict(GcseSettings(**changes))
    got = as_dict(from_args(_command(gcse_synthesize, synthesis_args(s)), GcseSynthesis))
    # what the command does not read in this mode / with this backend: its default
    unread = {"prefer_related"} if s["mode"] == "released" else {"neighbour_model"}
    if s["backend"] != "openai":
        unread |= {"base_url", "api_key_env", "concurrency", "request_budget"}
    bugs = [b for b in s["released_bugs"] if b not in ("listed_order", "anchor_augmentation")]
    for name, value in got.items():
        want = bugs if name == "released_bugs" else s[name]
        assert value == (defaults(GcseSynthesis)[name] if name in unread else want), name
    got = as_dict(from_args(_command(gcse_denoise, denoise_args(s)), GcseDenoising))
    alpha, beta = thresholds(s)
    assert got == {
        "mode": s["mode"],
        "filter": s["filter"],
        "alpha": alpha if s["filter"] else None,  # unfiltered: no threshold passed
        "beta": beta if s["filter"] else None,
        "choice": s["choice"] if s["filter"] else "first",
        "order": "listed" if "listed_order" in s["released_bugs"] and s["filter"] else "roles",
        "augment_anchors": "anchor_augmentation" in s["released_bugs"],
    }


@pytest.mark.parametrize(
    ("module", "line", "error"),
    [
        (gcse_synthesize, "--positives -1", "--positives: -1 is less than the minimum of 0"),
        (gcse_synthesize, "--backend openai", "--backend openai needs base-url"),
        (gcse_synthesize, "--top-p 0", "--top-p: 0.0 is less than or equal to the minimum of 0"),
        (gcse_denoise, "--alpha 0.5", "--alpha (0.5) must exceed beta (0.75)"),
    ],
)
def test_a_bad_gcse_option_is_one_error_naming_it(
    module: ModuleType, line: str, error: str, caplog: pytest.LogCaptureFixture
) -> None:
    assert module.run(_command(module, line)) == 2
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].startswith(error), errors
