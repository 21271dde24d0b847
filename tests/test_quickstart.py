"""``make gpu-quickstart``: without a CUDA GPU it stops with one line; ``--tiny`` runs the same
path at smoke size on the CPU (the workflow trains SimCSE on splade-tiny, then the STS
evaluation prints its number beside the paper's) in a throwaway copy of the repository."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import torch

from negcse.commands.quickstart import BAND, PAPER, RERUNS
from workflow_copy import committed_copy, sh

no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA GPU is present")


def test_the_band_holds_the_reruns_and_the_paper() -> None:
    """The accepted band runs from below the lowest independent rerun to above the paper."""
    assert BAND[0] < RERUNS[0] <= RERUNS[1] < PAPER < BAND[1]
    assert (PAPER, RERUNS) == (76.25, (74.8, 76.0))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return committed_copy(tmp_path_factory.mktemp("quickstart"))


@no_cuda
def test_without_cuda_it_stops_with_one_line(workspace: Path) -> None:
    env = {**os.environ, "NEGCSE_DEVICE": "auto"}
    proc = sh([sys.executable, "-m", "negcse", "quickstart"], workspace, check=False, env=env)
    assert proc.returncode == 2
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        "negcse quickstart: error: the GPU quick start needs a CUDA GPU, but torch "
    )
    assert not (workspace / "results" / "models").exists()  # nothing ran


@pytest.mark.slow
@pytest.mark.mirror
def test_tiny_runs_the_path_on_the_cpu(workspace: Path) -> None:
    proc = sh([sys.executable, "-m", "negcse", "quickstart", "--tiny"], workspace)
    out = proc.stdout.splitlines()
    assert out[0].startswith("Unsupervised SimCSE on splade-tiny, corpus unlabeled/wiki1m/")
    assert any(line.startswith("STS avg ") and "(paper 76.25;" in line for line in out)
    assert out[-1] == "tiny: a check of the path at smoke size; the number means nothing"
    result = json.loads((workspace / "results/quickstart/splade-tiny-seed42.json").read_text())
    assert list(result["details"]) == ["STSBenchmark", "STSBenchmark-dev"]
    assert result["avg"] == result["STSBenchmark"]  # one task: its score is the average
    assert (result["method"], result["backbone"], result["seed"]) == ("simcse", "splade-tiny", "42")
    assert result["quickstart"]["tiny"] is True and result["quickstart"]["band"] == list(BAND)
    meta = json.loads(
        (workspace / "results/models/simcse/splade-tiny/seed42/negcse.json").read_text()
    )
    assert meta["steps"] == 6 and meta["device_setting"] == "auto"
    assert meta["device"] == ("cuda" if torch.cuda.is_available() else "cpu")
