"""Related replacements: the released KG's frozen-encoder neighbours (steps 3-4, step 7's
``get_related``) and paper mode's T_p preference (eq. 5-8), on hand-built graphs and vectors."""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
import pytest

from negcse.gcse.kg import EntityKG, Knowledge, Node, knowledge_from_json
from negcse.gcse.neighbours import EncoderNeighbours, last_neighbours, queried
from negcse.gcse.prompts import load_prompts
from negcse.gcse.synthesis import plan_synthesis
from negcse.generators.specs.gcse import SPEC, models, synthesis_args, synthesis_id

PROMPTS = load_prompts()
# unnormalised vectors: inner products differ from cosines
VEC = {
    "a": (1.0, 0.0),
    "b": (2.0, 0.0),
    "c": (0.0, 1.0),
    "d": (1.0, 1.0),
}


def encode(texts: Sequence[str]) -> np.ndarray:
    return np.array([VEC[t] for t in texts], dtype=np.float32)


def test_last_neighbour_by_unnormalised_inner_product():
    texts = ["a", "b", "c", "d"]
    # dot products of a with a, b, c, d: 1, 2, 0, 1 -> ranks b, a, d, c (ties in pool order);
    # of b: 2, 4, 0, 2 -> b, a, d, c; of c: 0, 0, 1, 1 -> c, d, a, b; of d: 1, 2, 1, 2 ->
    # b, d, a, c
    assert last_neighbours(texts, encode(texts), 2) == {"a": "a", "b": "a", "c": "d", "d": "d"}
    assert last_neighbours(texts, encode(texts), 3) == {"a": "d", "b": "d", "c": "a", "d": "a"}
    # (by cosine, a's 2nd would be b: cos(a, a) = cos(a, b) = 1)
    # k above the pool size: the farthest text (released: documents[-1], the pool's last)
    assert last_neighbours(texts, encode(texts), 10) == {"a": "c", "b": "c", "c": "b", "d": "c"}
    with pytest.raises(ValueError, match="4 texts but 3 embeddings"):
        last_neighbours(texts, encode(texts[:3]), 2)


def test_released_batch_count_leaves_the_last_partial_batch_out():
    # n // 1024 + 1 if n % 1024 == 0 else n // 1024 batches of 1,024 queries
    assert [queried(n, True) for n in (5, 1023, 1024, 1025, 2047, 2048)] == [
        0,
        0,
        1024,
        1024,
        1024,
        2048,
    ]
    assert queried(1025, False) == 1025
    rng = np.random.default_rng(0)
    texts = [f"t{i}" for i in range(1030)]
    emb = rng.normal(size=(1030, 4)).astype(np.float32)
    dropped = last_neighbours(texts, emb, 10, dropped_batches=True)
    assert sorted(dropped, key=texts.index) == texts[:1024]
    full = last_neighbours(texts, emb, 10)
    assert len(full) == 1030 and all(dropped[t] == full[t] for t in dropped)
    # the 10th of t0 by hand: sort the inner products of t0, descending
    assert full["t0"] == texts[int(np.argsort(-(emb @ emb[0]), kind="stable")[9])]


def test_encoder_neighbours_pools_and_lookup():
    knowledge = [
        Knowledge(
            subjects=(Node("a", "person"),),
            actions=("b",),
            entities=(Node("a", "letter"), Node(" b ", "letter"), Node("c", "shape")),
        ),
        Knowledge(states=("c",), entities=(Node("d", "letter"), Node("a", "shape"))),
    ]
    nb = EncoderNeighbours.build(knowledge, encode)
    # entity pools: letter [a, b, d], shape [c, a]; k = 10 is above both, so the farthest:
    # letter: a -> a.a 1, a.b 2, a.d 1 -> d; b -> 2, 4, 2 -> d; d -> 1, 2, 2 -> a
    # shape: c -> c.c 1, c.a 0 -> a; a -> 0, 1 -> c (but "a" is first found under letter)
    assert nb.entities == {"a": "d", "b": "d", "d": "a", "c": "a"}
    # main parts: one pool across kinds [a, b, c] (first occurrence), k = 5 -> the farthest
    assert nb.main_parts == {"a": "c", "b": "c", "c": "b"}
    assert nb(Node("a", "letter"), False) == "d"
    assert nb(Node("a", "subject"), True) == "c"
    assert nb(Node("zz", "letter"), False) is None
    # bug 2: every pool here is under 1,024 nodes, so nothing has a neighbour
    assert EncoderNeighbours.build(knowledge, encode, dropped_batches=True).entities == {}


def test_released_lookup_first_type_and_unstripped_text():
    """Step 7's get_related: "x" is first held by "city" (1 node: under 1,024, no neighbours
    with the batch-count bug), then by "location" (1,024 nodes: one whole batch, queried).
    The released dict keeps "x" under "city", so the revision keeps "x"; the fixed lookup takes
    "location"'s neighbour. An entity written " x " is looked up as written: not in the KG."""
    others = [f"l{i}" for i in range(1023)]
    vec = {"x": (1.0, 0.0)} | {t: (0.0, 1.0 + i) for i, t in enumerate(others)}
    knowledge = [
        Knowledge(entities=(Node("x", "city"),)),
        Knowledge(entities=(Node("x", "location"), *(Node(t, "location") for t in others))),
    ]

    def enc(texts: Sequence[str]) -> np.ndarray:
        return np.array([vec[t] for t in texts], dtype=np.float32)

    # location's pool [x, l0..l1022]: x . x = 1, x . l = 0 -> x first, then l0..l8 in pool
    # order (ties), so the 10th is l8
    fixed = EncoderNeighbours.build(knowledge, enc, dropped_batches=True)
    assert fixed(Node("x", "city"), False) == "l8"
    released = EncoderNeighbours.build(knowledge, enc, dropped_batches=True, released_lookup=True)
    assert released(Node("x", "city"), False) is None  # the revision keeps "x"
    assert released(Node("x", "location"), False) is None  # the first type wins, not the node's
    assert released(Node("l0", "location"), False) == fixed(Node("l0", "location"), False)
    # unstripped: the KG holds "l0", the LLM wrote " l0 "
    spaced = Node("l0", "location", raw=" l0 ")
    assert released(spaced, False) is None and fixed(spaced, False) is not None
    # the raw text comes from the extraction as written
    (node,) = knowledge_from_json({}, [{"entity": " l0 ", "type": "location"}]).entities
    assert (node.text, node.raw) == ("l0", " l0 ") and node == Node("l0", "location")


def test_released_positive_revisions_take_the_encoder_neighbour():
    sents = ["a b", "c d"]
    knowledge = [
        Knowledge(subjects=(Node("a", "x"),), entities=(Node("a", "letter"),)),
        Knowledge(subjects=(Node("c", "x"),), entities=(Node("d", "letter"),)),
    ]
    kg = EntityKG.from_sentences(k.entities for k in knowledge)
    nb = EncoderNeighbours.build(knowledge, encode)
    # entities: letter [a, d]: a -> a.a 1, a.d 1 -> d (k = 10 > 2: the farthest in order);
    # d -> 1, 2 -> a; main parts [a, c]: a -> 1, 0 -> c; c -> 0, 1 -> a
    assert nb.entities == {"a": "d", "d": "a"} and nb.main_parts == {"a": "c", "c": "a"}
    plan = plan_synthesis(sents, knowledge, kg, PROMPTS, "released", 200, 0, 1, neighbour=nb)
    pairs = {
        (q.detail["ori_entities"].strip('"'), q.detail["replace_entities"].strip('"'))
        for q in plan.requests
        if q.prompt == "entity_revision_related"
    }
    # main parts of other kinds (action, state) are "A man", absent from the pool: kept
    assert pairs == {("a", "d"), ("a", "c"), ("d", "a"), ("c", "a"), ("A man", "A man")}


# paper mode, eq. 5-8: "A man" has T_r = {a man, a woman, a child} (type person) and
# T_p = {a man, a woman} ("a woman" shares the soft neighbour type instrument; "a child" not)
PAPER = [
    Knowledge(entities=(Node("A man", "person"), Node("a guitar", "instrument"))),
    Knowledge(entities=(Node("a woman", "person"), Node("a piano", "instrument"))),
    Knowledge(entities=(Node("a child", "person"), Node("a kite", "toy"))),
]


@pytest.mark.parametrize(("prefer", "want"), [(True, {"a woman"}), (False, {"a woman", "a child"})])
def test_paper_entity_revision_prefers_t_p(prefer: bool, want: set[str]):
    kg = EntityKG.from_sentences(k.entities for k in PAPER)
    assert kg.t_p("A man", "person") == {"a man", "a woman"}
    sents = ["A man plays a guitar.", "A woman plays a piano.", "A child flies a kite."]
    plan = plan_synthesis(sents, PAPER, kg, PROMPTS, "paper", 0, 300, 5, prefer_related=prefer)
    repl = {
        q.detail["replace_entities"].strip('"')
        for q in plan.requests
        if q.source == 0 and q.detail.get("ori_entities") == '"A man"'
    }
    assert repl == want
    picks = {kg.replacement("A man", "person", random.Random(s), prefer) for s in range(40)}
    assert picks == want


def test_settings_reach_ids_and_commands():
    base = dict(SPEC.defaults, model="m", max_sources=2)
    paper = dict(base, mode="paper")
    assert "--no-prefer-related" in synthesis_args(dict(paper, prefer_related=False))
    assert "prefer-related" not in synthesis_args(paper)
    assert synthesis_id(paper) != synthesis_id(dict(paper, prefer_related=False))
    # released mode reads neither prefer_related nor (null) neighbour_model: ids unchanged
    assert synthesis_id(base) == synthesis_id(dict(base, prefer_related=False))
    # no prompts ("w randomly"): nothing is revised, the id does not depend on either
    none = dict(paper, positives=0, negatives=0)
    assert synthesis_id(none) == synthesis_id(dict(none, prefer_related=False))
    enc = dict(base, neighbour_model="bert-base-uncased")
    assert "--neighbour-model bert-base-uncased" in synthesis_args(enc)
    assert synthesis_id(enc) != synthesis_id(base)
    assert "bert-base-uncased" in models(enc)
    assert "--neighbour-model" not in synthesis_args(dict(enc, mode="paper"))


def test_mean_pooling_encoder_is_the_masked_mean(splade_tiny):
    """The released loader's pooling on a plain model, as gcse-synthesize builds it: the mean of
    the last hidden states over the real tokens, so a text's vector does not depend on the
    padding its batch needs."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from negcse.evaluation.embedder import Embedder

    encode = Embedder.load(str(splade_tiny), "mean", device=torch.device("cpu")).encode
    texts = ["a man", "a man plays a loud guitar on the street"]
    got = encode(texts)
    tok = AutoTokenizer.from_pretrained(splade_tiny)
    model = AutoModel.from_pretrained(splade_tiny).eval()
    with torch.no_grad():
        alone = model(**tok(texts[0], return_tensors="pt")).last_hidden_state[0].mean(0)
    np.testing.assert_allclose(got[0], alone.numpy(), atol=1e-5)
    assert got.shape == (2, model.config.hidden_size)


def test_missing_neighbour_model_is_one_error(tmp_path, caplog):
    from negcse.cli import main

    (tmp_path / "src.txt").write_text("A man plays.\nA dog runs.\n")
    out = tmp_path / "out.jsonl"
    args = ["gcse-synthesize", "--input", str(tmp_path / "src.txt"), "--output", str(out)]
    args += ["--report", str(tmp_path / "r.json"), "--backend", "openai"]
    args += ["--base-url", "http://127.0.0.1:9/v1", "--api-key-env", ""]
    assert main([*args, "--neighbour-model", str(tmp_path / "no" / "model")]) == 2
    assert "does not exist" in caplog.text and not out.exists()
