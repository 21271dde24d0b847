"""The share of identity revisions among GCSE's positive revision prompts under each neighbour
source (none, the stage-1 model as the KG's frozen encoder, the KG's own related replacement).

A positive entity or main-part revision asks the LLM to replace a phrase by its KG neighbour;
an identity revision replaces it by itself ("Replace "A man" with "A man" ..."). The prompts
are planned from the extracted knowledge alone, so this script replans the synthesis of a
``gcse-synthesize`` candidates file (its sources' and extension sentences' knowledge, the same
seed and prompts; no LLM call) under each neighbour setting and counts, per pass:

- no encoder: ``identity_revision`` without a neighbour encoder (every positive revision an
  identity);
- the stage-1 encoder with ``identity_revision`` and ``related_lookup`` (the released batch
  count, only whole batches of 1,024 pool nodes get neighbours, and step 7's lookup): the
  released code and ``gcse_released``;
- batch count fixed: the same encoder, every node queried;
- the default data (``gcse``): the KG's own related replacement, no bug.

The first setting is checked against the file's own prompts (the replan must give the
requests the file was made from).

    NEGCSE_MIRROR=../shared/mirror PYTHONPATH=src python benchmarks/gcse_identity_revisions.py \\
        --candidates CANDIDATES.jsonl --stage1 results/models/gcse_stage1/splade-tiny/seed1
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from functools import partial
from pathlib import Path

from negcse.evaluation.embedder import Embedder
from negcse.gcse.kg import Knowledge, Node
from negcse.gcse.neighbours import RELEASED_BATCH
from negcse.gcse.pipeline import SourceResult, entity_kg, plan_passes
from negcse.gcse.prompts import load_prompts
from negcse.gcse.synthesis import Request
from negcse.io_utils import read_jsonl

#: gcse_released's synthesis bugs (config/defaults.yaml), without the denoising ones
RELEASED_BUGS = frozenset(
    {
        "subject_key",
        "identity_revision",
        "related_lookup",
        "keep_unparsed",
        "sampled_extraction",
        "extension_quirks",
    }
)


def knowledge(data: dict) -> Knowledge:
    def nodes(items: list[dict]) -> tuple[Node, ...]:
        return tuple(Node(n["text"], n["type"], n.get("quantity"), n.get("raw")) for n in items)

    return Knowledge(
        tuple(data["cls"]),
        nodes(data["subjects"]),
        tuple(data["actions"]),
        tuple(data["states"]),
        nodes(data["entities"]),
    )


def passes(rows: list[dict]) -> tuple[list[SourceResult], list]:
    """The pipeline's results and its per-pass KGs (sources, then extension sentences)."""
    results = [
        SourceResult(
            r["index"],
            r["anchor"],
            r["skipped"],
            knowledge(r["knowledge"]),
            extension_of=r.get("extension_of"),
        )
        for r in rows
    ]
    n = sum(r.extension_of is None for r in results)
    active = [r.knowledge for r in results[:n] if r.skipped is None]
    kgs = [(entity_kg("released", active), range(n))]
    if len(results) > n:
        kgs.append(
            (entity_kg("released", (r.knowledge for r in results[n:])), range(n, len(results)))
        )
    return results, kgs


def revisions(requests: list[Request]) -> Counter[str]:
    """Positive revision prompts, how many replace a phrase by itself, and how many revise the
    fallback "A man" (the sentence had no such knowledge: the phrase is in no pool)."""
    out: Counter[str] = Counter()
    for q in requests:
        if q.role != "positive" or "replace_entities" not in q.detail:
            continue
        out["positive revisions"] += 1
        out["identity"] += q.detail["ori_entities"] == q.detail["replace_entities"]
        out["fallback"] += q.detail["ori_entities"] == '"A man"'
    return out


def pool_sizes(results: list[SourceResult]) -> dict[str, int]:
    parts = {
        t
        for r in results
        for kind in ("subject", "action", "state")
        for t in r.knowledge.parts(kind)
    }
    ents = {(e.type.strip(), e.text.strip()) for r in results for e in r.knowledge.entities}
    return {
        "main parts": len(parts),
        "entities": len(ents),
        "entity types": len({t for t, _ in ents}),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--candidates", required=True, type=Path)
    p.add_argument("--stage1", required=True, help="the stage-1 model folder (mean pooling)")
    p.add_argument("--seed", type=int, default=0, help="the synthesis seed the file was made with")
    args = p.parse_args()
    rows = read_jsonl(args.candidates)
    results, kgs = passes(rows)
    prompts = load_prompts()
    encode = partial(Embedder.load(args.stage1, "mean").encode, batch_size=RELEASED_BATCH)
    settings = {
        "no encoder (identity_revision)": (None, RELEASED_BUGS),
        "stage-1 encoder, released batch count and lookup": (encode, RELEASED_BUGS),
        "stage-1 encoder, batch count fixed": (encode, RELEASED_BUGS - {"identity_revision"}),
        "default data (KG related, no bug)": (None, frozenset()),
    }
    table = {}
    for name, (encoder, bugs) in settings.items():
        requests, _ = plan_passes(
            results, kgs, prompts, "released", 1, 1, args.seed, False, encoder, bugs
        )
        if encoder is None and bugs:
            made = [c["prompt"] for r in rows for c in r["candidates"]]
            assert [q.prompt for q in requests] == made, "the replan differs from the file"
        table[name] = revisions(requests)
    print(json.dumps({"pools": pool_sizes(results), "sources": len(rows)}, indent=1))
    print("| setting | positive revisions | identity | share | of which 'A man' |")
    print("|---|---|---|---|---|")
    for name, c in table.items():
        n = c["positive revisions"]
        share = f"{c['identity'] / n:.0%}" if n else "—"
        print(f"| {name} | {n} | {c['identity']} | {share} | {c['fallback']} |")


if __name__ == "__main__":
    main()
