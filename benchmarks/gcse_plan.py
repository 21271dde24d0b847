"""Planned shares of GCSE's prompt types per data mode, from the planner alone (no LLM):
``plan_synthesis`` over the smoke corpus's first sources (benchmarks/gcse.md).

Knowledge comes from no extraction, so two cases: none at all (what failed extractions give,
as in the smoke run) and a synthetic one where every source has a subject and an entity that
has a same-type replacement (the best case for paper mode's revisions).

    python benchmarks/gcse_plan.py --sources 2000
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from pathlib import Path

from negcse.gcse.kg import EntityKG, Knowledge, Node
from negcse.gcse.prompts import load_prompts
from negcse.gcse.synthesis import plan_synthesis

SMOKE = "data/unlabeled/wiki1m/wiki1m_for_simcse.head_1280000_bytes.txt"  # the smoke corpus
FAMILY = {  # prompt name -> the row it is counted under
    "rewrite_role": "rewrite: role (Rewriting Prompt 1)",
    "summarize": "rewrite: summarize (Rewriting Prompt 2)",
    "context": "rewrite: storyteller context (Rewriting Prompt 3)",
    "rewrite_released_8": "rewrite: summarize (released entry 8)",
    "entity_revision_related": "related revision",
    "antisense_negate": "antisense: negative reformulation",
    "antisense_released_5": "antisense: negative reformulation",
    "antisense_tone": "antisense: tone / role",
    "entity_revision": "entity revision",
    "entity_revision_released": "entity revision",
    "quantity_revision": "quantity revision",
    "quantity_revision_released": "quantity revision",
}


def _family(name: str) -> str:
    if name in FAMILY:
        return FAMILY[name]
    if name.startswith("rewrite_released_"):
        return "rewrite: role / style (released entries 1-7)"
    if name.startswith("antisense_released_"):
        return "antisense: tone / role"
    raise KeyError(name)


def _knowledge(n: int, synthetic: bool) -> list[Knowledge]:
    if not synthetic:
        return [Knowledge() for _ in range(n)]
    return [
        Knowledge(
            subjects=(Node(f"subject {i % 50}", "person", 1),),
            actions=(f"action {i % 50}",),
            states=(f"state {i % 50}",),
            entities=(Node(f"thing {i % 50}", "object"),),
        )
        for i in range(n)
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sources", type=int, default=2000)
    ap.add_argument("--mirror", default=os.environ.get("NEGCSE_MIRROR", "/work/shared/mirror"))
    args = ap.parse_args()
    lines = (Path(args.mirror) / SMOKE).read_text("utf-8").splitlines()[: args.sources]
    prompts = load_prompts()
    rows: dict[str, dict[str, float]] = {}
    identity: dict[str, str] = {}
    for mode in ("released", "paper"):
        for synthetic in (False, True):
            know = _knowledge(len(lines), synthetic)
            nodes = (k.entities if mode == "released" else k.nodes() for k in know)
            plan = plan_synthesis(lines, know, EntityKG.from_sentences(nodes), prompts, mode)
            col = f"{mode}, {'synthetic' if synthetic else 'no'} knowledge"
            count = Counter((q.role, _family(q.prompt)) for q in plan.requests)
            for (role, fam), c in count.items():
                rows.setdefault(f"{role}: {fam}", {})[col] = c / len(lines)
            rel = [q for q in plan.requests if q.prompt == "entity_revision_related"]
            same = sum(q.detail["ori_entities"] == q.detail["replace_entities"] for q in rel)
            if rel:
                identity[col] = f"{same}/{len(rel)}"
    cols = [f"{m}, {k} knowledge" for m in ("released", "paper") for k in ("no", "synthetic")]
    print(f"{len(lines)} sources, 1 positive and 1 negative prompt each\n")
    print("| role: prompt type | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for name in sorted(rows):
        print(f"| {name} | " + " | ".join(f"{rows[name].get(c, 0):.1%}" for c in cols) + " |")
    print("\nidentity positive revisions (replacement = original):", identity)


if __name__ == "__main__":
    main()
