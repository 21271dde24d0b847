"""Tolerant parsing of LLM completions (repair of the paper's non-JSON example)."""

from __future__ import annotations

from negcse.gcse.kg import knowledge_from_json
from negcse.gcse.prompts import load_prompts
from negcse.llm.parsing import ParseReport, Status, parse_completion

# The paper's Figure 8 example output, as a small model copies it: unquoted keys, single quotes
PAPER_EXAMPLE = """Output:
```
{
  cls: 'leisure activity',
  subject: [{text: "A man", type: "person", quantity: 1}],
  action: [{text: "playing with a black dog"}],
  state: [{text: "on a white blanket"}],
  entities: [
    {"entity": "a man on skis", "type": "person"},
    {"entity": "a man", "type": "person"}
  ]
}
```"""


def test_paper_example_is_repaired_and_read_as_knowledge():
    r = parse_completion(PAPER_EXAMPLE, ["subject", "entities"])
    assert r.status is Status.REPAIRED
    k = knowledge_from_json(r.value)
    assert k.cls == ("leisure activity",)
    assert [(n.text, n.type, n.quantity) for n in k.subjects] == [("A man", "person", 1)]
    assert k.actions == ("playing with a black dog",) and k.states == ("on a white blanket",)
    assert [n.text for n in k.entities] == ["a man on skis", "a man"]
    # "A man" (subject) and "a man" (entity) are one node
    assert [n.text for n in k.nodes()] == ["A man", "a man on skis"]


def test_released_misspelled_key_missing_comma():
    text = (
        '{cls: \'sports\', suject: [{text: "Two dogs", type: "animal", quantity: 2}]\n action: []}'
    )
    assert parse_completion(text, ["subject"]).status is Status.FAILED  # no alias: released bug 1
    r = parse_completion(text, ["subject"], aliases={"suject": "subject"})
    assert r.status is Status.REPAIRED and r.value is not None
    assert knowledge_from_json(r.value).subjects[0].quantity == 2
    # the released reader looks for the misspelling itself
    assert knowledge_from_json(r.value, subject_key="suject").subjects == ()


def test_strict_json_plain_text_and_failures():
    assert (
        parse_completion('Sure! {"text": "A man plays."}', ["text"], text_field="text").status
        is Status.PARSED
    )
    plain = parse_completion('"A man strums a guitar outside."', ["text"], text_field="text")
    assert plain.status is Status.REPAIRED and plain.value == {
        "text": "A man strums a guitar outside."
    }
    assert parse_completion('{"text": ""}', ["text"], text_field="text").status is Status.FAILED
    assert parse_completion("", ["text"], text_field="text").status is Status.FAILED
    assert (
        parse_completion("line one\nline two", ["text"], text_field="text").status is Status.FAILED
    )
    # cut off at the token limit: json_repair closes it
    cut = parse_completion(
        'Output: {"text": "Two dogs race across the snow', ["text"], text_field="text"
    )
    assert cut.status is Status.REPAIRED and cut.value == {"text": "Two dogs race across the snow"}
    lst = parse_completion('[{"entity": "a dog", "type": "animal"},]', [], as_list=True)
    assert lst.status is Status.REPAIRED and lst.value == {
        "items": [{"entity": "a dog", "type": "animal"}]
    }


def test_report_counts_per_prompt():
    rep = ParseReport()
    for s in (Status.PARSED, Status.REPAIRED, Status.FAILED, Status.FAILED):
        rep.add("summarize", s)
    rep.add("extract", Status.PARSED)
    assert rep.as_dict() == {
        "extract": {"parsed": 1, "repaired": 0, "failed": 0},
        "summarize": {"parsed": 1, "repaired": 1, "failed": 2},
    }
    assert rep.totals() == {"parsed": 2, "repaired": 1, "failed": 2}


def test_prompts_file_sources_and_rendering():
    prompts = load_prompts()
    assert all(p.source for p in prompts.values())
    text = prompts["entity_revision"].render(
        input_text="A man runs.", ori_entities='"A man"', replace_entities='"A woman"'
    )
    assert 'Replace the phrase "A man" with "A woman"' in text and '{"text": ""}' in text
    assert "suject" in prompts["extract_main_parts"].template  # released file as it is
    assert "subject" in prompts["extract"].template and "suject" not in prompts["extract"].template
    released_pos = [p for p in prompts.values() if p.role == "positive" and "released" in p.modes]
    assert round(sum(p.weight for p in released_pos)) == 100  # 70 rewriting + 30 revision
