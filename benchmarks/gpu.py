"""GPU benchmark in one call: training steps/s per method family, dev and full evaluation, GPU
generators. Writes benchmarks/gpu.md (the table) and benchmarks/gpu_costs.csv (what the dry
run's GPU-hours estimate reads, negcse.workflow.gpu_estimate).

    NEGCSE_MIRROR=../shared/mirror python benchmarks/gpu.py            # on a GPU, < 5 minutes
    NEGCSE_MIRROR=../shared/mirror python benchmarks/gpu.py --tiny --out-dir /tmp/x   # CPU check

Speed does not depend on the weights, so every model is built from its config with random
weights (BERT-base: ``BertConfig()``; the tokenizer is the mirror's splade-tiny, which has the
bert-base-uncased vocabulary). Training runs the project's ``Trainer`` at each method's resolved
params.yaml settings for bert-base-uncased (batch, precision, dropout, views) on the mirror's
10k Wikipedia sample; generator columns are stand-ins of the same length. Steps/s is steady
state: the clock starts after warm-up steps (and compilation) and stops at a device sync.
Generators run the project's code on a small input with random-weight models; with random
weights a beam search would stop at an arbitrary length, so the output length is fixed (minimum
= maximum) and stated in each row. ``--tiny`` shrinks every model and count so that the script
runs on a CPU in a minute (its figures mean nothing; it checks the script).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from transformers import BertConfig, BertModel

from negcse.data.sources import resolve_data, resolve_model
from negcse.evaluation.sts import dev_scorer
from negcse.methods.registry import build_method
from negcse.training.guide_cache import write_guide_cache
from negcse.training.model import SentenceEncoder
from negcse.training.settings import TrainSettings
from negcse.training.trainer import TrainData, Trainer, autocast_dtype
from negcse.workflow.config import project_config, resolve_method
from negcse.workflow.gpu_slots import free_memory_mb

REPO = Path(__file__).resolve().parents[1]
WIKI1M = 1_000_000  # sentences in wiki1m_for_simcse.txt
TOKENIZER = "splade-tiny"  # bert-base-uncased vocabulary


@dataclass(frozen=True)
class Case:
    """One training measurement: a params.yaml method at its BERT-base settings (+ options)."""

    method: str
    label: str
    train: dict[str, Any]  # overrides of the resolved settings (opt-in speed settings)
    paper: bool = True  # the method's own numerics (False: an opt-in faster mode)
    #: the frozen guides read from their cache (negcse.training.guide_cache), written before
    #: the run and not timed, instead of a forward pass per step
    guide_cache: bool = False


RO = {"compile": "reduce-overhead", "static_padding": True}  # CUDA graphs, static shapes

# the papers' settings first (every method family), then the opt-in faster modes; the compiled
# cases run after the dev evaluation and the generators (compilation takes half a minute each)
CASES = [
    Case("simcse", "SimCSE", {}),
    Case("simcse_san", "SimCSE+SAN (3 views)", {}),
    Case("osscse", "OssCSE (4 views + recall)", {}),
    Case("una", "UNA (negatives every 5 steps)", {}),
    Case("sncse", "SNCSE (3 prompt views)", {}),
    Case("sncse_san", "SNCSE+SAN (4 views)", {}),
    Case("simcse", "SimCSE", {"precision": "fp32"}, paper=False),
    Case("simcse", "SimCSE", {"precision": "bf16"}, paper=False),
    Case("sncse", "SNCSE", {"precision": "fp32"}, paper=False),  # IEEE fp32; its default: tf32
    Case("sncse", "SNCSE", {"precision": "bf16"}, paper=False),
    Case("una", "UNA", {"precision": "tf32"}, paper=False),
    Case("simcse", "SimCSE", RO),
    Case("simcse_san", "SimCSE+SAN (3 views)", RO),
    Case("osscse", "OssCSE (4 views + recall)", RO),
    Case("una", "UNA (negatives every 5 steps)", RO),
    Case("sncse", "SNCSE (3 prompt views)", RO),
    Case("sncse_san", "SNCSE+SAN (4 views)", RO),
    Case("simcse", "SimCSE", {"precision": "bf16", **RO}, paper=False),
    Case("sncse", "SNCSE", {"precision": "bf16", **RO}, paper=False),
    Case("una", "UNA", {"precision": "tf32", **RO}, paper=False),
    Case("simcse", "SimCSE", {"compile": True, "static_padding": True}),
    # the guided families (frozen random-weight BERT-base teachers / stage-1 model), then every
    # family compiled (what compile: auto runs on CUDA); indices above stay as documented
    Case("rankcse", "RankCSE (2 views + 2 teachers)", {}),
    Case("rlrd", "RLRD (3 prompt views + 2 teachers + agent)", {}),
    Case("gcse", "GCSE stage 2 (3 views + stage-1 guide)", {}),
    Case("rankcse", "RankCSE (2 views + 2 teachers)", RO),
    Case("rlrd", "RLRD (3 prompt views + 2 teachers + agent)", RO),
    Case("gcse", "GCSE stage 2 (3 views + stage-1 guide)", RO),
    # the guided families with their guides read from the cache (the workflow's guide_cache),
    # eager (27-29) and compiled (30-32): beside 21-26, the guide cache's speed-up
    Case("rankcse", "RankCSE (2 views, teachers cached)", {}, guide_cache=True),
    Case("rlrd", "RLRD (3 prompt views, teachers cached + agent)", {}, guide_cache=True),
    Case("gcse", "GCSE stage 2 (3 views, stage-1 guide cached)", {}, guide_cache=True),
    Case("rankcse", "RankCSE (2 views, teachers cached)", RO, guide_cache=True),
    Case("rlrd", "RLRD (3 prompt views, teachers cached + agent)", RO, guide_cache=True),
    Case("gcse", "GCSE stage 2 (3 views, stage-1 guide cached)", RO, guide_cache=True),
]
#: eager unless a case asks for more (params.yaml's default, compile: auto, compiles on CUDA)
EAGER = {"compile": False, "static_padding": False}
#: the options-column mark of a training step whose guides are read from their cache
GUIDE_CACHE = "guide_cache"
PROFILE_STEPS = 5


class _Stop(Exception):
    """Raised from the step hook once the measurement window is over."""


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def backbone_config(tiny: bool, dropout: float) -> BertConfig:
    if tiny:
        return BertConfig(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            hidden_dropout_prob=dropout,
            attention_probs_dropout_prob=dropout,
        )
    return BertConfig(hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)


def random_encoder(tokenizer: Any, tiny: bool, dropout: float, device: torch.device) -> Any:
    torch.manual_seed(0)
    with device:
        backbone = BertModel(backbone_config(tiny, dropout))
    return SentenceEncoder(backbone, tokenizer)


def stand_in_columns(sentences: list[str]) -> dict[str, list[str]]:
    """Generator columns of realistic length: a negation-like edit and a word-order change."""
    negated = [f"it is not true that {s}" if len(s) < 200 else s for s in sentences]
    shuffled = [" ".join(reversed(s.split())) for s in sentences]
    return {
        "negation_sncse": negated,
        "negation_osscse": negated,
        "san": shuffled,
        "una_negative": shuffled,
        "paraphrase": shuffled,
        "paraphrase_osscse": shuffled,
        "gcse_positive": shuffled,
        "gcse_negative": negated,
    }


def guide_folder(tokenizer: Any, tiny: bool, root: Path) -> Path:
    """A random-weight encoder saved as the suite saves a model (MLP head as the backbone's
    pooler), the stand-in for every frozen guide: a guide's cost does not depend on its weights
    (the released teachers are BERT-base and -large; here all are the student's size)."""
    from negcse.encoders.poolers import get_pooler

    folder = root / "guide"
    if not folder.is_dir():
        random_encoder(tokenizer, tiny, 0.0, torch.device("cpu")).save(
            folder, get_pooler("cls"), {}
        )
    return folder


def measure_training(
    case: Case,
    config: dict[str, Any],
    corpus: list[str],
    tokenizer: Any,
    device: torch.device,
    tiny: bool,
    seconds: float,
    profile: Path | None = None,
    warm_only: bool = False,
) -> dict[str, Any]:
    """Steady steps/s of a case; with ``profile``, first a profile of a few steps after the
    warm-up (summary appended to that file), outside the timed window. ``warm_only``: the
    warm-up steps alone (compilation included), no timing: it fills the compile caches that a
    later measurement of the same case reads (:func:`warm_pool`)."""
    spec = resolve_method(config, case.method, "bert-base-uncased")
    train = {**spec["train"], **EAGER, **case.train}
    compiled = bool(train.get("compile"))
    warm = 3 if tiny else (15 if compiled else 5)
    train.update(max_steps=10**6, eval_steps=10**9, checkpoint_steps=10**9, epochs=50)
    if tiny:
        train["batch_size"] = min(train["batch_size"], 16)
    settings = TrainSettings.from_dict(train)
    method = build_method(spec["implementation"], spec["params"], "bert-base-uncased")
    # whole batches only (as wiki1m at batch 64): a short last batch is another shape, which
    # costs compiled cases a recompilation inside the timed window
    corpus = corpus[: len(corpus) // settings.batch_size * settings.batch_size]
    columns = {"sentence": corpus, **stand_in_columns(corpus)}
    needed = {"sentence", *method.columns, *(c for g in method.guides() for c in g.columns)}
    data = TrainData({k: v for k, v in columns.items() if k in needed})
    model = random_encoder(tokenizer, tiny, settings.dropout, device)
    with tempfile.TemporaryDirectory() as ckpt:
        guides = {g.name: str(guide_folder(tokenizer, tiny, Path(ckpt))) for g in method.guides()}
        caches: dict[str, str] = {}
        if case.guide_cache:  # one pass over the corpus per guide, before the clock
            dtype = autocast_dtype(settings.precision, device)
            for g in method.guides():
                caches[g.name] = str(Path(ckpt) / "cache" / g.name)
                write_guide_cache(
                    [g], guides[g.name], data.columns, caches[g.name], settings.max_seq_len,
                    device, dtype,
                )  # fmt: skip
        trainer = Trainer(
            method,
            model,
            data,
            settings,
            1,
            lambda e: 0.0,
            Path(ckpt) / "run",
            device,
            progress=False,
            guides=guides,
            guide_caches=caches,
        )
        marks: dict[str, float] = {}
        prof = profiler(device) if profile is not None else None
        start = warm + (PROFILE_STEPS if prof is not None else 0)

        def hook(step: int) -> None:
            if warm_only and step == warm:
                sync(device)
                marks["warm"] = time.perf_counter()
                raise _Stop
            if prof is not None and step == warm:
                sync(device)
                marks["prof"] = time.perf_counter()
                prof.start()
            if prof is not None and step == start:
                sync(device)
                prof.stop()
                wall = (time.perf_counter() - marks["prof"]) / PROFILE_STEPS
                assert profile is not None
                write_profile(profile, f"{case.label} {case.train or ''}", prof, wall)
            if step == start:
                sync(device)
                marks["start"] = time.perf_counter()
                marks["step"] = step
            elif step > start and time.perf_counter() - marks["start"] >= seconds:
                sync(device)
                marks["end"] = time.perf_counter()
                marks["steps"] = step - start
                raise _Stop

        trainer.on_step = hook
        t0 = time.perf_counter()
        with contextlib.suppress(_Stop):
            trainer.train()
    if warm_only:
        return {"kind": "warm", "case": case.label, "options": train.get("compile") or "eager",
                "warm_s": round(marks["warm"] - t0, 1)}  # fmt: skip
    steps_per_s = marks["steps"] / (marks["end"] - marks["start"])
    precision = settings.precision
    if precision == "auto":
        precision = "fp16" if device.type == "cuda" else "fp32"
    options = [k for k in ("compile", "static_padding") if train.get(k)]
    if isinstance(train.get("compile"), str):
        options[0] = f"compile({train['compile']})"
    if case.guide_cache:
        options.append(GUIDE_CACHE)
    return {
        "kind": "train",
        "method": case.method,
        "implementation": spec["implementation"],
        "label": case.label,
        "batch_size": settings.batch_size,
        "precision": precision,
        "options": "+".join(options),
        "paper": case.paper,
        "steps_per_s": steps_per_s,
        "measured_steps": marks["steps"],
        "warmup_s": marks["start"] - t0,
        "epoch_steps": math.ceil(WIKI1M / settings.batch_size) * spec["train"]["epochs"],
        "eval_steps": spec["train"]["eval_steps"],
    }


def profiler(device: torch.device) -> Any:
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    return torch.profiler.profile(activities=activities)


#: host calls that wait for the GPU or copy, and the launch calls, counted per profiled step
SYNC_CALLS = (
    "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpy",
    "cudaMemcpyAsync", "aten::_local_scalar_dense", "aten::is_nonzero", "cudaLaunchKernel",
    "cuLaunchKernel", "cuLaunchKernelEx", "cudaLaunchKernelExC", "cudaGraphLaunch",
)  # fmt: skip


def write_profile(path: Path, title: str, prof: Any, wall: float) -> None:
    """Per-step wall and device time, the counts of :data:`SYNC_CALLS` and the top ops."""
    events = prof.key_averages()
    # kernels only: operator rows (and a CUDA graph's row) repeat the time of their kernels
    kernels = [e for e in events if e.device_type != torch.autograd.DeviceType.CPU]
    device_us = sum(e.self_device_time_total for e in kernels) / PROFILE_STEPS
    counts = {name: 0 for name in SYNC_CALLS}
    for e in events:
        if e.key in counts:
            counts[e.key] += e.count
    lines = [
        f"== {title}: {PROFILE_STEPS} steps profiled; per step: wall {wall * 1e3:.2f} ms "
        f"(under the profiler), device kernels {device_us / 1e3:.2f} ms",
        "calls per step: "
        + ", ".join(f"{k} {v / PROFILE_STEPS:g}" for k, v in counts.items() if v),
    ]
    for key in ("self_device_time_total", "self_cpu_time_total"):
        lines += [
            f"-- top ops by {key}",
            events.table(sort_by=key, row_limit=18, max_name_column_width=60),
        ]
    with path.open("a", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n\n")
    print(lines[0], "|", lines[1], flush=True)


def measure_dev_eval(
    tokenizer: Any, device: torch.device, tiny: bool, precision: str, repeats: int = 3
) -> float:
    """Seconds of one STS-B dev evaluation (the trainer's, pre-tokenized) of a random model."""
    model = random_encoder(tokenizer, tiny, 0.1, device)
    settings = TrainSettings.from_dict(
        {
            **project_config(REPO, check=False)["train"],
            "precision": precision,
        }
    )
    method = build_method("simcse", {}, "bert-base-uncased")
    scorer = dev_scorer("senteval", None)
    with tempfile.TemporaryDirectory() as ckpt:
        trainer = Trainer(
            method, model, TrainData({"sentence": ["x"]}), settings, 1, scorer, Path(ckpt), device
        )
        model.to(device)
        scorer(trainer.encode_eval)  # warm-up: tokenization and kernels
        times = []
        for _ in range(repeats):
            sync(device)
            t = time.perf_counter()
            scorer(trainer.encode_eval)
            sync(device)
            times.append(time.perf_counter() - t)
    return float(np.median(times))


def measure_eval_job(tokenizer: Any, tiny: bool, timeout: float) -> tuple[float | None, str]:
    """Wall seconds of the evaluation job of one trained model (rules/evaluate.smk: STS 7
    tasks + dev, transfer 7 tasks 10-fold, splits + probe; analyses not included) as a
    subprocess, on a random BERT-base saved in the trained-model layout."""
    from negcse.encoders.poolers import get_pooler

    model = random_encoder(tokenizer, tiny, 0.1, torch.device("cpu"))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        meta = {"eval_pooler": "cls_before_pooler", "benchmark": "random weights"}
        model.save(out / "model", get_pooler("cls_before_pooler"), 32, meta)
        tasks = "--transfer-tasks CR TREC --transfer-kfold 2" if tiny else ""
        args = (
            f"--only sts,transfer,splits,probe --model {out / 'model'} --pooler auto "
            f"--batch-size 128 --sts-protocol senteval --sts-out {out / 'sts.json'} "
            f"{tasks} --transfer-out {out / 'transfer.json'} --splits-protocol senteval "
            f"--splits-out {out / 'splits.json'} --probe-out {out / 'probe.json'}"
        )
        cmd = [sys.executable, "-m", "negcse", "evaluate", *args.split()]
        start = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, f"stopped after {timeout:.0f} s"
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            return None, "failed: " + proc.stderr.strip().splitlines()[-1][:200]
        return wall, "STS 7 + dev, transfer " + ("CR TREC 2-fold" if tiny else "7 tasks 10-fold")


# -- generators -------------------------------------------------------------------------------


def _seq2seq_seconds(
    build: Callable[[], Any], tokenizer: Any, corpus: list[str], settings: Any, n: int
) -> float:
    """Seconds per sentence of negcse's Paraphraser (beam search) on ``n`` sentences."""
    from negcse.generators.paraphrase import Paraphraser

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    with device:
        model = build()
    if settings.precision == "bf16":
        model = model.to(torch.bfloat16)
    # fixed output length: random weights would stop at arbitrary lengths
    model.generation_config.min_length = settings.max_length
    model.generation_config.max_length = settings.max_length
    para = Paraphraser(model, tokenizer, settings, device)
    para.paraphrase(corpus[:4])  # warm-up
    sync(device)
    start = time.perf_counter()
    for i in range(0, n, 32):
        para.paraphrase(corpus[i : i + 32])
    sync(device)
    return (time.perf_counter() - start) / n


_SMALL = dict(d_model=32, encoder_layers=1, decoder_layers=1, encoder_ffn_dim=64)
_SMALL.update(decoder_ffn_dim=64, encoder_attention_heads=2, decoder_attention_heads=2)


def measure_back_translation(
    tokenizer: Any, corpus: list[str], config: dict[str, Any], tiny: bool, n: int
) -> dict[str, Any]:
    """OssCSE back-translation: facebook/wmt19-en-de (transformer big); 2 pivots x 2 ways."""
    from transformers import FSMTConfig, FSMTForConditionalGeneration

    from negcse.generators.paraphrase import GenerationSettings

    bt = config["generators"]["osscse_paraphrase"]
    fsmt = dict(langs=["en", "de"], src_vocab_size=42024, tgt_vocab_size=42024, d_model=1024)
    fsmt.update(encoder_layers=6, decoder_layers=6, encoder_ffn_dim=8192, decoder_ffn_dim=8192)
    fsmt.update(encoder_attention_heads=16, decoder_attention_heads=16)
    if tiny:
        fsmt.update(_SMALL)
    out_len = 40
    settings = GenerationSettings(
        model="wmt19", num_beams=bt["num_beams"], max_length=out_len, precision=bt["precision"]
    )
    per = _seq2seq_seconds(
        lambda: FSMTForConditionalGeneration(FSMTConfig(**fsmt)), tokenizer, corpus, settings, n
    )
    translations = 2 * len(bt["pivots"])
    return {
        "kind": "generator",
        "name": "back_translation",
        "label": f"back-translation (wmt19 transformer-big, {bt['num_beams']} beams, "
        f"{bt['precision']}, {out_len} output tokens fixed; x{translations} translations)",
        "seconds_per_sentence": per * translations,
    }


def measure_paraphrase(
    tokenizer: Any, corpus: list[str], config: dict[str, Any], tiny: bool, n: int
) -> dict[str, Any]:
    """UNA paraphrases: tuner007/pegasus_paraphrase (pegasus-large)."""
    from transformers import PegasusConfig, PegasusForConditionalGeneration

    from negcse.generators.paraphrase import GenerationSettings

    pp = config["generators"]["paraphrase"]
    peg = dict(vocab_size=96103, d_model=1024, encoder_layers=16, decoder_layers=16)
    peg.update(encoder_ffn_dim=4096, decoder_ffn_dim=4096, max_position_embeddings=512)
    peg.update(encoder_attention_heads=16, decoder_attention_heads=16)
    if tiny:
        peg.update(_SMALL)
    out_len = 32
    settings = GenerationSettings(
        model="pegasus", num_beams=pp["num_beams"], max_length=out_len, precision=pp["precision"]
    )
    per = _seq2seq_seconds(
        lambda: PegasusForConditionalGeneration(PegasusConfig(**peg)),
        tokenizer,
        corpus,
        settings,
        n,
    )
    return {
        "kind": "generator",
        "name": "paraphrase",
        "label": f"PEGASUS paraphrase (pegasus-large, {pp['num_beams']} beams, "
        f"{pp['precision']}, {out_len} output tokens fixed; setting max {pp['max_length']})",
        "seconds_per_sentence": per,
    }


class _UniformLexicon:
    """Stand-in POS lexicon: every token masked with the same probability (speed only)."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __len__(self) -> int:
        return self.size

    def mask_probabilities(self, scale: float) -> np.ndarray:
        return np.full(self.size, 0.15, dtype=np.float32)


def measure_san(
    tokenizer: Any, corpus: list[str], config: dict[str, Any], tiny: bool, n: int
) -> dict[str, Any]:
    """SAN mask-predict (negcse.generators.san) with a random BertForMaskedLM: iterations x
    (encoder + head on the masked rows) per batch; sequences keep their lengths."""
    from transformers import BertForMaskedLM

    from negcse.generators.san import MaskPredictor, SanGenerator, SanParams

    san = config["generators"]["san"]
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    cfg = backbone_config(tiny, 0.1)
    cfg.vocab_size = len(tokenizer)
    with device:
        mlm = BertForMaskedLM(cfg)
    predictor = MaskPredictor(mlm, tokenizer, _UniformLexicon(len(tokenizer)), 20.0, device)
    params = SanParams(**{k: san[k] for k in ("scale", "iterations", "max_tokens", "batch_size")})
    gen = SanGenerator(predictor, params)
    seqs = [
        tokenizer(s, truncation=True, max_length=san["max_tokens"])["input_ids"]
        for s in corpus[: n + 64]
    ]
    rng = np.random.default_rng(0)
    gen.mask_predict_ids(seqs[:64], rng)  # warm-up
    sync(device)
    start = time.perf_counter()
    gen.mask_predict_ids(seqs[64:], rng)
    sync(device)
    return {
        "kind": "generator",
        "name": "san_negatives",
        "label": f"SAN mask-predict (BERT-base MLM, {san['iterations']} passes, batch "
        f"{san['batch_size']}, 15% masked)",
        "seconds_per_sentence": (time.perf_counter() - start) / n,
    }


# -- LLM generation (GCSE's synthesis) -------------------------------------------------------

#: new tokens per completion that GCSE's synthesis allows (generators.gcse.max_new_tokens): a
#: measured rate at fewer forced tokens is scaled to it linearly (decoding is one step per token)
SYNTHESIS_TOKENS = 512
#: prompts per source in paper mode (extraction, one positive, one negative)
PROMPTS_PER_SOURCE = 3


def llm_configs(arch: Path, tiny: bool) -> list[tuple[str, Any]]:
    """(label, config) of the LLMs timed: the pinned SmolLM2-135M's architecture (``arch``: its
    config and tokenizer, exported by benchmarks/gcse_generation.py --export-arch) and GLM-4-9B's
    (transformers' ``GlmConfig()`` defaults are glm-4-9b-chat's, the GCSE setting's model)."""
    from transformers import AutoConfig, GlmConfig

    small = AutoConfig.from_pretrained(arch)
    big = GlmConfig()
    if tiny:  # a CPU check: both shrunk
        small = AutoConfig.from_pretrained(arch, num_hidden_layers=2)
        big = GlmConfig(
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=16,
        )
    return [("SmolLM2-135M architecture", small), ("GLM-4-9B architecture", big)]


def measure_llm(
    arch: Path, device: torch.device, tiny: bool, batch_sizes: list[int], new_tokens: int
) -> list[dict[str, Any]]:
    """Seconds per prompt of the project's transformers backend (chat template, left padding,
    ``generate``) on GCSE's synthesis prompts with random weights, every completion forced to
    ``new_tokens`` tokens, at each batch size; bf16 on CUDA. One row per (model, batch)."""
    import gcse_generation

    from negcse.llm.backend import GenerationSettings

    rows = []
    fixed = GenerationSettings(
        max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False
    )
    for label, config in llm_configs(arch, tiny):
        start = time.perf_counter()
        backend = gcse_generation.random_backend(arch, config, batch_sizes[0], device.type, label)
        params = sum(p.numel() for p in backend.model.parameters())
        build_s = time.perf_counter() - start
        list(backend.stream(gcse_generation.bench_prompts(1), fixed))  # warm-up
        for batch in batch_sizes:
            backend.batch_size = batch
            prompts = gcse_generation.bench_prompts(batch)  # one full batch
            sync(device)
            start = time.perf_counter()
            list(backend.stream(prompts, fixed))
            sync(device)
            seconds = time.perf_counter() - start
            row = {
                "kind": "llm",
                "name": label,
                "params": params,
                "batch_size": batch,
                "new_tokens": new_tokens,
                "prompts": len(prompts),
                "seconds": seconds,
                "build_s": round(build_s, 1),
            }
            print(json.dumps(row), flush=True)
            rows.append(row)
        del backend
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return rows


def synthesis_cost(llm: list[dict[str, Any]], batch: int) -> tuple[float, str] | None:
    """GCSE synthesis seconds per source at the config's batch size (``batch``): the GLM-4-9B
    measurement where there is one, else the small model's scaled by parameters; with how."""
    at = [r for r in llm if r["batch_size"] == batch] or llm
    if not at:
        return None
    big = [r for r in at if r["name"].startswith("GLM")]
    row = (big or at)[0]
    per_prompt = row["seconds"] / row["prompts"] * SYNTHESIS_TOKENS / row["new_tokens"]
    how = (
        f"measured: {row['name']}, random weights, bf16, batch {row['batch_size']}, "
        f"{row['new_tokens']} forced tokens scaled to {SYNTHESIS_TOKENS}, {PROMPTS_PER_SOURCE} "
        "prompts per source"
    )
    if not big:
        per_prompt *= 9.4e9 / row["params"]
        how += f"; x{9.4e9 / row['params']:.1f} parameters to GLM-4-9B's 9.4e9"
    return per_prompt * PROMPTS_PER_SOURCE, how


# -- output -----------------------------------------------------------------------------------

#: families whose paper-setting step needs the most memory (batch 256 x 3-4 views, fp32 or tf32): the
#: warm-up pool starts one only where the GPU has this much free (GiB; the others need LIGHT)
HEAVY = {"sncse", "sncse_san", "rlrd"}
HEAVY_GIB, LIGHT_GIB = 40, 12
#: the speed-up that compile: auto (reduce-overhead + static padding) should give every family
TARGET_SPEEDUP = 2.5


@dataclass
class Results:
    """Everything one run (or a log of several) measured, as gpu.md and gpu_costs.csv show it."""

    train: list[dict[str, Any]] = field(default_factory=list)
    dev: dict[str, float] = field(default_factory=dict)
    job: float | None = None
    job_note: str = "not run"
    gens: list[dict[str, Any]] = field(default_factory=list)
    llm: list[dict[str, Any]] = field(default_factory=list)
    aggregate: list[dict[str, Any]] = field(default_factory=list)
    warm: list[dict[str, Any]] = field(default_factory=list)
    #: benchmarks/vllm_synthesis.py's rows (vLLM's tokens/s on the synthesis prompts)
    vllm: list[dict[str, Any]] = field(default_factory=list)

    def add(self, row: dict[str, Any]) -> None:
        """A printed JSON row, by its kind (rows of older logs have none: by their keys)."""
        kind = row.get("kind") or (
            "aggregate" if "aggregate" in row else "train" if "steps_per_s" in row else "generator"
        )
        if kind == "aggregate":
            row.setdefault("k", row.get("aggregate"))
        {
            "train": self.train,
            "generator": self.gens,
            "llm": self.llm,
            "aggregate": self.aggregate,
            "warm": self.warm,
            "vllm": self.vllm,
        }[kind].append(row)


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"CPU ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)"


def synthesis_batch() -> int:
    """Prompts per generate call of GCSE's synthesis at the default settings."""
    from negcse.generators.specs.gcse import GcseSynthesis

    config = project_config(REPO, check=False)
    gcse = (config.get("generators") or {}).get("gcse") or {}
    return int(gcse.get("batch_size") or GcseSynthesis.__dataclass_fields__["batch_size"].default)


def write_costs(path: Path, device: str, res: Results) -> None:
    """The file negcse.workflow.gpu_estimate reads: one row per measured unit cost."""
    source = "measured (benchmarks/gpu.py; gpu.md)"
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(
            ["kind", "name", "precision", "batch_size", "options", "seconds", "device", "source"]
        )
        for r in res.train:
            w.writerow(
                [
                    "train_step",
                    r["implementation"],
                    r["precision"],
                    r["batch_size"],
                    r["options"],
                    f"{1 / r['steps_per_s']:.6g}",
                    device,
                    source,
                ]
            )
        for precision, seconds in res.dev.items():
            w.writerow(
                ["dev_eval", "stsb_dev", precision, 128, "", f"{seconds:.6g}", device, source]
            )
        if res.job is not None:
            w.writerow(
                ["eval_job", "evaluate_model", "fp16", 128, "", f"{res.job:.6g}", device, source]
            )
        for g in res.gens:
            w.writerow(
                [
                    "generator_sentence",
                    g["name"],
                    "",
                    "",
                    "",
                    f"{g['seconds_per_sentence']:.6g}",
                    device,
                    source,
                ]
            )
        synthesis = synthesis_cost(res.llm, synthesis_batch())
        if synthesis is not None:
            w.writerow(
                [
                    "generator_sentence",
                    "gcse_synthesis",
                    "bf16",
                    synthesis_batch(),
                    "",
                    f"{synthesis[0]:.6g}",
                    device,
                    synthesis[1],
                ]
            )
        for a in res.aggregate:  # K processes together: seconds per step of all of them
            w.writerow(
                [
                    "jobs_per_gpu",
                    a.get("implementation", "simcse"),
                    a.get("precision", ""),
                    a.get("batch_size", ""),
                    f"K={a['k']}",
                    f"{1 / a['total']:.6g}",
                    device,
                    source,
                ]
            )


def speedups(train: list[dict[str, Any]]) -> list[tuple[str, str, float, float]]:
    """(implementation, precision, eager steps/s, compile: auto's steps/s) at the paper's
    numerics, for each family measured both ways."""
    eager = {
        (r["implementation"], r["precision"]): r["steps_per_s"]
        for r in train
        if r["paper"] and not r["options"]
    }
    out = []
    for r in train:
        key = (r["implementation"], r["precision"])
        auto = r["options"] == "compile(reduce-overhead)+static_padding"
        if r["paper"] and auto and key in eager:
            out.append((*key, eager[key], r["steps_per_s"]))
    return out


def guide_cache_speedups(train: list[dict[str, Any]]) -> list[tuple[str, str, float, float]]:
    """(implementation, options, steps/s with the guides' forward passes, with their cache) of
    each guided family measured both ways at the same options."""
    live = {
        (r["implementation"], r["precision"], r["options"]): r["steps_per_s"]
        for r in train
        if GUIDE_CACHE not in r["options"].split("+")
    }
    out = []
    for r in train:
        parts = r["options"].split("+")
        if GUIDE_CACHE in parts:
            rest = "+".join(p for p in parts if p != GUIDE_CACHE)
            key = (r["implementation"], r["precision"], rest)
            if key in live:
                out.append((r["implementation"], rest or "eager", live[key], r["steps_per_s"]))
    return out


def render(
    args: argparse.Namespace, device: str, res: Results, wall: float, command: str | None = None
) -> str:
    command = command or " ".join(["python", "benchmarks/gpu.py", *sys.argv[1:]])
    torch_version = getattr(args, "torch_version", None) or torch.__version__
    lines = [
        "# GPU benchmark",
        "",
        f"Device: **{device}**; torch {torch_version}; {wall:.0f} s for the whole script.",
        f"Command: `{command}`"
        + (
            " (**--tiny: a CPU check of the script; the figures mean nothing**)"
            if args.tiny
            else ""
        ),
        "",
        "Random-weight BERT-base (`BertConfig()`), the project's `Trainer` at each method's "
        "params.yaml settings for bert-base-uncased, the mirror's 10k Wikipedia sample (max "
        "length 32). Steady state: warm-up steps (and compilation) excluded, clock stopped at a "
        "device sync. Per epoch = wiki1m (1,000,000 sentences) / batch x epochs steps at that "
        "rate, plus the run's STS-B dev evaluations at the measured dev cost (same precision).",
        "",
        "| method (implementation) | batch | numerics | options | steps/s | epoch min "
        "(incl. dev evals) |",
        "|---|---|---|---|---|---|",
    ]
    dev = res.dev
    for r in res.train:
        numerics = r["precision"] + ("" if r["paper"] else " (opt-in, not the paper's)")
        dev_s = dev.get(r["precision"], dev.get("fp32", 0.0))
        evals = r["epoch_steps"] // r["eval_steps"]
        minutes = (r["epoch_steps"] / r["steps_per_s"] + evals * dev_s) / 60
        lines.append(
            f"| {r['label']} (`{r['implementation']}`) | {r['batch_size']} | {numerics} | "
            f"{r['options'] or 'eager'} | {r['steps_per_s']:.1f} | {minutes:.1f} |"
        )
    pairs = speedups(res.train)
    if pairs:
        lines += [
            "",
            f"Compiled (`compile: auto` on CUDA: reduce-overhead + static padding) vs "
            f"eager, the paper's numerics; target >= {TARGET_SPEEDUP}x:",
            "",
            "| implementation | numerics | eager steps/s | compiled steps/s | speed-up | target |",
            "|---|---|---|---|---|---|",
        ]
        for impl, precision, eager, compiled in pairs:
            ratio = compiled / eager
            lines.append(
                f"| `{impl}` | {precision} | {eager:.1f} | {compiled:.1f} | "
                f"{ratio:.2f}x | {'met' if ratio >= TARGET_SPEEDUP else 'not met'} |"
            )
    cached = guide_cache_speedups(res.train)
    if cached:
        lines += [
            "",
            "Frozen guides read from their cache (`guide_cache`, written once before the run) vs "
            "encoded at every step:",
            "",
            "| implementation | options | steps/s, guides every step | steps/s, guides cached "
            "| speed-up |",
            "|---|---|---|---|---|",
        ]
        for impl, options, live_s, cached_s in cached:
            lines.append(
                f"| `{impl}` | {options} | {live_s:.1f} | {cached_s:.1f} | "
                f"{cached_s / live_s:.2f}x |"
            )
    lines += ["", "| evaluation | seconds |", "|---|---|"]
    for precision, seconds in dev.items():
        lines.append(
            f"| one STS-B dev evaluation, {precision} (trainer's, pre-tokenized) | {seconds:.3f} |"
        )
    lines.append(
        "| evaluation job of one model (`negcse evaluate`: "
        f"{res.job_note}) | {'-' if res.job is None else f'{res.job:.1f}'} |"
    )
    lines += ["", "| generator (random weights, small input) | ms/sentence | wiki1m hours |"]
    lines.append("|---|---|---|")
    for g in res.gens:
        per = g["seconds_per_sentence"]
        lines.append(f"| {g['label']} | {per * 1e3:.2f} | {per * WIKI1M / 3600:.1f} |")
    if res.llm:
        lines += [
            "",
            "GCSE's synthesis LLM (the transformers backend's `generate`, random weights, "
            "bf16 on CUDA, synthesis prompts, every completion forced to the tokens shown):",
            "",
            "| model | parameters | batch | new tokens | s per prompt | new tokens/s |",
            "|---|---|---|---|---|---|",
        ]
        for r in res.llm:
            per = r["seconds"] / r["prompts"]
            lines.append(
                f"| {r['name']} | {r['params'] / 1e9:.2f}e9 | {r['batch_size']} | "
                f"{r['new_tokens']} | {per:.3f} | "
                f"{r['prompts'] * r['new_tokens'] / r['seconds']:.0f} |"
            )
        synthesis = synthesis_cost(res.llm, synthesis_batch())
        if synthesis is not None:
            lines += [
                "",
                f"Synthesis per source at the default batch ({synthesis_batch()}): "
                f"{synthesis[0]:.2f} s ({synthesis[1]}); wiki1m's million sources: "
                f"{synthesis[0] * WIKI1M / 3600:.0f} h.",
            ]
    for r in res.vllm:
        weights = "random weights" if r["dummy"] else "its weights"
        lines += [
            "",
            f"GCSE's synthesis prompts through the vLLM backend (`benchmarks/vllm_synthesis.py`, "
            f"vLLM {r['vllm']}): {r['model']} ({r['params'] / 1e9:.2f}e9 parameters, {weights}, "
            f"bf16), {r['prompts']} prompts x {r['new_tokens']} forced tokens in one call: "
            f"{r['tokens_per_s']:,.0f} new tokens/s.",
        ]
    if res.aggregate:
        lines += [
            "",
            "K SimCSE processes (eager, the paper's numerics) on the one GPU at once "
            "(`NEGCSE_JOBS_PER_GPU=K`):",
            "",
            "| K | steps/s per process | aggregate steps/s | vs K=1 |",
            "|---|---|---|---|",
        ]
        one = next((a["total"] for a in res.aggregate if a["k"] == 1), res.aggregate[0]["total"])
        for a in res.aggregate:
            per = ", ".join(f"{r:.1f}" for r in a["steps_per_s"])
            lines.append(f"| {a['k']} | {per} | {a['total']:.1f} | {a['total'] / one:.2f}x |")
    if res.warm:
        secs = ", ".join(f"{w['case']} {w['warm_s']:.0f}" for w in res.warm)
        lines += ["", f"Compile warm-up pass (in parallel; seconds to the end of warm-up): {secs}."]
    return "\n".join(lines) + "\n"


def rerender(args: argparse.Namespace) -> None:
    """gpu.md and gpu_costs.csv from the lines a run printed (its JSON rows, dev evaluation and
    evaluation-job lines); a training row's per-epoch steps are recomputed from params.yaml."""
    config = project_config(REPO, check=False)
    res = Results()
    for line in Path(args.render_from).read_text(encoding="utf-8").splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            res.add(row)
            if row in res.train:
                epochs = resolve_method(config, row["method"], "bert-base-uncased")["train"]
                row["epoch_steps"] = math.ceil(WIKI1M / row["batch_size"]) * epochs["epochs"]
        elif line.startswith("dev eval ") and ": " in line and line.endswith(" s"):
            precision, seconds = line.removeprefix("dev eval ").split(": ")
            res.dev[precision] = float(seconds.removesuffix(" s"))
        elif line.startswith("evaluation job: "):
            value, _, note = line.removeprefix("evaluation job: ").partition(" (")
            res.job = None if value == "None" else float(value)
            res.job_note = note.removesuffix(")")
    out = Path(args.out_dir)
    write_costs(out / "gpu_costs.csv", args.device_name, res)
    text = render(args, args.device_name, res, args.wall, args.command)
    (out / "gpu.md").write_text(text, encoding="utf-8")
    print(text)


def _case_process(index: int, args: argparse.Namespace, *extra: str) -> list[str]:
    cmd = [sys.executable, __file__, "--single-case", str(index), "--seconds", str(args.seconds)]
    return cmd + (["--tiny"] if args.tiny else []) + list(extra)


def aggregate(args: argparse.Namespace, device: torch.device) -> None:
    """Aggregate steps/s of K processes training one case at once on one device, for each K:
    each process measures its own steady window (after its warm-up; the windows of processes
    started together overlap), and their rates add up. Prints one JSON row per K."""
    case = CASES[args.aggregate_case]
    for k in args.jobs_per_gpu:
        procs = [
            subprocess.Popen(
                _case_process(args.aggregate_case, args), stdout=subprocess.PIPE, text=True
            )
            for _ in range(k)
        ]
        rates, rows = [], []
        for proc in procs:
            out, _ = proc.communicate()
            rows = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
            if proc.returncode != 0 or not rows:
                raise SystemExit(f"aggregate K={k}: a process failed (exit {proc.returncode})")
            rates.append(rows[-1]["steps_per_s"])
        last = rows[-1]
        print(
            json.dumps(
                {
                    "kind": "aggregate",
                    "k": k,
                    "case": case.label,
                    "implementation": last["implementation"],
                    "precision": last["precision"],
                    "batch_size": last["batch_size"],
                    "steps_per_s": rates,
                    "total": sum(rates),
                }
            ),
            flush=True,
        )


def free_gib() -> float | None:
    """Free memory of the GPU (GiB), as the workflow's GPU slots read it; None without it."""
    free = free_memory_mb()
    return min(free.values()) / 1024 if free else None


def warm_pool(args: argparse.Namespace) -> None:
    """Compile every case of ``--warm-cases`` in processes side by side (at most ``--parallel``,
    each started only while the GPU has the memory its family needs), each running its warm-up
    steps only: the compile caches (FX graph, AOT autograd, Triton) then hold what the timed
    measurement of the same case compiles, which it reads instead of compiling again. Nothing is
    timed here. Cases left when ``--budget`` seconds have passed are not started."""
    started = time.perf_counter()
    queue = list(args.warm_cases)
    running: dict[int, subprocess.Popen[str]] = {}
    while queue or running:
        for index, proc in list(running.items()):
            if proc.poll() is not None:
                out = proc.stdout.read() if proc.stdout else ""
                rows = [x for x in out.splitlines() if x.startswith("{")]
                print(
                    rows[-1]
                    if rows and proc.returncode == 0
                    else f"FAILED warm {CASES[index].label}: exit {proc.returncode}",
                    flush=True,
                )
                del running[index]
        late = time.perf_counter() - started > args.budget
        if late:
            for index in queue:
                print(f"skipped warm (budget): {CASES[index].label}", flush=True)
            queue = []
        if queue and len(running) < args.parallel:
            need = HEAVY_GIB if CASES[queue[0]].method in HEAVY else LIGHT_GIB
            free = free_gib() if not args.tiny else None
            if not running or free is None or free >= need:
                index = queue.pop(0)
                running[index] = subprocess.Popen(
                    _case_process(index, args, "--warm-only"), stdout=subprocess.PIPE, text=True
                )
                time.sleep(2.0)  # let it allocate before the next free-memory reading
                continue
        if late and running and time.perf_counter() - started > args.budget + 60:
            for index, proc in running.items():  # past the budget by a minute: stop them
                proc.kill()
                print(f"FAILED warm {CASES[index].label}: stopped (budget)", flush=True)
            running = {}
        time.sleep(0.5)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out-dir", default=str(REPO / "benchmarks"))
    p.add_argument("--tiny", action="store_true", help="tiny models and counts: a CPU check")
    p.add_argument("--with-compile", action="store_true", help="--tiny: run the compile cases")
    p.add_argument("--seconds", type=float, default=3.0, help="measured seconds per case")
    p.add_argument("--budget", type=float, default=150.0, help="no new training case after")
    p.add_argument("--eval-timeout", type=float, default=60.0)
    p.add_argument(
        "--cases", type=int, nargs="*", help="indices into CASES (default: all; none: no training)"
    )
    p.add_argument(
        "--profile", type=int, nargs="*", default=[], help="indices into CASES to profile first"
    )
    p.add_argument("--skip-dev-eval", action="store_true", help="no STS-B dev evaluation timing")
    p.add_argument("--skip-generators", action="store_true", help="no generator measurements")
    p.add_argument("--skip-eval-job", action="store_true", help="no evaluation-job measurement")
    p.add_argument(
        "--llm",
        metavar="DIR",
        help="also time GCSE's synthesis LLM (the SmolLM2-135M and GLM-4-9B architectures, random "
        "weights); DIR: SmolLM2's config and tokenizer (gcse_generation.py --export-arch)",
    )
    p.add_argument("--llm-batch-sizes", type=int, nargs="+", default=[8, 64])
    p.add_argument("--llm-tokens", type=int, default=128, help="forced new tokens per completion")
    p.add_argument(
        "--render-from",
        metavar="LOG",
        help="rewrite gpu.md and gpu_costs.csv from a run's printed log (no measuring)",
    )
    p.add_argument(
        "--jobs-per-gpu",
        type=int,
        nargs="*",
        metavar="K",
        help="aggregate mode: K concurrent processes train --aggregate-case on one GPU "
        "(NEGCSE_JOBS_PER_GPU's sharing), for each K",
    )
    p.add_argument("--aggregate-case", type=int, default=0, help="index into CASES")
    p.add_argument(
        "--warm-cases",
        type=int,
        nargs="*",
        metavar="I",
        help="warm-up mode: compile these CASES side by side (fills the compile caches)",
    )
    p.add_argument("--parallel", type=int, default=5, help="--warm-cases: processes at once")
    p.add_argument("--single-case", type=int, help=argparse.SUPPRESS)  # one process of it
    p.add_argument("--warm-only", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--device-name", help="with --render-from: the device of that run")
    p.add_argument("--wall", type=float, default=0.0, help="with --render-from: its wall s")
    p.add_argument("--torch-version", help="with --render-from: torch of that run")
    p.add_argument("--command", help="with --render-from: the command of that run")
    args = p.parse_args()
    if args.render_from:
        rerender(args)
        return
    if args.warm_cases is not None:
        warm_pool(args)
        return
    started = time.perf_counter()
    device = torch.device("cuda" if torch.cuda.is_available() and not args.tiny else "cpu")
    if device.type == "cpu" and not args.tiny:
        raise SystemExit("no CUDA device: run with --tiny for a CPU check of the script")
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(resolve_model(TOKENIZER))
    config = project_config(REPO, check=False)
    corpus_path = resolve_data("unlabeled/wiki1m/wiki1m_random10k.txt")
    corpus = corpus_path.read_text(encoding="utf-8").splitlines()
    if args.tiny:
        corpus = corpus[:400]
    seconds = 0.5 if args.tiny else args.seconds
    if args.single_case is not None:
        case = CASES[args.single_case]
        print(
            json.dumps(
                measure_training(
                    case,
                    config,
                    corpus,
                    tokenizer,
                    device,
                    args.tiny,
                    seconds,
                    warm_only=args.warm_only,
                )
            )
        )
        return
    if args.jobs_per_gpu:
        aggregate(args, device)
        return
    cases = CASES if args.cases is None else [CASES[i] for i in args.cases]
    profiled = [CASES[i] for i in args.profile]
    if args.tiny and not args.with_compile:  # compiling on a CPU takes minutes
        cases = [c for c in cases if not c.train.get("compile")]
    name = device_name(device)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    res = Results()

    def flush() -> str:
        """Write what is measured so far (a run cut short still leaves its table)."""
        write_costs(out / "gpu_costs.csv", name, res)
        text = render(args, name, res, time.perf_counter() - started)
        (out / "gpu.md").write_text(text, encoding="utf-8")
        return text

    def guarded(what: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception as err:  # one failed measurement must not end the run
            print(f"FAILED {what}: {type(err).__name__}: {err}", flush=True)
            return None

    def train_case(case: Case) -> None:
        if time.perf_counter() - started > args.budget:
            print(f"skipped (budget): {case}", flush=True)
            return
        prof_out = out / "profile.txt" if case in profiled else None
        row = guarded(
            str(case),
            lambda: measure_training(
                case, config, corpus, tokenizer, device, args.tiny, seconds, prof_out
            ),
        )
        if row is not None:
            print(json.dumps(row), flush=True)
            res.train.append(row)
            flush()

    for case in cases:
        if not case.train.get("compile"):
            train_case(case)
    dev_precisions = ("fp16", "fp32") if device.type == "cuda" else ("fp32",)
    for precision in () if args.skip_dev_eval else dev_precisions:
        got = guarded(
            f"dev eval {precision}",
            lambda precision=precision: measure_dev_eval(tokenizer, device, args.tiny, precision),
        )
        if got is not None:
            res.dev[precision] = got
            print(f"dev eval {precision}: {got:.3f} s", flush=True)
    flush()
    if args.llm:
        batches = [2] if args.tiny else args.llm_batch_sizes
        tokens = 4 if args.tiny else args.llm_tokens
        got = guarded(
            "llm", lambda: measure_llm(Path(args.llm), device, args.tiny, batches, tokens)
        )
        res.llm.extend(got or [])
        flush()
    n_gen = 16 if args.tiny else 64
    generators = (measure_back_translation, measure_paraphrase, measure_san)
    for fn in () if args.skip_generators else generators:
        got = guarded(fn.__name__, lambda fn=fn: fn(tokenizer, corpus, config, args.tiny, n_gen))
        if got is not None:
            print(json.dumps(got), flush=True)
            res.gens.append(got)
            flush()
    for case in cases:
        if case.train.get("compile"):
            train_case(case)
    if not args.skip_eval_job:
        got = guarded(
            "evaluation job", lambda: measure_eval_job(tokenizer, args.tiny, args.eval_timeout)
        )
        if got is not None:
            res.job, res.job_note = got
    print(f"evaluation job: {res.job} ({res.job_note})", flush=True)
    print(flush())


if __name__ == "__main__":
    main()
