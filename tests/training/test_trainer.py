"""The shared trainer on the mirror's splade-tiny: determinism, resume after kill -9, and a
checkpoint that transformers and sentence-transformers load with the evaluation pooler."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from negcse.methods.registry import build_method
from negcse.runtime.lock_record import lock_record
from negcse.training.model import SentenceEncoder
from negcse.training.settings import TrainSettings
from negcse.training.trainer import TrainData, Trainer

pytestmark = pytest.mark.mirror

SETTINGS = dict(
    epochs=1,
    batch_size=16,
    learning_rate=1e-4,
    max_seq_len=32,
    dropout=0.1,
    scheduler="linear",
    warmup_ratio=0.0,
    weight_decay=0.0,
    max_grad_norm=1.0,
    max_steps=12,
    eval_steps=4,
    checkpoint_steps=4,
    precision="fp32",
)


@pytest.fixture(scope="module")
def sentences(mirror: Path) -> list[str]:
    path = mirror / "data/unlabeled/wiki1m/wiki1m_random10k.txt"
    return path.read_text(encoding="utf-8").splitlines()[:400]


def _dev(encode) -> float:
    """A cheap, deterministic stand-in for STS-B dev: mean cosine of fixed sentence pairs."""
    emb = encode(["a man is playing a guitar.", "a man plays the guitar.", "the cat sleeps."])
    e = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    return float(e[0] @ e[1] - e[0] @ e[2])


def _train(splade: Path, sentences: list[str], ckpt: Path, seed: int = 3, precision: str = "fp32"):
    torch.manual_seed(seed)
    model = SentenceEncoder.from_pretrained(str(splade), 0.1)
    method = build_method("simcse", {"temperature": 0.05}, "splade-tiny")
    trainer = Trainer(
        method,
        model,
        TrainData({"sentence": sentences}),
        TrainSettings(**{**SETTINGS, "precision": precision}),
        seed,
        _dev,
        ckpt,
        device=torch.device("cpu"),
        progress=False,
    )
    return trainer, trainer.train()


def test_same_seed_same_run(splade_tiny: Path, sentences: list[str], tmp_path: Path) -> None:
    t1, s1 = _train(splade_tiny, sentences, tmp_path / "a")
    t2, s2 = _train(splade_tiny, sentences, tmp_path / "b")
    assert s1.curve[:-1] == s2.curve[:-1]
    for p, q in zip(t1.model.parameters(), t2.model.parameters(), strict=True):
        assert torch.equal(p, q)
    assert [c["step"] for c in s1.curve[:-1]] == [4, 8, 12]


def test_tf32_changes_nothing_on_cpu(
    splade_tiny: Path, sentences: list[str], tmp_path: Path
) -> None:
    """tf32 (SNCSE's default) only lets CUDA matmuls use TF32: on CPU the run is fp32's, bit
    for bit, and the process-wide CUDA switch is left alone."""
    switch = torch.backends.cuda.matmul.allow_tf32
    t1, s1 = _train(splade_tiny, sentences, tmp_path / "a")
    t2, s2 = _train(splade_tiny, sentences, tmp_path / "b", precision="tf32")
    assert torch.backends.cuda.matmul.allow_tf32 == switch
    assert s1.curve[:-1] == s2.curve[:-1]
    for p, q in zip(t1.model.parameters(), t2.model.parameters(), strict=True):
        assert torch.equal(p, q)


def _train_logging(splade: Path, sentences: list[str], ckpt: Path, log_steps: int) -> Trainer:
    torch.manual_seed(3)
    model = SentenceEncoder.from_pretrained(str(splade), 0.1)
    settings = TrainSettings(**{**SETTINGS, "max_steps": 6, "log_steps": log_steps})
    trainer = Trainer(build_method("simcse", {}, "splade-tiny"), model,
                      TrainData({"sentence": sentences}), settings, 3, _dev, ckpt,
                      device=torch.device("cpu"), progress=False)  # fmt: skip
    trainer.train()
    return trainer


def test_the_loss_and_its_parts_reach_the_log_and_the_curve(
    splade_tiny: Path, sentences: list[str], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("INFO", logger="negcse.training.loss_log"):
        every = _train_logging(splade_tiny, sentences, tmp_path / "a", log_steps=2)
    records = [c for c in every.state.curve if "loss" in c]
    assert [r["step"] for r in records] == [2, 4, 6]
    # SimCSE's one logged part is its whole loss
    assert all(r["parts"] == {"infonce": r["loss"]} and r["loss"] > 0 for r in records)
    lines = [r.getMessage() for r in caplog.records if r.name == "negcse.training.loss_log"]
    assert lines == [f"step {r['step']}: loss {r['loss']:.4f} (infonce {r['loss']:.4f})"
                     for r in records]  # fmt: skip
    # reading the loss every step changes nothing of the training
    never = _train_logging(splade_tiny, sentences, tmp_path / "b", log_steps=100)
    assert not [c for c in never.state.curve if "loss" in c]
    for p, q in zip(every.model.parameters(), never.model.parameters(), strict=True):
        assert torch.equal(p, q)


def test_batches_cover_the_corpus_once_per_epoch(
    splade_tiny: Path, sentences: list[str], tmp_path: Path
) -> None:
    model = SentenceEncoder.from_pretrained(str(splade_tiny), 0.1)
    method = build_method("simcse", {}, "splade-tiny")
    settings = TrainSettings(**{**SETTINGS, "max_steps": None})
    tr = Trainer(
        method,
        model,
        TrainData({"sentence": sentences[:50]}),
        settings,
        1,
        _dev,
        tmp_path,
        progress=False,
    )
    assert tr.total_steps == 4  # ceil(50 / 16)
    seen = np.concatenate([tr.batch_indices(s) for s in range(4)])
    assert sorted(seen.tolist()) == list(range(50))


def test_misaligned_column_is_rejected() -> None:
    with pytest.raises(ValueError, match="column 'negation' has 2 lines but the corpus has 3"):
        TrainData({"sentence": ["a", "b", "c"], "negation": ["x", "y"]})


def _train_cmd(tmp: Path, corpus: Path, out: str, ckpt: str) -> list[str]:
    run = {
        "method": "simcse",
        "implementation": "simcse",
        "backbone": "splade-tiny",
        "params": {"temperature": 0.05},
        "generators": {},
        "train": {**SETTINGS, "max_steps": 40, "eval_steps": 10, "checkpoint_steps": 5},
    }
    (tmp / "run.json").write_text(json.dumps(run))
    return [
        sys.executable,
        "-m",
        "negcse",
        "train",
        "--run",
        str(tmp / "run.json"),
        "--seed",
        "7",
        "--corpus",
        str(corpus),
        "--out",
        str(tmp / out),
        "--checkpoint-dir",
        str(tmp / ckpt),
        "--threads",
        "1",
        "--no-progress",
    ]


@pytest.mark.slow
def test_kill_9_then_resume_equals_uninterrupted(sentences: list[str], tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(sentences) + "\n")
    subprocess.run(_train_cmd(tmp_path, corpus, "full", "ck_full"), check=True, capture_output=True)

    cmd = _train_cmd(tmp_path, corpus, "resumed", "ck_res")
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    state = tmp_path / "ck_res" / "last.pt"
    deadline = time.time() + 600  # a hang guard (CI runs this part at a lower priority)
    while not state.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert state.exists(), "no checkpoint was written before the deadline"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (tmp_path / "resumed").exists()

    second = subprocess.run(cmd, check=True, capture_output=True, text=True)
    assert "resumed from" in second.stderr
    full = json.loads((tmp_path / "full" / "train_log.json").read_text())
    resumed = json.loads((tmp_path / "resumed" / "train_log.json").read_text())
    assert full["curve"][:-1] == resumed["curve"][:-1]  # the last entry is wall time
    assert full["best_stsb_dev"] == resumed["best_stsb_dev"]
    a = (tmp_path / "full" / "model.safetensors").read_bytes()
    assert a == (tmp_path / "resumed" / "model.safetensors").read_bytes()
    assert not (tmp_path / "ck_res").exists()  # resumable state dropped after success
    versions = json.loads((tmp_path / "full" / "negcse.json").read_text())["versions"]
    assert {k: versions[k] for k in ("lock", "lock_sha256")} == lock_record()  # this venv's lock


@pytest.mark.parametrize("pooler", ["cls_before_pooler", "cls"])
def test_checkpoint_loads_in_transformers_and_sentence_transformers(
    splade_tiny: Path, sentences: list[str], tmp_path: Path, pooler: str, monkeypatch
) -> None:
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel, AutoTokenizer

    from negcse.methods.simcse import SimCSE

    monkeypatch.setattr(SimCSE, "eval_pooler", pooler)
    trainer, _ = _train(splade_tiny, sentences[:64], tmp_path / "ck")
    trainer.save(tmp_path / "model", {"eval_pooler": pooler})
    probe = ["A man is playing a guitar.", "Wikipedia is an online encyclopedia."]
    ours = trainer.encode_eval(probe)

    st = SentenceTransformer(str(tmp_path / "model"), device="cpu").encode(probe)
    np.testing.assert_allclose(st, ours, atol=1e-5)

    tok = AutoTokenizer.from_pretrained(tmp_path / "model")
    hf = AutoModel.from_pretrained(tmp_path / "model").eval()
    with torch.no_grad():
        out = hf(**tok(probe, padding=True, return_tensors="pt"))
    got = out.pooler_output if pooler == "cls" else out.last_hidden_state[:, 0]
    np.testing.assert_allclose(got.numpy(), ours, atol=1e-5)


def _cuda_trainer(
    model: SentenceEncoder, sentences: list[str], settings: TrainSettings, tmp_path: Path
) -> Trainer:
    """A SimCSE trainer of ``model`` on CUDA (the GPU tests' setup)."""
    return Trainer(
        build_method("simcse", {}, "splade-tiny"),
        model,
        TrainData({"sentence": sentences}),
        settings,
        1,
        _dev,
        tmp_path,
        device=torch.device("cuda"),
        progress=False,
    )


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_mixed_precision_training_on_gpu(
    splade_tiny: Path, sentences: list[str], tmp_path: Path, precision: str
) -> None:
    """Autocast (and the fp16 grad scaler) on CUDA: the loss falls and the model stays finite."""
    model = SentenceEncoder.from_pretrained(str(splade_tiny), 0.1)
    settings = TrainSettings(**{**SETTINGS, "precision": precision, "max_steps": 20})
    trainer = _cuda_trainer(model, sentences, settings, tmp_path)
    state = trainer.train()
    assert all(torch.isfinite(p).all() for p in trainer.model.parameters())
    assert state.best_step > 0


@pytest.mark.gpu
def test_training_step_on_gpu_never_waits_for_the_gpu(
    splade_tiny: Path, sentences: list[str], tmp_path: Path
) -> None:
    """Between evaluations an fp16 step (collate, pinned copies, forward with the square mask,
    grad scaler, clipping, fused AdamW, scheduler) makes no synchronizing CUDA call: torch's
    sync debug mode turns any such call into an error."""
    model = SentenceEncoder.from_pretrained(str(splade_tiny), 0.1)
    quiet = {"eval_steps": 100, "checkpoint_steps": 100, "log_steps": 100}
    settings = TrainSettings(**{**SETTINGS, "precision": "fp16", "max_steps": 12, **quiet})
    trainer = _cuda_trainer(model, sentences, settings, tmp_path)
    checked: list[int] = []

    def hook(step: int) -> None:  # steps 4..10 run in error mode; the final evaluation syncs
        if step == 3:
            torch.cuda.set_sync_debug_mode("error")
        elif step == 10:
            torch.cuda.set_sync_debug_mode("default")
        elif 3 < step < 10:
            checked.append(step)

    trainer.on_step = hook
    try:
        trainer.train()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert checked == list(range(4, 10))


@pytest.mark.gpu
@pytest.mark.parametrize("compile_mode", [True, "reduce-overhead"])
def test_compiled_static_padding_training_on_gpu(
    splade_tiny: Path, sentences: list[str], tmp_path: Path, compile_mode: bool | str
) -> None:
    """The opt-in speed settings on CUDA (torch.compile, with CUDA graphs for reduce-overhead,
    static padding, fused AdamW under the fp16 grad scaler): the run finishes finite, and the
    dev evaluation on CUDA (length-sorted batches, fp32) gives the CPU's vectors back in input
    order."""
    model = SentenceEncoder.from_pretrained(str(splade_tiny), 0.1)
    settings = TrainSettings(
        **{**SETTINGS, "precision": "fp16", "max_steps": 20},
        compile=compile_mode,
        static_padding=True,
    )
    trainer = _cuda_trainer(model, sentences, settings, tmp_path)
    state = trainer.train()
    assert all(torch.isfinite(p).all() for p in trainer.model.parameters())
    assert state.best_step > 0
    probe = sentences[:40]
    trainer.s = TrainSettings(**SETTINGS)  # fp32 evaluation
    on_gpu = trainer.encode_eval(probe)
    reference = SentenceEncoder.from_pretrained(str(splade_tiny), 0.1)
    reference.load_state_dict(trainer.model.state_dict())
    cpu = Trainer(
        trainer.method,
        reference,
        TrainData({"sentence": sentences}),
        TrainSettings(**SETTINGS),
        1,
        _dev,
        tmp_path / "cpu",
        device=torch.device("cpu"),
        progress=False,
    )
    np.testing.assert_allclose(on_gpu, cpu.encode_eval(probe), atol=2e-3)
