"""The broken-input matrix on plug-ins, resume, config, verdict inputs and commands: each case
gives one line naming the file, key or argument, exit status 2 and no partial output. Three kinds
answer otherwise, as their commands do for any input: a resumable state that cannot resume is
set aside and the run starts from scratch (one log line); ``negcse doctor`` lists a problem and
exits 1; a run log with an impossible header date is read without a start time."""

from __future__ import annotations

import importlib
import json
import logging
import shutil
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
import torch
import transformers  # noqa: F401  (its log handler takes sys.stderr at import: not a test's)

from negcse import cli, plugins
from negcse.generators import registry as generators
from negcse.methods import registry
from negcse.workflow.config import project_config, resolve_method
from negcse.workflow.status import parse_run_log
from test_broken_inputs import _fresh_logging, _sts_file
from test_reliability import _tiny_trainer

REPO = Path(__file__).resolve().parents[1]


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``python -m negcse ARGS`` in this process: exit status, stdout and stderr."""
    _fresh_logging()  # an earlier module's test may have left a handler on its closed capture
    try:
        code = cli.main(args)
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 1
    out = capsys.readouterr()
    return code, out.out, out.err


def one_error(err: str, *named: str) -> str:
    """The one error line of ``err`` (exit 2's), which names everything in ``named``."""
    assert "Traceback" not in err, err
    (line,) = [line for line in err.splitlines() if "error" in line.lower()]
    for word in named:
        assert word in line, (word, line)
    return line


def fails(args: list[str], capsys: pytest.CaptureFixture[str], *named: str) -> str:
    code, out, err = run_cli(args, capsys)
    assert code == 2, (code, out[-500:], err[-2000:])
    return one_error(err, *named)


def nothing_in(folder: Path) -> None:
    left = sorted(p.name for p in folder.iterdir()) if folder.exists() else []
    assert left == [], left


# -- plug-ins ------------------------------------------------------------------------------------


@pytest.fixture
def plugin_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on sys.path where a test writes a distribution (dist-info and module): found by
    importlib.metadata as pip's would be; the methods registry loads its plug-ins again."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(registry, "_loaded", False)
    monkeypatch.setattr(generators, "SPECS", dict(generators.specs()))
    monkeypatch.setattr(generators, "_LOADED", [True])
    plugins._installed.cache_clear()
    yield site
    plugins._installed.cache_clear()


def install(
    site: Path, dist: str, module: str, source: str, group: str = "methods", obj: str = ""
) -> None:
    """A distribution ``dist`` 0.1 whose negcse.<group> entry point names ``module`` (or its
    ``obj``); the registries load their plug-ins again (the fixture puts their state back)."""
    info = site / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    value = f"{module}:{obj}" if obj else module
    (info / "entry_points.txt").write_text(f"[negcse.{group}]\n{dist} = {value}\n")
    (site / f"{module}.py").write_text(source)
    registry._loaded = False
    generators._LOADED.clear()
    plugins._installed.cache_clear()


@cache
def smoke_run(method: str = "simcse") -> dict:
    """``method``'s resolved run on the smoke grid (what ``negcse train --run`` gets)."""
    config = project_config(REPO, REPO / "tests/smoke/config.yaml")
    return resolve_method(config, method, "splade-tiny")


def train_args(tmp_path: Path, *more: str) -> list[str]:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("a man plays a guitar\na dog runs\n")
    return ["train", "--run", json.dumps(smoke_run()), "--seed", "1", "--corpus", str(corpus),
            "--out", str(tmp_path / "out" / "model"), "--checkpoint-dir",
            str(tmp_path / "out" / "ckpt"), *more]  # fmt: skip


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("import sys\nsys.exit(0)\n", "it exits at import (SystemExit(0))"),
        (
            "import argparse\np = argparse.ArgumentParser()\np.add_argument('--seed', "
            "required=True)\np.parse_args()\n",
            "it exits at import (SystemExit(2): ",
        ),
        ("raise RuntimeError('boom')\n", "cannot import it (RuntimeError: boom)"),
        (
            "class Boom(BaseException):\n    pass\nraise Boom('x')\n",
            "cannot import it (Boom: x)",
        ),
        ("raise GeneratorExit\n", "cannot import it (GeneratorExit: )"),
    ],
    ids=["sys-exit", "argparse", "exception", "base-exception", "generator-exit"],
)
def test_a_plugin_that_exits_at_import_is_one_line_naming_it(
    plugin_site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, said: str
) -> None:
    args = train_args(tmp_path)
    install(plugin_site, "toy-exit", "toy_exit_plugin", source)
    line = fails(args, capsys, "entry point 'toy-exit = toy_exit_plugin'",
                 "(distribution toy-exit 0.1)", said)  # fmt: skip
    assert "usage:" not in line or line.index("usage:") > line.index("SystemExit")
    nothing_in(tmp_path / "out")


def test_a_plugin_object_the_registry_cannot_read_is_one_line_naming_it(
    plugin_site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Method subclass without its ``name``: the registry's AttributeError, named."""
    args = train_args(tmp_path)
    source = "from negcse.methods.base import Method\n\nclass Nameless(Method):\n    pass\n"
    install(plugin_site, "toy-nameless", "toy_nameless_plugin", source, obj="Nameless")
    fails(args, capsys, "entry point 'toy-nameless = toy_nameless_plugin:Nameless'",
          "(distribution toy-nameless 0.1)", "cannot register it (AttributeError: ")  # fmt: skip
    nothing_in(tmp_path / "out")


SHADOW = """from negcse.generators.registry import GeneratorSpec
from negcse.generators.settings import GeneratorSettings

SPEC = GeneratorSpec(name="toy_shadow", columns=("sentence",),
                     output="results/negatives/toy_shadow/{corpus}/seed{seed}.txt",
                     settings=GeneratorSettings)
"""


def test_a_generator_column_named_as_the_corpus_is_refused(
    plugin_site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """Its column would be handed to the training as --column sentence=..., the corpus."""
    install(plugin_site, "toy-shadow", "toy_shadow_plugin", SHADOW, "generators", "SPEC")
    monkeypatch.chdir(REPO)
    fails(["fidelity", "--out", str(tmp_path / "out" / "f.md")], capsys,
          "entry point 'toy-shadow = toy_shadow_plugin:SPEC'", "(distribution toy-shadow 0.1)",
          "generator 'toy_shadow' makes column(s) ['sentence'], a name the corpus holds")  # fmt: skip
    nothing_in(tmp_path / "out")


def test_train_column_cannot_replace_the_corpus(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.txt"
    other.write_text("another corpus\nof two lines\n")
    args = train_args(tmp_path, "--column", f"sentence={other}")
    fails(args, capsys, "--column sentence=", "the corpus's column (--corpus)")
    nothing_in(tmp_path / "out")


def test_train_refuses_a_column_its_method_never_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SimCSE reads the corpus alone: a --column would be ignored unseen, and negcse.json would
    record a file that played no part."""
    extra = tmp_path / "foo.txt"
    extra.write_text("one line\nfor each corpus line\n")  # aligned: only unread
    args = train_args(tmp_path, "--column", f"foo={extra}")
    fails(args, capsys, "--column foo=", "reads no column 'foo'", "the corpus only")
    nothing_in(tmp_path / "out")


# -- command-line numbers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["status", "--watch", "-5"], "argument --watch: -5 is not above 0"),
        (["status", "--watch", "nan"], "argument --watch: 'nan' is not a finite number"),
        (["quickstart", "--tiny", "--cores", "-3"], "argument --cores: -3 is below the minimum 1"),
        (["train", "--threads", "-3"], "argument --threads: -3 is below the minimum 1"),
        (["train", "--seed=-1"], "argument --seed: -1 is below the minimum 0"),
        (["train", f"--seed={2**64}"], f"argument --seed: {2**64} is above the largest seed"),
        (["una-negatives", "--seed=-1", "--corpus", "c", "--tfidf", "t", "--output", "o"],
         "argument --seed: -1 is below the minimum 0"),
    ],
    ids=["status-watch", "status-watch-nan", "quickstart-cores", "train-threads", "train-seed",
         "train-seed-above-torch", "generator-seed"],
)
def test_a_negative_count_is_an_argument_error_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], named: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.chdir(REPO)  # quickstart would start the workflow here
    if args[0] == "train":  # every other argument valid (argparse keeps the last --seed)
        args = [*train_args(tmp_path), *args[1:]]
    fails(args, capsys, named)
    nothing_in(tmp_path / "out")


def test_fidelity_of_an_unknown_backbone_names_the_known_ones(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    line = fails(["fidelity", "--backbone", "nosuch"], capsys, "--backbone", "nosuch")
    assert "known: bert-base-uncased" in line


# -- config --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overlay", "named"),
    [
        ("grid:\n  seeds: [1, 010]\n", ["line 2", "grid.seeds[1]", "octal number 8", "write 10"]),
        ("grid:\n  seeds: [-1]\n", ["grid.seeds.0", "-1 is less than the minimum of 0"]),
        (
            "train:\n  learning_rate: 1e-4\n",
            ["train.learning_rate", "YAML 1.1 reads 1e-4 as text: write 1.0e-4"],
        ),
        ("methods:\n  sncse:\n    baseline: sncse\n", ["methods.sncse.baseline", "itself"]),
        ("grid:\n  seeds: [1.0]\n", ["grid.seeds.0", "1.0 is not of type 'integer'"]),
        ("train:\n  batch_size: 64.0\n", ["train.batch_size", "64.0 is not of type 'integer'"]),
        ("grid:\n  seeds: [1e2]\n", ["grid.seeds.0", "reads 1e2 as text: write 100)"]),
        ("grid:\n  backbones: [no]\n", ["grid.backbones.0", "False", "reads yes, no, on"]),
        ("workflow:\n  on: 1\n", ["unknown key 'workflow.True'", "reads yes, no, on"]),
        ("grid:\n  backbones: [" + "b" * 101 + "]\n", ["grid.backbones.0", "at most 100 characters"]),
    ],
    ids=["octal-seed", "negative-seed", "exponent-as-text", "own-baseline", "float-seed",
         "float-count", "exponent-seed", "yes-no-value", "yes-no-key", "long-name"],
)  # fmt: skip
def test_a_config_trap_is_one_line_naming_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    overlay: str, named: list[str],
) -> None:  # fmt: skip
    monkeypatch.chdir(REPO)
    path = tmp_path / "overlay.yaml"
    path.write_text(overlay)
    out = tmp_path / "out" / "fidelity.md"
    line = fails(["fidelity", "--configfile", str(path), "--out", str(out)], capsys, str(path),
                 *named)  # fmt: skip
    assert "defaults.yaml" not in line, line  # the file that wrote the key, alone
    nothing_in(tmp_path / "out")


# -- the environment: cache, DVC remote, dvc-lock ------------------------------------------------


def test_a_cache_that_is_a_file_is_a_doctor_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The doctor is a diagnostic: it lists every problem and exits 1 (not 2) when it finds
    one; a cache that is a file is one, not an empty cache."""
    cache = tmp_path / "cache"
    cache.write_text("not a folder\n")
    monkeypatch.setenv("NEGCSE_CACHE", str(cache))
    monkeypatch.chdir(REPO)
    code, out, err = run_cli(["doctor"], capsys)
    assert code == 1, (out, err)
    problems = [line for line in out.splitlines() if line.startswith("problem:")]
    assert any(f"$NEGCSE_CACHE={cache} is not a folder" in p for p in problems), out
    assert "empty" not in next(line for line in out.splitlines() if "cache" in line)
    assert cache.read_text() == "not a folder\n"


@pytest.fixture
def dvc_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A DVC repository (no git) with a remote of an empty url and an http one."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["dvc", "init", "--no-scm", "-q"], cwd=repo, check=True)
    with (repo / ".dvc" / "config").open("a") as fh:
        fh.write("['remote \"empty\"']\n    url =\n['remote \"web\"']\n"
                 "    url = http://127.0.0.1:9/store\n['remote \"file\"']\n"
                 f"    url = {tmp_path / 'a-file'}\n")  # fmt: skip
    (tmp_path / "a-file").write_text("not a folder\n")
    monkeypatch.chdir(repo)
    return repo


@pytest.mark.parametrize(
    ("remote", "named"),
    [
        ("empty", ["remote 'empty'", "this repository's own folder", "dvc remote modify empty"]),
        ("web", ["remote 'web' (http://127.0.0.1:9/store)", "cannot list a folder"]),
        ("file", ["remote 'file' (", "a-file): a file, not a folder"]),
    ],
)
def test_a_remote_that_cannot_be_checked_is_one_line(
    dvc_repo: Path, capsys: pytest.CaptureFixture[str], remote: str, named: list[str]
) -> None:
    before = sorted(p.name for p in (dvc_repo / ".dvc").iterdir())
    line = fails(["remote-check", "--remote", remote], capsys, *named)
    assert "NotImplementedError: NotImplementedError" not in line
    assert sorted(p.name for p in (dvc_repo / ".dvc").iterdir()) == before


@pytest.mark.parametrize(
    ("dvc_yaml", "params", "named"),
    [
        ("stages: {}\n", "workflow: {profile: profiles/local}\n", ["dvc.yaml", "stages.workflow"]),
        (
            None,
            "workflow: {profile: ../../etc}\n",
            ["params.yaml", "workflow.profile", "../../etc"],
        ),
        (None, "workflow: {profile: [\n", ["params.yaml", "not valid YAML at line"]),
    ],
    ids=["no-stage", "profile-outside", "params-not-yaml"],
)
def test_dvc_lock_of_a_broken_project_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dvc_yaml: str | None, params: str,
    named: list[str],
) -> None:  # fmt: skip
    root = tmp_path / "root"
    root.mkdir()
    (root / "dvc.yaml").write_text(dvc_yaml or (REPO / "dvc.yaml").read_text())
    (root / "params.yaml").write_text(params)
    (root / "profiles" / "local").mkdir(parents=True)
    fails(["dvc-lock", "--root", str(root)], capsys, *named)
    assert sorted(p.name for p in root.iterdir()) == ["dvc.yaml", "params.yaml", "profiles"]


# -- status --------------------------------------------------------------------------------------


def test_status_of_a_config_with_a_string_seed_names_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    overlay = tmp_path / "seed.yaml"
    overlay.write_text('grid:\n  seeds: ["a"]\n')
    monkeypatch.chdir(REPO)
    fails(["status", "--configfile", str(overlay)], capsys, str(overlay), "invalid config",
          "key 'grid.seeds.0': 'a' is not of type 'integer'")  # fmt: skip


@pytest.mark.parametrize("text", ["", "- a list\n"], ids=["empty", "a-list"])
def test_status_of_a_config_file_without_keys_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    text: str,
) -> None:  # fmt: skip
    """Snakemake's own refusal ("Config file must be given as JSON or YAML with keys at top
    level.") names no file."""
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(text)
    monkeypatch.chdir(REPO)
    fails(["status", "--configfile", str(overlay)], capsys, str(overlay),
          "expected a mapping of keys at the top level")  # fmt: skip


def test_a_run_log_header_with_an_impossible_date_has_no_start() -> None:
    """A log no Snakemake wrote (2026-02-30): its jobs are read, its start is unknown."""
    text = (
        "Building DAG of jobs...\nDate: 2026-02-30 10:00:00\n"
        "[Mon Feb 30 10:00:01 2026]\nrule corpus:\n    output: results/data/corpus/x.txt\n"
        "    jobid: 3\n    reason: Missing output files\n    resources: tmpdir=/tmp\n\n"
        "[Mon Feb 30 10:00:02 2026]\nFinished jobid: 3 (Rule: corpus)\n"
    )
    log = parse_run_log(text)
    assert log.start is None
    assert log.finished == {3}
    assert log.started == {3: ("results/data/corpus/x.txt",)}


# -- training curves -----------------------------------------------------------------------------

CURVE = [
    {"step": 5, "loss": 1.5, "parts": {"infonce": 1.5}},
    {"step": 10, "loss": 1.2, "parts": {"infonce": 1.2}},
    {"step": 10, "stsb_dev": 61.0},
    {"step": 10, "seconds": 3.0},
]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (
            lambda c: c.insert(3, {"step": 10, "stsb_dev": 99.0}),
            "two 'stsb_dev' entries at step 10",
        ),
        (lambda c: c[1].update(parts=[1.2]), "curve, step 10: 'parts' must be an object"),
        (lambda c: c[0].update(step=-5), "curve[0] has no 'step' (an integer >= 0)"),
        (lambda c: c[0].update(step=True), "curve[0] has no 'step' (an integer >= 0)"),
        (lambda c: c[2].update(stsb_dev=150.0), "stsb_dev 150.0 is no Spearman correlation"),
    ],
    ids=["two-dev-scores", "parts-a-list", "negative-step", "boolean-step", "score-out-of-range"],
)
def test_curves_data_of_a_bad_curve_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change, named: str
) -> None:
    model = tmp_path / "model"
    model.mkdir()
    curve = json.loads(json.dumps(CURVE))
    change(curve)
    log = {"curve": curve, "method": "simcse", "backbone": "splade-tiny", "seed": 1}
    (model / "train_log.json").write_text(json.dumps(log))
    out = tmp_path / "out"
    args = ["curves-data", "--models", str(model), "--out", str(out / "curves.csv"),
            "--loss-out", str(out / "loss.csv")]  # fmt: skip
    fails(args, capsys, str(model / "train_log.json"), named)
    nothing_in(out)
    curve = json.loads(json.dumps(CURVE))  # the valid curve is drawn
    (model / "train_log.json").write_text(json.dumps({**log, "curve": curve}))
    assert run_cli(args, capsys)[0] == 0
    assert (out / "curves.csv").read_text().splitlines()[1:] == [
        "simcse,SimCSE,SimCSE,splade-tiny,1,10,61.0"
    ]


@pytest.mark.parametrize(
    ("tags", "named"),
    [
        ({"seed": True}, "seed: expected a seed (an integer from 0 to 2^64 - 1), got True"),
        ({"seed": -5}, "seed: expected a seed"),
        ({"method": "simcse|\n<b>"}, "method: expected a name"),
        ({"backbone": ["tiny"]}, "backbone: expected a name or org/name"),
    ],
    ids=["boolean-seed", "negative-seed", "method-markup", "backbone-list"],
)
def test_curves_data_checks_the_run_record_of_its_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tags: dict, named: str
) -> None:
    """A training log holds the run's record (negcse.json's keys): checked by its validator."""
    model = tmp_path / "model"
    model.mkdir()
    log = {"curve": CURVE, "method": "simcse", "backbone": "splade-tiny", "seed": 1, **tags}
    (model / "train_log.json").write_text(json.dumps(log))
    out = tmp_path / "out"
    fails(["curves-data", "--models", str(model), "--out", str(out / "curves.csv")], capsys,
          str(model / "train_log.json"), named)  # fmt: skip
    nothing_in(out)


@pytest.mark.parametrize("where", ["one-file-twice", "in-the-model-folder"])
def test_an_output_is_neither_another_output_nor_in_a_model_folder_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    """--out and --loss-out naming one file (the losses replaced the curves), --out in a model
    folder the command reads (it replaced train_log.json): one line, nothing written."""
    model = tmp_path / "model"
    model.mkdir()
    log = {"curve": CURVE, "method": "simcse", "backbone": "splade-tiny", "seed": 1}
    (model / "train_log.json").write_text(json.dumps(log))
    out = tmp_path / "out"
    if where == "one-file-twice":
        args, named = ["--out", out / "c.csv", "--loss-out", out / "c.csv"], "--out and --loss-out"
    else:
        args, named = ["--out", model / "train_log.json"], "inside the model folder"
    fails(["curves-data", "--models", str(model), *map(str, args)], capsys, named)
    nothing_in(out)
    assert json.loads((model / "train_log.json").read_text()) == log


# -- verdict inputs ------------------------------------------------------------------------------


def _verdicts(
    tmp_path: Path, files: list[Path], capsys: pytest.CaptureFixture[str], *named: str,
    more: tuple[str, ...] = (),
):  # fmt: skip
    out = tmp_path / "out"
    args = ["table", "verdicts", "--evals", *map(str, files), "--csv", str(out / "v.csv"),
            "--md", str(out / "v.md"), *more]  # fmt: skip
    line = fails(args, capsys, *named)
    nothing_in(out)
    return line


def test_seeds_written_differently_are_not_counted_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seeds "1", "01" and "2": "01" is refused, not a third seed."""
    files = [_sts_file(tmp_path / f"simcse{s}.json", "simcse", s) for s in (1, 2)]
    files += [_sts_file(tmp_path / f"sncse{s}.json", "sncse", s) for s in (1, 2, 3)]
    third = json.loads(files[-1].read_text())
    files[-1].write_text(json.dumps({**third, "seed": "01"}))
    _verdicts(tmp_path, files, capsys, str(files[-1]), "seed '01' is not a whole number")


@pytest.mark.parametrize(
    ("baselines", "named"),
    [
        (["sncse=sncse"], "--baselines sncse=sncse: a method is compared with another"),
        (["sncse=simcse", "sncse=una"], "--baselines: sncse given twice"),
        (["sncse=simcse|x"], "--baselines 'sncse=simcse|x': 'simcse|x' is not a name"),
    ],
    ids=["own-baseline", "twice", "not-a-name"],
)
def test_a_declared_baseline_is_another_method_named_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], baselines: list[str], named: str
) -> None:
    """The flag the workflow passes methods.<m>.baseline through: its own row would read
    "SNCSE vs SNCSE 0.00 [+0.00, +0.00]", and a second value would replace the first."""
    files = [_sts_file(tmp_path / f"{m}{s}.json", m, s) for m in ("simcse", "sncse") for s in (1, 2)]
    _verdicts(tmp_path, files, capsys, named, more=("--baselines", *baselines))


def test_seeds_with_bit_identical_cosines_are_copies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = [_sts_file(tmp_path / f"simcse{s}.json", "simcse", s) for s in (1, 2, 3)]
    first = json.loads(_sts_file(tmp_path / "sncse1.json", "sncse", 1).read_text())
    files.append(tmp_path / "sncse1.json")
    for seed in (2, 3):  # seed 1's file under other seeds
        files.append(tmp_path / f"sncse{seed}.json")
        files[-1].write_text(json.dumps({**first, "seed": str(seed)}))
    _verdicts(tmp_path, files, capsys, str(files[-2]), "bit-identical",
              str(tmp_path / "sncse1.json"), "(seed 1)")  # fmt: skip


# -- training: the loss, the code and the curve a run resumes ------------------------------------

INF_LOSS = """import math

from negcse.methods.base import LossOutput
from negcse.methods.registry import register
from negcse.methods.simcse import SimCSE


@register
class ToyInf(SimCSE):
    name = "toy_inf"

    def loss(self, emb, ctx):
        out = super().loss(emb, ctx)
        if ctx.step < 5:
            return out
        return LossOutput(out.loss * math.inf, {"infonce": out.logs["infonce"] * math.inf})
"""


def test_a_loss_that_turns_infinite_is_named_at_its_step(
    plugin_site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Said at the logged step it shows (not at the end, naming a temporary folder)."""
    spec = {**smoke_run(), "method": "toy_inf", "implementation": "toy_inf"}
    spec["train"] = {**spec["train"], "batch_size": 4, "max_steps": 8, "eval_steps": 8,
                     "checkpoint_steps": 4, "log_steps": 2}  # fmt: skip
    args = train_args(tmp_path)
    args[args.index("--run") + 1] = json.dumps(spec)
    Path(args[args.index("--corpus") + 1]).write_text(
        "".join(f"sentence number {i} of a small corpus\n" for i in range(40))
    )
    install(plugin_site, "toy-inf", "toy_inf_plugin", INF_LOSS)
    line = fails(
        args, capsys, "method 'toy_inf'", "not finite at step 6", "loss inf", "infonce inf"
    )
    assert line.startswith("negcse train: error: "), line
    assert ".tmp" not in line
    assert not (tmp_path / "out" / "model").exists()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["ckpt"]  # resumable state


EDITABLE_LOSS = """from negcse.methods.base import LossOutput
from negcse.methods.simcse import SimCSE

SCALE = 1.0


class ToyEdit(SimCSE):
    name = "toy_edit"

    def loss(self, emb, ctx):
        out = super().loss(emb, ctx)
        return LossOutput(out.loss * SCALE, out.logs)
"""


def test_a_loss_edited_between_kill_and_rerun_does_not_resume(
    plugin_site: Path, tmp_path: Path, splade_tiny: Path, caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """An editable install's loss changed after the kill: its code digest differs, so the run
    starts from scratch, naming it (one loss per model, never two mixed)."""
    install(plugin_site, "toy-edit", "toy_edit_plugin", EDITABLE_LOSS)
    module = importlib.import_module("toy_edit_plugin")
    monkeypatch.delitem(sys.modules, "toy_edit_plugin")
    method = module.ToyEdit(module.ToyEdit.Params.from_dict({"temperature": 0.05}, "p"), "tiny")
    monkeypatch.setattr(registry, "build_method", lambda *a, **k: method)
    ckpt = tmp_path / "ckpt"
    _tiny_trainer(splade_tiny, ckpt).train()  # killed after step 1: last.pt
    source = plugin_site / "toy_edit_plugin.py"
    source.write_text(source.read_text().replace("SCALE = 1.0", "SCALE = 2.0"))
    caplog.set_level(logging.INFO, "negcse")
    state = _tiny_trainer(splade_tiny, ckpt).train()
    assert state.step == 2 and "resumed" not in caplog.text
    (line,) = [r.getMessage() for r in caplog.records if "not resuming" in r.getMessage()]
    assert "code.toy_edit_plugin.source_sha256 changed" in line, line
    assert "starting from scratch" in line


@pytest.fixture(scope="module")
def logged_state(tmp_path_factory: pytest.TempPathFactory, splade_tiny: Path) -> Path:
    """A run's resumable state after step 2 of 3, its curve holding the loss and the dev score
    of steps 1 and 2."""
    ckpt = tmp_path_factory.mktemp("run") / "ckpt"
    _tiny_trainer(splade_tiny, ckpt, **CURVE_RUN).train()
    return ckpt


CURVE_RUN = {"max_steps": 3, "eval_steps": 1, "log_steps": 1, "checkpoint_steps": 2}


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda curve: curve.clear(), "its curve holds 0 entries where the run wrote 4"),
        (lambda curve: curve.append({"step": 15, "stsb_dev": 99.0}), "entries beyond its step 2"),
    ],
    ids=["emptied", "beyond-the-step"],
)
def test_a_curve_that_disagrees_with_the_saved_step_is_not_resumed(
    logged_state: Path, tmp_path: Path, splade_tiny: Path, caplog: pytest.LogCaptureFixture,
    change, why: str,
) -> None:  # fmt: skip
    ckpt = tmp_path / "ckpt"
    shutil.copytree(logged_state, ckpt)
    payload = torch.load(ckpt / "last.pt", weights_only=True)
    assert payload["state"]["step"] == 2 and len(payload["state"]["curve"]) == 4
    change(payload["state"]["curve"])
    torch.save(payload, ckpt / "last.pt")
    caplog.set_level(logging.INFO, "negcse")
    state = _tiny_trainer(splade_tiny, ckpt, **CURVE_RUN).train()
    assert "resumed" not in caplog.text
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "(invalid)" in errors[0] and why in errors[0], errors
    assert [(p["step"], "stsb_dev" in p) for p in state.curve if "seconds" not in p] == [
        (1, False), (1, True), (2, False), (2, True), (3, False), (3, True)
    ]  # fmt: skip


def test_a_checkpoint_that_is_a_folder_is_named_and_set_aside(
    tmp_path: Path, splade_tiny: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``last.pt`` a folder (a copy gone wrong): one error line names it, it is moved beside the
    checkpoint folder, and the run trains from scratch to its end (never a silent restart)."""
    ckpt = tmp_path / "ckpt"
    (ckpt / "last.pt").mkdir(parents=True)
    caplog.set_level(logging.INFO, "negcse")
    state = _tiny_trainer(splade_tiny, ckpt).train()
    assert state.step == 2 and "resumed" not in caplog.text
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, errors
    assert "last.pt" in errors[0] and "a folder, not a training state" in errors[0], errors
    assert (tmp_path / "ckpt.not-a-file.pt").is_dir()


def test_a_tag_name_longer_than_a_file_name_part_is_refused() -> None:
    """Names reach file names (results/.../<method>/<backbone>/...): at most 100 characters a
    part, in the config (the schema's maxLength) and in every tag (negcse.text.names)."""
    from negcse.errors import UserError
    from negcse.text.names import BACKBONE, MAX_LENGTH, check_name

    assert check_name("m" * MAX_LENGTH, "--tag method") == "m" * MAX_LENGTH
    with pytest.raises(UserError, match=r"--tag method: 'm+' is not a name .*at most 100"):
        check_name("m" * (MAX_LENGTH + 1), "--tag method")
    assert check_name(f"org/{'b' * MAX_LENGTH}", "--tag backbone", BACKBONE)
    with pytest.raises(UserError, match="at most 100"):
        check_name(f"org/{'b' * (MAX_LENGTH + 1)}", "--tag backbone", BACKBONE)
