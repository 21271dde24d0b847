"""Batched vs one-at-a-time local generation for GCSE synthesis prompts (benchmarks/gcse.md).

Every completion is forced to ``--new-tokens`` tokens (min = max), so the timing does not depend
on where the model stops; the synthesis cost per 1,000 source sentences is extrapolated from
the seconds per prompt at the best batch size, with ``--prompts-per-source`` prompts per source
(paper mode: 1 extraction + 1 positive + 1 negative).

    python benchmarks/gcse_generation.py --model smollm2-135m-instruct-q4_1 --device cpu
    python benchmarks/gcse_generation.py --export-arch DIR   # config + tokenizer, no weights
    python benchmarks/gcse_generation.py --model DIR --random-init --device cuda
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from negcse.gcse.prompts import load_prompts
from negcse.llm.backend import GenerationSettings
from negcse.llm.pinned import PINNED
from negcse.llm.transformers_backend import TransformersBackend

SOURCES = [
    "A man is playing a guitar on the street.",
    "Two dogs run across a snowy field.",
    "The senate passed the budget bill on Tuesday.",
    "A woman slices three tomatoes in the kitchen.",
]
NAMES = ["extract", "rewrite_role", "summarize", "antisense_negate"]


def bench_prompts(n: int) -> list[str]:
    prompts = load_prompts()
    out = []
    for i in range(n):
        p = prompts[NAMES[i % len(NAMES)]]
        values = dict.fromkeys(p.fields, "news anchor") | {"input_text": SOURCES[i % len(SOURCES)]}
        out.append(p.render(**values))
    return out


def random_backend(
    tokenizer_dir: str | Path, config: Any, batch_size: int, device: str, label: str = "random-init"
) -> TransformersBackend:
    """The backend's generation code path on a model of ``config`` with random weights (bf16
    on CUDA, built on the device), with the tokenizer and chat template of ``tokenizer_dir``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    backend = TransformersBackend.__new__(TransformersBackend)  # same generation code path
    backend.model_path, backend.gguf_file, backend.batch_size = (
        Path(tokenizer_dir),
        None,
        batch_size,
    )
    backend.label, backend.device = label, device
    backend.tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    backend.tokenizer.padding_side = "left"
    if backend.tokenizer.pad_token is None:
        backend.tokenizer.pad_token = backend.tokenizer.eos_token
    torch.manual_seed(0)
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    with torch.device(device):
        backend.model = AutoModelForCausalLM.from_config(config, dtype=dtype).eval()
    backend.stop_ids = [backend.tokenizer.eos_token_id]
    return backend


def load(args: argparse.Namespace, batch_size: int) -> TransformersBackend:
    if args.model in PINNED:
        return TransformersBackend.from_pinned(args.model, batch_size, args.device)
    if not args.random_init:
        return TransformersBackend(Path(args.model), None, batch_size, args.device)
    from transformers import AutoConfig

    return random_backend(
        args.model, AutoConfig.from_pretrained(args.model), batch_size, args.device
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m-instruct-q4_1")
    ap.add_argument(
        "--random-init", action="store_true", help="config + tokenizer only, random weights"
    )
    ap.add_argument(
        "--export-arch", type=Path, default=None, help="write config + tokenizer and stop"
    )
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--batch-sizes", default="1,8")
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--prompts-per-source", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None, help="JSON results")
    args = ap.parse_args()
    sizes = [int(b) for b in args.batch_sizes.split(",")]
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    backend = load(args, sizes[0])
    load_s = time.perf_counter() - t0
    if args.export_arch:
        backend.tokenizer.save_pretrained(args.export_arch)
        backend.model.config.save_pretrained(args.export_arch)
        print(f"config and tokenizer written to {args.export_arch}")
        return
    prompts = bench_prompts(args.prompts)
    settings = GenerationSettings(
        max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens, do_sample=False
    )
    list(
        backend.stream(prompts[:1], GenerationSettings(max_new_tokens=4, do_sample=False))
    )  # warm-up
    rows = []
    for b in sizes:
        backend.batch_size = b
        if args.device.startswith("cuda"):
            import torch

            torch.cuda.synchronize()
        t = time.perf_counter()
        list(backend.stream(prompts, settings))
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        s = time.perf_counter() - t
        rows.append(
            {
                "batch_size": b,
                "seconds": round(s, 2),
                "prompts_per_s": round(len(prompts) / s, 3),
                "new_tokens_per_s": round(len(prompts) * args.new_tokens / s, 1),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    best = min(rows, key=lambda r: r["seconds"])
    per_1000 = best["seconds"] / len(prompts) * args.prompts_per_source * 1000
    result = {
        "model": backend.label,
        "device": args.device,
        "threads": args.threads,
        "load_s": round(load_s, 1),
        "prompts": len(prompts),
        "new_tokens": args.new_tokens,
        "rows": rows,
        "speedup": round(rows[0]["seconds"] / best["seconds"], 2),
        "seconds_per_1000_sources": round(per_1000),
    }
    print(json.dumps(result))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
