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
- ``released`` mode reproduces ``7_generate_samples.py``: half of the revisions start from a
  main part (a random kind of subject / action / state, the sentence's first one, "A man" when
  it has none), half from a random entity of the sentence ("A man" / person when it has none);
  "A man" is also the quantity revision's subject when the sentence has none. A negative
  revision takes a uniformly random part of the same kind or entity of the same type from the
  whole corpus, which may equal the original (the original when the pool is empty). A positive
  revision takes a related replacement: ``neighbour``'s when given (the released frozen
  encoder's, negcse.gcse.neighbours), else the KG's (an entity from T_p, eq. 7, or else T_r,
  other than itself; a main part of the same kind sharing a theme category), else the original.
  With the released bug ``identity_revision`` and no ``neighbour`` it is always the original
  (the released KG gives no neighbours to pools under 1,024 nodes; with a ``neighbour`` built
  with that bug, to the nodes past the pool's last whole batch of 1,024).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from negcse.gcse.kg import MAIN_PART_KINDS, EntityKG, Knowledge, MainPartKG, Node
from negcse.gcse.prompts import Prompt, prompts_for

Mode = Literal["paper", "released"]
#: (node, is a main part) -> a related replacement (None: none, the revision keeps the text)
Neighbour = Callable[[Node, bool], str | None]


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


def _paper_revision(
    prompt: Prompt, knowledge: Knowledge, kg: EntityKG, rng: random.Random, prefer_related: bool
) -> dict[str, str] | None:
    """Template values of an entity or quantity revision, or None if the sentence lacks them."""
    if prompt.kind == "quantity_revision":
        if not knowledge.subjects:
            return None
        subject = knowledge.subjects[0]
        n = quantity_draw(rng)
        while n == subject.quantity:
            n = quantity_draw(rng)
        return {"subject_text": subject.text, "new_number": str(n)}
    nodes = knowledge.nodes()
    rng.shuffle(nodes)
    for node in nodes:
        repl = kg.replacement(node.text, node.type, rng, prefer_related)
        if repl is not None:
            return {"ori_entities": f'"{node.text}"', "replace_entities": f'"{repl}"'}
    return None


def _released_revision(
    prompt: Prompt,
    knowledge: Knowledge,
    kg: EntityKG,
    parts: MainPartKG,
    rng: random.Random,
    identity: bool,
    neighbour: Neighbour | None,
) -> dict[str, str]:
    """Template values of a revision as ``7_generate_samples.py`` draws them."""
    if prompt.kind == "quantity_revision":
        subject = knowledge.subjects[0].text if knowledge.subjects else "A man"
        return {"subject_text": subject, "new_number": str(quantity_draw(rng))}
    positive = prompt.role == "positive"
    if rng.random() < 0.5:  # a main part (released: randint(1, 10) <= 5)
        kind = rng.choice(MAIN_PART_KINDS)
        found = knowledge.parts(kind)
        node = Node(found[0] if found else "A man", kind)
        if not positive:
            repl = parts.random(kind, rng)
        elif neighbour:
            repl = neighbour(node, True)
        else:
            repl = None if identity else parts.related(node.text, kind, rng)
    else:
        ents = knowledge.entities
        node = rng.choice(ents) if ents else Node("A man", "person")
        if not positive:
            same_type = sorted(kg.t_r(node.text, node.type))
            repl = kg.surface[rng.choice(same_type)] if same_type else None
        elif neighbour:
            repl = neighbour(node, False)
        elif identity:
            repl = None
        else:
            repl = kg.replacement(node.text, node.type, rng, prefer_related=True)
    return {"ori_entities": f'"{node.text}"', "replace_entities": f'"{repl or node.text}"'}


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
    released_bugs: frozenset[str] = frozenset(),
) -> Plan:
    """The synthesis requests for every source (``skip[i]`` True: none for source i).
    ``released_bugs`` (negcse.gcse.released): "identity_revision" makes every released-mode
    positive revision an identity when no ``neighbour`` is given."""
    if len(knowledge) != len(sentences):
        raise ValueError(f"{len(sentences)} sentences but {len(knowledge)} knowledge records")
    plan = Plan()
    by_role = {role: prompts_for(prompts, role, mode) for role in ("positive", "negative")}
    antisense = [p for p in by_role["negative"] if p.kind == "antisense"]
    parts = MainPartKG.from_knowledge(knowledge)
    identity = "identity_revision" in released_bugs
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
                if prompt.kind in ("entity_revision", "quantity_revision") and mode == "released":
                    values = _released_revision(
                        prompt, knowledge[i], kg, parts, rng, identity, neighbour
                    )
                elif prompt.kind in ("entity_revision", "quantity_revision"):
                    values = _paper_revision(prompt, knowledge[i], kg, rng, prefer_related)
                    if values is None:
                        plan.notes[f"{prompt.name} -> antisense (nothing to revise)"] += 1
                        prompt, values = _weighted(antisense, rng), {}
                text, detail = _fill(prompt, sentence, rng, **values)
                plan.requests.append(Request(i, role, prompt.name, text, detail))
    return plan
