"""A generator's settings dataclass is the one source of its defaults, bounds and help: the
config schema, the command's options and the command line a job passes are derived from it,
and parse back to the same settings. Its steps are the workflow's rules."""

from __future__ import annotations

import argparse
import shlex

import pytest

from negcse.generators.registry import settings, spec
from negcse.generators.settings import add_options, defaults, from_args, options
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
