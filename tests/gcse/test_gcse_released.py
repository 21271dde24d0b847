"""The released pipeline's data (7_generate_samples.py and steps 2, 4, 8), its bugs fixed by
default and reproduced by name, on hand-built knowledge and completions."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator, Sequence

import pytest

from negcse.gcse.denoise import candidate_roles, denoising_inputs
from negcse.gcse.kg import EntityKG, Knowledge, Node
from negcse.gcse.pipeline import run_pipeline
from negcse.gcse.prompts import load_prompts
from negcse.gcse.released import augment_anchor, check_bugs
from negcse.gcse.synthesis import plan_synthesis
from negcse.llm.backend import GenerationSettings
from negcse.llm.cache import CachedLLM

PROMPTS = load_prompts()
SENTS = ["A man plays a guitar on the street.", "Two women play a violin in a hall.", "Hm."]
KNOW = [
    Knowledge(
        cls=("music",),
        subjects=(Node("A man", "person", 1),),
        actions=("plays a guitar",),
        states=("on the street",),
        entities=(Node("a guitar", "instrument"), Node("the street", "place")),
    ),
    Knowledge(
        cls=("music",),
        subjects=(Node("Two women", "person", 2),),
        actions=("play a violin",),
        states=("in a hall",),
        entities=(Node("a violin", "instrument"),),
    ),
    Knowledge(),
]
# released: the entity KG holds the entity extraction's nodes only (steps 1 and 3)
KG = EntityKG.from_sentences(k.entities for k in KNOW)
MAIN_PARTS = {"A man", "plays a guitar", "on the street"}
ENTITIES = {"a guitar", "the street"}


def _plan(bugs: frozenset[str] = frozenset(), n: int = 400):
    return plan_synthesis(
        SENTS, KNOW, KG, PROMPTS, "released", n, n, seed=2, released_bugs=bugs
    ).requests


def _pairs(requests, prompt: str, source: int) -> list[tuple[str, str]]:
    return [
        (q.detail["ori_entities"].strip('"'), q.detail["replace_entities"].strip('"'))
        for q in requests
        if q.prompt == prompt and q.source == source
    ]


def test_released_shares_and_the_main_part_entity_split():
    requests = _plan()
    pos = Counter(PROMPTS[q.prompt].kind for q in requests if q.role == "positive")
    neg = Counter(PROMPTS[q.prompt].kind for q in requests if q.role == "negative")
    n = 3 * 400  # draws per role; binomial sd of a 0.7 share over 1200 draws is 0.013
    assert 0.66 < pos["rewrite"] / n < 0.74 and pos["entity_revision"] == n - pos["rewrite"]
    assert 0.66 < neg["antisense"] / n < 0.74
    assert 0.12 < neg["entity_revision"] / n < 0.18 and 0.12 < neg["quantity_revision"] / n < 0.18
    # source 0's revisions start from a main part (its first subject / action / state) or one
    # of its entities, half each (released: randint(1, 10) <= 5)
    origins = [o for o, _ in _pairs(requests, "entity_revision_related", 0)]
    origins += [o for o, _ in _pairs(requests, "entity_revision_released", 0)]
    assert set(origins) == MAIN_PARTS | ENTITIES
    share = sum(o in MAIN_PARTS for o in origins) / len(origins)
    assert 0.4 < share < 0.6, share
    # a sentence without knowledge revises "A man" (both branches' released fallback)
    assert {o for o, _ in _pairs(requests, "entity_revision_related", 2)} == {"A man"}
    subjects = {q.detail["subject_text"] for q in requests if q.prompt.startswith("quantity")}
    assert subjects == {"A man", "Two women"}  # source 2 has no subject: "A man"


def test_positive_revisions_take_a_related_replacement_unless_the_identity_bug():
    related = dict(_pairs(_plan(), "entity_revision_related", 0))
    # by hand: the other subject / action / state of the same theme (music); the other
    # instrument; "the street" is the only place, so it stays itself
    assert related == {
        "A man": "Two women",
        "plays a guitar": "play a violin",
        "on the street": "in a hall",
        "a guitar": "a violin",
        "the street": "the street",
    }
    identity = _pairs(_plan(check_bugs(["identity_revision"])), "entity_revision_related", 0)
    assert identity and all(o == r for o, r in identity)


def test_negative_revisions_draw_the_same_kind_or_type_original_included():
    drawn: dict[str, set[str]] = {}
    for o, r in _pairs(_plan(), "entity_revision_released", 0):
        drawn.setdefault(o, set()).add(r)
    assert drawn == {
        "A man": {"A man", "Two women"},
        "plays a guitar": {"plays a guitar", "play a violin"},
        "on the street": {"on the street", "in a hall"},
        "a guitar": {"a guitar", "a violin"},
        "the street": {"the street"},
    }


def test_unknown_bug_is_named():
    with pytest.raises(ValueError, match=r"unknown released bug\(s\) \['sujet'\]"):
        check_bugs(["sujet"])


# --- the pipeline on hand-built completions ---------------------------------------------

MAIN_SUJECT = (
    '{cls: \'music\', suject: [{text: "A man", type: "person", quantity: 1}], '
    'action: [{text: "plays a guitar"}], state: [{text: "on the street"}]}'
)
MAIN_SUBJECT = (
    '{"cls": ["music"], "subject": [{"text": "Two women", "type": "person", "quantity": 2}], '
    '"action": [{"text": "play a violin"}], "state": []}'
)


class Stub:
    """A backend answering by prompt: hand-built extractions, and for every synthesis prompt
    an answer without a text: a JSON object (source 0) or two lines of prose (source 1)."""

    name = "stub"

    def identity(self) -> dict[str, str]:
        return {"model": "stub"}

    def answer(self, prompt: str) -> str:
        if "subject part" in prompt:
            return MAIN_SUJECT if "guitar" in prompt else MAIN_SUBJECT
        if "extract entities" in prompt:
            return '[{"entity": "a guitar", "type": "instrument"}]' if "guitar" in prompt else "[]"
        return '{"answer": 1}' if "guitar" in prompt else "I cannot\nhelp with that."

    def stream(
        self, prompts: Sequence[str], settings: GenerationSettings
    ) -> Iterator[tuple[int, str]]:
        yield from enumerate(self.answer(p) for p in prompts)


def _run(*bugs: str):
    return run_pipeline(
        SENTS[:2], CachedLLM(Stub(), None), PROMPTS, "released", released_bugs=check_bugs(bugs)
    )


def test_suject_key_is_read_as_subject_unless_the_bug():
    fixed = _run()
    assert [s.text for s in fixed.sources[0].knowledge.subjects] == ["A man"]
    assert [s.text for s in fixed.sources[1].knowledge.subjects] == ["Two women"]
    # released step 4 reads "subject" only: the completion that copied the prompt's "suject"
    # has no subject but keeps its action and state
    buggy = _run("subject_key").sources[0].knowledge
    assert buggy.subjects == () and buggy.actions == ("plays a guitar",)
    assert buggy.states == ("on the street",)
    assert [s.text for s in _run("subject_key").sources[1].knowledge.subjects] == ["Two women"]


def test_unparseable_completions_fall_back_unless_kept():
    fixed = _run()
    for source, other in zip(fixed.sources, (1, 0), strict=True):
        pos, neg = source.candidates
        assert (pos.role, pos.status, pos.fallback, pos.text) == (
            "positive",
            "failed",
            "anchor",
            SENTS[source.index],
        )
        assert (neg.role, neg.fallback, neg.text) == ("negative", f"in-batch {other}", SENTS[other])
    assert denoising_inputs([s.to_json() for s in fixed.sources])[1] == [[], []]
    kept = _run("keep_unparsed")
    # released step 8: str() of json_repair's value: the dict as Python prints it, prose ""
    want = {0: "{'answer': 1}", 1: ""}
    for source in kept.sources:
        assert [(c.role, c.status, c.fallback, c.text) for c in source.candidates] == [
            (role, "failed", "kept", want[source.index]) for role in ("positive", "negative")
        ]
    rows = [s.to_json() for s in kept.sources]
    anchors, candidates = denoising_inputs(rows)  # kept candidates, empty ones too, are scored
    assert anchors == SENTS[:2] and candidates == [[want[0]] * 2, [want[1]] * 2]
    assert candidate_roles(rows) == [["positive", "negative"]] * 2


class Draws(random.Random):
    """``randrange`` and ``sample`` answers fixed by hand (released get_enhance_feature)."""

    def __init__(self, k: int, picks: list[int]) -> None:
        super().__init__(0)
        self.k, self.picks = k, picks
        self.calls: list[tuple[object, ...]] = []

    def randrange(self, stop: int) -> int:  # type: ignore[override]
        self.calls.append(("randrange", stop))
        return self.k

    def sample(self, population, k: int) -> list[int]:  # type: ignore[override]
        self.calls.append(("sample", len(population), k))
        return self.picks[:k]


def test_anchor_augmentation_as_released():
    # 7 words: randrange(min(10, 7, max(2, int(0.35)))) = randrange(2); k = 1 of the first 6
    rng = Draws(1, [2])
    assert augment_anchor("A man is playing a guitar .", rng) == "A man is is playing a guitar ."
    assert rng.calls == [("randrange", 2), ("sample", 6, 1)]
    # 60 words: randrange(min(10, 60, max(2, 3))) = randrange(3); picks sorted, each doubled
    words = [f"w{i}" for i in range(60)]
    rng = Draws(2, [9, 0])
    out = augment_anchor(" ".join(words), rng).split(" ")
    assert rng.calls[0] == ("randrange", 3) and len(out) == 62
    assert out[:3] == ["w0", "w0", "w1"] and out[10:13] == ["w9", "w9", "w10"]
    # one word: randrange(1) = 0, unchanged; the real draw is seeded
    assert augment_anchor("Hello", random.Random(0)) == "Hello"
    seeded = {augment_anchor("a b c d", random.Random(s)) for s in range(30)}
    assert seeded == {"a b c d", "a a b c d", "a b b c d", "a b c c d"}


class Recorder(Stub):
    """The stub's answers; records each call's prompt kinds and sampling."""

    def __init__(self) -> None:
        self.calls: list[tuple[bool, bool]] = []  # (an extraction call, do_sample)

    def stream(
        self, prompts: Sequence[str], settings: GenerationSettings
    ) -> Iterator[tuple[int, str]]:
        self.calls.append(("xtract" in prompts[0], settings.do_sample))
        yield from super().stream(prompts, settings)


@pytest.mark.parametrize("bug", [False, True])
def test_extraction_is_greedy_unless_sampled_as_vllm_ran_it(tmp_path, monkeypatch, bug):
    import negcse.commands.gcse_synthesize as command
    from negcse.cli import main

    recorder = Recorder()
    monkeypatch.setattr(command, "make_backend", lambda args: recorder)
    (tmp_path / "src.txt").write_text("\n".join(SENTS[:2]) + "\n")
    args = ["gcse-synthesize", "--input", str(tmp_path / "src.txt")]
    args += ["--output", str(tmp_path / "c.jsonl"), "--report", str(tmp_path / "r.json")]
    assert main(args + (["--released-bug", "sampled_extraction"] if bug else [])) == 0
    # two extraction calls (main parts, entities), then one synthesis call, always sampled
    assert recorder.calls == [(True, bug), (True, bug), (False, True)]
