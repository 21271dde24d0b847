"""The generator registry: one spec per generator, read by the train jobs' inputs, the config
schema and prefetch; and a toy generator registered in a fixture that the workflow's dry run
schedules for a method reading its column."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from negcse.generators.registry import column_file, producer, settings, specs
from negcse.generators.registry import config_models as _config_models
from negcse.generators.registry import provenance as _provenance
from negcse.methods.registry import METHODS, method_class
from negcse.workflow.config import ConfigError, check_generators, column_readers, validate_schema

REPO = Path(__file__).resolve().parents[2]


def config_models(config: dict) -> list[str]:
    return _config_models(config, column_readers(config))


def provenance(config: dict, method: str) -> dict:
    return _provenance(config, method, column_readers(config)[method])


def test_every_method_column_has_one_generator() -> None:
    method_class("simcse")  # loads every method module
    columns = {c for cls in METHODS.values() for c in cls.columns}
    columns |= {cls.corpus_column for cls in METHODS.values() if cls.corpus_column}
    assert columns, "no method reads a generated column"
    for column in columns:
        assert column in producer(column).columns
    made = [c for spec in specs().values() for c in spec.columns]
    assert len(made) == len(set(made))  # no column made twice


def test_column_file_layers_generator_and_method_settings() -> None:
    """defaults < generators.san < methods.m.generators.san, each visible in the file name."""
    config = {
        "generators": {"san": {"mlm": "org/mlm", "scale": 10}},
        "methods": {
            "a": {"implementation": "simcse_san"},
            "b": {"implementation": "simcse_san", "generators": {"san": {"scale": 30}}},
        },
    }
    assert column_file(config, "san", "a", 2, "wiki") == (
        "results/negatives/san/wiki/org--mlm_s10_i4_t128_c2048/seed2.txt"
    )
    assert "_s30_" in column_file(config, "san", "b", 2, "wiki")
    assert settings(config, "san")["scale"] == 10  # the method layer only for its method


@pytest.mark.mirror
def test_released_lexicon_is_planned_as_spacy_where_it_cannot_be_had(
    mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """``lexicon: released`` with the table in the mirror: the released lexicon and its names.
    Offline with a mirror and cache that lack it: the spaCy lexicon's file and variant, logged,
    and the provenance (merged into the run spec, so negcse.json) records the substitute."""
    from negcse.generators.specs import san

    monkeypatch.setenv("NEGCSE_CACHE", str(tmp_path / "cache"))  # an empty cache
    san.released_table_unavailable.cache_clear()
    config = {
        "mirror": str(mirror),
        "generators": {"san": {"mlm": "org/mlm", "lexicon": "released"}},
        "methods": {"m": {"implementation": "simcse_san"}},
    }
    assert column_file(config, "san", "m", 1, "wiki").endswith("_c2048_rel/seed1.txt")
    assert provenance(config, "m") == {"san_lexicon": "released"}
    assert not caplog.records
    lacking = tmp_path / "mirror"
    (lacking / "data").mkdir(parents=True)
    config["mirror"] = str(lacking)
    planned = settings(config, "san", "m")
    assert planned["lexicon"] == "spacy"
    assert column_file(config, "san", "m", 1, "wiki").endswith("_c2048/seed1.txt")
    assert provenance(config, "m") == {
        "san_lexicon": "spacy (released table unavailable)",
        "substitutes": ["SAN lexicon: spacy (released table unavailable)"],
    }
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1  # once per process, however often the settings are read
    assert "san/vocab_pos_end.txt" in warnings[0] and str(lacking) in warnings[0]
    assert "offline" in warnings[0]
    san.released_table_unavailable.cache_clear()


def test_prefetch_models_read_the_specs() -> None:
    """The wmt19 pivots (back-translation) and a per-method MLM override are named; with the
    surface-edits source the translation models are not needed."""
    config = {
        "generators": {"san": {"mlm": "bert-base-uncased"}},
        "methods": {
            "osscse": {"implementation": "osscse"},
            "san_other": {
                "implementation": "simcse_san",
                "generators": {"san": {"mlm": "roberta-base"}},
            },
        },
    }
    models = config_models(config)
    assert {"facebook/wmt19-en-de", "facebook/wmt19-de-en", "facebook/wmt19-en-ru"} <= set(models)
    assert {"facebook/wmt19-ru-en", "tuner007/pegasus_paraphrase"} <= set(models)
    assert {"bert-base-uncased", "roberta-base"} <= set(models)
    config["generators"]["osscse_paraphrase"] = {"source": "surface_edits"}
    assert not any(m.startswith("facebook/wmt19") for m in config_models(config))


def _config(**generators: dict) -> dict:
    return {
        "grid": {"methods": ["m"], "backbones": ["bert-base-uncased"], "seeds": [1]},
        "corpus": {"name": "c", "source": "x"},
        "train": {},
        "methods": {"m": {"implementation": "una", "generators": generators}},
        "generators": {},
    }


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (_config(una={"betta": 1}), r"unknown key 'methods\.m\.generators\.una\.betta'"),
        (_config(unaa={}), r"unknown key 'methods\.m\.generators\.unaa'"),
        (_config(una={"select": "tf-idf"}), r"methods\.m\.generators\.una\.select"),
    ],
)
def test_config_schema_holds_each_generators_keys(config: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        validate_schema(config, "x.yaml")


def test_cross_checks_name_the_file_and_key() -> None:
    config = {"methods": {}, "generators": {"osscse_paraphrase": {"mer_min": 0.7, "mer_max": 0.6}}}
    with pytest.raises(ConfigError, match=r"^x\.yaml: generators\.osscse_paraphrase: need"):
        check_generators(config, "x.yaml")


# -- a toy generator through the workflow's dry run ------------------------------------------------

# What a user adds for a generator of one step: its spec module (settings + step) and its
# implementation, here the spec's own entry point (README "Adding a generator"); no rule file.
TOY_SPEC = """
from dataclasses import dataclass

from negcse.generators.registry import GeneratorSpec, register
from negcse.generators.settings import GeneratorSettings, options, setting
from negcse.generators.steps import Step, alternation

OUTPUT = "results/negatives/toy/{corpus}/{variant}/seed{seed}.txt"


@dataclass(frozen=True)
class ToySettings(GeneratorSettings):
    rate: float = setting(0.5, "share of each line's first words dropped", minimum=0, maximum=1)


def _settings(ctx, wc):
    return options(ctx.variants("toy")[wc["variant"]], ToySettings)


SPEC = register(GeneratorSpec(
    name="toy", columns=("toy_negative",), output=OUTPUT, settings=ToySettings, per_method=True,
    variant=lambda settings, column: f"r{settings['rate']:g}",
    steps=(Step(
        name="toy",
        outputs={"negatives": OUTPUT},
        wildcards=lambda ctx: {"variant": alternation(ctx.variants("toy"))},
        params={"settings": _settings},
        command="python -m negcse.generators.toy {input.corpus:q} {output:q} "
        "--seed {wildcards.seed:q} {params.settings}",
        log="logs/negatives/toy/{corpus}/{variant}/seed{seed}.log",
        benchmark="benchmarks/rules/negatives/toy/{corpus}/{variant}/seed{seed}.tsv",
        resources={"mem_mb": 1000},
        conda="toy",
    ),),
))
"""
TOY_IMPLEMENTATION = """
import argparse
from pathlib import Path

from negcse.generators.settings import add_options, from_args
from negcse.generators.specs.toy import ToySettings

parser = argparse.ArgumentParser()
parser.add_argument("corpus")
parser.add_argument("output")
parser.add_argument("--seed", type=int)
add_options(parser, ToySettings)
args = parser.parse_args()
rate = from_args(args, ToySettings).rate
lines = Path(args.corpus).read_text().splitlines()
out = [" ".join(words[round(rate * len(words)):]) for words in map(str.split, lines)]
Path(args.output).write_text("".join(f"{line}\\n" for line in out))
"""
TOY_METHOD = """
from negcse.methods.registry import register
from negcse.methods.simcse import SimCSE


@register
class ToySimCSE(SimCSE):
    name = "toy_simcse"
    columns = ("toy_negative",)
"""
TOY_CONFIG = """
grid: {methods: [toy_simcse], seeds: [1]}
methods:
  toy_simcse: {implementation: toy_simcse, generators: {toy: {rate: 0.25}}}
"""


@pytest.fixture(scope="module")
def toy_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the checkout with a toy generator spec and a method reading its column."""
    ws = tmp_path_factory.mktemp("toy") / "negcse"
    files = (
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"],
            cwd=REPO,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, files):
        if (REPO / name).is_file():
            (ws / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, ws / name)
    (ws / "src/negcse/generators/specs/toy.py").write_text(TOY_SPEC)
    (ws / "src/negcse/generators/toy.py").write_text(TOY_IMPLEMENTATION)
    (ws / "src/negcse/methods/toy.py").write_text(TOY_METHOD)
    (ws / "toy.yaml").write_text(TOY_CONFIG)
    (ws / "envs/toy.yaml").write_text("channels: [conda-forge]\ndependencies: [python=3.11]\n")
    return ws


def run_in(ws: Path, *cmd: str) -> subprocess.CompletedProcess[str]:
    """``cmd`` in ``ws``, with ``ws``'s package (and so its toy spec) on the path."""
    env = {**os.environ, "PYTHONPATH": str(ws / "src")}
    return subprocess.run(cmd, cwd=ws, capture_output=True, text=True, timeout=900, env=env)


@pytest.mark.slow
@pytest.mark.mirror
def test_toy_generator_feeds_the_method_reading_its_column(toy_workspace: Path) -> None:
    smoke = ["--profile", "profiles/smoke", "--configfile", "tests/smoke/config.yaml", "toy.yaml"]
    proc = run_in(toy_workspace, "snakemake", "-n", "-p", *smoke)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    toy_file = "results/negatives/toy/wiki-smoke/r0.25/seed1.txt"
    toy_job = re.search(r"^rule toy:\n(?:    .*\n)+Shell command: (.*)$", out, flags=re.M)
    assert toy_job, out[-3000:]
    assert f"output: {toy_file}" in toy_job.group(0)
    assert "mem_mb=1000" in toy_job.group(0)
    assert toy_job.group(1) == (
        "python -m negcse.generators.toy results/data/corpus/wiki-smoke.txt "
        f"{toy_file} --seed 1 --rate 0.25 2> logs/negatives/toy/wiki-smoke/r0.25/seed1.log"
    )
    train = re.search(r"^rule train:\n(?:    .*\n)+Shell command: (.*)$", out, flags=re.M)
    assert train and toy_file in train.group(0).split("\n")[1]  # the input line
    assert f"--column toy_negative={toy_file}" in train.group(1)
    # and the job runs: a corpus of three lines, the first quarter of each line's words dropped
    corpus = toy_workspace / "results/data/corpus/wiki-smoke.txt"
    corpus.parent.mkdir(parents=True, exist_ok=True)
    corpus.write_text("a b c d\none two\nw x y z q r s t\n")
    proc = run_in(toy_workspace, "snakemake", toy_file, *smoke, "--allowed-rules", "toy")
    assert proc.returncode == 0, proc.stderr[-3000:]
    # round(0.25 * 4) = 1, round(0.25 * 2) = 0 (half to even), round(0.25 * 8) = 2 words
    assert (toy_workspace / toy_file).read_text() == "b c d\none two\ny z q r s t\n"


# Snakemake prints no rule's conda env without conda installed (not here): read it from the
# parsed workflow (its API; `_workflow` is the parsed Workflow object).
RULE_ENVS = """
from pathlib import Path
from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings, StorageSettings
with SnakemakeApi(OutputSettings()) as api:
    workflow = api.workflow(
        resource_settings=ResourceSettings(), storage_settings=StorageSettings(),
        config_settings=ConfigSettings(configfiles=[Path("tests/smoke/config.yaml"), Path("toy.yaml")]),
        snakefile=Path("Snakefile"), workdir=Path("."),
    )._workflow
    for rule in workflow.rules:
        print("ENV", rule.name, rule.conda_env)
"""


@pytest.mark.slow
@pytest.mark.mirror
def test_toy_generator_runs_in_its_own_conda_env(toy_workspace: Path) -> None:
    """A generator names a second environment (an LLM runtime would): its rule uses it, the
    other rules keep envs/negcse.yaml."""
    proc = run_in(toy_workspace, sys.executable, "-c", RULE_ENVS)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()  # a job-chosen env (GCSE synthesis) prints as a function
    envs = dict(line.split(maxsplit=2)[1:] for line in lines if line.startswith("ENV "))
    assert envs["toy"] == "../envs/toy.yaml"
    assert (toy_workspace / "rules" / envs["toy"]).resolve().is_file()
    assert (envs["negation"], envs["train"]) == ("../envs/negcse.yaml", "../envs/negcse.yaml")
