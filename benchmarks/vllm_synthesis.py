"""vLLM's output tokens/s on GCSE's synthesis prompts through the project's vLLM backend.

Runs where vLLM is installed (envs/vllm.yaml) on a CUDA GPU: ``negcse.llm.vllm_backend``'s
requests (the chat template, the stop tokens, one seed per request) on the synthesis prompts of
benchmarks/gcse_generation.py, every completion forced to ``--tokens`` new tokens, all prompts
in one ``LLM.generate`` call (continuous batching). ``--dummy`` builds the model with random
weights (vLLM's ``load_format="dummy"``: speed does not depend on the weights), so a folder with
a config and a tokenizer is enough (the mirror's ``precomputed/smollm2-arch``, SmolLM2-135M's).
Prints one JSON row (``"kind": "vllm"``) and, with ``--costs FILE`` and a model of GLM-4-9B's
size or more, appends the measured ``gcse_synthesis_vllm`` row to that gpu_costs.csv.

    python benchmarks/vllm_synthesis.py --model $NEGCSE_MIRROR/precomputed/smollm2-arch --dummy
    python benchmarks/vllm_synthesis.py --model THUDM/glm-4-9b-chat-hf --costs out/gpu_costs.csv
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

from gcse_generation import bench_prompts

from negcse.llm.backend import GenerationSettings
from negcse.llm.vllm_backend import VLLMBackend

#: GCSE's synthesis per source as the cost rows count it: 3 prompts x 512 new tokens
TOKENS_PER_SOURCE = 3 * 512
#: the setting's model's parameters (glm-4-9b-chat); a smaller model's rate is not scaled up
GLM_PARAMS = 9.4e9


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, help="a model folder or hub name")
    p.add_argument("--dummy", action="store_true", help="random weights (load_format dummy)")
    p.add_argument("--prompts", type=int, default=512, help="synthesis prompts in the call")
    p.add_argument("--tokens", type=int, default=128, help="forced new tokens per completion")
    p.add_argument("--max-model-len", type=int, default=2048)
    p.add_argument("--costs", type=Path, help="a gpu_costs.csv to append a measured row to")
    args = p.parse_args()
    import vllm  # envs/vllm.yaml

    engine = vllm.LLM(
        model=args.model,
        dtype="bfloat16",
        max_model_len=args.max_model_len,
        seed=0,
        **({"load_format": "dummy"} if args.dummy else {}),
    )
    # the size from the model's config (vLLM's workers hold the weights)
    params = _parameters(engine.llm_engine.model_config.hf_config)
    backend = VLLMBackend(engine, vllm.SamplingParams, Path(args.model).name, "benchmark")
    fixed = GenerationSettings(
        max_new_tokens=args.tokens, min_new_tokens=args.tokens, do_sample=False
    )
    list(backend.stream(bench_prompts(8), fixed))  # warm-up (CUDA graphs, kernels)
    prompts = bench_prompts(args.prompts)
    start = time.perf_counter()
    answers = list(backend.stream(prompts, fixed))
    seconds = time.perf_counter() - start
    tokens_s = len(answers) * args.tokens / seconds
    row = {
        "kind": "vllm",
        "model": args.model,
        "dummy": args.dummy,
        "params": params,
        "prompts": len(prompts),
        "new_tokens": args.tokens,
        "seconds": round(seconds, 3),
        "tokens_per_s": round(tokens_s, 1),
        "vllm": vllm.__version__,
    }
    print(json.dumps(row), flush=True)
    if args.costs is not None and params >= GLM_PARAMS * 0.9:
        import torch

        with args.costs.open("a", encoding="utf-8", newline="") as fh:
            csv.writer(fh).writerow(
                [
                    "generator_sentence",
                    "gcse_synthesis_vllm",
                    "bf16",
                    "",
                    "",
                    f"{TOKENS_PER_SOURCE / tokens_s:.6g}",
                    torch.cuda.get_device_name(0),
                    f"measured (benchmarks/vllm_synthesis.py: {Path(args.model).name}, "
                    f"{len(prompts)} prompts x {args.tokens} forced tokens, {tokens_s:,.0f} "
                    "tokens/s; 3 prompts x 512 tokens per source)",
                ]
            )
    return 0


def _parameters(config: object) -> float:
    """A decoder's parameters from its config: embeddings + layers x (attention + MLP)."""
    c = config
    hidden, layers = c.hidden_size, c.num_hidden_layers  # type: ignore[attr-defined]
    heads = c.num_attention_heads  # type: ignore[attr-defined]
    kv = getattr(c, "num_key_value_heads", heads) or heads
    head_dim = getattr(c, "head_dim", None) or hidden // heads
    attention = hidden * head_dim * (2 * heads + 2 * kv)
    mlp = 3 * hidden * c.intermediate_size  # type: ignore[attr-defined]
    embeddings = c.vocab_size * hidden * (1 if getattr(c, "tie_word_embeddings", False) else 2)  # type: ignore[attr-defined]
    return float(embeddings + layers * (attention + mlp))


if __name__ == "__main__":
    sys.exit(main())
