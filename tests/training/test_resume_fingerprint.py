"""A killed training never resumes under changed settings: the resumable state records the run's
fingerprint (negcse.training.fingerprint) and a rerun under anything else starts from scratch,
saying in one log line what changed (issue 24: a SimCSE run killed, its temperature edited, resumed
the old state at step 20 and labelled the model with the new value)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import torch
from test_trainer import SETTINGS

from negcse import cli
from negcse.training import trainer as trainer_module
from negcse.training.fingerprint import differences, run_fingerprint
from negcse.training.trainer import Trainer, load_checkpoint

pytestmark = pytest.mark.mirror


class Killed(Exception):
    pass


@pytest.fixture
def corpus(mirror: Path, tmp_path: Path) -> Path:
    lines = (mirror / "data/unlabeled/wiki1m/wiki1m_random10k.txt").read_text().splitlines()
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines[:96]) + "\n")
    return path


def _train(tmp: Path, corpus: Path, name: str, ckpt: str, temperature: float) -> list[str]:
    """``negcse train`` of SimCSE on splade-tiny (6 steps, a checkpoint every 2), in process."""
    run = {
        "method": "simcse",
        "implementation": "simcse",
        "backbone": "splade-tiny",
        "params": {"temperature": temperature},
        "generators": {},
        # the loss logged every step: the checkpoint's curve holds loss entries with their parts
        "train": {
            **SETTINGS, "max_steps": 6, "eval_steps": 3, "checkpoint_steps": 2, "log_steps": 1
        },
    }
    (tmp / f"{name}.json").write_text(json.dumps(run))
    return [
        "train",
        *("--run", str(tmp / f"{name}.json"), "--seed", "5", "--corpus", str(corpus)),
        *("--out", str(tmp / name), "--checkpoint-dir", str(tmp / ckpt)),
        *("--threads", "1", "--no-progress"),
    ]


def _kill_after_first_checkpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    save = Trainer._save_state

    def save_then_die(self: Trainer, *args) -> None:
        save(self, *args)
        raise Killed

    monkeypatch.setattr(trainer_module.Trainer, "_save_state", save_then_die)


@pytest.mark.slow
def test_killed_run_with_edited_temperature_restarts_and_names_the_change(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with monkeypatch.context() as patch:
        _kill_after_first_checkpoint(patch)
        with pytest.raises(Killed):
            cli.main(_train(tmp_path, corpus, "edited", "ck", temperature=0.05))
    last = tmp_path / "ck" / "last.pt"
    payload = load_checkpoint(last)
    assert payload is not None and payload["state"]["step"] == 2
    assert payload["fingerprint"]["params"] == {"temperature": 0.05}

    caplog.set_level(logging.INFO)
    assert cli.main(_train(tmp_path, corpus, "edited", "ck", temperature=0.1)) == 0
    ours = [r for r in caplog.records if r.name == "negcse.training.trainer"]
    assert [r.getMessage() for r in ours if r.levelno >= logging.WARNING] == [
        f"not resuming {last}: params.temperature changed 0.05 -> 0.1; starting from scratch"
    ]
    assert not any("resumed from" in r.getMessage() for r in caplog.records)

    # from step 0: the same model, bytes and curve, as a run at 0.1 that was never interrupted
    assert cli.main(_train(tmp_path, corpus, "fresh", "ck_fresh", temperature=0.1)) == 0
    edited, fresh = tmp_path / "edited", tmp_path / "fresh"
    assert (edited / "model.safetensors").read_bytes() == (fresh / "model.safetensors").read_bytes()
    log_edited = json.loads((edited / "train_log.json").read_text())
    log_fresh = json.loads((fresh / "train_log.json").read_text())
    assert log_edited["curve"][:-1] == log_fresh["curve"][:-1]  # the last entry is wall time
    assert [c["step"] for c in log_edited["curve"] if "stsb_dev" in c] == [3, 6]
    assert json.loads((edited / "negcse.json").read_text())["params"] == {"temperature": 0.1}


@pytest.mark.slow
def test_unchanged_rerun_resumes_and_a_state_without_fingerprint_does_not(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    args = _train(tmp_path, corpus, "out", "ck", temperature=0.05)
    with monkeypatch.context() as patch:
        _kill_after_first_checkpoint(patch)
        with pytest.raises(Killed):
            cli.main(args)
    last = tmp_path / "ck" / "last.pt"
    payload = torch.load(last, weights_only=True)
    del payload["fingerprint"]  # as written before fingerprints were recorded
    torch.save(payload, last)
    caplog.set_level(logging.INFO)
    with monkeypatch.context() as patch:
        _kill_after_first_checkpoint(patch)
        with pytest.raises(Killed):
            cli.main(args)
    assert f"not resuming {last}: it records no fingerprint (an older negcse)" in caplog.text
    caplog.clear()
    assert cli.main(args) == 0
    assert f"resumed from {last} at step 2/6" in caplog.text
    assert "not resuming" not in caplog.text


def test_fingerprint_names_each_changed_input(tmp_path: Path) -> None:
    """Data, column and guide files are fingerprinted by content; each change is one phrase."""
    corpus, column = tmp_path / "corpus.txt", tmp_path / "negation.txt"
    corpus.write_text("a dog runs.\n")
    column.write_text("a dog does not run.\n")
    guide = tmp_path / "teacher"
    guide.mkdir()
    (guide / "config.json").write_text('{"hidden_size": 8}')
    spec = {"method": "sncse", "params": {"temperature": 0.05}, "train": {"batch_size": 64}}
    files = {"sentence": str(corpus), "negation": str(column)}

    def fingerprint(**changes) -> dict:
        return run_fingerprint({**spec, **changes}, 1, files, {"teacher1": str(guide)})

    before = fingerprint()
    assert differences(before, fingerprint()) == []
    column.write_text("a dog never runs.\n")
    (guide / "config.json").write_text('{"hidden_size": 16}')
    after = fingerprint(train={"batch_size": 32})
    sha = {"old": before["data"]["negation"], "new": after["data"]["negation"]}
    assert [d.split(" changed")[0] for d in differences(before, after)] == [
        "data.negation",
        "guides.teacher1.sha256",
        "train.batch_size",
    ]
    assert f'data.negation changed "{sha["old"][:12]}... -> "{sha["new"][:12]}...' in differences(
        before, after
    )
    assert "train.batch_size changed 64 -> 32" in differences(before, after)
