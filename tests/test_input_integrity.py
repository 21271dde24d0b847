"""No number from broken input, no resume under other settings, every user error one line.

1. a number read from a config, a file or a model's output is finite or refused, naming its
   origin; 2. a derived number agrees with the records it summarises, and no table compares
   files of different protocols or classifiers; 3. a checkpoint resumes only under the same
   fingerprint and only when valid as a whole; 4. a local LLM's cached answers belong to its
   weights, not its folder's name; 5. a damaged input is one line (the generated matrix of
   every command: tests/test_broken_inputs.py); 6. a YAML alias bomb is refused before it is
   walked, and the DVC profile is a relative path; 7. a table's formats are written together.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from negcse import cli
from negcse.errors import UserError
from negcse.evaluation.sts import spearman100
from negcse.finite import NonFiniteError, finite, finite_array
from negcse.io_utils import atomic_set, write_json, write_texts
from negcse.llm.backend import GenerationSettings
from negcse.llm.cache import CachedLLM, cache_key
from negcse.llm.transformers_backend import weights_digest
from negcse.tables.build import Options, TableInputError
from negcse.tables.specs import table_spec
from negcse.tables.verdicts import verdict_frame
from negcse.training.fingerprint import differences, run_fingerprint
from negcse.workflow import dvc_run
from negcse.workflow.config import ConfigError, check_config, project_config
from test_broken_inputs import _sts_file, _transfer_file, _weights_nan, run_cli
from test_reliability import _tiny_trainer

pytestmark = pytest.mark.mirror
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def config() -> dict:
    return project_config(REPO, check=False)


def _edit(path: Path, change) -> Path:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    return path


# -- 1. non-finite numbers ------------------------------------------------------------------------


def test_the_one_check_names_the_origin() -> None:
    assert finite(0.5, "x") == 0.5
    with pytest.raises(NonFiniteError, match=r"^cfg: lr: nan is not a finite number$"):
        finite(float("nan"), "cfg: lr")
    with pytest.raises(UserError, match="expected a number, got 'abc'"):
        finite("abc", "f")
    with pytest.raises(NonFiniteError, match=r"f: line 3 is NaN or infinite \(1 such line"):
        finite_array([1.0, 2.0, math.inf], "f", unit="line")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("train_overrides.learning_rate", math.nan),  # exclusiveMinimum: 0 lets NaN through
        ("train.warmup_ratio", math.inf),
        ("analysis.error_threshold", math.nan),  # a key only the schema bounds
        ("generators.gcse.temperature", math.nan),  # a NaN temperature decoded greedily
    ],
)
def test_a_non_finite_config_number_fails_the_check_naming_the_key(
    config: dict, key: str, value: float
) -> None:
    node = config
    *parents, last = key.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value
    with pytest.raises(ConfigError, match=rf"key '{key}': {value!r} is not a finite number"):
        check_config(config)


def test_a_nan_train_or_generation_setting_is_refused_where_it_is_made() -> None:
    from negcse.training.settings import TrainSettings, TrainSettingsError

    values = dict(epochs=1, batch_size=8, learning_rate=math.nan, max_seq_len=16, dropout=0.1,
                  scheduler="linear", warmup_ratio=0.0, weight_decay=0.0, max_grad_norm=1.0,
                  max_steps=2, eval_steps=2, checkpoint_steps=1, precision="fp32")  # fmt: skip
    with pytest.raises(TrainSettingsError, match="train.learning_rate: nan is not a finite"):
        TrainSettings(**values)
    with pytest.raises(NonFiniteError, match="generation setting temperature: nan"):
        GenerationSettings(temperature=math.nan)


def test_a_nan_cosine_in_an_evaluation_file_is_refused_naming_file_and_key(
    tmp_path: Path,
) -> None:
    evals = [str(_sts_file(tmp_path / f"{m}{s}.json", m, s)) for m in ("simcse", "sncse")
             for s in (1, 2)]  # fmt: skip
    bad = _edit(Path(evals[2]), lambda d: d["details"]["STS14"]["pairs"]["cosine"].__setitem__(
        3, math.nan))  # fmt: skip
    with pytest.raises(TableInputError, match=rf"{bad}: details\.STS14\.pairs\.cosine\[3\]: nan"):
        verdict_frame(evals, Options({"sncse": "simcse"}))


def test_a_model_with_a_nan_weight_is_not_evaluated(
    tmp_path: Path, splade_tiny: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "model"
    shutil.copytree(splade_tiny, model)
    for file in model.iterdir():
        file.chmod(0o644)
    _weights_nan(model, "")
    out = tmp_path / "probe.json"
    code, err = run_cli(["evaluate", "--model", str(model), "--only", "probe", "--probe-out",
                         str(out)], capsys)  # fmt: skip
    assert code == 2 and not out.exists()
    assert f"model folder {model}: weight embeddings.word_embeddings.weight holds" in err


def test_constant_cosines_have_no_spearman(tmp_path: Path) -> None:
    gold = np.arange(10.0)
    with pytest.raises(NonFiniteError, match="STS12: the Spearman of the model's cosines"):
        spearman100(np.full(10, 0.5), gold, "STS12")
    path = _sts_file(tmp_path / "a.json", "simcse", 1)
    _edit(path, lambda d: d["details"]["STS12"]["pairs"].__setitem__("cosine", [0.5] * 30))
    with pytest.raises(TableInputError, match=r"details\.STS12\.pairs: the Spearman of its "
                       r"cosines is undefined"):  # fmt: skip
        read_result_of(path)


def read_result_of(path: Path) -> object:
    """The path a table reads a file by (the STS or transfer table's build)."""
    kind = "transfer" if "classifier" in json.loads(path.read_text()) else "sts"
    spec = table_spec(kind)
    return spec.build(spec, [str(path)], Options())


def test_no_file_is_written_with_a_nan(tmp_path: Path) -> None:
    with pytest.raises(NonFiniteError, match=r"a\.json: details\.STS12\.all: nan is not"):
        write_json(tmp_path / "a.json", {"details": {"STS12": {"all": math.nan}}})
    assert not (tmp_path / "a.json").exists()


# -- 2. derived numbers against their records; like with like ----------------------------------


def test_a_transfer_average_that_disagrees_with_its_records_is_refused(tmp_path: Path) -> None:
    path = _edit(_transfer_file(tmp_path / "a.json", "simcse", 1), lambda d: d.update(avg=99.0))
    with pytest.raises(TableInputError, match=rf"{path}: avg: the file says 99\.0000, the mean "
                       r"of CR, TREC gives"):  # fmt: skip
        read_result_of(path)


def test_a_task_scored_but_not_detailed_is_refused(tmp_path: Path) -> None:
    path = _edit(_transfer_file(tmp_path / "a.json", "simcse", 1),
                 lambda d: d["details"].pop("TREC"))  # fmt: skip
    with pytest.raises(TableInputError, match=r"tasks scored \['CR', 'TREC'\] but detailed "
                       r"\['CR'\]"):  # fmt: skip
        read_result_of(path)


def test_files_of_different_transfer_classifiers_are_not_compared(tmp_path: Path) -> None:
    a = _transfer_file(tmp_path / "a.json", "simcse", 1)
    b = _edit(_transfer_file(tmp_path / "b.json", "sncse", 1),
              lambda d: d.update(classifier="sklearn"))  # fmt: skip
    with pytest.raises(TableInputError, match=rf"{a} \(classifier 'sentevalish'\) and {b} "
                       r"\(classifier 'sklearn'\)"):  # fmt: skip
        verdict_frame([str(a), str(b)], Options({"sncse": "simcse"}))


def test_sts_files_of_different_protocols_make_no_table(tmp_path: Path) -> None:
    a = _sts_file(tmp_path / "a.json", "simcse", 1)
    b = _edit(_sts_file(tmp_path / "b.json", "sncse", 1), lambda d: d.update(protocol="mteb"))
    spec = table_spec("sts")
    with pytest.raises(TableInputError, match=r"\(protocol 'senteval'\) and .*b\.json "
                       r"\(protocol 'mteb'\)"):  # fmt: skip
        spec.build(spec, [str(a), str(b)], Options())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["details"]["STS12"]["pairs"].update(subset_sizes=[40, -10]),
         r"subset_sizes: expected positive integers, got \[40, -10\]"),
        (lambda d: d["details"]["STS12"]["pairs"].update(cosine=[], gold=[], subset_sizes=[]),
         r"details\.STS12\.pairs: 0 pair\(s\); a Spearman needs two or more"),
        (lambda d: d.update(avg="high"), r"avg: expected a number, got 'high'"),
        (lambda d: d.update(details=[1, 2]), r"details: expected an object, got list"),
    ],
    ids=["negative-subset-size", "empty-task", "non-numeric-avg", "details-a-list"],
)  # fmt: skip
def test_a_malformed_verdict_input_is_one_line(
    tmp_path: Path, change, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    evals = [_sts_file(tmp_path / f"{m}.json", m, 1) for m in ("simcse", "sncse")]
    for path in evals:  # both alike: the files still pair with each other
        _edit(path, change)
    code, err = run_cli(["table", "verdicts", "--evals", *map(str, evals), "--csv",
                         str(tmp_path / "out" / "v.csv")], capsys)  # fmt: skip
    lines = [line for line in err.splitlines() if "error" in line]
    assert code == 2 and "Traceback" not in err and len(lines) == 1, err
    assert str(evals[0]) in lines[0] and re.search(message, lines[0]), lines[0]
    assert not (tmp_path / "out").exists()


# -- 3. resume only under the same settings, from a valid state ---------------------------------


def test_the_dev_protocol_is_in_the_fingerprint(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("a dog runs.\n")
    spec = {"method": "simcse", "params": {"temperature": 0.05}}
    files = {"sentence": str(corpus)}
    senteval = run_fingerprint(spec, 1, files, {}, eval_protocol="senteval")
    mteb = run_fingerprint(spec, 1, files, {}, eval_protocol="mteb")
    assert differences(senteval, mteb) == ['eval_protocol changed "senteval" -> "mteb"']


def _damage(payload: dict, kind: str) -> None:
    if kind == "step-beyond-the-run":
        payload["state"]["step"] = 99
        payload["scheduler"]["last_epoch"] = 99
    elif kind == "unexpected-weight":
        payload["model"]["extra.weight"] = torch.zeros(2)
    elif kind == "wrong-shape":
        name = next(n for n in payload["model"] if n.endswith("word_embeddings.weight"))
        payload["model"][name] = payload["model"][name][:10]
    elif kind == "nan-weight":
        name = next(n for n in payload["model"] if n.endswith("word_embeddings.weight"))
        payload["model"][name][0, 0] = float("nan")
    elif kind == "malformed-rng":
        payload["rng"]["numpy"][1] = torch.zeros(3, dtype=torch.int64)
    elif kind == "optimizer-of-another-shape":
        state = next(iter(payload["optimizer"]["state"].values()))
        state["exp_avg"] = torch.zeros(3)
    elif kind == "unexpected-key":
        payload["extra"] = 1


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory, splade_tiny: Path) -> tuple[Path, list]:
    """A run's resumable state after step 1 of 2 (last.pt, best.pt) and its whole curve."""
    ckpt = tmp_path_factory.mktemp("run") / "ckpt"
    clean = _tiny_trainer(splade_tiny, ckpt).train()  # leaves last.pt after step 1 of 2
    return ckpt, [c for c in clean.curve if "stsb_dev" in c]


@pytest.mark.parametrize(
    "kind",
    ["step-beyond-the-run", "unexpected-weight", "wrong-shape", "nan-weight", "malformed-rng",
     "optimizer-of-another-shape", "unexpected-key"],
)  # fmt: skip
def test_an_invalid_checkpoint_is_set_aside_and_training_restarts(
    kind: str, interrupted: tuple[Path, list], tmp_path: Path, splade_tiny: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    """A loadable last.pt that cannot resume this run: set aside as 'invalid' like a corrupt
    one, the run restarts and ends as one never interrupted; no traceback, on any rerun."""
    ckpt = tmp_path / "ckpt"
    shutil.copytree(interrupted[0], ckpt)
    payload = torch.load(ckpt / "last.pt", weights_only=True)
    assert payload["state"]["step"] == 1
    _damage(payload, kind)
    torch.save(payload, ckpt / "last.pt")
    caplog.set_level(logging.INFO, "negcse")
    state = _tiny_trainer(splade_tiny, ckpt).train()
    assert state.step == 2 and "resumed" not in caplog.text
    assert [c for c in state.curve if "stsb_dev" in c] == interrupted[1]
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "(invalid)" in errors[0], errors
    assert (tmp_path / "ckpt.invalid.pt").is_file()


# -- 4. the LLM cache: content identity ----------------------------------------------------------


class _Answers:
    """A backend answering from a fixed table (the real local LLM is too slow for this
    test): its identity is the one the transformers backend gives, the weights' digest."""

    name = "transformers"

    def __init__(self, folder: Path, answer: str) -> None:
        self.folder, self.answer, self.asked = folder, answer, 0

    def identity(self) -> dict[str, str]:
        return {"model": self.folder.name, "sha256": weights_digest(self.folder)}

    def stream(self, prompts, settings):
        for i, _ in enumerate(prompts):
            self.asked += 1
            yield i, self.answer


def test_a_different_model_in_a_folder_of_the_same_name_gets_its_own_answers(
    tmp_path: Path,
) -> None:
    first, second = tmp_path / "a" / "llm", tmp_path / "b" / "llm"
    for folder, weights in ((first, b"weights one"), (second, b"weights two")):
        folder.mkdir(parents=True)
        (folder / "model.safetensors").write_bytes(weights)
        (folder / "config.json").write_text("{}")
    settings = GenerationSettings(max_new_tokens=8)
    with CachedLLM(_Answers(first, "first"), tmp_path / "cache.db") as llm:
        assert llm.generate(["Say hi."], settings) == ["first"]
    other = _Answers(second, "second")
    with CachedLLM(other, tmp_path / "cache.db") as llm:
        assert llm.generate(["Say hi."], settings) == ["second"] and other.asked == 1
    same = _Answers(first, "never asked")
    with CachedLLM(same, tmp_path / "cache.db") as llm:
        assert llm.generate(["Say hi."], settings) == ["first"] and same.asked == 0
    assert cache_key("t", same.identity(), settings, "p") != cache_key(
        "t", other.identity(), settings, "p"
    )


def test_a_damaged_cache_page_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT)")
        db.executemany("INSERT INTO t VALUES (?, ?)", [(str(i), "x" * 900) for i in range(200)])
    data = bytearray(path.read_bytes())
    data[3 * 4096 : 3 * 4096 + 64] = b"\xff" * 64  # a page's header written over
    path.write_bytes(bytes(data))
    with pytest.raises(UserError, match=rf"^{path}: not a usable cache \("):
        CachedLLM(_Answers(tmp_path, "x"), path)


# -- 5. one line where a traceback was ----------------------------------------------------------


def test_invalid_json_names_its_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.json").write_text('{"avg": 1,')
    code, err = run_cli(["table", "sts", "--evals", str(tmp_path / "a.json")], capsys)
    assert code == 2 and err.strip().splitlines() == [
        f"negcse table: error: {tmp_path / 'a.json'}: invalid JSON at line 1 column 11: "
        "Expecting property name enclosed in double quotes (cut off or damaged?)"
    ]


def test_an_unknown_eval_pooler_in_negcse_json_is_one_line(
    tmp_path: Path, splade_tiny: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "model"
    shutil.copytree(splade_tiny, model)
    (model / "negcse.json").write_text(json.dumps({"eval_pooler": "clss"}))
    code, err = run_cli(["evaluate", "--model", str(model), "--only", "probe", "--probe-out",
                         str(tmp_path / "p.json")], capsys)  # fmt: skip
    assert code == 2 and "Traceback" not in err
    assert f"{model / 'negcse.json'}: eval_pooler: unknown pooler 'clss'" in err


def test_a_bad_evaluations_module_is_one_line(tmp_path: Path) -> None:
    """The real command line: the module is imported while the options are built."""
    env = {**os.environ, "NEGCSE_EVALUATIONS": "no_such_module_of_evaluations",
           "PYTHONPATH": str(REPO / "src")}  # fmt: skip
    args = ["evaluate", "--model", "m", "--only", "sts", "--sts-out", str(tmp_path / "x")]
    proc = subprocess.run([sys.executable, "-m", "negcse", *args], capture_output=True,
                          text=True, env=env)  # fmt: skip
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        "negcse: error: $NEGCSE_EVALUATIONS: module 'no_such_module_of_evaluations' does not "
        "import (ModuleNotFoundError: No module named 'no_such_module_of_evaluations'); fix it "
        "or remove it from the variable"
    ]


def test_a_damaged_lock_is_a_problem_the_doctor_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = tmp_path / "lock.txt"
    lock.write_bytes(b"numpy==2.4.6 \\\n    --hash=sha256:\xff\xfe\n")
    code = cli.main(["doctor", "--lock", str(lock)])
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert code == 1 and "Traceback" not in out
    assert f"problem: {lock}: not UTF-8 text (line 2, byte" in out, out


def test_an_empty_corpus_is_named_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from test_broken_inputs import _run_spec

    (tmp_path / "c.txt").write_text("")
    code, err = run_cli(["train", "--run", str(_run_spec(tmp_path / "run.json")), "--seed", "1",
                         "--corpus", str(tmp_path / "c.txt"), "--out", str(tmp_path / "m"),
                         "--checkpoint-dir", str(tmp_path / "ck")], capsys)  # fmt: skip
    assert code == 2 and "best.pt" not in err
    assert f"{tmp_path / 'c.txt'}: empty file" in err


# -- 6. resources and paths -----------------------------------------------------------------------


def test_a_yaml_alias_bomb_is_refused_before_validation(tmp_path: Path) -> None:
    """Six levels of nine aliases: 531,441 file names in a validated list, from nine lines."""
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 6)]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("anchors:\n" + "".join(f"  {line}\n" for line in levels)
                    + "corpora:\n  big:\n    domain:\n      - reader: lines\n        files: *a5\n")  # fmt: skip
    with pytest.raises(ConfigError, match=r"holds over 500,000 values once its YAML aliases are "
                       r"expanded"):  # fmt: skip
        project_config(REPO, bomb)


@pytest.mark.parametrize("value", ["../profiles/local", "/etc", "profiles/../profiles/local"])
def test_the_dvc_profile_is_a_relative_path_of_names(
    value: str, tmp_path: Path, config: dict
) -> None:
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"workflow": {"profile": value}}))
    os.makedirs(tmp_path / value.lstrip("/"), exist_ok=True)
    with pytest.raises(dvc_run.ProfileError, match=r"workflow\.profile: .* is not allowed"):
        dvc_run.profile(params)
    config["workflow"] = {"profile": value}
    with pytest.raises(ConfigError, match=r"key 'workflow\.profile': value"):
        check_config(config)


# -- 7. a table's formats together ----------------------------------------------------------------


def test_an_interrupted_table_job_leaves_no_new_csv_beside_an_old_md(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    evals = [str(_sts_file(tmp_path / f"{m}.json", m, 1)) for m in ("simcse", "sncse")]
    out = {k: tmp_path / "out" / f"sts.{k}" for k in ("tex", "csv", "md")}
    args = ["table", "sts", "--evals", *evals, *(a for k, p in out.items() for a in (f"--{k}",
            str(p)))]  # fmt: skip
    assert run_cli(args, capsys)[0] == 0
    old = {k: p.read_text() for k, p in out.items()}
    _edit(Path(evals[1]), lambda d: d.update(method="sncse_edited"))
    real, renames = os.replace, []

    def killed_after_one(src, dst) -> None:  # the job killed after its first rename
        if renames:
            raise KeyboardInterrupt
        renames.append(dst)
        real(src, dst)

    monkeypatch.setattr(os, "replace", killed_after_one)
    with pytest.raises(KeyboardInterrupt):
        run_cli(args, capsys)
    monkeypatch.undo()
    left = {k: p.read_text() for k, p in out.items() if p.exists()}
    assert left and all(text != old[k] for k, text in left.items()), "files of two builds mixed"
    assert not list((tmp_path / "out").glob(".*tmp-*"))


def test_a_set_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "b.md"
    write_texts({a: "old a\n", b: "old b\n"})
    with pytest.raises(RuntimeError), atomic_set(a, b) as (ta, _tb):
        ta.write_text("new a\n")
        raise RuntimeError("the build failed")
    assert (a.read_text(), b.read_text()) == ("old a\n", "old b\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.md"]


def test_first_schema_error_remembers_only_what_passed() -> None:
    """A value that passed is not checked again; an invalid one gives its error every time."""
    from negcse.finite import first_schema_error, schema_validator

    real = schema_validator()({"type": "object", "properties": {"lr": {"type": "number",
                                                                        "minimum": 0}}})  # fmt: skip
    calls = []

    class Counted:  # the real validator, its calls counted
        def iter_errors(self, value):  # type: ignore[no-untyped-def]
            calls.append(value)
            return real.iter_errors(value)

    validator = Counted()
    assert first_schema_error(validator, {"lr": 0.1}) is None
    assert first_schema_error(validator, {"lr": 0.1}) is None
    assert calls == [{"lr": 0.1}]  # the second time from memory
    for _ in range(2):
        error = first_schema_error(validator, {"lr": -1.0})
        assert error is not None and list(error.absolute_path) == ["lr"]
    assert first_schema_error(validator, {"lr": float("nan")}) is not None  # finite numbers
    assert len(calls) == 4
