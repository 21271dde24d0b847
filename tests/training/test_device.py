"""The device setting never falls back in silence (negcse.runtime.device): ``cuda`` where torch sees no
GPU stops with one line, ``auto`` takes the CPU and says so, and a trained model records both.

These run where CUDA is absent (CI): ``torch.cuda.is_available()`` is really false, nothing is
mocked; where a GPU is present the tests that need its absence skip."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import torch
from test_trainer import SETTINGS

from negcse import cli
from negcse.encoders.pretrained import default_device
from negcse.generators.san import MaskPredictor
from negcse.runtime.device import DEVICE_ENV, DeviceError, choose, cuda_missing


class _Sized:
    """A tokenizer and a lexicon of equal size: all the SAN generator reads before its device."""

    def __len__(self) -> int:
        return 3


no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA GPU is present")


@no_cuda
def test_cuda_without_a_gpu_is_one_line_naming_the_cause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    with pytest.raises(DeviceError) as err:
        choose("cuda")
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("device 'cuda' is required")
    # this torch's own reason: a CPU build, or a CUDA build that sees no GPU
    assert cuda_missing() in message and "negcse doctor" in message


@no_cuda
def test_the_environment_setting_reaches_every_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    """$NEGCSE_DEVICE (what the workflow exports from the config's ``device``) governs the
    model loader's default and the SAN generator's; unset, auto takes the CPU."""
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    assert default_device() == torch.device("cpu")
    monkeypatch.setenv(DEVICE_ENV, "cuda")
    with pytest.raises(DeviceError, match="device 'cuda' is required"):
        default_device()
    with pytest.raises(DeviceError, match="device 'cuda' is required"):
        MaskPredictor(None, _Sized(), _Sized(), 1.0)  # type: ignore[arg-type]
    monkeypatch.setenv(DEVICE_ENV, "cpu")
    assert default_device() == torch.device("cpu")


def test_bad_setting_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DEVICE_ENV, "gpu")
    with pytest.raises(DeviceError, match=r"\$NEGCSE_DEVICE: 'gpu' is not one of auto, cuda, cpu"):
        choose()
    with pytest.raises(DeviceError, match="'cpu:1' is not one of"):
        choose("cpu:1")


@no_cuda
def test_auto_takes_the_cpu_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    choice = choose()
    assert choice.device == torch.device("cpu") and choice.setting == "auto"
    assert choice.reason == f"auto: no CUDA GPU: {cuda_missing()}"


def _train_args(tmp: Path, corpus: Path) -> list[str]:
    run = {
        "method": "simcse",
        "implementation": "simcse",
        "backbone": "splade-tiny",
        "params": {},
        "generators": {},
        "train": {**SETTINGS, "max_steps": 2, "eval_steps": 2, "checkpoint_steps": 2},
    }
    (tmp / "run.json").write_text(json.dumps(run))
    return [
        "train",
        *("--run", str(tmp / "run.json"), "--seed", "1", "--corpus", str(corpus)),
        *("--out", str(tmp / "model"), "--checkpoint-dir", str(tmp / "ck")),
        *("--threads", "1", "--no-progress"),
    ]


@no_cuda
def test_training_under_cuda_stops_before_reading_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A GPU profile's job on a machine without CUDA: exit 2, one error line, no output (the
    corpus does not even exist: the device is checked first)."""
    monkeypatch.setenv(DEVICE_ENV, "cuda")
    assert cli.main(_train_args(tmp_path, tmp_path / "no-such-corpus.txt")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("negcse train: error: device 'cuda' is required")
    assert not (tmp_path / "model").exists()


@pytest.mark.mirror
@no_cuda
def test_auto_run_records_its_choice(
    mirror: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    lines = (mirror / "data/unlabeled/wiki1m/wiki1m_random10k.txt").read_text().splitlines()
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(lines[:32]) + "\n")
    caplog.set_level(logging.INFO)
    assert cli.main(_train_args(tmp_path, corpus)) == 0
    meta = json.loads((tmp_path / "model" / "negcse.json").read_text())
    assert (meta["device"], meta["device_setting"]) == ("cpu", "auto")
    said = [r.getMessage() for r in caplog.records if r.name == "negcse.commands.train"]
    assert f"device cpu (auto: no CUDA GPU: {cuda_missing()})" in said
