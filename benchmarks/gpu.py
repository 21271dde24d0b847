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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from transformers import BertConfig, BertModel

from negcse.data.sources import resolve_data, resolve_model
from negcse.evaluation.sts import dev_scorer
from negcse.methods.registry import build_method
from negcse.training.model import SentenceEncoder
from negcse.training.settings import TrainSettings
from negcse.training.trainer import TrainData, Trainer
from negcse.workflow.config import resolve_method

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
    Case("sncse", "SNCSE", {"precision": "tf32"}, paper=False),
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
]
#: eager unless a case asks for more (params.yaml's default, compile: auto, compiles on CUDA)
EAGER = {"compile": False, "static_padding": False}
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
    from negcse.poolers import get_pooler

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
) -> dict[str, Any]:
    """Steady steps/s of a case; with ``profile``, first a profile of a few steps after the
    warm-up (summary appended to that file), outside the timed window."""
    spec = resolve_method(config, case.method, "bert-base-uncased")
    train = {**spec["train"], **EAGER, **case.train}
    compiled = bool(train.get("compile"))
    warm = 3 if tiny else (30 if compiled else 8)
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
        )
        marks: dict[str, float] = {}
        prof = profiler(device) if profile is not None else None
        start = warm + (PROFILE_STEPS if prof is not None else 0)

        def hook(step: int) -> None:
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
    steps_per_s = marks["steps"] / (marks["end"] - marks["start"])
    precision = settings.precision
    if precision == "auto":
        precision = "fp16" if device.type == "cuda" else "fp32"
    options = [k for k in ("compile", "static_padding") if train.get(k)]
    if isinstance(train.get("compile"), str):
        options[0] = f"compile({train['compile']})"
    return {
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
            **yaml.safe_load((REPO / "params.yaml").read_text())["train"],
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
    from negcse.poolers import get_pooler

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
        "name": "san_negatives",
        "label": f"SAN mask-predict (BERT-base MLM, {san['iterations']} passes, batch "
        f"{san['batch_size']}, 15% masked)",
        "seconds_per_sentence": (time.perf_counter() - start) / n,
    }


# -- output -----------------------------------------------------------------------------------


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"CPU ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)"


def write_costs(path: Path, device: str, train: list[dict], dev: dict, job: Any, gens: list):
    """The file negcse.workflow.gpu_estimate reads: one row per measured unit cost."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["kind", "name", "precision", "batch_size", "options", "seconds", "device"])
        for r in train:
            opts = r["options"]
            w.writerow(
                ["train_step", r["implementation"], r["precision"], r["batch_size"], opts,
                 f"{1 / r['steps_per_s']:.6g}", device]
            )  # fmt: skip
        for precision, seconds in dev.items():
            w.writerow(["dev_eval", "stsb_dev", precision, 128, "", f"{seconds:.6g}", device])
        if job is not None:
            w.writerow(["eval_job", "evaluate_model", "fp16", 128, "", f"{job:.6g}", device])
        for g in gens:
            w.writerow(
                ["generator_sentence", g["name"], "", "", "", f"{g['seconds_per_sentence']:.6g}",
                 device]
            )  # fmt: skip


def render(
    args: argparse.Namespace, device: str, train, dev, job, job_note, gens, wall, command=None
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
    for r in train:
        numerics = r["precision"] + ("" if r["paper"] else " (opt-in, not the paper's)")
        dev_s = dev.get(r["precision"], dev.get("fp32", 0.0))
        evals = r["epoch_steps"] // r["eval_steps"]
        minutes = (r["epoch_steps"] / r["steps_per_s"] + evals * dev_s) / 60
        lines.append(
            f"| {r['label']} (`{r['implementation']}`) | {r['batch_size']} | {numerics} | "
            f"{r['options'] or 'eager'} | {r['steps_per_s']:.1f} | {minutes:.1f} |"
        )
    lines += ["", "| evaluation | seconds |", "|---|---|"]
    for precision, seconds in dev.items():
        lines.append(f"| one STS-B dev evaluation, {precision} (trainer's, pre-tokenized) | "
                     f"{seconds:.3f} |")  # fmt: skip
    lines.append(
        "| evaluation job of one model (`negcse evaluate`: "
        f"{job_note}) | {'-' if job is None else f'{job:.1f}'} |"
    )
    lines += ["", "| generator (random weights, small input) | ms/sentence | wiki1m hours |"]
    lines.append("|---|---|---|")
    for g in gens:
        per = g["seconds_per_sentence"]
        lines.append(f"| {g['label']} | {per * 1e3:.2f} | {per * WIKI1M / 3600:.1f} |")
    lines.append(
        "| GCSE LLM synthesis | measured apart: `benchmarks/gcse_generation.py --random-init "
        "--device cuda` (benchmarks/gcse.md; no GPU run yet) | - |"
    )
    return "\n".join(lines) + "\n"


def rerender(args: argparse.Namespace) -> None:
    """gpu.md and gpu_costs.csv from the lines a run printed (its JSON rows, dev evaluation and
    evaluation-job lines); a training row's per-epoch steps are recomputed from params.yaml."""
    config = yaml.safe_load((REPO / "params.yaml").read_text())
    train, gens, dev = [], [], {}
    job, job_note = None, "not run"
    for line in Path(args.render_from).read_text(encoding="utf-8").splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            if "steps_per_s" in row:
                epochs = resolve_method(config, row["method"], "bert-base-uncased")["train"]
                row["epoch_steps"] = math.ceil(WIKI1M / row["batch_size"]) * epochs["epochs"]
                train.append(row)
            else:
                gens.append(row)
        elif line.startswith("dev eval "):
            precision, seconds = line.removeprefix("dev eval ").split(": ")
            dev[precision] = float(seconds.removesuffix(" s"))
        elif line.startswith("evaluation job: "):
            value, _, note = line.removeprefix("evaluation job: ").partition(" (")
            job = None if value == "None" else float(value)
            job_note = note.removesuffix(")")
    out = Path(args.out_dir)
    write_costs(out / "gpu_costs.csv", args.device_name, train, dev, job, gens)
    text = render(args, args.device_name, train, dev, job, job_note, gens, args.wall, args.command)
    (out / "gpu.md").write_text(text, encoding="utf-8")
    print(text)


def aggregate(args: argparse.Namespace, device: torch.device) -> None:
    """Aggregate steps/s of K processes training one case at once on one device, for each K:
    each process measures its own steady window (after its warm-up; the windows of processes
    started together overlap), and their rates add up. Writes aggregate.md in --out-dir."""
    case = CASES[args.aggregate_case]
    base = [sys.executable, __file__, "--single-case", str(args.aggregate_case)]
    base += ["--seconds", str(args.seconds)] + (["--tiny"] if args.tiny else [])
    lines = [
        f"Aggregate steps/s on one {device_name(device)}: {case.label} {case.train or 'eager'}, "
        "K processes at once (NEGCSE_JOBS_PER_GPU=K)",
        "",
        "| K | steps/s per process | aggregate steps/s | vs K=1 |",
        "|---|---|---|---|",
    ]
    one = None
    for k in args.jobs_per_gpu:
        procs = [subprocess.Popen(base, stdout=subprocess.PIPE, text=True) for _ in range(k)]
        rates = []
        for proc in procs:
            out, _ = proc.communicate()
            rows = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
            if proc.returncode != 0 or not rows:
                raise SystemExit(f"aggregate K={k}: a process failed (exit {proc.returncode})")
            rates.append(rows[-1]["steps_per_s"])
        total = sum(rates)
        one = one or total
        per = ", ".join(f"{r:.1f}" for r in rates)
        print(json.dumps({"aggregate": k, "steps_per_s": rates, "total": total}), flush=True)
        lines.append(f"| {k} | {per} | {total:.1f} | {total / one:.2f}x |")
    if args.tiny:
        lines.append("")
        lines.append("(--tiny on CPU: a check of the script; the figures mean nothing)")
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "aggregate.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out-dir", default=str(REPO / "benchmarks"))
    p.add_argument("--tiny", action="store_true", help="tiny models and counts: a CPU check")
    p.add_argument("--with-compile", action="store_true", help="--tiny: run the compile cases")
    p.add_argument("--seconds", type=float, default=3.0, help="measured seconds per case")
    p.add_argument("--budget", type=float, default=150.0, help="no new training case after")
    p.add_argument("--eval-timeout", type=float, default=60.0)
    p.add_argument("--cases", type=int, nargs="*", help="indices into CASES (default: all)")
    p.add_argument(
        "--profile", type=int, nargs="*", default=[], help="indices into CASES to profile first"
    )
    p.add_argument("--skip-generators", action="store_true", help="no generator measurements")
    p.add_argument("--skip-eval-job", action="store_true", help="no evaluation-job measurement")
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
        "(NEGCSE_JOBS_PER_GPU's sharing), for each K; writes aggregate.md",
    )
    p.add_argument("--aggregate-case", type=int, default=0, help="index into CASES")
    p.add_argument("--single-case", type=int, help=argparse.SUPPRESS)  # one process of it
    p.add_argument("--device-name", help="with --render-from: the device of that run")
    p.add_argument("--wall", type=float, default=0.0, help="with --render-from: its wall s")
    p.add_argument("--torch-version", help="with --render-from: torch of that run")
    p.add_argument("--command", help="with --render-from: the command of that run")
    args = p.parse_args()
    if args.render_from:
        rerender(args)
        return
    started = time.perf_counter()
    device = torch.device("cuda" if torch.cuda.is_available() and not args.tiny else "cpu")
    if device.type == "cpu" and not args.tiny:
        raise SystemExit("no CUDA device: run with --tiny for a CPU check of the script")
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(resolve_model(TOKENIZER))
    config = yaml.safe_load((REPO / "params.yaml").read_text())
    corpus_path = resolve_data("unlabeled/wiki1m/wiki1m_random10k.txt")
    corpus = corpus_path.read_text(encoding="utf-8").splitlines()
    if args.tiny:
        corpus = corpus[:400]
    seconds = 0.5 if args.tiny else args.seconds
    if args.single_case is not None:
        case = CASES[args.single_case]
        print(
            json.dumps(
                measure_training(case, config, corpus, tokenizer, device, args.tiny, seconds)
            )
        )
        return
    if args.jobs_per_gpu:
        aggregate(args, device)
        return
    cases = [CASES[i] for i in args.cases] if args.cases else CASES
    profiled = [CASES[i] for i in args.profile]
    if args.tiny and not args.with_compile:  # compiling on a CPU takes minutes
        cases = [c for c in cases if not c.train.get("compile")]
    name = device_name(device)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    train_rows: list[dict[str, Any]] = []
    dev: dict[str, float] = {}
    gens: list[dict[str, Any]] = []
    job: float | None = None
    job_note = "not run"

    def flush() -> str:
        """Write what is measured so far (a run cut short still leaves its table)."""
        write_costs(out / "gpu_costs.csv", name, train_rows, dev, job, gens)
        text = render(
            args, name, train_rows, dev, job, job_note, gens, time.perf_counter() - started
        )
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
            train_rows.append(row)
            flush()

    for case in cases:
        if not case.train.get("compile"):
            train_case(case)
    for precision in ("fp16", "fp32") if device.type == "cuda" else ("fp32",):
        got = guarded(
            f"dev eval {precision}",
            lambda precision=precision: measure_dev_eval(tokenizer, device, args.tiny, precision),
        )
        if got is not None:
            dev[precision] = got
            print(f"dev eval {precision}: {got:.3f} s", flush=True)
    flush()
    n_gen = 16 if args.tiny else 128
    generators = (measure_back_translation, measure_paraphrase, measure_san)
    for fn in () if args.skip_generators else generators:
        got = guarded(fn.__name__, lambda fn=fn: fn(tokenizer, corpus, config, args.tiny, n_gen))
        if got is not None:
            print(json.dumps(got), flush=True)
            gens.append(got)
            flush()
    for case in cases:
        if case.train.get("compile"):
            train_case(case)
    if not args.skip_eval_job:
        got = guarded(
            "evaluation job", lambda: measure_eval_job(tokenizer, args.tiny, args.eval_timeout)
        )
        if got is not None:
            job, job_note = got
    print(f"evaluation job: {job} ({job_note})", flush=True)
    print(flush())


if __name__ == "__main__":
    main()
