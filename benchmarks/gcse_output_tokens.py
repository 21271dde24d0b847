"""Expected generated tokens per source sentence of GCSE's paper-mode synthesis (the quantity
``benchmarks/derive_costs.py`` prices vLLM's synthesis by), from the answer formats the prompts
ask for, on a sample of the training corpus:

- extraction (one prompt per source): the prompt's own example answer (cls, subject, action,
  state, entities), scaled by the source's length over the example input's (entities and parts
  grow with the sentence), inside a ```json fence;
- positive and negative rewrite (one each): ``{"text": "..."}`` holding a sentence of the
  source's length (the prompts ask to match it "precisely"), inside a ```json fence.

Tokens are counted with a WordPiece tokenizer (all-MiniLM-L6-v2's, BERT uncased), which splits
English into more pieces than GLM-4's 151k-entry BPE: an overestimate of GLM-4's counts. No
completion is generated here; the figure checks against vLLM's own counts where a GPU runs
``benchmarks/gpu_workflow.sh``.

``python benchmarks/gcse_output_tokens.py [--sentences N]`` (needs NEGCSE_MIRROR) prints the
mean tokens per source and its parts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
from pathlib import Path

from negcse.gcse.prompts import load_prompts

CORPUS = "data/unlabeled/wiki1m/wiki1m_random10k.txt"
TOKENIZER = "models/sentence-transformers/all-MiniLM-L6-v2/tokenizer.json"
EXAMPLE_INPUT = "A man playing with a black dog on a white blanket."


def example_answer(template: str) -> str:
    """The fenced example answer of the extraction prompt (its braces unescaped)."""
    match = re.search(r"```\n(.*?)\n```", template, re.S)
    if not match:
        raise SystemExit("gcse_prompts.json: the extraction prompt has no fenced example answer")
    return match.group(1).replace("{{", "{").replace("}}", "}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sentences", type=int, default=2000, help="corpus sentences (default 2000)")
    args = p.parse_args()
    mirror = os.environ.get("NEGCSE_MIRROR")
    if not mirror:
        raise SystemExit("NEGCSE_MIRROR is not set")
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(Path(mirror) / TOKENIZER))
    tok.no_padding()
    tok.no_truncation()

    def count(text: str) -> int:
        return len(tok.encode(text, add_special_tokens=False).ids)

    lines = (Path(mirror) / CORPUS).read_text(encoding="utf-8").splitlines()
    sources = [s.strip() for s in lines if s.strip()][: args.sentences]
    answer = "```json\n" + example_answer(load_prompts()["extract"].template) + "\n```"
    per_source_example = count(answer) / count(EXAMPLE_INPUT)
    fence = count('```json\n{"text": ""}\n```')
    extraction, rewrites = [], []
    for s in sources:
        n = count(s)
        extraction.append(per_source_example * n)
        rewrites.append(2 * (fence + n))
    total = statistics.mean(e + r for e, r in zip(extraction, rewrites, strict=True))
    json.dump(
        {
            "sentences": len(sources),
            "source_tokens": round(statistics.mean(count(s) for s in sources), 1),
            "extraction_tokens": round(statistics.mean(extraction), 1),
            "rewrite_tokens": round(statistics.mean(rewrites), 1),
            "tokens_per_source": round(total, 1),
        },
        sys.stdout,
        indent=1,
    )
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
