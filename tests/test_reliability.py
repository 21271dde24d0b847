"""Bad input as a hostile but realistic user gives it (typos, fakes, corrupted or malicious files,
kills): every case fails with a short message naming the file, line or key, a non-zero exit, no
traceback and no output or partial file; nothing gives a wrong result with exit code 0."""

from __future__ import annotations

import errno
import json
import logging
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from negcse import cli, io_utils
from negcse.data.sources import is_local_path, registry
from negcse.errors import UserError
from negcse.workflow.config import ConfigError, check_config, load_config, project_config

pytestmark = pytest.mark.mirror
REPO = Path(__file__).resolve().parents[1]
WIKI = "unlabeled/wiki1m/wiki1m_for_simcse.txt"


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``python -m negcse ARGS`` in this process: exit status and stderr."""
    try:
        code = cli.main(args)
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 1
    return code, capsys.readouterr().err


def assert_clean_failure(code: int, err: str, *named: str, lines: int = 2) -> None:
    """Non-zero exit; the message's first ``lines`` lines name everything in ``named``."""
    assert code != 0
    assert "Traceback" not in err
    head = "\n".join(line for line in err.splitlines() if "error" in line.lower())
    head = "\n".join(head.splitlines()[:lines])
    for word in named:
        assert word in head, (word, err[-2000:])


def assert_nothing_written(folder: Path) -> None:
    left = [p.name for p in folder.iterdir()] if folder.exists() else []
    assert left == [], left


# -- 1. a model path is a path --------------------------------------------------------------------


def test_mistyped_model_path_is_not_replaced_by_the_mirror_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = tmp_path / "some" / "typo" / "splade-tiny"  # the mirror has a splade-tiny
    out = tmp_path / "out"
    code, err = run_cli(
        ["evaluate", "--only", "sts", "--model", str(typo), "--sts-out", str(out / "sts.json")],
        capsys,
    )
    assert code == 2
    assert_clean_failure(code, err, str(typo), "does not exist", lines=1)
    assert_nothing_written(out)


@pytest.mark.parametrize(
    ("name", "is_path"),
    [
        ("splade-tiny", False),
        ("google/splade-tiny", False),  # a hub id: namespace/name
        ("/abs/splade-tiny", True),
        ("./splade-tiny", True),
        ("../models/splade-tiny", True),
        ("~/splade-tiny", True),
        ("results/models/splade-tiny", True),
        ("tests/splade-tiny", True),  # its first folder exists here
    ],
)
def test_which_names_are_local_paths(name: str, is_path: bool, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    assert is_local_path(name) is is_path


# -- 2. the training corpus is checked before any use ---------------------------------------------


def test_registry_line_counts_match_the_mirror_manifest(mirror: Path) -> None:
    manifest = {}
    for line in (mirror / "data" / "MANIFEST.tsv").read_text().splitlines()[1:]:
        cols = line.split("\t")
        manifest[cols[0]] = int(cols[7])
    shared = [rel for rel in registry() if rel in manifest]
    assert len(shared) > 100
    assert all(registry()[rel].lines == manifest[rel] for rel in shared)
    assert registry()[WIKI].lines == 1_000_000 and registry()[WIKI].sha256 is not None


def test_three_line_fake_corpus_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEGCSE_CACHE", str(tmp_path / "cache"))
    fake = tmp_path / "mirror" / "data" / WIKI
    fake.parent.mkdir(parents=True)
    fake.write_text("one sentence.\nanother one.\na third.\n")
    out = tmp_path / "out"
    code, err = run_cli(
        [
            "prepare-corpus",
            "--source",
            WIKI,
            "--mirror",
            str(tmp_path / "mirror"),
            "--out",
            str(out / "corpus.txt"),
            "--stats",
            str(out / "stats.json"),
        ],
        capsys,
    )
    assert code == 2
    assert_clean_failure(code, err, str(fake), "3 lines", "1000000", lines=1)
    assert_nothing_written(out)


def test_corrupted_data_file_is_one_line(
    tmp_path: Path, mirror: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    monkeypatch.setenv("NEGCSE_CACHE", str(tmp_path / "cache"))
    rel = "senteval/STS/STS13-en-test/STS.gs.FNWN.txt"
    bad = tmp_path / "mirror" / "data" / rel
    bad.parent.mkdir(parents=True)
    text = (mirror / "data" / rel).read_text()
    bad.write_text(text.replace("4", "3", 1))  # same line count, other bytes
    manifest = tmp_path / "out" / "manifest.tsv"
    code, err = run_cli(
        [
            "fetch-data",
            "--files",
            rel,
            "--mirror",
            str(bad.parents[4]),
            "--manifest",
            str(manifest),
        ],
        capsys,
    )
    assert_clean_failure(code, err, str(bad), "sha256", lines=1)
    assert_nothing_written(manifest.parent)


# -- 3 and 4. backbones and methods named anywhere ------------------------------------------------


@pytest.fixture
def config() -> dict:
    return project_config(REPO, check=False)


def test_misspelt_backbone_override_is_named(config: dict) -> None:
    config["methods"]["simcse"]["backbones"]["roberta-bsae"] = {"train": {"batch_size": 512}}
    with pytest.raises(ConfigError, match=r"methods\.simcse\.backbones\.roberta-bsae: unknown"):
        check_config(config)


def test_unknown_grid_backbone_is_named(config: dict, mirror: Path) -> None:
    config["grid"]["backbones"] = ["splade-tiny", "splade-tny"]
    config["mirror"] = str(mirror)
    with pytest.raises(ConfigError, match=r"grid\.backbones: 'splade-tny' is not a known"):
        check_config(config)
    config["grid"]["backbones"] = ["splade-tiny"]  # found in the mirror: accepted
    check_config(config)


def test_method_outside_the_grid_is_validated(config: dict) -> None:
    config["methods"]["simcse_san_tau0.05_p0.1"]["params"]["tau3"] = 0.1
    with pytest.raises(ConfigError, match=r"methods\.simcse_san_tau0\.05_p0\.1\.params\.tau3: unknown"):
        check_config(config)


def test_grid_method_of_a_replaced_grid_is_validated(tmp_path: Path) -> None:
    params = project_config(REPO, check=False)
    params["grid"]["methods"] = ["simcse", "simcsee"]
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params))
    with pytest.raises(ConfigError, match=rf"{path}: grid\.methods lists 'simcsee'"):
        load_config(path, REPO / "tests" / "smoke" / "config.yaml")


# -- 5. error reporting: arguments checked before any work ----------------------------------------


@pytest.mark.parametrize(
    ("evaluation", "option", "value", "named"),
    [
        ("sts", "--pooler", "clss", "'clss'"),
        ("transfer", "--transfer-kfold", "1", "minimum 2"),
        ("splits", "--batch-size", "0", "minimum 1"),
    ],
)
def test_bad_argument_fails_before_the_model_loads(
    evaluation: str,
    option: str,
    value: str,
    named: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the model does not exist: an error about it would mean it was looked up first
    args = ["evaluate", "--only", evaluation, "--model", "/no/such/model", option, value]
    args += [f"--{evaluation}-out", str(tmp_path / "o")]
    code, err = run_cli(args, capsys)
    assert code == 2
    assert_clean_failure(code, err, option, named, lines=1)
    assert "/no/such/model" not in err.split("error:")[1]
    assert_nothing_written(tmp_path)


@pytest.mark.parametrize(
    "command",
    [
        # the model does not exist either: the output is checked first
        ["evaluate", "--only", "sts", "--model", "/no/such/model", "--sts-out", "{blocked}"],
        # before the corpus is tagged
        ["negate", "--input", "{corpus}", "--output", "{blocked}"],
        # before the first evaluation runs: the second one's output is checked too
        ["evaluate", "--only", "sts,probe", "--model", "/no/such/model",
         "--sts-out", "{tmp}/first.json", "--probe-out", "{blocked}"],
    ],
)  # fmt: skip
def test_unwritable_output_fails_before_any_work(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "results"
    blocker.write_text("a file where the output folder should be\n")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("He ran.\n")
    blocked = blocker / "out.txt"
    args = [a.format(blocked=blocked, corpus=corpus, tmp=tmp_path) for a in command]
    code, err = run_cli(args, capsys)
    assert code == 2
    assert_clean_failure(code, err, str(blocker), lines=1)
    assert "model" not in err.split("error:")[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt", "results"]


def test_damaged_model_files_are_named(
    tmp_path: Path, mirror: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "model"
    shutil.copytree(mirror / "models" / "splade-tiny", model)
    weights = model / "model.safetensors"
    weights.chmod(0o644)
    weights.write_bytes(weights.read_bytes()[:100_000])  # a cut-off download
    out = tmp_path / "out"
    code, err = run_cli(
        ["evaluate", "--only", "sts", "--model", str(model), "--sts-out", str(out / "o.json")],
        capsys,
    )
    assert code == 2
    assert_clean_failure(code, err, f"model folder {model}", "fetch the model again", lines=1)
    assert_nothing_written(out)


def test_missing_input_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "corpus.txt"
    out = tmp_path / "out"
    code, err = run_cli(
        ["prepare-corpus", "--input", str(missing), "--out", str(out / "c.txt")], capsys
    )
    assert code == 2
    assert_clean_failure(code, err, f"{missing}: No such file or directory", lines=1)
    assert_nothing_written(out)


def test_real_command_line_exit_status_and_debug_traceback(tmp_path: Path) -> None:
    """The real `python -m negcse`: one line and exit 2; `--debug` adds the traceback."""
    args = ["prepare-corpus", "--input", str(tmp_path / "none.txt"), "--out", str(tmp_path / "o")]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    plain = subprocess.run(
        [sys.executable, "-m", "negcse", *args], capture_output=True, text=True, env=env
    )
    assert plain.returncode == 2
    assert plain.stderr.strip().splitlines() == [
        f"negcse prepare-corpus: error: {tmp_path / 'none.txt'}: No such file or directory"
    ]
    debug = subprocess.run(
        [sys.executable, "-m", "negcse", "--debug", *args], capture_output=True, text=True, env=env
    )
    assert debug.returncode == 1 and "Traceback" in debug.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# -- 5 and 6. the workflow: the suite's own config messages; quoted shell values ------------------


@pytest.fixture(scope="module")
def workflow_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The workflow's files (as checked out now) in a throwaway folder."""
    ws = tmp_path_factory.mktemp("wf") / "negcse"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    ws.mkdir()
    for name in ("Snakefile", "params.yaml", "config/defaults.yaml"):
        (ws / name).parent.mkdir(exist_ok=True)
        shutil.copy(REPO / name, ws / name)
    for folder in ("rules", "src", "profiles", "envs", "tests/smoke"):
        shutil.copytree(REPO / folder, ws / folder, ignore=ignore)
    return ws


def snakemake(ws: Path, *args: str, env: dict[str, str] | None = None):
    return subprocess.run(
        ["snakemake", *args], cwd=ws, capture_output=True, text=True, timeout=900, env=env
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("train:\n  batch_sise: 64\n", "unknown key 'train.batch_sise' (misspelt?)"),
        (
            "grid:\n  methods: [simcse]\n  backbones: [splade-tny]\n  seeds: [1]\n",
            "grid.backbones: 'splade-tny' is not a known backbone",
        ),
        (
            "methods:\n  simcse:\n    backbones:\n      roberta-bsae: {train: {batch_size: 512}}\n",
            "methods.simcse.backbones.roberta-bsae: unknown backbone (misspelt?)",
        ),
        (
            "methods:\n  una_random_select:\n    generators:\n      una: {selct: random}\n",
            "unknown key 'methods.una_random_select.generators.una.selct' (misspelt?)",
        ),
        (
            "methods:\n  rankcse:\n    guides:\n      teacher1: {model: ./no/such/teacher}\n",
            "model './no/such/teacher' is a path and no such folder exists",
        ),
    ],
    ids=[
        "misspelt-key",
        "unknown-grid-backbone",
        "misspelt-backbone-override",
        "misspelt-generator-setting",
        "missing-guide-model-path",
    ],
)
def test_workflow_config_error_is_the_suites_message(
    text: str, message: str, workflow_copy: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    proc = snakemake(workflow_copy, "-n", "--configfile", str(bad))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert message in out and str(bad) in out, out[-2000:]
    assert "Traceback" not in out and "validating config" not in out
    assert len(out.splitlines()) < 10  # not the whole config


def test_unknown_method_in_params_yaml_fails_the_smoke_dry_run(workflow_copy: Path) -> None:
    params = workflow_copy / "params.yaml"
    original = params.read_text()
    config = yaml.safe_load(original)
    config["grid"]["methods"] = ["simcse", "simcsee"]
    try:
        params.write_text(yaml.safe_dump(config, sort_keys=False))
        proc = snakemake(workflow_copy, "-n", "--profile", "profiles/smoke")
    finally:
        params.write_text(original)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "params.yaml: grid.methods lists 'simcsee'" in out, out[-2000:]
    assert "Traceback" not in out


def test_mirror_path_with_space_and_shell_metacharacters(
    workflow_copy: Path, tmp_path: Path, mirror: Path
) -> None:
    """One real rule (the smoke corpus) with the mirror at `x y;$(touch pwned)z`: the path
    reaches the command intact and the metacharacters stay inert."""
    odd = tmp_path / "x y;$(touch pwned)z"
    odd.mkdir()
    for sub in ("data", "models"):
        (odd / sub).symlink_to(mirror / sub)
    extra = tmp_path / "mirror.yaml"
    extra.write_text(yaml.safe_dump({"mirror": str(odd)}))
    env = {k: v for k, v in os.environ.items() if k != "NEGCSE_MIRROR"}  # only the config's
    target = "results/data/corpus/wiki-smoke.txt"
    proc = snakemake(
        workflow_copy,
        "-c1",
        "--configfile",
        "tests/smoke/config.yaml",
        str(extra),
        "--",
        target,
        env=env,
    )
    log = workflow_copy / "logs/data/corpus_wiki-smoke.log"
    assert proc.returncode == 0, proc.stderr[-3000:] + (log.read_text() if log.exists() else "")
    assert not any(p.name == "pwned" for p in [*workflow_copy.rglob("pwned"), *tmp_path.iterdir()])
    stats = json.loads((workflow_copy / "results/data/corpus/wiki-smoke.stats.json").read_text())
    assert stats["source"] == str(
        odd / "data" / "unlabeled/wiki1m/wiki1m_for_simcse.head_1280000_bytes.txt"
    )
    assert stats["kept"] == 3200
    assert len((workflow_copy / target).read_text().splitlines()) == 3200


# -- 7. checkpoints never unpickle objects; a damaged one is moved aside ---------------------------


class _Payload:
    """Unpickling this runs ``open(path, 'w')``: a stand-in for any code an attacker wants run."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (exec, (f"open({str(self.path)!r}, 'w').close()",))


def _tiny_trainer(splade: Path, ckpt: Path, **overrides: int):
    from dataclasses import replace

    from negcse.methods.registry import build_method
    from negcse.training.model import SentenceEncoder
    from negcse.training.settings import TrainSettings
    from negcse.training.trainer import TrainData, Trainer

    settings = TrainSettings(
        epochs=1, batch_size=8, learning_rate=1e-4, max_seq_len=16, dropout=0.1,
        scheduler="linear", warmup_ratio=0.0, weight_decay=0.0, max_grad_norm=1.0, max_steps=2,
        eval_steps=2, checkpoint_steps=1, precision="fp32",
    )  # fmt: skip
    settings = replace(settings, **overrides)
    sentences = [f"sentence number {i} of the tiny corpus." for i in range(32)]
    torch.manual_seed(0)
    return Trainer(
        build_method("simcse", {"temperature": 0.05}, "splade-tiny"),
        SentenceEncoder.from_pretrained(str(splade), 0.1),
        TrainData({"sentence": sentences}),
        settings,
        1,
        lambda encode: float(encode(["a b", "a c"]).sum()),
        ckpt,
        device=torch.device("cpu"),
        progress=False,
    )


def test_malicious_checkpoint_is_refused_and_training_restarts(
    tmp_path: Path, splade_tiny: Path, caplog: pytest.LogCaptureFixture
) -> None:
    marker = tmp_path / "code-was-run"
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    torch.save({"settings": {}, "seed": 1, "rng": _Payload(marker)}, ckpt / "last.pt")
    # the payload is real: an unrestricted load runs it
    torch.load(ckpt / "last.pt", weights_only=False)
    assert marker.exists()
    marker.unlink()

    trainer = _tiny_trainer(splade_tiny, ckpt)
    state = trainer.train()
    assert not marker.exists()
    assert state.step == 2
    assert "refused" in caplog.text and "starts from scratch" in caplog.text
    assert (tmp_path / "ckpt.refused.pt").is_file()  # kept aside for inspection


def test_corrupt_checkpoint_is_moved_aside_and_training_restarts(
    tmp_path: Path, splade_tiny: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ckpt = tmp_path / "ckpt"
    first = _tiny_trainer(splade_tiny, ckpt)
    first.train()  # leaves last.pt after step 1 (checkpoint_steps=1, not at the end)
    good = (ckpt / "last.pt").read_bytes()
    (ckpt / "last.pt").write_bytes(good[: len(good) // 2])  # killed mid-copy
    state = _tiny_trainer(splade_tiny, ckpt).train()
    assert state.step == 2 and "corrupt" in caplog.text
    assert (tmp_path / "ckpt.corrupt.pt").read_bytes() == good[: len(good) // 2]


def test_tampered_best_weights_are_set_aside_and_training_restarts(
    tmp_path: Path, splade_tiny: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A resumed state whose best weights (best.pt) hold a pickle payload: the payload never
    runs, torch's advice to load with weights_only=False is not quoted, the file is moved aside
    and the run restarts (the best weights so far cannot be re-derived), ending like a run
    never interrupted; the next run is not stuck on it."""
    ckpt, marker = tmp_path / "ckpt", tmp_path / "code-was-run"
    steps = {"max_steps": 3, "eval_steps": 1}  # last.pt after step 2 holds a best step
    clean = _tiny_trainer(splade_tiny, ckpt, **steps).train().curve
    assert torch.load(ckpt / "last.pt", weights_only=True)["state"]["best_step"] >= 1
    torch.save({"x": _Payload(marker)}, ckpt / "best.pt")
    caplog.clear()
    caplog.set_level(logging.INFO, "negcse")
    state = _tiny_trainer(splade_tiny, ckpt, **steps).train()
    assert not marker.exists() and state.step == 3
    dev = [c for c in state.curve if "stsb_dev" in c]
    assert len(dev) == 3 and dev == [c for c in clean if "stsb_dev" in c]  # as uninterrupted
    errors = [r.getMessage() for r in caplog.records if r.levelno >= 40]
    assert len(errors) == 1 and "best.pt" in errors[0] and "refused" in errors[0], errors
    assert "it would call exec" in errors[0] and "weights_only" not in caplog.text
    assert "resumed" not in caplog.text
    assert (tmp_path / "ckpt.best-refused.pt").is_file()
    caplog.clear()
    _tiny_trainer(splade_tiny, ckpt, **steps).train()  # resumes from the new last.pt
    assert "resumed from" in caplog.text and "not loaded" not in caplog.text


def test_resumable_state_loads_without_pickle(tmp_path: Path, splade_tiny: Path) -> None:
    """The state written by the trainer loads with weights_only=True and holds the RNGs."""
    ckpt = tmp_path / "ckpt"
    _tiny_trainer(splade_tiny, ckpt).train()
    payload = torch.load(ckpt / "last.pt", weights_only=True)
    assert payload["state"]["step"] == 1 and {"python", "numpy", "torch"} <= payload["rng"].keys()
    with pytest.raises(pickle.UnpicklingError):  # a pickled object would need weights_only=False
        torch.save({"x": _Payload(tmp_path / "m")}, tmp_path / "obj.pt")
        torch.load(tmp_path / "obj.pt", weights_only=True)
    assert not (tmp_path / "m").exists()


# -- 8. atomic outputs ----------------------------------------------------------------------------


def test_outputs_get_umask_modes_not_0600(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        io_utils.write_json(tmp_path / "a.json", {"x": 1})
        with io_utils.atomic_dir(tmp_path / "model") as tmp:
            (tmp / "f.txt").write_text("x\n")
    finally:
        os.umask(old)
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "model").stat().st_mode & 0o777 == 0o755


def test_stale_temporaries_of_the_target_are_removed(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".a.json.tmp-{dead.pid}-0badcafe"
    stale.write_text('{"partial": ')
    stale_dir = tmp_path / f".model.tmp-{dead.pid}-0badcafe"
    stale_dir.mkdir()
    live = tmp_path / f".a.json.tmp-{os.getpid()}-00000000"  # a writer still running
    live.write_text("")
    other = tmp_path / f".b.json.tmp-{dead.pid}-0badcafe"  # another target's
    other.write_text("")
    io_utils.write_json(tmp_path / "a.json", [1])
    with io_utils.atomic_dir(tmp_path / "model"):
        pass
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(["a.json", "model", live.name, other.name])


def test_failed_write_leaves_nothing_and_fsync_precedes_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(RuntimeError), io_utils.atomic_open(tmp_path / "x.txt") as fh:
        fh.write("half")
        raise RuntimeError("killed")
    assert list(tmp_path.iterdir()) == []
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(
        os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))[1]
    )
    io_utils.write_lines(tmp_path / "x.txt", ["a", "b"])
    assert events[:2] == ["fsync", "replace"]
    assert (tmp_path / "x.txt").read_text() == "a\nb\n"


def test_safetensors_follow_the_umask_not_0600(tmp_path: Path) -> None:
    """safetensors' save_file creates its file 0600 whatever the umask; a model folder's files
    get the mode a plain open gives (0o666 & ~umask), like every other output."""
    from safetensors.torch import save_file

    for umask in (0o022, 0o027):
        old = os.umask(umask)
        try:
            with io_utils.atomic_dir(tmp_path / f"model{umask:o}") as tmp:
                save_file({"w": torch.zeros(2)}, str(tmp / "model.safetensors"))
                assert (tmp / "model.safetensors").stat().st_mode & 0o777 == 0o600  # the cause
                (tmp / "run.sh").write_text("")
                (tmp / "run.sh").chmod(0o755)
        finally:
            os.umask(old)
        folder = tmp_path / f"model{umask:o}"
        assert (folder / "model.safetensors").stat().st_mode & 0o777 == 0o666 & ~umask
        assert (folder / "run.sh").stat().st_mode & 0o777 == 0o755  # nothing taken away


def test_json_lines_keep_unicode_line_breaks_inside_rows(tmp_path: Path) -> None:
    """U+2028, U+2029, U+0085 (str.splitlines breaks on each): written as ASCII escapes, and a
    file written raw (ensure_ascii=False, as before) still reads as one row per "\\n"."""
    rows = [{"text": "a\u2028b"}, {"text": "c\u2029d\u0085e"}]
    io_utils.write_jsonl(tmp_path / "a.jsonl", rows)
    data = (tmp_path / "a.jsonl").read_bytes()
    assert data == b'{"text": "a\\u2028b"}\n{"text": "c\\u2029d\\u0085e"}\n'
    assert io_utils.read_jsonl(tmp_path / "a.jsonl") == rows
    raw = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    assert len(raw.splitlines()) == 5  # what a splitlines reader saw
    (tmp_path / "raw.jsonl").write_text(raw, encoding="utf-8")
    assert io_utils.read_jsonl(tmp_path / "raw.jsonl") == rows
    (tmp_path / "bad.jsonl").write_text('{"text": "x"}\n{"text": \n')
    with pytest.raises(UserError, match=r"bad\.jsonl: line 2 is not valid JSON"):
        io_utils.read_jsonl(tmp_path / "bad.jsonl")


def test_saved_model_files_follow_the_umask(tmp_path: Path, splade_tiny: Path) -> None:
    """The trained model's folder (model.safetensors, 2_Dense's safetensors, tokenizer, JSON):
    every file 0o666 & ~umask, under two umasks."""
    trainer = _tiny_trainer(splade_tiny, tmp_path / "ckpt")
    trainer.train()
    for umask in (0o022, 0o027):
        old = os.umask(umask)
        try:
            trainer.save(tmp_path / f"model{umask:o}", {"method": "simcse", "backbone": "splade-tiny", "seed": 1})
        finally:
            os.umask(old)
        files = [f for f in (tmp_path / f"model{umask:o}").rglob("*") if f.is_file()]
        assert {"model.safetensors", "negcse.json", "config.json"} <= {f.name for f in files}
        modes = {str(f.relative_to(tmp_path)): f.stat().st_mode & 0o777 for f in files}
        assert set(modes.values()) == {0o666 & ~umask}, modes


def test_full_disk_names_the_output_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ENOSPC is simulated: a write that fails as on a full disk (an OSError naming no file, as
    a file object's write or flush raises it), torch.save's RuntimeError with no block left, then
    the rename raising it; the error names the output, not its temporary, and nothing is left
    behind."""
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    with pytest.raises(OSError) as err, io_utils.atomic_open(tmp_path / "x.json") as fh:
        fh.write("{")
        raise full
    assert err.value.errno == errno.ENOSPC and err.value.filename == str(tmp_path / "x.json")
    with pytest.raises(OSError) as err, io_utils.atomic_dir(tmp_path / "model") as tmp:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp / "weights.bin"))
    assert err.value.filename == str(tmp_path / "model" / "weights.bin")
    assert list(tmp_path.iterdir()) == []

    # torch.save on a full disk (seen on /dev/full): a RuntimeError naming no file
    torch_full = RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 704")
    for blocks_left in (0, 1):
        fake = type("Statvfs", (), {"f_bavail": blocks_left})()
        monkeypatch.setattr(os, "statvfs", lambda path, fake=fake: fake)
        with pytest.raises(Exception) as err, io_utils.atomic_path(tmp_path / "last.pt"):
            raise torch_full
        if blocks_left:  # not a full disk: the writer's own error, unchanged
            assert err.value is torch_full
        else:
            assert isinstance(err.value, OSError) and err.value.errno == errno.ENOSPC
            assert err.value.filename == str(tmp_path / "last.pt")
        # the model folder: safetensors' own error on a full disk (a SafetensorError, no file)
        with pytest.raises(Exception) as err, io_utils.atomic_dir(tmp_path / "model") as tmp:
            (tmp / "config.json").write_text("{}")
            raise RuntimeError("Error while serializing: IoError(Os { code: 28 })")
        if blocks_left:
            assert isinstance(err.value, RuntimeError)
        else:
            assert isinstance(err.value, OSError) and err.value.errno == errno.ENOSPC
            assert err.value.filename == str(tmp_path / "model")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []

    def no_space(src: object, dst: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    (tmp_path / "src.txt").write_text("A man plays.\nA dog runs.\n")
    out = tmp_path / "out" / "candidates.jsonl"
    monkeypatch.setattr(os, "replace", no_space)
    args = ["gcse-synthesize", "--input", str(tmp_path / "src.txt"), "--output", str(out)]
    args += ["--report", str(tmp_path / "out" / "r.json"), "--positives", "0", "--negatives", "0"]
    code, err_text = run_cli(args, capsys)
    assert_clean_failure(code, err_text, f"{out}: No space left on device", lines=1)
    assert_nothing_written(tmp_path / "out")


def test_guide_model_path_that_does_not_exist_is_named(config: dict, tmp_path: Path) -> None:
    teacher = config["methods"]["rankcse"]["guides"]["teacher1"]
    teacher["model"] = str(tmp_path / "no-such-teacher")
    with pytest.raises(ConfigError, match=r"methods\.rankcse\.guides\.teacher1 .*no-such-teacher' "
                       r"is a path and no such folder exists"):
        check_config(config)
    (tmp_path / "no-such-teacher").mkdir()  # the folder exists: accepted
    check_config(config)


def test_bad_method_value_and_corpus_source_are_named(config: dict) -> None:
    config["methods"]["simcse_san"]["params"]["tau2"] = -1.0
    with pytest.raises(ConfigError, match=r"methods\.simcse_san\.params\.tau2': -1\.0 is less"):
        check_config(config)
    config = project_config(REPO, check=False)
    config["corpus"]["source"] = "unlabeled/wiki1m/wiki1m_for_simcs.txt"
    with pytest.raises(ConfigError, match=r"corpus\.source: 'unlabeled/wiki1m/wiki1m_for_simcs"):
        check_config(config)


def test_unregistered_corpus_source_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code, err = run_cli(
        ["prepare-corpus", "--source", "unlabeled/typo.txt", "--out", str(out / "c.txt")], capsys
    )
    assert code == 2
    assert_clean_failure(code, err, "'unlabeled/typo.txt' is not a registered data file", lines=1)
    assert_nothing_written(out)
