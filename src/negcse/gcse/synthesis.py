"""Which synthesis prompts each source sentence gets, filled from its knowledge and the KG.

Per source, ``positives`` prompts of the positive role and ``negatives`` of the negative role
are drawn with the prompts' weights (released proportions: rewriting 70 / related-entity
revision 30 for the released positives; antisense 70, entity revision 15, quantity revision 15
for negatives). Draws use a generator seeded by (seed, source index), so a source's prompts do
not depend on the other sources.

- ``paper`` mode: entity revision replaces an entity of the sentence by a seeded choice from
  T(t) (eq. 8) other than itself; quantity revision gives the first subject a new number. When
  the sentence has no entity with a replacement (or no subject), the draw falls back to an
  antisense prompt, counted in :attr:`Plan.notes`.
- ``released`` mode reproduces ``7_generate_samples.py``: a uniformly random same-type
  replacement that may equal the original, "A man" when the sentence has no subject, and, for
  positive revisions, the related neighbour given by ``neighbour`` (the frozen model's; without
  one, the original text, as the released KG gives for pools under 1,024 nodes).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from negcse.gcse.kg import EntityKG, Knowledge, Node
from negcse.gcse.prompts import Prompt, prompts_for

Mode = Literal["paper", "released"]
Neighbour = Callable[[Node], str | None]


@dataclass(frozen=True)
class Request:
    source: int
    role: str
    prompt: str
    text: str
    detail: dict[str, str] = field(default_factory=dict)


@dataclass
class Plan:
    requests: list[Request] = field(default_factory=list)
    notes: Counter[str] = field(default_factory=Counter)


def quantity_draw(rng: random.Random, large_probability: float = 0.6) -> int:
    """The released number draw: randint(51, 10000) with probability 0.6, else randint(0, 51)."""
    return rng.randint(51, 10000) if rng.random() < large_probability else rng.randint(0, 51)


def _weighted(options: Sequence[Prompt], rng: random.Random) -> Prompt:
    return rng.choices(list(options), weights=[p.weight for p in options], k=1)[0]


def _fill(
    prompt: Prompt, sentence: str, rng: random.Random, **values: str
) -> tuple[str, dict[str, str]]:
    detail = {name: rng.choice(choices) for name, choices in sorted(prompt.fills.items())}
    detail.update(values)
    return prompt.render(input_text=sentence, **detail), detail


def _revision_values(
    prompt: Prompt,
    knowledge: Knowledge,
    kg: EntityKG,
    rng: random.Random,
    mode: Mode,
    prefer_related: bool,
    neighbour: Neighbour | None,
) -> dict[str, str] | None:
    """Template values of an entity or quantity revision, or None if the sentence lacks them."""
    if prompt.kind == "quantity_revision":
        if knowledge.subjects:
            subject = knowledge.subjects[0]
        elif mode == "released":
            subject = Node("A man", "person", 1)
        else:
            return None
        n = quantity_draw(rng)
        while mode == "paper" and n == subject.quantity:
            n = quantity_draw(rng)
        return {"subject_text": subject.text, "new_number": str(n)}
    nodes = knowledge.nodes()
    if mode == "paper":
        rng.shuffle(nodes)
        for node in nodes:
            repl = kg.replacement(node.text, node.type, rng, prefer_related)
            if repl is not None:
                return {"ori_entities": f'"{node.text}"', "replace_entities": f'"{repl}"'}
        return None
    node = rng.choice(nodes) if nodes else Node("A man", "person")
    if prompt.role == "positive":
        repl = (neighbour(node) if neighbour else None) or node.text
    else:
        same_type = sorted(kg.t_r(node.text, node.type))
        repl = kg.surface[rng.choice(same_type)] if same_type else "man"
    return {"ori_entities": f'"{node.text}"', "replace_entities": f'"{repl}"'}


def plan_synthesis(
    sentences: Sequence[str],
    knowledge: Sequence[Knowledge],
    kg: EntityKG,
    prompts: dict[str, Prompt],
    mode: Mode = "paper",
    positives: int = 1,
    negatives: int = 1,
    seed: int = 0,
    prefer_related: bool = False,
    neighbour: Neighbour | None = None,
    skip: Sequence[bool] | None = None,
) -> Plan:
    """The synthesis requests for every source (``skip[i]`` True: none for source i)."""
    if len(knowledge) != len(sentences):
        raise ValueError(f"{len(sentences)} sentences but {len(knowledge)} knowledge records")
    plan = Plan()
    by_role = {role: prompts_for(prompts, role, mode) for role in ("positive", "negative")}
    antisense = [p for p in by_role["negative"] if p.kind == "antisense"]
    if not by_role["positive"] or not antisense:
        raise ValueError(f"the prompts file has no positive or no antisense prompt for mode {mode}")
    for i, sentence in enumerate(sentences):
        if skip is not None and skip[i]:
            continue
        rng = random.Random(f"{seed}:{i}")
        for role, count in (("positive", positives), ("negative", negatives)):
            for _ in range(count):
                prompt = _weighted(by_role[role], rng)
                values: dict[str, str] | None = {}
                if prompt.kind in ("entity_revision", "quantity_revision"):
                    values = _revision_values(
                        prompt, knowledge[i], kg, rng, mode, prefer_related, neighbour
                    )
                    if values is None:
                        plan.notes[f"{prompt.name} -> antisense (nothing to revise)"] += 1
                        prompt, values = _weighted(antisense, rng), {}
                text, detail = _fill(prompt, sentence, rng, **values)
                plan.requests.append(Request(i, role, prompt.name, text, detail))
    return plan
