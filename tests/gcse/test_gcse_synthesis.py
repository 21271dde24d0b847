"""Synthesis planning: prompt draws, KG replacements, fallbacks, released mode, seeding."""

from __future__ import annotations

from collections import Counter

from negcse.gcse.kg import EntityKG, Knowledge, Node
from negcse.gcse.prompts import load_prompts
from negcse.gcse.synthesis import plan_synthesis

PROMPTS = load_prompts()
SENTS = ["A man plays a guitar.", "Two women play a violin.", "Nothing here."]
KNOW = [
    Knowledge(subjects=(Node("A man", "person", 1),), entities=(Node("a guitar", "instrument"),)),
    Knowledge(
        subjects=(Node("Two women", "person", 2),), entities=(Node("a violin", "instrument"),)
    ),
    Knowledge(),
]
KG = EntityKG.from_sentences(k.nodes() for k in KNOW)


def _plan(mode="paper", **kw):
    return plan_synthesis(SENTS, KNOW, KG, PROMPTS, mode, seed=5, **kw)


def test_paper_mode_draws_and_revisions():
    plan = _plan(positives=20, negatives=200)
    by = Counter((q.source, q.role) for q in plan.requests)
    assert by == {
        (0, "positive"): 20,
        (0, "negative"): 200,
        (1, "positive"): 20,
        (1, "negative"): 200,
        (2, "positive"): 20,
        (2, "negative"): 200,
    }
    pos = {q.prompt for q in plan.requests if q.role == "positive"}
    assert pos == {"rewrite_role", "summarize", "context"}
    for q in plan.requests:
        assert q.text.endswith("**Output**:") and SENTS[q.source] in q.text
        if q.prompt == "entity_revision":  # a KG replacement of the same type, never itself
            pair = (q.detail["ori_entities"], q.detail["replace_entities"])
            assert pair in {
                ('"A man"', '"Two women"'),
                ('"a guitar"', '"a violin"'),
                ('"Two women"', '"A man"'),
                ('"a violin"', '"a guitar"'),
            }
            assert q.source != 2
        if q.prompt == "quantity_revision":
            assert q.detail["subject_text"] == ["A man", "Two women"][q.source]
            assert int(q.detail["new_number"]) != [1, 2][q.source]
    # source 2 has no knowledge: its revision draws became antisense prompts, and were counted
    s2 = Counter(q.prompt for q in plan.requests if q.source == 2 and q.role == "negative")
    assert set(s2) == {"antisense_tone", "antisense_negate"}
    assert sum(plan.notes.values()) >= 30  # about 30% of 200 draws
    # released proportions among the first two sources' negatives: 70 / 15 / 15
    neg = Counter(
        PROMPTS[q.prompt].kind for q in plan.requests if q.role == "negative" and q.source < 2
    )
    assert (
        0.6 < neg["antisense"] / 400 < 0.8
        and neg["entity_revision"] > 30
        and neg["quantity_revision"] > 30
    )


def test_seeded_per_source():
    a = _plan()
    b = plan_synthesis(SENTS[:2], KNOW[:2], KG, PROMPTS, "paper", seed=5)
    assert [q.text for q in a.requests if q.source < 2] == [q.text for q in b.requests]
    c = plan_synthesis(SENTS, KNOW, KG, PROMPTS, "paper", seed=6, positives=5, negatives=5)
    d = _plan(positives=5, negatives=5)
    assert [q.text for q in c.requests] != [q.text for q in d.requests]
    skipped = _plan(skip=[False, True, False])
    assert {q.source for q in skipped.requests} == {0, 2}


def test_released_mode_neighbour_function():
    """(tests/gcse/test_gcse_released.py covers the released draws.) A ``neighbour`` function
    gives the positive revisions' replacement; released mode never swaps a prompt."""
    plan = _plan("released", positives=50, negatives=50)
    names = {q.prompt for q in plan.requests}
    assert {"rewrite_released_1", "entity_revision_related", "antisense_released_7"} <= names
    assert not plan.notes
    near = _plan("released", positives=50, neighbour=lambda node, main: node.text.upper())
    rel = [q for q in near.requests if q.prompt == "entity_revision_related" and q.source == 0]
    assert rel and all(
        q.detail["replace_entities"] == q.detail["ori_entities"].upper() for q in rel
    )
