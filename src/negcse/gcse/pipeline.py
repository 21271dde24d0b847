"""Extraction -> knowledge graph -> extension sentences (optional) -> synthesis -> parsing,
over one list of source sentences.

Every LLM call goes through :class:`~negcse.llm.cache.CachedLLM`, which keeps only completions
that parse for their prompt. A completion that does not parse, even after repair, takes the
paper's fallback (eq. 10-11): the anchor itself for a positive, a seeded random other source
sentence for a negative; it never stops the run. With the released bug ``keep_unparsed``
(negcse.gcse.released) such a completion, or an empty one, stays a candidate instead
(``fallback`` "kept"), as the released step 8 keeps it.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import json_repair

from negcse.gcse.extension import extension_sentence, masked_template
from negcse.gcse.kg import EntityKG, Knowledge, MainPartKG, knowledge_from_json
from negcse.gcse.neighbours import Encoder, neighbour_factory
from negcse.gcse.prompts import Prompt
from negcse.gcse.synthesis import Mode, Request, plan_synthesis
from negcse.llm.backend import GenerationSettings
from negcse.llm.cache import CachedLLM
from negcse.llm.parsing import ParseReport, ParseResult, Status, parse_completion

logger = logging.getLogger(__name__)
# released steps 1-2 decode greedily (do_sample 0), steps 5 and 7 sample
EXTRACTION_SETTINGS = GenerationSettings(do_sample=False)
SYNTHESIS_SETTINGS = GenerationSettings(do_sample=True)


@dataclass(frozen=True)
class Candidate:
    role: str
    prompt: str
    text: str
    status: str  # parsed / repaired / failed
    # "anchor", "in-batch <k>" or "none" when status is failed; "kept": released bug 10
    fallback: str | None = None
    detail: dict[str, str] = field(default_factory=dict)


@dataclass
class SourceResult:
    index: int
    anchor: str
    skipped: str | None = None  # "empty" or "too long"
    knowledge: Knowledge = field(default_factory=Knowledge)
    candidates: list[Candidate] = field(default_factory=list)
    extension_of: int | None = None  # an extension sentence: the source it was made from
    template: str | None = None  # ... and its masked template

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "anchor": self.anchor,
            "skipped": self.skipped,
            "knowledge": asdict(self.knowledge),
            "candidates": [asdict(c) for c in self.candidates],
        } | (
            {}
            if self.extension_of is None
            else {"extension_of": self.extension_of, "template": self.template}
        )


@dataclass
class RunResult:
    sources: list[SourceResult]
    report: ParseReport
    kg: EntityKG
    notes: Counter[str]


def _parse(prompt: Prompt, text: str, bugs: Collection[str] = ()) -> ParseResult:
    """The completion's value; the released main-part prompt's key ``suject`` is read as
    ``subject`` unless the released bug ``subject_key`` is asked for."""
    aliases = {} if "subject_key" in bugs else {"suject": "subject"}
    return parse_completion(text, prompt.required, aliases, prompt.text_field, prompt.as_list)


def released_text(completion: str) -> str:
    """What the released step 8 makes of a completion: json_repair's value's ``text``, else
    ``str`` of that value (often "")."""
    value = json_repair.loads(completion)
    return str(value["text"]) if isinstance(value, dict) and "text" in value else str(value)


def _parses(prompts: Sequence[Prompt], bugs: Collection[str] = ()) -> Callable[[int, str], bool]:
    """Whether answer i parses for ``prompts[i]``: the cache keeps only those."""
    return lambda i, text: _parse(prompts[i], text, bugs).status is not Status.FAILED


def extract_knowledge(
    sentences: Sequence[str],
    active: Sequence[int],
    llm: CachedLLM,
    prompts: dict[str, Prompt],
    mode: Mode,
    report: ParseReport,
    settings: GenerationSettings = EXTRACTION_SETTINGS,
    bugs: Collection[str] = (),
) -> dict[int, Knowledge]:
    """Knowledge per active source: the paper's one extraction prompt, or the released two."""
    names = ["extract"] if mode == "paper" else ["extract_main_parts", "extract_entities"]
    parsed: dict[str, list[dict[str, Any] | None]] = {}
    for name in names:
        prompt = prompts[name]
        asked = [prompt.render(input_text=sentences[i]) for i in active]
        texts = llm.generate(asked, settings, _parses([prompt] * len(asked), bugs))
        results = [_parse(prompt, t, bugs) for t in texts]
        for r in results:
            report.add(name, r.status)
        parsed[name] = [r.value for r in results]
    out = {}
    for pos, i in enumerate(active):
        if mode == "paper":
            out[i] = knowledge_from_json(parsed["extract"][pos])
        else:
            ents = parsed["extract_entities"][pos]
            out[i] = knowledge_from_json(
                parsed["extract_main_parts"][pos], (ents or {}).get("items", [])
            )
    return out


def entity_kg(mode: Mode, knowledge: Iterable[Knowledge]) -> EntityKG:
    """Released: the entity KG holds the entity extraction's nodes (steps 1 and 3; subjects are
    main parts, step 4); paper: one KG of subjects and entities (eq. 1-8)."""
    return EntityKG.from_sentences(
        k.entities if mode == "released" else k.nodes() for k in knowledge
    )


def extend(
    results: list[SourceResult],
    active: Sequence[int],
    kg: EntityKG,
    llm: CachedLLM,
    prompts: dict[str, Prompt],
    mode: Mode,
    report: ParseReport,
    seed: int,
    settings: GenerationSettings,
    bugs: Collection[str] = (),
) -> list[SourceResult]:
    """The extension sentences of the active sources (one masked template each, filled by the
    LLM), as new unextracted sources appended after ``results``; a completion without a usable
    ``polish`` gives none."""
    parts = MainPartKG.from_knowledge(results[i].knowledge for i in active)
    quirks = "extension_quirks" in bugs
    templates = [
        masked_template(
            results[i].anchor,
            results[i].knowledge,
            parts,
            kg,
            random.Random(f"{seed}:ext:{i}"),
            quirks,
        )
        for i in active
    ]
    prompt = prompts["fill_in" if mode == "paper" else "fill_in_released"]
    asked = [prompt.render(input_text=t) for t in templates]
    texts = llm.generate(asked, settings, _parses([prompt] * len(asked), bugs))
    out: list[SourceResult] = []
    for i, template, text in zip(active, templates, texts, strict=True):
        parsed = _parse(prompt, text, bugs)
        report.add(prompt.name, parsed.status)
        polish = "" if parsed.value is None else extension_sentence(str(parsed.value["polish"]))
        if polish:
            out.append(
                SourceResult(len(results) + len(out), polish, extension_of=i, template=template)
            )
    return out


def run_pipeline(
    sentences: Sequence[str],
    llm: CachedLLM | None,
    prompts: dict[str, Prompt],
    mode: Mode = "paper",
    positives: int = 1,
    negatives: int = 1,
    seed: int = 0,
    max_chars: int = 2000,
    prefer_related: bool = False,
    encoder: Encoder | None = None,
    synthesis_settings: GenerationSettings = SYNTHESIS_SETTINGS,
    extraction_settings: GenerationSettings = EXTRACTION_SETTINGS,
    released_bugs: frozenset[str] = frozenset(),
    extension: bool = False,
) -> RunResult:
    """Extraction -> KG -> (extension sentences, re-extracted with their own KG, as released
    steps 5-6 and the README's second pass over them) -> synthesis -> parsed candidates.
    ``encoder`` (released mode): the frozen encoder whose nearest neighbours give each pass's
    positive revisions (negcse.gcse.neighbours); None: the KG's related replacement."""
    results = [SourceResult(i, s) for i, s in enumerate(sentences)]
    for r in results:
        if not r.anchor.strip():
            r.skipped = "empty"
        elif len(r.anchor) > max_chars:
            r.skipped = "too long"
    active = [r.index for r in results if r.skipped is None]
    skipped = Counter(r.skipped for r in results if r.skipped)
    if skipped:
        logger.warning("skipped source lines: %s (max %d characters)", dict(skipped), max_chars)
    report = ParseReport()
    prompted = positives + negatives > 0  # none: Table 4's "w randomly", no LLM call
    if prompted and llm is None:
        raise ValueError("synthesis prompts need an LLM")
    settings = (extraction_settings, released_bugs)
    if prompted and llm is not None:
        for i, k in extract_knowledge(
            sentences, active, llm, prompts, mode, report, *settings
        ).items():
            results[i].knowledge = k
    kg = entity_kg(mode, (results[i].knowledge for i in active))
    logger.info("entity KG: %s", kg.summary())
    n = len(results)
    kgs = [(kg, range(n))]
    if extension and prompted and llm is not None:
        ext = extend(
            results, active, kg, llm, prompts, mode, report, seed, synthesis_settings, released_bugs
        )
        if ext:  # their own extraction and KG (the released second pass over _ext.txt)
            results += ext
            anchors = [r.anchor for r in results]
            ext_active = [r.index for r in ext]
            for i, k in extract_knowledge(
                anchors, ext_active, llm, prompts, mode, report, *settings
            ).items():
                results[i].knowledge = k
            kgs.append((entity_kg(mode, (r.knowledge for r in ext)), range(n, len(results))))
        logger.info("extension: %d sentences from %d sources", len(ext), len(active))
    anchors = [r.anchor for r in results]
    requests, notes = plan_passes(
        results,
        kgs,
        prompts,
        mode,
        positives,
        negatives,
        seed,
        prefer_related,
        encoder,
        released_bugs,
    )
    all_active = [r.index for r in results if r.skipped is None]
    accept = _parses([prompts[q.prompt] for q in requests], released_bugs)
    texts = (
        llm.generate([q.text for q in requests], synthesis_settings, accept)
        if requests and llm
        else []
    )
    for q, text in zip(requests, texts, strict=True):
        parsed = _parse(prompts[q.prompt], text, released_bugs)
        report.add(q.prompt, parsed.status)
        value = (
            ""
            if parsed.value is None
            else str(parsed.value[prompts[q.prompt].text_field or "text"]).strip()
        )
        if "keep_unparsed" in released_bugs and not value:
            kept = value if parsed.value is not None else released_text(text)
            cand = Candidate(q.role, q.prompt, kept, parsed.status.value, "kept", q.detail)
        elif parsed.value is not None:
            cand = Candidate(q.role, q.prompt, value, parsed.status.value, None, q.detail)
        else:
            cand = _fallback(q.role, q.prompt, q.detail, q.source, all_active, anchors, seed)
        results[q.source].candidates.append(cand)
    return RunResult(results, report, kg, notes)


def plan_passes(
    results: Sequence[SourceResult],
    kgs: Sequence[tuple[EntityKG, range]],
    prompts: dict[str, Prompt],
    mode: Mode,
    positives: int,
    negatives: int,
    seed: int,
    prefer_related: bool,
    encoder: Encoder | None,
    released_bugs: frozenset[str],
) -> tuple[list[Request], Counter[str]]:
    """The synthesis requests of every pass (the sources, then their extension sentences),
    each planned with its own KG and, in released mode with an ``encoder``, its own
    neighbour pools."""
    anchors = [r.anchor for r in results]
    requests: list[Request] = []
    notes: Counter[str] = Counter()
    build = neighbour_factory(
        encoder if mode == "released" else None,
        "identity_revision" in released_bugs,
        "related_lookup" in released_bugs,
    )
    for graph, own in kgs:  # each pass plans its own sources with its own KG
        knowledge = [r.knowledge if r.index in own else Knowledge() for r in results]
        own_knowledge = [results[i].knowledge for i in own if results[i].skipped is None]
        neighbour = None if build is None else build(own_knowledge)
        plan = plan_synthesis(
            anchors,
            knowledge,
            graph,
            prompts,
            mode,
            positives,
            negatives,
            seed,
            prefer_related,
            neighbour,
            skip=[r.skipped is not None or r.index not in own for r in results],
            released_bugs=released_bugs,
        )
        requests += plan.requests
        notes += plan.notes
    return requests, notes


def _fallback(
    role: str,
    prompt: str,
    detail: dict[str, str],
    source: int,
    active: Sequence[int],
    sentences: Sequence[str],
    seed: int,
) -> Candidate:
    """Eq. 10-11's fallback for a completion that failed to parse."""
    failed = Status.FAILED.value
    others = [k for k in active if k != source]
    if role == "positive":
        return Candidate(role, prompt, sentences[source], failed, "anchor", detail)
    if not others:  # a single source has no in-batch sentence: no candidate
        return Candidate(role, prompt, "", failed, "none", detail)
    k = random.Random(f"{seed}:fallback:{source}:{prompt}").choice(others)
    return Candidate(role, prompt, sentences[k], failed, f"in-batch {k}", detail)
