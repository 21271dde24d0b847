"""``negcse gcse-denoise``: GCSE's candidates -> training triplets, filtered by the frozen
stage-1 model (eq. 10-11), written as three aligned text columns."""

from __future__ import annotations

import argparse
import logging
import random
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from negcse.errors import UserError
from negcse.finite import seed_number
from negcse.gcse.denoise import (
    Triplet,
    candidate_roles,
    denoise,
    denoise_released,
    denoising_inputs,
    usable,
)
from negcse.gcse.released import augment_anchor
from negcse.generators.settings import add_options, as_dict, from_args
from negcse.generators.specs.gcse import GcseDenoising, thresholds
from negcse.io_utils import json_text, lines_text, read_jsonl, write_texts
from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    from negcse.evaluation import embedder
    from negcse.training import model
else:  # torch and transformers: imported when the command runs, not for --help
    embedder = LazyModule("negcse.evaluation.embedder")
    model = LazyModule("negcse.training.model")

NAME = "gcse-denoise"
HELP = "GCSE denoising: score candidates with the stage-1 model, write anchor/positive/negative"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--candidates", required=True, type=Path, help="gcse-synthesize output")
    p.add_argument(
        "--model", required=True, help="the stage-1 evaluation model (a folder the suite trained)"
    )
    p.add_argument("--anchors", required=True, type=Path, help="output: one anchor per line")
    p.add_argument("--positives", required=True, type=Path, help="output, aligned")
    p.add_argument("--negatives", required=True, type=Path, help="output, aligned")
    p.add_argument("--report", required=True, type=Path, help="output: counts, JSON")
    # generators.gcse's denoising settings (src/negcse/generators/specs/gcse.py): --mode,
    # --no-filter, --alpha, --beta, --choice; its released_bugs as --order, --augment-anchors
    add_options(p.add_argument_group("settings (generators.gcse)"), GcseDenoising)
    p.add_argument("--seed", type=seed_number, default=0, help="fallback and 'random' draws")
    p.add_argument(
        "--max-seq-len", type=int, default=32, help="scorer truncation (released 32 tokens)"
    )
    p.add_argument("--batch-size", type=int, default=128, help="sentences per encoding batch")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--mirror", default=None)


def _roles(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[str]], list[list[str]]]:
    """Anchors and their usable positive- and negative-prompt candidates (skipped sources and
    fallen-back completions left out)."""
    anchors, pos, neg = [], [], []
    for row in rows:
        if row.get("skipped"):
            continue
        kept = [c for c in row["candidates"] if usable(c)]
        anchors.append(row["anchor"])
        pos.append([c["text"] for c in kept if c["role"] == "positive"])
        neg.append([c["text"] for c in kept if c["role"] == "negative"])
    return anchors, pos, neg


def unfiltered(
    anchors: list[str], pos: list[list[str]], neg: list[list[str]], seed: int
) -> list[Triplet]:
    """The first candidate of each role, no scores; eq. 10-11's fallbacks where none."""
    rng = random.Random(seed)
    out = []
    for i, anchor in enumerate(anchors):
        positive, pos_from = (pos[i][0], "candidate 0") if pos[i] else (anchor, "anchor")
        if neg[i]:
            negative, neg_from = neg[i][0], "candidate 0"
        else:
            k = rng.randrange(len(anchors) - 1)
            k += k >= i
            negative, neg_from = anchors[k], f"in-batch {k}"
        out.append(Triplet(anchor, positive, negative, pos_from, neg_from))
    return out


def check_rows(rows: list[Any], path: Path) -> None:
    """``gcse-synthesize``'s rows: an object each, with its anchor (unless skipped) and a list
    of candidates, each an object with its text and role; a UserError names the row."""
    for number, row in enumerate(rows, start=1):
        where = f"{path}: row {number}"
        if not isinstance(row, dict):
            raise UserError(f"{where}: expected an object, got {type(row).__name__}")
        if row.get("skipped"):
            continue
        candidates = row.get("candidates")
        if not isinstance(row.get("anchor"), str) or not isinstance(candidates, list):
            raise UserError(f"{where}: expected 'anchor' (text) and 'candidates' (a list)")
        for c in candidates:
            if not (isinstance(c, dict) and isinstance(c.get("text"), str)
                    and isinstance(c.get("role"), str)):  # fmt: skip
                raise UserError(f"{where}: a candidate without 'text' and 'role' (text)")
    if not rows:
        raise UserError(f"{path}: no rows (an empty gcse-synthesize output?)")


def run(args: argparse.Namespace) -> int:
    import numpy as np

    try:
        s = from_args(args, GcseDenoising)  # bounds, alpha > beta
    except ValueError as err:
        logger.error("%s", err)
        return 2
    model.torch_threads(args.threads)
    rows = read_jsonl(args.candidates)
    check_rows(rows, args.candidates)
    anchors, candidates = denoising_inputs(rows)
    roles = candidate_roles(rows)
    if len(anchors) < 2:
        logger.error(
            "%s: %d usable sources; denoising needs at least 2", args.candidates, len(anchors)
        )
        return 2
    alpha, beta = thresholds(as_dict(s))
    sims: list[list[float]] = [[] for _ in anchors]
    if not s.filter:
        triplets = unfiltered(*_roles(rows), args.seed)
    else:
        # [CLS] + the saved MLP head: the frozen model as GCSE's guide embeds (guide_pooler cls)
        encoder = embedder.Embedder.load(
            args.model, "cls", args.mirror, max_length=args.max_seq_len
        )
        flat = [c for cands in candidates for c in cands]
        a = encoder.encode(anchors, args.batch_size)
        c = encoder.encode(flat, args.batch_size) if flat else np.zeros((0, a.shape[1]))
        a /= np.linalg.norm(a, axis=1, keepdims=True)
        c /= np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-12)
        start = 0
        for i, cands in enumerate(candidates):
            sims[i] = [float(x) for x in c[start : start + len(cands)] @ a[i]]
            start += len(cands)
        if s.mode == "paper":
            triplets = denoise(
                anchors, candidates, sims, alpha, beta, args.seed, s.choice, roles, s.order
            )
        else:
            triplets = denoise_released(
                anchors, candidates, sims, alpha, beta, roles=roles, order=s.order
            )
    anchors_out = [t.anchor for t in triplets]
    if s.augment_anchors:  # once per training seed (released: at every fetch)
        anchors_out = [
            augment_anchor(a, random.Random(f"{args.seed}:augment:{j}"))
            for j, a in enumerate(anchors_out)
        ]
    columns = {
        args.anchors: anchors_out,
        args.positives: [t.positive for t in triplets],
        args.negatives: [t.negative for t in triplets],
    }
    pos_from = Counter(t.positive_from.split()[0] for t in triplets)
    neg_from = Counter(t.negative_from.split()[0] for t in triplets)
    flat_sims = [s for ss in sims for s in ss]
    report = {
        "candidates": str(args.candidates),
        "model": args.model,
        "mode": s.mode,
        "filter": s.filter,
        "order": s.order,
        "augmented_anchors": s.augment_anchors,
        "max_seq_len": args.max_seq_len,
        "alpha": alpha,
        "beta": beta,
        "sources": len(rows),
        "usable_sources": len(anchors),
        "triplets": len(triplets),
        "positive_from": dict(pos_from),  # candidate / anchor (eq. 10 fallback)
        "negative_from": dict(neg_from),  # candidate / in-batch (eq. 11) / offset (released)
        "similarity": (
            {"mean": float(np.mean(flat_sims)), "min": min(flat_sims), "max": max(flat_sims)}
            if flat_sims
            else None
        ),
    }
    texts = {path: lines_text(lines) for path, lines in columns.items()}
    texts[args.report] = json_text(args.report, report)
    write_texts(texts)  # the aligned columns and their report together: all or none
    logger.info(
        "%d triplets from %d sources: positives %s, negatives %s -> %s",
        len(triplets),
        len(anchors),
        dict(pos_from),
        dict(neg_from),
        args.anchors,
    )
    return 0
