"""Benchmarks of the base pipeline; prints a Markdown table and writes it to --out.

Figures: training throughput (sentences/s, SimCSE step = 2 forward passes + backward) for
splade-tiny and all-MiniLM-L6-v2 on CPU, STS evaluation wall time, paper-grid dry-run time,
no-op rerun time of the smoke grid (in an already-run workspace, --workspace), and the smoke grid
wall time read from a finished `dvc repro`/`snakemake` run (--smoke-seconds).

    NEGCSE_MIRROR=../shared/mirror python benchmarks/base.py --out benchmarks/base.md \
        --workspace /path/to/ran/smoke/workspace
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import torch

from negcse.data.sources import resolve_data, resolve_model
from negcse.evaluation.embedder import Embedder
from negcse.evaluation.sts import evaluate_sts
from negcse.methods.registry import build_method
from negcse.training.model import SentenceEncoder
from negcse.training.settings import TrainSettings
from negcse.training.trainer import TrainData, Trainer

REPO = Path(__file__).resolve().parents[1]


def train_throughput(model_id: str, steps: int, batch: int, threads: int) -> float:
    torch.set_num_threads(threads)
    corpus = resolve_data("unlabeled/wiki1m/wiki1m_random10k.txt").read_text().splitlines()
    settings = TrainSettings(
        epochs=1,
        batch_size=batch,
        learning_rate=3e-5,
        max_seq_len=32,
        dropout=0.1,
        scheduler="linear",
        warmup_ratio=0.0,
        weight_decay=0.0,
        max_grad_norm=1.0,
        max_steps=steps + 2,
        eval_steps=10**9,
        checkpoint_steps=10**9,
        precision="fp32",
    )
    model = SentenceEncoder.from_pretrained(resolve_model(model_id), 0.1)
    trainer = Trainer(
        build_method("simcse", {}, model_id),
        model,
        TrainData({"sentence": corpus}),
        settings,
        1,
        lambda enc: 0.0,
        Path("/tmp/negcse-bench-ckpt"),
        device=torch.device("cpu"),
        progress=False,
    )
    method, opt = trainer.method, torch.optim.AdamW(model.parameters(), lr=3e-5)
    model.train()
    for step in range(2):  # warm-up
        emb = trainer.encode_views(method.views(step), trainer.batch_indices(step))
        method.loss(emb, None).loss.backward()  # type: ignore[arg-type]
    start = time.perf_counter()
    for step in range(steps):
        emb = trainer.encode_views(method.views(step), trainer.batch_indices(step))
        loss = method.loss(emb, None).loss  # type: ignore[arg-type]
        opt.zero_grad()
        loss.backward()
        opt.step()
    return steps * batch / (time.perf_counter() - start)


def eval_seconds(model_id: str, pooler: str) -> tuple[float, float]:
    enc = Embedder.load(model_id, pooler)
    start = time.perf_counter()
    res = evaluate_sts(lambda s: enc.encode(s, 128))
    return time.perf_counter() - start, res["avg"]


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=str(REPO / "benchmarks" / "base.md"))
    p.add_argument("--workspace", help="a workspace where the smoke grid has run (no-op timing)")
    p.add_argument("--smoke-seconds", type=float, help="wall time of that smoke run")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument(
        "--parts",
        nargs="+",
        default=["train", "eval", "dryrun"],
        choices=["train", "eval", "dryrun"],
    )
    args = p.parse_args()

    rows = []
    for model_id in ("splade-tiny", "sentence-transformers/all-MiniLM-L6-v2"):
        if "train" not in args.parts:
            break
        sps = train_throughput(model_id, args.steps, 64, args.threads)
        rows.append(
            (
                f"SimCSE training throughput, {model_id}, batch 64, max_len 32, fp32, "
                f"{args.threads} threads",
                f"{sps:.0f} sentences/s",
                f"python benchmarks/base.py (train_throughput, {args.steps} steps)",
            )
        )
    for model_id, pooler in (
        ("splade-tiny", "cls_before_pooler"),
        ("sentence-transformers/all-MiniLM-L6-v2", "mean"),
    ):
        if "eval" not in args.parts:
            break
        secs, avg = eval_seconds(model_id, pooler)
        rows.append(
            (
                f"STS evaluation (7 tasks + STS-B dev), {model_id}, {pooler}",
                f"{secs:.1f} s (avg {avg:.2f})",
                f"python -m negcse evaluate --only sts --model {model_id} --pooler {pooler} "
                "--sts-out X.json",
            )
        )
    if "dryrun" in args.parts:
        secs = timed(["snakemake", "-n", "--profile", "profiles/local"], REPO)
        rows.append(
            (
                "Paper-grid dry run (4 backbones x 3 seeds)",
                f"{secs:.1f} s",
                "snakemake -n --profile profiles/local",
            )
        )
    if args.workspace:
        secs = timed(["snakemake", "--profile", "profiles/smoke"], Path(args.workspace))
        rows.append(
            (
                "No-op rerun of the finished smoke grid",
                f"{secs:.1f} s",
                "snakemake --profile profiles/smoke  # second time",
            )
        )
    if args.smoke_seconds:
        rows.append(
            (
                "Smoke grid, end to end from nothing (offline)",
                f"{args.smoke_seconds:.0f} s",
                "dvc repro  # params.yaml workflow.profile: profiles/smoke",
            )
        )

    load = os.getloadavg()
    lines = [
        "# Base pipeline benchmarks",
        "",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"torch {torch.__version__}, load average at the end {load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f} "
        "(other jobs shared the machine when these ran; figures are upper bounds on time).",
        "",
        "| what | figure | command |",
        "|---|---|---|",
        *[f"| {a} | {b} | `{c}` |" for a, b, c in rows],
        "",
    ]
    text = "\n".join(lines)
    print(text)
    Path(args.out).write_text(text)


if __name__ == "__main__":
    sys.exit(main())
