"""The grid's methods in groups small enough to read in one figure or table.

The family tree follows ``baseline`` (params.yaml ``methods.<m>.baseline``): a method's children
are the grid's methods whose baseline it is; a method whose baseline is unset or not in the grid
is a root. :func:`method_groups` packs the trees, in grid order, into groups of at most ``limit``
methods. A tree too large for one group is split below its root, and the root (the baseline its
children were compared with) is repeated at the head of each part as the group's ``baseline``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class MethodGroup:
    """``methods`` in drawing order, ``baseline`` (when set) first; ``name`` joins the roots of
    the trees it holds with ``+`` (:func:`group_name`: unique within one grid, safe in a file
    name; the repeated baseline is not a root of the group)."""

    name: str
    methods: tuple[str, ...]
    baseline: str | None = None


def _parents(methods: Sequence[str], baselines: Mapping[str, str]) -> dict[str, str]:
    grid = set(methods)
    parent = {m: baselines[m] for m in methods if baselines.get(m) in grid and baselines[m] != m}
    for start in parent:
        seen, node = [start], start
        while node in parent:
            node = parent[node]
            if node in seen:
                cycle = " -> ".join([*seen[seen.index(node):], node])
                raise ValueError(f"methods.<m>.baseline forms a cycle: {cycle}")
            seen.append(node)
    return parent


#: a group named by more roots than this is named by its first and their count
NAMED_ROOTS = 3


def group_name(roots: Sequence[str]) -> str:
    """``a+b+c``: the roots of the trees a group holds (its first and a count when many)."""
    if len(roots) <= NAMED_ROOTS:
        return "+".join(roots)
    return f"{roots[0]}+{len(roots) - 1}-more"


def method_groups(
    methods: Sequence[str], baselines: Mapping[str, str], limit: int = 8
) -> list[MethodGroup]:
    """The grid's ``methods`` packed into groups of at most ``limit`` (see the module doc)."""
    if limit < 2:
        raise ValueError(f"a group holds a baseline and at least one method: limit {limit} < 2")
    if len(set(methods)) != len(methods):
        raise ValueError(f"a method is listed twice in the grid: {list(methods)}")
    parent = _parents(methods, baselines)
    children: dict[str, list[str]] = {m: [] for m in methods}
    for m in methods:
        if m in parent:
            children[parent[m]].append(m)

    def tree(node: str) -> list[str]:
        return [node, *(m for child in children[node] for m in tree(child))]

    def pack(nodes: Sequence[str], baseline: str | None) -> list[MethodGroup]:
        room = limit - (baseline is not None)
        groups: list[MethodGroup] = []
        parts: list[list[str]] = []  # the trees of the group being filled
        later: list[MethodGroup] = []  # the parts of the trees split below their root

        def close() -> None:
            members = [m for part in parts for m in part]
            # a top-level group of split roots only: each heads its own parts already
            if members and (baseline or not split.issuperset(members)):
                head = (baseline,) if baseline else ()
                groups.append(MethodGroup(group_name([p[0] for p in parts]), (*head, *members),
                                          baseline))  # fmt: skip
            parts.clear()

        split: set[str] = set()
        for node in nodes:
            part = tree(node)
            if len(part) > room:  # the node stays here; its children go to groups it heads
                split.add(node)
                part = [node]
                later.extend(pack(children[node], node))
            if sum(map(len, parts)) + len(part) > room:
                close()
            parts.append(part)
        close()
        return groups + later

    return pack([m for m in methods if m not in parent], None)
