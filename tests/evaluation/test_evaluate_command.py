"""`negcse evaluate`: evaluations registered by name run on one loaded model with one sentence
cache; a new evaluation is one registered class (the toy below, nothing else edited)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
import torch

from negcse.cli import main
from negcse.encoders.poolers import get_pooler
from negcse.encoders.vectors import SentenceCache
from negcse.errors import UserError
from negcse.evaluation.embedder import Embedder
from negcse.evaluation.probe import load_probe
from negcse.evaluation.registry import Evaluation, Options, evaluations, register, unregister
from negcse.training.model import SentenceEncoder

MODEL = ["--pooler", "cls_before_pooler", "--threads", "1", "--tag", "method=untrained"]


@pytest.fixture
def toy() -> Iterator[None]:
    """A toy evaluation: the norm of each given sentence's embedding, and the cache size."""

    @register
    class Toy(Evaluation):
        name = "toy"
        help = "embedding norms"
        options: ClassVar[Options] = {
            "sentences": {"nargs": "+", "default": ["a cat ."]},
            "fail": {"action": "store_true"},
        }

        def run(self, encoder: SentenceCache, settings: dict[str, Any]) -> dict[str, Any]:
            if settings["fail"]:
                raise UserError("toy: asked to fail")
            before = len(encoder)
            norms = np.linalg.norm(encoder(settings["sentences"]), axis=1)
            return {"norms": norms.tolist(), "cached_before": before, "new": len(encoder) - before}

    yield
    unregister("toy")


@pytest.fixture
def count_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every Embedder.load call (a spy: the real loading still runs)."""
    loads: list[str] = []
    real = Embedder.load.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Embedder], name: str, *args: Any, **kwargs: Any) -> Embedder:
        loads.append(name)
        return real(cls, name, *args, **kwargs)

    monkeypatch.setattr(Embedder, "load", classmethod(counting))
    return loads


def test_sentence_cache_encodes_each_sentence_once() -> None:
    calls: list[list[str]] = []

    def encode(texts: list[str]) -> np.ndarray:
        calls.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts]).reshape(len(texts), 2)

    cache = SentenceCache(encode)
    cache.prefetch(["a", "bb", "a"])
    out = cache(["bb", "ccc", "a"])
    assert calls == [["a", "bb"], ["ccc"]]  # distinct new sentences, in order of appearance
    assert out[:, 0].tolist() == [2, 3, 1] and out.dtype == np.float32
    assert len(cache) == 3
    assert cache([]).shape == (0, 2)  # no sentence: the encoder's empty matrix
    with pytest.raises(ValueError, match="1 rows for 2 sentences"):
        SentenceCache(lambda t: np.zeros((1, 2)))(["x", "y"])


def test_the_six_evaluations_are_registered() -> None:
    names = {"sts", "transfer", "splits", "probe", "mteb", "analysis"}
    assert names <= set(evaluations())


@pytest.mark.mirror
def test_a_toy_evaluation_runs_through_negcse_evaluate(
    toy: None, count_loads: list[str], splade_tiny: Path, tmp_path: Path
) -> None:
    out = tmp_path / "toy.json"
    sentences = ["a man plays a guitar .", "a cat sleeps ."]
    args = ["evaluate", "--model", str(splade_tiny), *MODEL, "--only", "toy"]
    assert main([*args, "--toy-out", str(out), "--toy-sentences", *sentences]) == 0
    result = json.loads(out.read_text())
    assert list(result)[:3] == ["method", "model", "pooler"]  # tags, model, pooler first
    assert result["method"] == "untrained" and result["pooler"] == "cls_before_pooler"
    plain = Embedder.load(str(splade_tiny), "cls_before_pooler").encode(sentences)
    np.testing.assert_allclose(result["norms"], np.linalg.norm(plain, axis=1), rtol=1e-5)
    assert result["cached_before"] == 0 and result["new"] == 2
    assert count_loads == [str(splade_tiny)] * 2  # the run's, then the check's own


@pytest.mark.mirror
def test_several_evaluations_share_one_model_and_one_cache(
    toy: None, count_loads: list[str], splade_tiny: Path, tmp_path: Path
) -> None:
    probe = load_probe()
    probe_out, toy_out = tmp_path / "probe.json", tmp_path / "toy.json"
    args = ["evaluate", "--model", str(splade_tiny), *MODEL, "--only", "probe,toy"]
    args += ["--probe-out", str(probe_out), "--toy-out", str(toy_out)]
    assert main([*args, "--toy-sentences", probe.anchor, *probe.negations[:2]]) == 0
    assert count_loads == [str(splade_tiny)]  # one load for both evaluations
    toy_result = json.loads(toy_out.read_text())
    assert toy_result["cached_before"] == 1 + len(probe.paraphrases) + len(probe.negations)
    assert toy_result["new"] == 0  # the probe's sentences: already encoded

    alone = tmp_path / "alone.json"
    assert main(["evaluate", "--model", str(splade_tiny), *MODEL, "--only", "probe",
                 "--probe-out", str(alone)]) == 0  # fmt: skip
    assert alone.read_bytes() == probe_out.read_bytes()  # sharing changes no number


@pytest.mark.mirror
def test_pooler_cls_on_a_model_without_pooler_weights_is_refused(
    toy: None, splade_tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """splade-tiny's weights hold no pooler layer: transformers draws one at random on each
    load, so ``--pooler cls`` scored differently every run. A model the suite saved holds its
    MLP head there, and two loads of it give the same embeddings."""
    out = tmp_path / "toy.json"
    args = ["--pooler", "cls", "--threads", "1", "--only", "toy", "--toy-out", str(out)]
    assert main(["evaluate", "--model", str(splade_tiny), *args]) == 2
    err = capsys.readouterr().err
    assert f"model folder {splade_tiny}: pooler 'cls' reads the model's pooler layer" in err
    assert "pooler.dense.weight" in err and not out.exists()

    torch.manual_seed(0)
    saved = tmp_path / "saved"
    SentenceEncoder.from_pretrained(str(splade_tiny), 0.1).save(saved, get_pooler("cls"), {})
    assert main(["evaluate", "--model", str(saved), *args]) == 0
    sentences = ["a man plays a guitar .", "a cat sleeps ."]
    first, second = (Embedder.load(str(saved), "cls").encode(sentences) for _ in range(2))
    np.testing.assert_array_equal(first, second)


@pytest.mark.mirror
def test_a_failing_evaluation_leaves_no_output(
    toy: None, splade_tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    probe_out, toy_out = tmp_path / "probe.json", tmp_path / "toy.json"
    args = ["evaluate", "--model", str(splade_tiny), *MODEL, "--only", "probe,toy"]
    args += ["--probe-out", str(probe_out), "--toy-out", str(toy_out), "--toy-fail"]
    assert main(args) == 2  # the probe ran, then the toy failed
    assert "toy: asked to fail" in capsys.readouterr().err
    assert not probe_out.exists() and not toy_out.exists()


def test_bad_selection_and_missing_options_name_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "x.json")
    assert main(["evaluate", "--model", "m", "--only", "sts,bogus", "--sts-out", out]) == 2
    assert "unknown evaluation bogus; known: analysis" in capsys.readouterr().err
    assert main(["evaluate", "--model", "m", "--only", "analysis", "--analysis-out", out]) == 2
    assert "--analysis-sentences is required with --only analysis" in capsys.readouterr().err
    assert main(["evaluate", "--model", "m", "--only", "sts"]) == 2
    assert "--sts-out is required with --only sts" in capsys.readouterr().err
    assert not Path(out).exists()
