"""Cost of UNA's injection against SimCSE on the shared trainer (same process, same settings).

Trains ``simcse`` and ``una`` (alpha 5) in turn on splade-tiny with the smoke grid's settings
(batch 64, max_seq_len 32, fp32, one thread), without dev evaluation, and reports CPU and wall
seconds per step. Usage (see benchmarks/una_training.md)::

    python benchmarks/una_training.py --corpus results/data/corpus/wiki-smoke.txt \
        --negatives results/negatives/una/wiki-smoke/tfidf-window_b0.5_r4000_sentence_c10000/seed1.txt
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch

from negcse.data.sources import resolve_model
from negcse.io_utils import read_lines
from negcse.methods.registry import build_method
from negcse.runtime.seed import seed_everything
from negcse.training.model import SentenceEncoder, torch_threads
from negcse.training.settings import TrainSettings
from negcse.training.trainer import TrainData, Trainer


def run_one(method_name: str, columns: dict[str, list[str]], steps: int, seed: int) -> dict:
    settings = TrainSettings(
        epochs=1,
        batch_size=64,
        learning_rate=1e-4,
        max_seq_len=32,
        dropout=0.1,
        scheduler="linear",
        warmup_ratio=0.0,
        weight_decay=0.0,
        max_grad_norm=None,
        max_steps=steps,
        eval_steps=10**9,  # only the final evaluation, which the dummy scorer makes free
        checkpoint_steps=10**9,
        precision="fp32",
    )
    method = build_method(method_name, {}, "splade-tiny")
    seed_everything(seed)
    model = SentenceEncoder.from_pretrained(resolve_model("splade-tiny"), settings.dropout)
    with tempfile.TemporaryDirectory() as tmp:
        trainer = Trainer(
            method,
            model,
            TrainData(columns),
            settings,
            seed,
            lambda encode: 0.0,
            Path(tmp),
            device=torch.device("cpu"),
            progress=False,
        )
        cpu0, wall0 = time.process_time(), time.perf_counter()
        trainer.train()
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return {
        "method": method_name,
        "steps": steps,
        "cpu_s": round(cpu, 2),
        "wall_s": round(wall, 2),
        "cpu_ms_per_step": round(1000 * cpu / steps, 1),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", required=True)
    p.add_argument("--negatives", required=True)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--repeats", type=int, default=2)
    args = p.parse_args()
    torch_threads(1)
    columns = {"sentence": read_lines(args.corpus), "una_negative": read_lines(args.negatives)}
    rows = []
    for r in range(args.repeats):
        for name in ("simcse", "una"):
            row = run_one(name, columns, args.steps, seed=1) | {"repeat": r}
            print(json.dumps(row), flush=True)
            rows.append(row)
    for name in ("simcse", "una"):
        best = min(x["cpu_s"] for x in rows if x["method"] == name)
        print(f"{name}: best CPU {best:.2f} s for {args.steps} steps")


if __name__ == "__main__":
    main()
