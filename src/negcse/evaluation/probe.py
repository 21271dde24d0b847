"""OssCSE's Appendix B probe: one sentence, eight paraphrases, eight negations.

The paper (Section 5.2) reports the mean cosine similarity of the anchor to its paraphrases and
to its negations: SimCSE-BERT-base 0.79 / 0.93, OssCSE-BERT-base 0.88 / 0.87. A model free of
the surface-structure bias scores the paraphrases above the negations.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from negcse.encoders.vectors import EncodeFn, SentenceCache, cosine_rows
from negcse.errors import UserError
from negcse.evaluation.registry import Evaluation, Job, Options, register
from negcse.io_utils import read_json

logger = logging.getLogger(__name__)

RESOURCE = "osscse_probe.json"


@dataclass(frozen=True)
class Probe:
    anchor: str
    paraphrases: tuple[str, ...]
    negations: tuple[str, ...]


def load_probe(path: str | Path | None = None) -> Probe:
    """The built-in probe, or another JSON file with ``anchor``, ``paraphrases``, ``negations``."""
    if path is None:
        text = resources.files("negcse.resources").joinpath(RESOURCE).read_text("utf-8")
        data, source = json.loads(text), RESOURCE
    else:
        data, source = read_json(path), str(path)
    for key in ("anchor", "paraphrases", "negations"):
        if key not in data:
            raise UserError(f"{source}: key '{key}' missing")
    if not isinstance(data["anchor"], str):
        raise UserError(f"{source}: anchor: expected a sentence, got {data['anchor']!r}")
    for key in ("paraphrases", "negations"):
        found = data[key]
        if not isinstance(found, list) or not found or not all(isinstance(x, str) for x in found):
            raise UserError(f"{source}: {key}: expected a non-empty list of sentences")
    return Probe(data["anchor"], tuple(data["paraphrases"]), tuple(data["negations"]))


def run_probe(probe: Probe, encode: EncodeFn) -> dict[str, Any]:
    """Mean cosine of the anchor to its paraphrases and to its negations (one encode call)."""
    sentences = [probe.anchor, *probe.paraphrases, *probe.negations]
    emb = encode(sentences)
    sims = cosine_rows(np.repeat(emb[:1], len(sentences) - 1, axis=0), emb[1:])
    para = sims[: len(probe.paraphrases)]
    neg = sims[len(probe.paraphrases) :]
    return {
        "paraphrase": float(para.mean()),
        "negation": float(neg.mean()),
        "gap": float(para.mean() - neg.mean()),
        "paraphrase_sims": [float(x) for x in para],
        "negation_sims": [float(x) for x in neg],
    }


@register
class ProbeEvaluation(Evaluation):
    name = "probe"
    help = "mean cosine of OssCSE's Appendix B sentence to its 8 paraphrases and 8 negations"
    options: ClassVar[Options] = {
        "file": {
            "default": None,
            "help": "a JSON probe (anchor, paraphrases, negations); default: the built-in one",
        }
    }
    job = Job(order=3)

    def check(self, settings: dict[str, Any]) -> None:
        load_probe(settings["file"])  # before the model loads

    def run(self, encoder: SentenceCache, settings: dict[str, Any]) -> dict[str, Any]:
        return run_probe(load_probe(settings["file"]), encoder)

    def summary(self, result: dict[str, Any]) -> str:
        return f"paraphrase={result['paraphrase']:.4f} negation={result['negation']:.4f}"
