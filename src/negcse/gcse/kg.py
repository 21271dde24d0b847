"""The entity knowledge graph of GCSE §3.1 (eq. 1-8) and the knowledge read from extractions.

Nodes are <text, type, quantity>. Hard edges E_r join an entity text to its type and to its
quantity (eq. 3); soft edges E_s join, within one sentence, an entity text to every other entity
text and to every other entity's type (eq. 4). Replacement candidates are
T(t) = T_r(t) U T_p(t) (eq. 5-8). Texts and types are compared case-folded; the first spelling
seen is kept.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Node:
    text: str
    type: str
    quantity: int | None = None
    #: the text as the LLM wrote it, where stripping changed it (the released step 7 looks an
    #: entity's neighbour up by this text); not part of the node's identity
    raw: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Knowledge:
    """What the extraction prompt(s) gave for one sentence."""

    cls: tuple[str, ...] = ()
    subjects: tuple[Node, ...] = ()
    actions: tuple[str, ...] = ()
    states: tuple[str, ...] = ()
    entities: tuple[Node, ...] = ()

    def parts(self, kind: str) -> tuple[str, ...]:
        """The main parts of one kind ("subject", "action" or "state"), in order."""
        if kind == "subject":
            return tuple(s.text for s in self.subjects)
        return {"action": self.actions, "state": self.states}[kind]

    def nodes(self) -> list[Node]:
        """Subjects, then entities, without repeats of (text, type)."""
        seen: set[tuple[str, str]] = set()
        out = []
        for node in (*self.subjects, *self.entities):
            key = (_key(node.text), _key(node.type))
            if key not in seen:
                seen.add(key)
                out.append(node)
        return out


def _key(s: str) -> str:
    return " ".join(s.split()).casefold()


def _quantity(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _texts(items: Any, field_name: str = "text") -> list[dict[str, Any]]:
    """Dicts with a non-empty string ``field_name``, from a list (or one dict)."""
    if isinstance(items, dict):
        items = [items]
    if not isinstance(items, list):
        return []
    return [
        i
        for i in items
        if isinstance(i, dict) and isinstance(i.get(field_name), str) and i[field_name].strip()
    ]


def knowledge_from_json(
    main: Mapping[str, Any] | None, entities: Any = None, subject_key: str = "subject"
) -> Knowledge:
    """Knowledge from a parsed extraction: ``main`` holds cls / subject / action / state (and,
    for the paper's one prompt, entities); ``entities`` is the released second prompt's list.
    Missing or malformed parts become empty; ``subject_key`` "suject" reproduces the released
    prompt's spelling."""
    main = dict(main or {})
    cls_raw = main.get("cls", ())
    cls = (
        (cls_raw,)
        if isinstance(cls_raw, str)
        else tuple(c for c in cls_raw if isinstance(c, str))
        if isinstance(cls_raw, list)
        else ()
    )
    subjects = tuple(
        Node(s["text"].strip(), str(s.get("type") or "").strip(), _quantity(s.get("quantity")))
        for s in _texts(main.get(subject_key))
    )
    actions = tuple(a["text"].strip() for a in _texts(main.get("action")))
    states = tuple(a["text"].strip() for a in _texts(main.get("state")))
    raw_entities = main.get("entities") if entities is None else entities
    ents = tuple(
        Node(
            e["entity"].strip(),
            str(e.get("type") or "").strip(),
            _quantity(e.get("quantity")),
            None if e["entity"] == e["entity"].strip() else e["entity"],
        )
        for e in _texts(raw_entities, "entity")
    )
    return Knowledge(tuple(c.strip() for c in cls if c.strip()), subjects, actions, states, ents)


@dataclass
class EntityKG:
    """G = <V, E> over the nodes of every sentence (build with :meth:`from_sentences`)."""

    surface: dict[str, str] = field(default_factory=dict)  # text key -> first spelling
    by_type: dict[str, set[str]] = field(default_factory=dict)  # E_r: type -> text keys
    types: dict[str, set[str]] = field(default_factory=dict)  # E_r: text key -> types
    quantities: dict[str, set[int]] = field(default_factory=dict)  # E_r: text key -> quantities
    soft: dict[str, set[tuple[str, str]]] = field(
        default_factory=dict
    )  # E_s: text key -> ("t"|"c", key)

    @classmethod
    def from_sentences(cls, sentences: Iterable[Sequence[Node]]) -> EntityKG:
        kg = cls()
        for nodes in sentences:
            keys = []
            for node in nodes:
                t, c = _key(node.text), _key(node.type)
                if not t:
                    continue
                kg.surface.setdefault(t, node.text.strip())
                kg.by_type.setdefault(c, set()).add(t)
                kg.types.setdefault(t, set()).add(c)
                if node.quantity is not None:
                    kg.quantities.setdefault(t, set()).add(node.quantity)
                keys.append((t, c))
            for j, (tj, _) in enumerate(keys):
                for k, (tk, ck) in enumerate(keys):
                    if k != j:
                        kg.soft.setdefault(tj, set()).update({("t", tk), ("c", ck)})
        return kg

    def t_r(self, text: str, type_: str) -> set[str]:
        """Eq. 5: texts that share the type of (text, type) (the text itself included)."""
        return set(self.by_type.get(_key(type_), set()))

    def t_s(self, text: str) -> set[tuple[str, str]]:
        """Eq. 6: soft-edge neighbours of the text (texts and types)."""
        return set(self.soft.get(_key(text), set()))

    def t_p(self, text: str, type_: str) -> set[str]:
        """Eq. 7: same-type texts that share a soft-edge neighbour with the text."""
        mine = self.t_s(text)
        return {tp for tp in self.t_r(text, type_) if mine & self.soft.get(tp, set())}

    def candidates(self, text: str, type_: str) -> set[str]:
        """Eq. 8: T(t) = T_r(t) U T_p(t), as case-folded keys (T_p is a subset of T_r)."""
        return self.t_r(text, type_) | self.t_p(text, type_)

    def replacement(
        self, text: str, type_: str, rng: random.Random, prefer_related: bool = False
    ) -> str | None:
        """A seeded choice from T(t) other than t itself (None if there is none); with
        ``prefer_related``, from T_p when it has one."""
        own = _key(text)
        pool = self.candidates(text, type_)
        if prefer_related:
            related = self.t_p(text, type_) - {own}
            pool = related or pool
        options = sorted(pool - {own})
        return self.surface[rng.choice(options)] if options else None

    def summary(self) -> dict[str, int]:
        return {
            "nodes": len(self.surface),
            "types": len(self.by_type),
            "quantity_edges": sum(len(q) for q in self.quantities.values()),
            "soft_edges": sum(len(s) for s in self.soft.values()),
        }


MAIN_PART_KINDS = ("subject", "action", "state")


@dataclass
class MainPartKG:
    """The released main-part pools (step 4): each main-part text once, under the kind and
    theme categories of its first occurrence (across kinds, as the released KG keys nodes by
    text alone)."""

    by_kind: dict[str, list[str]] = field(default_factory=dict)
    themes: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def from_knowledge(cls, knowledge: Iterable[Knowledge]) -> MainPartKG:
        kg = cls({k: [] for k in MAIN_PART_KINDS})
        for k in knowledge:
            for kind in MAIN_PART_KINDS:
                for text in k.parts(kind):
                    if text and text not in kg.themes:
                        kg.themes[text] = frozenset(_key(c) for c in k.cls)
                        kg.by_kind[kind].append(text)
        return kg

    def in_theme(self, theme: str, kind: str | None = None) -> list[str]:
        """Parts (of ``kind``, or of every kind) whose sentence has the theme category."""
        t = _key(theme)
        kinds = MAIN_PART_KINDS if kind is None else (kind,)
        return [p for k in kinds for p in self.by_kind.get(k, []) if t in self.themes[p]]

    def random(self, kind: str, rng: random.Random) -> str | None:
        """The released negative's draw: any part of the kind, the original included."""
        pool = self.by_kind.get(kind, [])
        return rng.choice(pool) if pool else None

    def related(self, text: str, kind: str, rng: random.Random) -> str | None:
        """A part of the same kind other than ``text`` from a sentence sharing a theme category
        (cls) with it, else any other part of the kind; None if there is none."""
        others = [t for t in self.by_kind.get(kind, []) if t != text]
        mine = self.themes.get(text, frozenset())
        near = [t for t in others if mine & self.themes[t]]
        pool = near or others
        return rng.choice(pool) if pool else None
