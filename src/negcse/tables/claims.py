"""The papers' claims, as data: ``src/negcse/resources/claims.csv``.

A claim is one comparison a paper prints (or states in its text) between two of our grid's
methods: ``method`` against ``baseline`` on one ``measure`` and backbone (and, for GCSE, the LLM
that wrote the data), with the paper's table, the two rows it compares (their labels as in the
published CSVs) and the paper's difference ``delta`` (empty where the paper states only a
direction: ``direction``). Only comparisons the papers make are listed: a project control
(``simcse_dropout15``), a grid search without printed numbers or a variant of ours has none.
``tests/tables/test_claims.py`` recomputes every delta from the published numbers.

Measures: ``sts`` (7-task STS average), ``transfer`` (transfer average), ``oppn``/``cont``
(OssCSE's split averages), ``mteb_classification``/``mteb_reranking`` (MTEB averages),
``probe_paraphrase``/``probe_negation`` (OssCSE's Appendix B probe: mean cosine, as printed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from negcse.data.mteb_tasks import HEADLINE
from negcse.tables.published import (
    PAPERS,
    TRANSFER_TASKS,
    PublishedDataError,
    load_published,
    load_published_mteb,
    load_published_transfer,
    published_split_value,
)
from negcse.tables.published_csv import CSVSpec, PublishedTable, Row, Score, parse_frame

CLAIMS_RESOURCE = "claims.csv"
MEASURES: dict[str, str] = {
    "sts": "STS avg.",
    "transfer": "transfer avg.",
    "oppn": "Oppn. split",
    "cont": "Cont. split",
    "mteb_classification": "MTEB classif.",
    "mteb_reranking": "MTEB rerank.",
    "probe_paraphrase": "probe: paraphrases",
    "probe_negation": "probe: negations",
}
#: the backbones the papers used, in the order a claim is borrowed for another backbone
PAPER_BACKBONES = ("bert-base-uncased", "bert-large-uncased", "roberta-base", "roberta-large")
#: the papers' LLMs (GCSE) and the model names (an evaluation file's ``llm``) that are them
PAPER_LLMS: dict[str, tuple[str, ...]] = {
    "ChatGLM3-6B": ("thudm/chatglm3-6b",),
    "GLM4-9B-Chat": ("thudm/glm-4-9b-chat", "thudm/glm-4-9b-chat-hf"),
    "Qwen2.5-32B-Instruct": ("qwen/qwen2.5-32b-instruct",),
    "GPT-3.5 Turbo": ("gpt-3.5-turbo", "gpt-3.5-turbo-0125", "gpt-3.5-turbo-1106"),
    "Deepseek-V3-0324": ("deepseek-chat", "deepseek-ai/deepseek-v3-0324"),
}
TITLES = {"sncse": "SNCSE", "una": "UNA", "san-hince": "SAN", "gcse": "GCSE", "osscse": "OssCSE"}
SHORT_BACKBONES = {"bert-base-uncased": "BERT-base", "bert-large-uncased": "BERT-large",
                   "roberta-base": "RoBERTa-base", "roberta-large": "RoBERTa-large"}  # fmt: skip

COLUMNS = ("paper", "table", "measure", "method", "baseline", "backbone", "llm", "method_row",
           "baseline_row", "delta", "direction", "note")  # fmt: skip


class ClaimsError(PublishedDataError):
    """claims.csv is malformed; the message names the line and column."""


@dataclass(frozen=True)
class Claim:
    paper: str
    table: str
    measure: str
    method: str
    baseline: str
    backbone: str
    llm: str
    method_row: str
    baseline_row: str
    delta: float | None  # None: a direction only
    direction: int  # +1 or -1
    note: str

    @property
    def source(self) -> str:
        """Where the paper prints it, e.g. ``SNCSE Table 2``; a declared baseline's
        comparison (:func:`declared_claim`): its ``table`` text."""
        return f"{TITLES[self.paper]} {self.table}" if self.paper else self.table

    @property
    def pair(self) -> tuple[str, str, str]:
        return (self.measure, self.method, self.baseline)


def _check(row: Row) -> None:
    raw = row.raw
    for col in ("method", "baseline"):
        if raw[col] != raw[col].lower() or not raw[col].replace("_", "").replace(".", "").isalnum():
            raise row.error(col, f"{raw[col]!r} is not a method name")
    if raw["llm"] and raw["llm"] not in PAPER_LLMS:
        raise row.error("llm", f"{raw['llm']!r} is not one of {tuple(PAPER_LLMS)}")
    delta = row.scores["delta"]
    sign = {"+": 1, "-": -1}[raw["direction"]]
    if not math.isnan(delta) and (delta == 0 or (delta > 0) != (sign > 0)):
        raise row.error("direction", f"{raw['direction']!r} disagrees with delta {delta:+g}")


SPEC = CSVSpec(
    columns=COLUMNS,
    text=(*COLUMNS[:6], "method_row", "baseline_row"),
    choices={
        "paper": PAPERS,
        "measure": tuple(MEASURES),
        "backbone": PAPER_BACKBONES,
        "direction": ("+", "-"),
    },
    scores={"delta": Score(empty_is_nan=True, low=-100.0, high=100.0)},
    error=ClaimsError,
)


def parse_claims(text: str, source: str = CLAIMS_RESOURCE) -> pd.DataFrame:
    frame = parse_frame(text, SPEC, source, _check)
    key = ["measure", "method", "baseline", "backbone", "llm"]
    twice = frame[frame.duplicated(key, keep=False)]
    if len(twice):
        first = twice.iloc[0]
        raise ClaimsError(
            f"{source}: the claim {first['method']} vs {first['baseline']} ({first['measure']}, "
            f"{first['backbone']}, llm {first['llm'] or '-'}) is listed twice"
        )
    return frame


_CLAIMS = PublishedTable(CLAIMS_RESOURCE, parse_claims)


def load_claims(path: str | Path | None = None) -> list[Claim]:
    """Every claim, in file order (the packaged list, or ``path`` in its format)."""
    return [
        Claim(
            **{k: r[k] for k in COLUMNS if k not in ("delta", "direction")},
            delta=None if math.isnan(r["delta"]) else float(r["delta"]),
            direction=1 if r["direction"] == "+" else -1,
        )
        for r in _CLAIMS.load(path).to_dict("records")
    ]


#: what a method of no paper is compared on with its declared baseline
DECLARED_MEASURES = ("sts", "transfer")


def claim_families(claims: Sequence[Claim] | None = None) -> dict[tuple[str, str], list[Claim]]:
    """The paper grid's multiplicity families (docs/statistics.md): each paper's claims on one
    measure, in file order; on the paper's own backbones and LLMs each is a verdict row of the
    family (:func:`negcse.tables.verdicts.family_key`)."""
    out: dict[tuple[str, str], list[Claim]] = {}
    for claim in load_claims() if claims is None else claims:
        out.setdefault((claim.paper, claim.measure), []).append(claim)
    return out


#: a measure's unit against the points (x100) of the others: the probe's cosines are printed
#: as they are, so a variance model in points applies to them scaled by this
UNITS = {"probe_paraphrase": 0.01, "probe_negation": 0.01}


def family_design(claims: Sequence[Claim]) -> tuple[np.ndarray, np.ndarray, float]:
    """What a simulation of one family needs: each row's claimed difference (a direction only:
    the family's median size, so that its truths scale like the others'), whether it is sized,
    and the measure's unit (:data:`UNITS`; 1 for points)."""
    sized = np.array([c.delta is not None for c in claims])
    sizes = [abs(c.delta) for c in claims if c.delta is not None]
    typical = float(np.median(sizes)) if sizes else 2.0
    delta = np.array([c.delta if c.delta is not None else c.direction * typical for c in claims])
    return delta, sized, UNITS.get(claims[0].measure, 1.0)


def declared_claim(method: str, baseline: str, measure: str, backbone: str) -> Claim:
    """The comparison of a method of no paper with its declared baseline
    (``methods.<m>.baseline``): the method should beat it; no paper prints a number, so it is
    only ever a direction check."""
    return Claim(
        paper="", table="declared baseline", measure=measure, method=method,
        baseline=baseline, backbone=backbone, llm="", method_row="", baseline_row="",
        delta=None, direction=1, note="",
    )  # fmt: skip


def paper_llm(model: str) -> str | None:
    """The paper's name of the LLM an evaluation file records (``llm``), or None."""
    name = model.strip().lower()
    return next((label for label, names in PAPER_LLMS.items() if name in names), None)


def pick(claims: Sequence[Claim], backbone: str, llm: str) -> tuple[Claim, list[str]]:
    """The claim that matches this run (same backbone, and the same LLM where the claim names
    one) and [] ; else the one the paper's first backbone and LLM print, and what differs."""
    ours = paper_llm(llm) if llm else None
    for claim in claims:
        if claim.backbone == backbone and (not claim.llm or claim.llm == ours):
            return claim, []
    order = {b: i for i, b in enumerate(PAPER_BACKBONES)}
    ranked = sorted(claims, key=lambda c: (c.backbone != backbone, order[c.backbone],
                                           c.llm != (ours or "ChatGLM3-6B")))  # fmt: skip
    claim, why = ranked[0], []
    if claim.backbone != backbone:
        why.append(f"backbone {backbone} is not in the paper")
    if claim.llm and claim.llm != ours:
        why.append(
            f"LLM {llm or 'none'} is not the paper's ({', '.join(sorted({c.llm for c in claims if c.llm}))})"
        )
    return claim, why


def published_value(claim: Claim, label: str, tasks: Sequence[str] | None = None) -> float | None:
    """The paper's number of row ``label`` of the claim's table on its backbone (the
    measure's headline; transfer: the printed average, or the mean over ``tasks`` when they
    are fewer); None where it prints none."""
    if claim.measure == "sts":
        frame = load_published()
        hit = frame[(frame["paper"] == claim.paper) & (frame["table"] == claim.table)
                    & (frame["label"] == label) & (frame["backbone"] == claim.backbone)]  # fmt: skip
        if len(hit) > 1:  # SAN's "+SAN" rows: one per method
            hit = hit[hit["method"].isin([claim.method, claim.baseline])]
        return float(hit["avg"].iloc[0]) if len(hit) == 1 else None
    if claim.measure == "transfer":
        frame = load_published_transfer()
        hit = frame[(frame["paper"] == claim.paper) & (frame["label"] == label)
                    & (frame["backbone"] == claim.backbone)]  # fmt: skip
        if len(hit) != 1:
            return None
        if not tasks or sorted(tasks) == sorted(TRANSFER_TASKS):
            return float(hit["avg"].iloc[0])  # the printed average
        return float(hit[list(tasks)].iloc[0].mean())
    if claim.measure.startswith("mteb_"):
        group = claim.measure.removeprefix("mteb_")
        frame = load_published_mteb()
        hit = frame[(frame["paper"] == claim.paper) & (frame["table"] == claim.table)
                    & (frame["label"] == label) & (frame["backbone"] == claim.backbone)
                    & (frame["group"] == group) & (frame["task"] == "avg")
                    & (frame["metric"] == HEADLINE[group])]  # fmt: skip
        if len(hit) > 1:
            hit = hit[hit["method"].isin([claim.method, claim.baseline])]
        return float(hit["value"].iloc[0]) if len(hit) == 1 else None
    if claim.measure.startswith("probe_"):  # OssCSE Section 5.2: rows named by method
        metric = claim.measure.removeprefix("probe_")
        return published_split_value(label, claim.backbone, metric, "probe")
    return None  # the OssCSE splits: read off a figure, no row


def paper_delta(claim: Claim, tasks: Sequence[str] | None = None) -> float | None:
    """The paper's difference; for the transfer average over fewer tasks than the paper's,
    the difference of its two rows' means over ``tasks``."""
    if claim.measure == "transfer" and tasks and sorted(tasks) != sorted(TRANSFER_TASKS):
        ours = published_value(claim, claim.method_row, tasks)
        base = published_value(claim, claim.baseline_row, tasks)
        return None if ours is None or base is None else ours - base
    return claim.delta
