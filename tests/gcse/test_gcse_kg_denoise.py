"""The entity KG (eq. 3-8) and the denoising rule (eq. 10-11) on hand-built examples."""

from __future__ import annotations

import random

import pytest

from negcse.gcse.denoise import denoise, denoise_released
from negcse.gcse.kg import EntityKG, Node

# three sentences' knowledge
S1 = [Node("A man", "person", 1), Node("a guitar", "instrument"), Node("the street", "place")]
S2 = [Node("Two women", "person", 2), Node("a violin", "instrument")]
S3 = [Node("A child", "person", 1), Node("the park", "place")]


def test_kg_edges_and_candidates():
    kg = EntityKG.from_sentences([S1, S2, S3])
    assert kg.t_r("a man", "Person") == {"a man", "two women", "a child"}  # hard edge: type
    assert kg.quantities == {"a man": {1}, "two women": {2}, "a child": {1}}  # hard edge: quantity
    # soft edges within sentence 1: the other texts and the other entities' types
    assert kg.t_s("A man") == {
        ("t", "a guitar"),
        ("t", "the street"),
        ("c", "instrument"),
        ("c", "place"),
    }
    # T_p: same type, sharing a soft neighbour: "two women" shares type instrument, "a child"
    # shares type place
    assert kg.t_p("A man", "person") == {"a man", "two women", "a child"}
    assert kg.t_p("a violin", "instrument") == {"a violin", "a guitar"}  # shares ("c", "person")
    assert kg.candidates("the park", "place") == {"the park", "the street"}
    assert kg.summary()["nodes"] == 7


def test_kg_replacement_is_seeded_and_never_the_original():
    kg = EntityKG.from_sentences([S1, S2, S3])
    picks = {kg.replacement("A man", "person", random.Random(s)) for s in range(30)}
    assert picks == {"Two women", "A child"}
    assert kg.replacement("A man", "person", random.Random(7)) == kg.replacement(
        "A man", "person", random.Random(7)
    )
    assert kg.replacement("a unicorn", "myth", random.Random(0)) is None
    lone = EntityKG.from_sentences([[Node("a cat", "animal")], [Node("a car", "vehicle")]])
    assert lone.replacement("a cat", "animal", random.Random(0)) is None


ANCHORS = ["a0", "a1", "a2", "a3"]
CANDS = [["p0", "n0", "m0"], ["x1", "y1"], ["q2", "r2", "s2"], ["z3"]]
SIMS = [
    [0.95, 0.60, 0.80],  # positive p0 (>= 0.9), negative n0 (<= 0.75), m0 neither
    [0.85, 0.76],  # no positive (0.85 < 0.9), no negative (0.76 > 0.75): both fall back
    [0.75, 0.91, 0.92],  # negative q2 (exactly beta), positive r2 (first >= 0.9)
    [0.90],  # positive z3 (exactly alpha); negative falls back
]


def test_denoise_paper_eq_10_11():
    out = denoise(ANCHORS, CANDS, SIMS, alpha=0.9, beta=0.75, seed=3)
    assert [(t.positive, t.positive_from) for t in out] == [
        ("p0", "candidate 0"),
        ("a1", "anchor"),
        ("r2", "candidate 1"),
        ("z3", "candidate 0"),
    ]
    assert (out[0].negative, out[2].negative) == ("n0", "q2")
    for i in (1, 3):  # in-batch fallback: another anchor, never itself
        assert out[i].negative_from.startswith("in-batch")
        assert out[i].negative in ANCHORS and out[i].negative != ANCHORS[i]
    assert [t.anchor for t in out] == ANCHORS
    # the fallback draw covers every other anchor and is seeded
    seen = {denoise(ANCHORS, CANDS, SIMS, seed=s)[1].negative for s in range(40)}
    assert seen == {"a0", "a2", "a3"}
    rnd = denoise(ANCHORS, CANDS, SIMS, seed=1, choice="random")
    assert rnd[2].positive in {"r2", "s2"}


def test_denoise_released_rule():
    anchors = [f"a{i}" for i in range(12)]  # the offset-6 rule needs 12 (released: KeyError)
    cands = [["p", "n"]] + [["c"]] * 11
    sims = [[0.85, 0.75]] + [[0.5]] * 11  # 0.85 >= 0.80 positive; 0.75 is not < 0.75
    out = denoise_released(anchors, cands, sims)
    first = [t for t in out if t.negative_from == "offset 6" and t.anchor in ("a0", "n")]
    assert first[0].positive == "p" and first[0].negative == "a6"
    assert first[1].anchor == first[1].positive == "n"  # unused candidate: extra self-pair row
    last = next(t for t in out if t.anchor == "a11")
    assert last.negative == "c" and last.positive == "a11"
    # fewer than 12 anchors (released: KeyError): wraps around, never the anchor itself
    small = denoise_released(anchors[:8], [["c"]] * 8, [[0.78]] * 8)  # neither role: offsets
    rows = [t for t in small if t.anchor in anchors[:8]]
    # by hand: i + 6 for i < 2, i - 6 for i >= 6, else (i + 6) % 8
    assert [t.negative_from for t in rows] == [f"offset {k}" for k in (6, 7, 0, 1, 2, 3, 0, 1)]
    two = denoise_released(["x", "y"], [["c"], ["d"]], [[0.9], [0.9]])
    assert [(t.anchor, t.negative) for t in two] == [("x", "y"), ("y", "x")]
    with pytest.raises(ValueError, match="at least 2 anchors"):
        denoise_released(["x"], [["c"]], [[0.9]])


def test_denoise_errors():
    with pytest.raises(ValueError, match="source 1: 2 candidates but 1 similarities"):
        denoise(["a", "b"], [["x"], ["y", "z"]], [[0.1], [0.2]])
    with pytest.raises(ValueError, match="alpha"):
        denoise(ANCHORS, CANDS, SIMS, alpha=0.7, beta=0.75)
    with pytest.raises(ValueError, match="at least 2 anchors"):
        denoise(["a"], [["x"]], [[0.8]])


def test_candidate_order_roles_first_or_listed():
    """A context-like positive-prompt candidate listed first and far from its anchor (0.50)
    beside a negative-prompt candidate (0.60): by roles the negative-prompt one is the hard
    negative; only in listed order (released) does the positive-prompt one take it by order.
    The positive-prompt candidate is the negative by roles only when no negative-prompt one
    qualifies (source 1: 0.80 is not <= 0.75)."""
    anchors = ["a0", "a1"]
    cands = [["ctx0", "neg0"], ["ctx1", "neg1"]]
    roles = [["positive", "negative"], ["positive", "negative"]]
    sims = [[0.50, 0.60], [0.50, 0.80]]
    by_roles = denoise(anchors, cands, sims, 0.9, 0.75, roles=roles)
    assert [(t.negative, t.negative_from) for t in by_roles] == [
        ("neg0", "candidate 1"),
        ("ctx1", "candidate 0"),
    ]
    listed = denoise(anchors, cands, sims, 0.9, 0.75, roles=roles, order="listed")
    assert listed[0].negative == "ctx0"
    assert denoise(anchors, cands, sims, 0.9, 0.75)[0].negative == "ctx0"  # no roles: listed
    # the positive: a negative-prompt candidate listed first that scores >= alpha waits for a
    # positive-prompt one that also qualifies
    up = denoise(
        ["a", "b"], [["n", "p"], []], [[0.95, 0.92], []], roles=[["negative", "positive"], []]
    )
    assert (up[0].positive, up[0].positive_from) == ("p", "candidate 1")
    # the released rule, same order; the unused candidate becomes a self-pair row
    many = [f"a{i}" for i in range(12)]
    rcands = [["ctx", "neg"]] + [["c"]] * 11
    rroles = [["positive", "negative"]] + [["negative"]] * 11
    rsims = [[0.50, 0.60]] + [[0.5]] * 11
    rel = denoise_released(many, rcands, rsims, roles=rroles)
    assert (rel[0].positive, rel[0].negative) == ("a0", "neg")
    assert (rel[1].anchor, rel[1].positive, rel[1].negative) == ("ctx", "ctx", "neg")
    rel = denoise_released(many, rcands, rsims, roles=rroles, order="listed")
    assert rel[0].negative == "ctx" and rel[1].anchor == "neg"
    with pytest.raises(ValueError, match="one role per candidate"):
        denoise(anchors, cands, sims, roles=[["positive"], ["positive", "negative"]])
