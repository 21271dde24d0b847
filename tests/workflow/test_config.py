"""params.yaml validation and the precedence of settings."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from negcse.evaluation.registry import Evaluation, Job, register, unregister
from negcse.workflow.config import (
    ConfigError,
    check_config,
    grid_output,
    grid_runs,
    method_seeds,
    project_config,
    resolve_method,
    schema,
)
from negcse.workflow.guide_config import guide_models, guide_outputs

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def config() -> dict:
    return project_config(REPO, check=False)


def test_shipped_configs_are_valid() -> None:
    project_config(REPO)
    project_config(REPO, REPO / "tests" / "smoke" / "config.yaml")
    smoke = REPO / "tests" / "smoke"
    overlay = project_config(REPO, smoke / "config.yaml", smoke / "gcse-domain.yaml")
    domain = overlay["corpora"]["gcse-domain"]
    # the overlay replaces the general source only: the domain sources are params.yaml's
    assert domain["general"]["files"] == ["unlabeled/wiki1m/wiki1m_random10k.txt"]
    assert [s["reader"] for s in domain["domain"]] == ["sts_pairs", "paws_pairs", "sick_pairs"]
    # a grid of its own: its tables never land on the default smoke grid's
    assert overlay["grid"]["name"] == "gcse-domain"
    for name in ("simcse-only", "main-methods", "one-seed"):
        assert project_config(REPO, REPO / "config" / f"{name}.yaml")["grid"][
            "name"
        ] == name


def test_the_smoke_grid_holds_all_six_systems_with_their_teachers_and_stage_1() -> None:
    """`make smoke`'s grid: the 19 methods at seed 1 but one claim pair (simcse, sncse) at
    three seeds, each guide of RankCSE, RankCSE+SAN, RLRD, RLRD+SAN and GCSE a run of the grid
    at the same seed."""
    config = project_config(REPO, REPO / "tests" / "smoke" / "config.yaml")
    grid = config["grid"]
    added = ["rankcse", "rankcse_san", "rlrd", "rlrd_san", "gcse"]
    assert grid["methods"][-5:] == added and len(grid["methods"]) == 19
    assert "name" not in grid  # the default grid: results/tables
    runs = {f"results/models/{m}/{b}/seed{s}" for m, b, s in grid_runs(config)}
    # GCSE's stage 1 is a guide-only run of the workflow (no table row), at GCSE's seed
    assert "gcse_stage1" in config["methods"] and "gcse_stage1" not in grid["methods"]
    runs.add("results/models/gcse_stage1/splade-tiny/seed1")
    for method in grid["methods"]:
        seeds = method_seeds(config, method, "splade-tiny")
        assert seeds == ([1, 2, 3] if method in ("simcse", "sncse") else [1]), method
        for seed in seeds:
            guides = guide_models(config, method, "splade-tiny", seed)
            assert bool(guides) == (method in added), method
            # every guide a run of the workflow at the student's seed, trained by it first
            assert guides == guide_outputs(config, method, "splade-tiny", seed)
            assert all(folder.endswith(f"/seed{seed}") for folder in guides.values())
            assert set(guides.values()) <= runs, (method, guides)
    assert config["generators"]["gcse"]["model"] == "smollm2-135m-instruct-q4_1"


def test_a_named_grid_writes_its_grid_wide_outputs_in_its_own_folder() -> None:
    default = {"grid": {"methods": ["simcse"]}}
    named = {"grid": {"methods": ["simcse"], "name": "gcse-domain"}}
    assert grid_output(default, "results/tables/{table}.md") == "results/tables/{table}.md"
    assert grid_output(named, "results/tables/{table}.md") == (
        "results/grids/gcse-domain/tables/{table}.md"
    )
    assert grid_output(named, "logs/tables/sts.log") == "logs/grids/gcse-domain/tables/sts.log"
    with pytest.raises(ValueError, match="not under results/ or logs/"):
        grid_output(named, "benchmarks/x.tsv")


@pytest.mark.parametrize("name", ["../up", "a/b", "", "-x", "a b"])
def test_a_grid_name_that_is_no_folder_name_is_refused(config: dict, name: str) -> None:
    config["grid"]["name"] = name
    with pytest.raises(ConfigError, match="grid.name"):
        check_config(config)


@pytest.mark.parametrize(
    ("path", "key"),
    [
        (("train",), "learnig_rate"),
        (("corpus",), "max_sentence"),
        ((), "evalution"),
        (("methods", "simcse"), "param"),
    ],
)
def test_misspelt_key_is_named(config: dict, path: tuple[str, ...], key: str) -> None:
    bad = copy.deepcopy(config)
    node = bad
    for p in path:
        node = node[p]
    node[key] = 1
    with pytest.raises(ConfigError) as err:
        check_config(bad)
    assert f"unknown key '{'.'.join([*path, key])}'" in str(err.value)


@pytest.mark.parametrize(
    ("path", "key"), [(("evaluation", "transfer"), "task"), (("evaluation", "splits"), "dataset")]
)
def test_an_evaluations_own_key_is_typed_by_its_module(
    config: dict, path: tuple[str, ...], key: str
) -> None:
    """transfer's and splits' keys come from their Job.schema, with the same checks."""
    evaluation = schema()["properties"]["evaluation"]["properties"]
    assert evaluation["transfer"]["properties"]["kfold"] == {
        "type": "integer",
        "minimum": 2,
        "default": 10,
        "description": "cross-validation folds",
    }
    config["evaluation"][path[1]] = {key: 1}
    with pytest.raises(ConfigError, match=f"unknown key '{'.'.join([*path, key])}'"):
        check_config(config)
    config["evaluation"]["transfer"] = {"kfold": 1}
    with pytest.raises(ConfigError, match="key 'evaluation.transfer.kfold': 1 is less than"):
        check_config(config)


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("evaluation.transfer", "config key 'evaluation.transfer' is typed twice"),
        ("corpus.name.x", "config key 'corpus.name.x': 'name' is not an object"),
    ],
)
def test_an_evaluation_key_in_conflict_is_refused(key: str, message: str) -> None:
    class Clash(Evaluation):
        name = "clash"
        help = "types a key the schema has"
        job = Job(order=99, config_key=key, schema={"type": "object"})

        def run(self, encoder, settings):  # type: ignore[no-untyped-def]
            return {}

    register(Clash)
    try:
        with pytest.raises(ValueError, match=f"evaluation 'clash': {message}"):
            schema()
    finally:
        unregister("clash")


def test_unknown_method_parameter_is_named(config: dict) -> None:
    config["methods"]["simcse"]["params"]["temprature"] = 0.1
    with pytest.raises(ConfigError, match="methods.simcse.params.temprature: unknown parameter"):
        check_config(config)


def test_wrong_type_names_key(config: dict) -> None:
    config["train"]["batch_size"] = "big"
    with pytest.raises(ConfigError, match="key 'train.batch_size'"):
        check_config(config)


def test_a_methods_paper_is_one_of_the_papers(config: dict) -> None:
    config["methods"]["simcse"]["paper"] = "simcse"  # no page of its own: not one of the five
    with pytest.raises(ConfigError, match="methods.simcse.paper: unknown paper 'simcse'; known"):
        check_config(config)


def test_grid_method_must_be_configured(config: dict) -> None:
    config["grid"]["methods"] = ["simcse", "nosuch"]
    with pytest.raises(ConfigError, match="methods.nosuch is missing"):
        check_config(config)


def test_precedence(config: dict) -> None:
    run = resolve_method(config, "simcse", "roberta-base")
    assert run["train"]["batch_size"] == 512 and run["train"]["learning_rate"] == 1e-5
    assert resolve_method(config, "simcse", "bert-base-uncased")["train"]["learning_rate"] == 3e-5
    config["train_overrides"] = {"learning_rate": 1e-4}
    assert resolve_method(config, "simcse", "roberta-base")["train"]["learning_rate"] == 1e-4
    assert resolve_method(config, "simcse", "roberta-base")["train"]["batch_size"] == 512


def test_corpora_and_method_corpus_are_checked(config: dict) -> None:
    """GCSE's domain setting: a method's corpus must exist, a mixed corpus's files must be
    registered, and only the methods that set a corpus carry it in their run spec."""
    assert resolve_method(config, "gcse_domain", "bert-base-uncased")["corpus"] == "gcse-domain"
    assert "corpus" not in resolve_method(config, "gcse", "bert-base-uncased")
    bad = copy.deepcopy(config)
    bad["methods"]["gcse_domain"]["corpus"] = "gcse-domian"
    with pytest.raises(ConfigError, match="methods.gcse_domain.corpus: 'gcse-domian' is neither"):
        check_config(bad)
    bad = copy.deepcopy(config)
    bad["corpora"]["gcse-domain"]["domain"][2]["files"] = ["raw/SICK/SICK_trian.txt"]
    with pytest.raises(ConfigError, match=r"corpora.gcse-domain.domain\[2\].files: 'raw/SICK/"):
        check_config(bad)
    bad = copy.deepcopy(config)
    bad["corpora"]["gcse-domain"]["use_domain"] = False
    bad["corpora"]["gcse-domain"]["use_general"] = False
    with pytest.raises(ConfigError, match="use_domain and use_general both false"):
        check_config(bad)
    bad = copy.deepcopy(config)
    bad["corpora"]["gcse-domain"]["domain"][0]["reader"] = "tsv"
    with pytest.raises(ConfigError, match="corpora.gcse-domain.domain.0.reader"):
        check_config(bad)


#: the seeds UNA's Table D7 prints
UNA_D7_SEEDS = [42, 0, 1, 11, 15, 48, 111, 421, 456, 3407]


def test_seeds_follow_the_plan_and_a_method_can_have_its_own(
    config: dict,
) -> None:
    """A claim row's planned seeds (negcse.workflow.seed_plan; tests/workflow/test_seed_plan.py)
    for the methods of a claim on its backbone, one seed elsewhere; a method's or a backbone's
    own seeds first: UNA's Table D7 (ten seeds of una_baseline and una_both on BERT-base), one
    seed for a method no claim names."""
    from negcse.workflow import seed_plan
    from negcse.workflow.config import grid_runs, method_seeds

    assert config["verdicts"]["min_seeds"] == 3
    # SNCSE's +2.87 on RoBERTa-large needs 10 seeds in its family of 8
    assert method_seeds(config, "simcse", "roberta-large") == list(range(42, 52))
    assert method_seeds(config, "una_both", "bert-base-uncased") == UNA_D7_SEEDS
    # UNA's RoBERTa-base claims reach at most 0.26 power at 10 seeds: the fewest seeds
    assert method_seeds(config, "una_both", "roberta-base") == [42, 43, 44]
    counts = seed_plan.planned_counts(config)
    runs = grid_runs(config)
    assert len(runs) == len(set(runs))
    for method, backbone, _ in runs:
        entry = config["methods"][method]
        if entry.get("seeds") or (entry.get("backbones") or {}).get(backbone, {}).get("seeds"):
            continue
        n = len(method_seeds(config, method, backbone))
        assert n == counts.get((method, backbone), 1), (method, backbone)
    config["methods"]["osscse"]["seeds"] = [7, 8]  # the method's own, on every backbone
    config["methods"]["osscse"]["backbones"] = {"roberta-base": {"seeds": [9]}}
    assert method_seeds(config, "osscse", "bert-base-uncased") == [7, 8]
    assert method_seeds(config, "osscse", "roberta-base") == [9]
    check_config(config)
    one = project_config(REPO, REPO / "config" / "one-seed.yaml")
    assert method_seeds(one, "simcse", "roberta-large") == [42]
    assert method_seeds(one, "una_both", "bert-base-uncased") == UNA_D7_SEEDS
    assert len(grid_runs(one)) == 37 * 4 + 2 * 9
    config["methods"]["osscse"]["seeds"] = [7, 7]
    with pytest.raises(ConfigError, match="methods.osscse.seeds"):
        check_config(config)


def test_dvc_tracks_every_params_yaml_key() -> None:
    """`dvc repro` / `dvc exp run -S` see a change of any key of params.yaml (the whole file is
    the stage's params, an override of a default written there included) and of any default
    (config/defaults.yaml is a dependency)."""
    stage = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]["workflow"]
    assert stage["params"] == [{"params.yaml": None}]
    assert "config/defaults.yaml" in stage["deps"]


def test_an_override_in_params_yaml_wins_over_the_defaults(tmp_path: Path) -> None:
    defaults = project_config(REPO, check=False)["methods"]["simcse"]
    assert defaults["params"]["temperature"] == 0.05  # SimCSE's
    params = tmp_path / "params.yaml"
    text = (REPO / "params.yaml").read_text(encoding="utf-8")
    params.write_text(text + "methods:\n  simcse:\n    params:\n      temperature: 0.1\n")
    merged = project_config(REPO, params=params)
    simcse = merged["methods"]["simcse"]
    assert simcse["params"]["temperature"] == 0.1  # the override
    assert simcse["implementation"] == defaults["implementation"]  # the rest: the defaults'
    assert resolve_method(merged, "simcse", "bert-base-uncased")["params"]["temperature"] == 0.1
    # an overlay (--configfile) still wins over both
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("methods: {simcse: {params: {temperature: 0.2}}}\n")
    assert project_config(REPO, overlay, params=params)["methods"]["simcse"]["params"][
        "temperature"
    ] == 0.2


def test_an_unknown_key_in_params_yaml_is_named_there(tmp_path: Path) -> None:
    params = tmp_path / "params.yaml"
    text = (REPO / "params.yaml").read_text(encoding="utf-8")
    params.write_text(text + "methods:\n  simcse:\n    params:\n      temprature: 0.1\n")
    with pytest.raises(ConfigError) as caught:
        project_config(REPO, params=params)
    assert str(caught.value).startswith(f"{params}: ")
    assert "temprature" in str(caught.value)
    params.write_text(text + "trian: {epochs: 2}\n")
    with pytest.raises(ConfigError) as caught:
        project_config(REPO, params=params)
    message = str(caught.value)
    assert message == f"{params}: invalid config:\n  unknown key 'trian' (misspelt?)", message


def test_the_fast_yaml_loader_reads_every_config_as_the_safe_loader_does() -> None:
    """``negcse.io_utils.yaml_value`` (libyaml where PyYAML has it) gives ``yaml.safe_load``'s
    value for every YAML file a run reads, and its error names the same line."""
    from negcse.io_utils import YAML_LOADER, yaml_value

    assert YAML_LOADER is yaml.CSafeLoader  # PyYAML's wheels are built with libyaml
    root = Path(__file__).resolve().parents[2]
    paths = [root / "params.yaml", root / "src/negcse/schemas/config.schema.yaml",
             *(root / "config").glob("*.yaml"), *(root / "tests/smoke").glob("*.yaml"),
             *(root / "profiles").glob("*/*.yaml")]  # fmt: skip
    assert len(paths) > 10
    for path in paths:
        text = path.read_text(encoding="utf-8")
        assert yaml_value(text) == yaml.safe_load(text), path
    bad = "a: 1\nb: [2\nc: 3\n"
    with pytest.raises(yaml.YAMLError) as fast:
        yaml_value(bad)
    with pytest.raises(yaml.YAMLError) as slow:
        yaml.safe_load(bad)
    assert fast.value.problem_mark.line == slow.value.problem_mark.line == 2  # "c: 3"
