"""Extension sentences (Rewriting Prompt 4, released steps 5-6): masked templates built by
hand from scripted draws, step 6's clean-up, and the pipeline appending them as sources."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence

from negcse.gcse.denoise import denoising_inputs
from negcse.gcse.extension import extension_sentence, masked_template
from negcse.gcse.kg import EntityKG, Knowledge, MainPartKG, Node
from negcse.gcse.pipeline import run_pipeline
from negcse.gcse.prompts import load_prompts
from negcse.llm.backend import GenerationSettings
from negcse.llm.cache import CachedLLM

MAN = Knowledge(
    cls=("music",),
    subjects=(Node("A man", "person", 1),),
    actions=("plays a guitar",),
    states=("on the street",),
    entities=(Node("a guitar", "instrument"), Node("the street", "place")),
)
WOMEN = Knowledge(
    cls=("music",),
    subjects=(Node("Two women", "person", 2),),
    actions=("play a violin",),
    states=("in a hall",),
    entities=(Node("a violin", "instrument"),),
)
PARTS = MainPartKG.from_knowledge([MAN, WOMEN])
KG = EntityKG.from_sentences([MAN.entities, WOMEN.entities])


class Scripted(random.Random):
    """Draws fixed by hand: ``random()`` gives ``mode`` (< 0.7: main parts), ``choice`` the
    last item, ``randint(0, 10)`` ``mask`` (> 7 masks a word), ``randint(0, 100)`` ``suffix``."""

    def __init__(self, mode: float, mask: int = 0, suffix: int = 0) -> None:
        super().__init__(0)
        self.mode, self.mask, self.suffix = mode, mask, suffix

    def random(self) -> float:
        return self.mode

    def choice(self, seq):
        return seq[-1]

    def randint(self, a: int, b: int) -> int:
        return self.mask if b == 10 else self.suffix


def test_main_part_template():
    # subject, action and state become the theme's last-drawn parts; every other word is []
    sentence = "Yesterday a man plays a guitar on the street loudly."
    assert (
        masked_template(sentence, MAN, PARTS, KG, Scripted(0.1))
        == "[] Two women play a violin in a hall []"
    )
    # an unknown theme falls back to "news", which has no parts: the subject keeps itself with
    # its words masked (3/11 each; here all), the action and state keep themselves
    sport = Knowledge(cls=("sport",), subjects=MAN.subjects, actions=MAN.actions, states=MAN.states)
    template = masked_template(
        "A man plays a guitar on the street.", sport, PARTS, KG, Scripted(0.1, mask=8)
    )
    assert template == "[] [] plays a guitar on the street."
    kept = masked_template(
        "A man plays a guitar on the street.", sport, PARTS, KG, Scripted(0.1, mask=7)
    )
    assert kept == "A man plays a guitar on the street."


def test_entity_template_and_suffix():
    # up to 4 entities, each a same-type entity (sorted, the last: "a violin"; "the street" is
    # the only place); the rest masked; 97 >= 95 appends 97 % 5 = 2 more [] after a space
    template = masked_template(
        "A man plays a guitar on the street.", MAN, PARTS, KG, Scripted(0.9, suffix=97)
    )
    assert template == "[] [] [] a violin [] the street. [] []"
    # no entity: main-part mode whatever the draw; 100 % 5 = 0 appends nothing
    none = Knowledge(cls=("music",), subjects=MAN.subjects)
    assert masked_template("A man sings.", none, PARTS, KG, Scripted(0.9, suffix=100)) == (
        "Two women []"
    )


def test_step6_cleanup():
    assert extension_sentence("Two [women] play\n  a violin.") == "Two women play a violin."
    assert extension_sentence("[] []") == ""


def _polish(template: str) -> str:
    return json.dumps({"ori": template, "polish": template.replace("[]", "[new]")})


class Stub:
    """Hand-built answers: extraction of known sentences, a fill-in that puts "new" in every
    [], and a rewrite for every synthesis prompt."""

    name = "stub"

    def identity(self) -> dict[str, str]:
        return {"model": "stub"}

    def answer(self, prompt: str) -> str:
        if "subject part" in prompt:
            return '{"cls": ["music"], "subject": [{"text": "A man", "type": "person"}]}'
        if "extract entities" in prompt:
            return "[]"
        if "Fill in the bracketed" in prompt:
            template = prompt.split("**Input**: ")[1].split("\n")[0]
            return _polish(template)
        return json.dumps({"text": "A rewrite."})

    def stream(
        self, prompts: Sequence[str], settings: GenerationSettings
    ) -> Iterator[tuple[int, str]]:
        yield from enumerate(self.answer(p) for p in prompts)


def test_pipeline_appends_extension_sources_with_their_own_candidates():
    sents = ["A man sings a song.", "", "A man runs home."]
    prompts = load_prompts()
    result = run_pipeline(
        sents, CachedLLM(Stub(), None), prompts, "released", seed=4, extension=True
    )
    ext = result.sources[3:]
    assert [(r.index, r.extension_of) for r in ext] == [(3, 0), (4, 2)]  # the empty line: none
    for r in ext:
        # every word but the subject masked; "A man" is the music theme's only subject
        assert r.template == "A man [] [] []"
        assert r.anchor == "A man new new new"
        assert [s.text for s in r.knowledge.subjects] == ["A man"]  # extracted again
        assert [c.role for c in r.candidates] == ["positive", "negative"]
    assert result.report.as_dict()["fill_in_released"]["parsed"] == 2
    anchors, _ = denoising_inputs([r.to_json() for r in result.sources])
    assert anchors == [sents[0], sents[2], "A man new new new", "A man new new new"]
    assert result.sources[3].to_json()["extension_of"] == 0
    plain = run_pipeline(sents, CachedLLM(Stub(), None), prompts, "released", seed=4)
    assert len(plain.sources) == 3
    assert [c.text for c in plain.sources[0].candidates] == [
        c.text for c in result.sources[0].candidates
    ]


class HalfStub(Stub):
    """As Stub, but a fill-in of a template with exactly two [] gets prose without JSON."""

    def answer(self, prompt: str) -> str:
        if "Fill in the bracketed" in prompt and "A man [] []\n" in prompt:
            return "I would fill\nthese in gladly."
        return super().answer(prompt)


def test_an_unparseable_fill_in_gives_no_extension_sentence():
    sents = ["A man sings a song.", "A man runs home."]  # templates "A man [] [] []", "A man [] []"
    result = run_pipeline(
        sents, CachedLLM(HalfStub(), None), load_prompts(), "released", seed=4, extension=True
    )
    assert [(r.index, r.extension_of, r.anchor) for r in result.sources[2:]] == [
        (2, 0, "A man new new new")
    ]
    assert result.report.as_dict()["fill_in_released"] == {"parsed": 1, "repaired": 0, "failed": 1}


def test_released_step5_quirks_switch():
    """Bug 9 (``extension_quirks``): released ``valid_main_part`` rejects a first part whose
    lower-cased text is a substring of "replace_subject" / "replace_action" / "replace_state"
    (here the state "state"), and the extra [] are appended without a space."""
    know = Knowledge(cls=("music",), subjects=MAN.subjects, actions=MAN.actions, states=("State",))
    sentence = "A man plays a guitar in State."
    # fixed: the state is replaced by the theme's last state ("in a hall"), "in" masked;
    # 97 >= 95 appends 97 % 5 = 2 more [] after a space
    fixed = masked_template(sentence, know, PARTS, KG, Scripted(0.1, suffix=97))
    assert fixed == "Two women play a violin [] in a hall. [] []"
    # released: "state" is in "replace_state", so it is masked like any other word; the extra
    # [] are glued on
    quirky = masked_template(sentence, know, PARTS, KG, Scripted(0.1, suffix=97), quirks=True)
    assert quirky == "Two women play a violin [] [][] []"
