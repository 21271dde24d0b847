"""Issue 11 item 6 on a CUDA device: final encodings in fp32 (the default now) against the
fp16 autocast the encoder used before, on a bert-base-sized model (random weights: the mirror's
models do not travel to the GPU machine) and 4,000 synthetic sentences (2,000 pairs).

    PYTHONPATH=src python benchmarks/fp32_eval_gpu.py --out fp32_eval_gpu.json

Reports the dtype the encoder's Linear layers ran in, the largest vector and cosine changes,
the change in a Spearman x100 of the pair cosines against a fixed random score (an STS-like
number), and the encoding time of each precision (the faster of two runs, alternating).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from scipy.stats import spearmanr
from transformers import BertConfig, BertModel, BertTokenizerFast

from negcse.encoders.poolers import get_pooler
from negcse.evaluation.embedder import Embedder


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--pairs", type=int, default=2000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(2000)]
    with tempfile.TemporaryDirectory() as tmp:
        vocab = Path(tmp) / "vocab.txt"
        vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
        tok = BertTokenizerFast(vocab_file=str(vocab))
    torch.manual_seed(0)
    device = torch.device("cuda")
    model = BertModel(BertConfig(vocab_size=len(tok))).to(device).eval()
    encoder = Embedder(model, tok, get_pooler("cls_before_pooler", tokenizer=tok), 512, device)
    sentences = [
        " ".join(rng.choice(words, size=int(rng.integers(8, 40)))) for _ in range(2 * args.pairs)
    ]
    gold = rng.random(args.pairs)
    seen: list[torch.dtype] = []
    linear = next(m for m in model.modules() if isinstance(m, torch.nn.Linear))
    linear.register_forward_hook(lambda _m, _i, out: seen.append(out.dtype))
    result: dict[str, object] = {"device": torch.cuda.get_device_name(0)}
    vectors = {}
    precisions = {"fp32": None, "fp16_autocast": torch.float16}
    for name in ("fp32", "fp16_autocast", "fp32", "fp16_autocast"):  # each timed twice, the min
        encoder.autocast_dtype = precisions[name]
        encoder.encode(sentences[:256])  # warm-up
        seen.clear()
        torch.cuda.synchronize()
        start = time.perf_counter()
        vectors[name] = encoder.encode(sentences, batch_size=128)
        torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        result[f"{name}_seconds"] = min(seconds, float(result.get(f"{name}_seconds", seconds)))
        result[f"{name}_linear_dtypes"] = sorted({str(d) for d in seen})
    cos = {}
    for name, v in vectors.items():
        v = v / np.linalg.norm(v, axis=1, keepdims=True)
        cos[name] = (v[0::2] * v[1::2]).sum(1)
    a, b = vectors["fp32"], vectors["fp16_autocast"]
    result.update(
        {
            "pairs": args.pairs,
            "max_abs_vector_diff": float(np.abs(a - b).max()),
            "max_rel_vector_diff": float(np.abs(a - b).max() / np.abs(a).max()),
            "max_abs_cosine_diff": float(np.abs(cos["fp32"] - cos["fp16_autocast"]).max()),
            "spearman100_fp32": 100 * float(spearmanr(cos["fp32"], gold)[0]),
            "spearman100_fp16": 100 * float(spearmanr(cos["fp16_autocast"], gold)[0]),
            "pair_rank_agreement": float(spearmanr(cos["fp32"], cos["fp16_autocast"])[0]),
        }
    )
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
