"""Derived rows of benchmarks/gpu_costs.csv: the GPU jobs benchmarks/gpu.py has not measured,
priced from the measured rows with a stated model, so the dry run's estimate has no unpriced
job. Rewrites the rows whose source starts with "derived" and keeps every measured row.

- ``eval_job`` (one ``negcse evaluate`` job, BERT-base, fp32): the measured fp32 STS-B dev
  evaluation (3,000 sentences, pre-tokenized) scaled by the sentences the job encodes
  (``EVAL_JOB_SENTENCES``: STS12-16, STS-B test, SICK-R test, SentEval's seven transfer
  tasks). Encoding only: the transfer classifiers' fitting and the model load are not in it.
- ``mteb_job`` per group (reranking, classification): the same per-sentence rate times the
  texts MTEB encodes (the pinned ``mteb`` package's task statistics: reranking = unique
  queries + documents of the test split; classification = the test split + 10 experiments x 8
  training samples per label).
- ``generator_sentence,gcse_synthesis``: GCSE's LLM synthesis per source sentence at the
  default settings (params.yaml ``generators.gcse``: glm-4-9b-chat, paper mode = 3 prompts
  per source, up to 512 new tokens each), from the measured PEGASUS paraphrase row by the
  ratio of decoder FLOPs (parameters x generated tokens x sequences): (9.4e9 x 331) /
  (568e6 x 10 beams x 32 tokens). 331 is the expected answer length per source (the answer
  formats the prompts ask for on 10,000 wiki1m sentences: benchmarks/gcse_output_tokens.py),
  not the 3 x 512 cap, which a JSON answer of one sentence does not reach. Prompt prefill is
  not counted.
- ``generator_sentence,gcse_synthesis_vllm``: the same 331 tokens per source through vLLM
  (``backend: vllm``), from a published rate, not from a row here: MLPerf Inference v5.1's
  Llama-3.1-8B Offline result of Red Hat on one H100 with vLLM 0.10.0, 5,777 output tokens/s
  (FP8 weights), scaled by parameters (8.03e9 / 9.4e9) and halved for bf16 (decoding reads the
  weights and the KV cache: twice FP8's bytes). The published figure is output tokens/s of an
  offline run that also prefills every request's prompt, so prefill is inside it.
  benchmarks/gpu_workflow.sh measures vLLM's
  tokens/s on the synthesis prompts (a small instruct model) to check it.

``python benchmarks/derive_costs.py`` (needs ``mteb`` for the MTEB counts; prints the rows and
writes them into benchmarks/gpu_costs.csv). ``--merge FILE...``: first the rows of a GPU run's
measured gpu_costs.csv (benchmarks/gpu_workflow.sh) replace the rows of the same kind, name,
precision, batch size and options, then the derived rows are derived again.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from negcse.workflow.gpu_estimate import merged_rows

HERE = Path(__file__).resolve().parent
COSTS = HERE / "gpu_costs.csv"
DEV_SENTENCES = 3000  # STS-B dev: 1,500 pairs
#: STS pairs x 2: STS12 3,108, STS13 1,500, STS14 3,750, STS15 8,500, STS16 9,183, STS-B test
#: 1,379, SICK-R test 4,927 (datasets.tsv line counts); transfer sentences: MR 10,662, CR
#: 3,775, SUBJ 10,000, MPQA 10,606, SST-2 70,042, TREC 5,952, MRPC (4,076 + 1,725) x 2
EVAL_JOB_SENTENCES = 2 * (3108 + 1500 + 3750 + 8500 + 9183 + 1379 + 4927) + (
    10662 + 3775 + 10000 + 10606 + 70042 + 5952 + 2 * (4076 + 1725)
)
PEGASUS = (568e6, 10 * 32)  # parameters, generated token-sequences per sentence (gpu.md row)
#: generated tokens per source of paper mode's 3 prompts (extraction, positive, negative): the
#: expected answers, not the 3 x 512 cap (benchmarks/gcse_output_tokens.py, 10,000 wiki1m
#: sentences, WordPiece counts: an overestimate of GLM-4's tokens)
EXPECTED_TOKENS = 331
GLM_4_9B = (9.4e9, EXPECTED_TOKENS)  # parameters, generated tokens per source
#: published vLLM rate: output tokens/s and parameters (MLPerf Inference v5.1, Llama-3.1-8B
#: Offline, FP8, one H100, vLLM 0.10.0: Red Hat's submission)
VLLM_PUBLISHED = (5777.0, 8.03e9)
BF16_OVER_FP8 = 0.5  # bf16 moves twice FP8's bytes per token: half the rate


def mteb_texts() -> dict[str, int]:
    """Texts one MTEB job of each group encodes (from the installed mteb's task statistics)."""
    import mteb

    from negcse.data.mteb_tasks import GROUPS

    out: dict[str, int] = {}
    for group, tasks in GROUPS.items():
        total = 0
        for spec in tasks:
            task = mteb.get_task(spec.name)
            stats = task.metadata.descriptive_stats[spec.split]
            if group == "reranking":
                total += stats["queries_text_statistics"]["unique_texts"]
                total += stats["documents_text_statistics"]["unique_texts"]
            else:
                labels = stats["label_statistics"]["unique_labels"]
                total += stats["num_samples"] + 10 * 8 * labels
        out[group] = total
    return out


def derived_rows(measured: list[dict[str, str]], mteb: dict[str, int]) -> list[dict[str, str]]:
    def measured_seconds(kind: str, name: str, precision: str) -> float:
        for row in measured:
            if (row["kind"], row["name"], row["precision"]) == (kind, name, precision):
                return float(row["seconds"])
        raise SystemExit(f"{COSTS}: no measured {kind} row {name} {precision} to derive from")

    device = measured[0]["device"]
    per_sentence = measured_seconds("dev_eval", "stsb_dev", "fp32") / DEV_SENTENCES
    rows = [
        (
            "eval_job",
            "evaluate_model",
            "fp32",
            per_sentence * EVAL_JOB_SENTENCES,
            f"derived from dev_eval fp32 x {EVAL_JOB_SENTENCES:,} sentences / {DEV_SENTENCES:,} "
            "(encoding only; benchmarks/derive_costs.py)",
        ),
    ]
    for group, texts in sorted(mteb.items()):
        rows.append(
            (
                "mteb_job",
                group,
                "fp32",
                per_sentence * texts,
                f"derived from dev_eval fp32 x {texts:,} texts / {DEV_SENTENCES:,} "
                "(mteb task statistics; benchmarks/derive_costs.py)",
            )
        )
    pegasus = measured_seconds("generator_sentence", "paraphrase", "")
    ratio = (GLM_4_9B[0] * GLM_4_9B[1]) / (PEGASUS[0] * PEGASUS[1])
    rows.append(
        (
            "generator_sentence",
            "gcse_synthesis",
            "bf16",
            pegasus * ratio,
            f"derived from paraphrase (PEGASUS) x {ratio:.2f} decoder FLOPs (glm-4-9b-chat, "
            f"{EXPECTED_TOKENS} expected new tokens per source over 3 prompts: "
            "benchmarks/gcse_output_tokens.py; benchmarks/derive_costs.py)",
        )
    )
    tokens_s = VLLM_PUBLISHED[0] * VLLM_PUBLISHED[1] / GLM_4_9B[0] * BF16_OVER_FP8
    rows.append(
        (
            "generator_sentence",
            "gcse_synthesis_vllm",
            "bf16",
            GLM_4_9B[1] / tokens_s,
            f"derived from a published rate: MLPerf Inference v5.1 Llama-3.1-8B Offline, one H100, "
            f"vLLM 0.10.0, {VLLM_PUBLISHED[0]:,.0f} tokens/s (FP8) x 8.03/9.4 parameters x "
            f"{BF16_OVER_FP8} (bf16) = {tokens_s:,.0f} tokens/s, prefill inside it; "
            f"{EXPECTED_TOKENS} expected new tokens per source over 3 prompts "
            "(benchmarks/gcse_output_tokens.py; benchmarks/derive_costs.py)",
        )
    )
    have = {(r["kind"], r["name"]) for r in measured}  # a measurement replaces its derivation
    return [
        {
            "kind": k,
            "name": n,
            "precision": p,
            "batch_size": "",
            "options": "",
            "seconds": f"{s:.6g}",
            "device": device,
            "source": src,
        }
        for k, n, p, s, src in rows
        if (k, n) not in have
    ]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--merge", nargs="*", default=[], metavar="CSV", help="measured costs first")
    args = p.parse_args()
    with COSTS.open(encoding="utf-8", newline="") as fh:
        fields = list(csv.DictReader(fh).fieldnames or [])
    rows = [
        {k: row.get(k) or "" for k in fields} for _, _, row in merged_rows([COSTS, *args.merge])
    ]
    measured = [r for r in rows if not r["source"].startswith("derived")]
    new = derived_rows(measured, mteb_texts())
    with COSTS.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(measured + new)
    csv.DictWriter(sys.stdout, fields, lineterminator="\n").writerows(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
