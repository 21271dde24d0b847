"""Extraction -> knowledge graph -> synthesis -> parsing, over one list of source sentences.

Every LLM call goes through :class:`~negcse.llm.cache.CachedLLM`, which keeps only completions
that parse for their prompt. A completion that does not parse, even after repair, takes the
paper's fallback (eq. 10-11): the anchor itself for a positive, a seeded random other source
sentence for a negative; it never stops the run.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from negcse.gcse.kg import EntityKG, Knowledge, knowledge_from_json
from negcse.gcse.prompts import Prompt
from negcse.gcse.synthesis import Mode, Neighbour, plan_synthesis
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
    fallback: str | None = None  # "anchor", "in-batch <k>" or "none" when status is failed
    detail: dict[str, str] = field(default_factory=dict)


@dataclass
class SourceResult:
    index: int
    anchor: str
    skipped: str | None = None  # "empty" or "too long"
    knowledge: Knowledge = field(default_factory=Knowledge)
    candidates: list[Candidate] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "anchor": self.anchor,
            "skipped": self.skipped,
            "knowledge": asdict(self.knowledge),
            "candidates": [asdict(c) for c in self.candidates],
        }


@dataclass
class RunResult:
    sources: list[SourceResult]
    report: ParseReport
    kg: EntityKG
    notes: Counter[str]


def _parse(prompt: Prompt, text: str, mode: Mode) -> ParseResult:
    aliases = {"suject": "subject"} if mode == "paper" else {}
    return parse_completion(text, prompt.required, aliases, prompt.text_field, prompt.as_list)


def _parses(prompts: Sequence[Prompt], mode: Mode) -> Callable[[int, str], bool]:
    """Whether answer i parses for ``prompts[i]``: the cache keeps only those."""
    return lambda i, text: _parse(prompts[i], text, mode).status is not Status.FAILED


def extract_knowledge(
    sentences: Sequence[str],
    active: Sequence[int],
    llm: CachedLLM,
    prompts: dict[str, Prompt],
    mode: Mode,
    report: ParseReport,
    settings: GenerationSettings = EXTRACTION_SETTINGS,
) -> dict[int, Knowledge]:
    """Knowledge per active source: the paper's one extraction prompt, or the released two."""
    names = ["extract"] if mode == "paper" else ["extract_main_parts", "extract_entities"]
    parsed: dict[str, list[dict[str, Any] | None]] = {}
    for name in names:
        prompt = prompts[name]
        asked = [prompt.render(input_text=sentences[i]) for i in active]
        texts = llm.generate(asked, settings, _parses([prompt] * len(asked), mode))
        results = [_parse(prompt, t, mode) for t in texts]
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
                parsed["extract_main_parts"][pos],
                (ents or {}).get("items", []),
                subject_key="suject",
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
    neighbour: Neighbour | None = None,
    synthesis_settings: GenerationSettings = SYNTHESIS_SETTINGS,
    extraction_settings: GenerationSettings = EXTRACTION_SETTINGS,
) -> RunResult:
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
    knowledge: dict[int, Knowledge] = {}
    if positives + negatives:  # none: Table 4's "w randomly" (eq. 10-11 only), no LLM call
        if llm is None:
            raise ValueError("synthesis prompts need an LLM")
        knowledge = extract_knowledge(
            sentences, active, llm, prompts, mode, report, extraction_settings
        )
    for i, k in knowledge.items():
        results[i].knowledge = k
    kg = EntityKG.from_sentences(k.nodes() for k in knowledge.values())
    logger.info("entity KG: %s", kg.summary())
    plan = plan_synthesis(
        sentences,
        [r.knowledge for r in results],
        kg,
        prompts,
        mode,
        positives,
        negatives,
        seed,
        prefer_related,
        neighbour,
        skip=[r.skipped is not None for r in results],
    )
    requests = [q.text for q in plan.requests]
    accept = _parses([prompts[q.prompt] for q in plan.requests], mode)
    texts = llm.generate(requests, synthesis_settings, accept) if requests and llm else []
    for q, text in zip(plan.requests, texts, strict=True):
        parsed = _parse(prompts[q.prompt], text, mode)
        report.add(q.prompt, parsed.status)
        if parsed.value is not None:
            value = str(parsed.value[prompts[q.prompt].text_field or "text"]).strip()
            cand = Candidate(q.role, q.prompt, value, parsed.status.value, None, q.detail)
        else:
            cand = _fallback(q.role, q.prompt, q.detail, q.source, active, sentences, seed)
        results[q.source].candidates.append(cand)
    return RunResult(results, report, kg, plan.notes)


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
