"""The evaluation files a verdict reads, checked as its inputs before any statistics: each
file's seed is one whole number (so ``"1"`` and ``"01"`` are never two seeds), and no two seeds
of one method and backbone hold bit-identical per-pair cosines (a copied file, not a rerun).

A seed is recorded as the evaluation job tags it (``--tag seed=1``: digits) or as a JSON
integer; either way it is a whole number >= 0 written without leading zeros. A file without a
seed (an untrained row) keeps none.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from negcse.errors import UserError
from negcse.tables.eval_files import TableInputError
from negcse.tables.published import TASKS
from negcse.text.names import check_seed


def seeded(result: Mapping[str, Any], path: str) -> dict[str, Any]:
    """``result`` with its seed as the canonical text of a whole number (``1``); any other
    seed (``01``, ``-1``, ``1.0``, ``abc``, ``true``) is one line naming the file."""
    out = dict(result)
    if "seed" not in out:
        return out
    seed = out["seed"]
    try:  # the one seed rule of every tag (negcse.text.names)
        out["seed"] = check_seed(seed, path)
    except UserError:
        raise TableInputError(
            f"{path}: seed {seed!r} is not a whole number >= 0 without leading zeros (as the "
            "evaluation jobs tag it: seed=1)"
        ) from None
    return out


def _cosine_digest(result: Mapping[str, Any]) -> str | None:
    """The sha256 of the file's per-pair cosines of every STS task it records; None: none."""
    details = result.get("details")
    if not isinstance(details, Mapping):
        return None
    cosines = {}
    for task in TASKS:
        entry = details.get(task)
        pairs = entry.get("pairs") if isinstance(entry, Mapping) else None
        if isinstance(pairs, Mapping) and "cosine" in pairs:
            cosines[task] = pairs["cosine"]
    if not cosines:
        return None
    return hashlib.sha256(json.dumps(cosines, sort_keys=True).encode()).hexdigest()


def check_copies(results: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
    """No two seeds of one method and backbone hold the same per-pair cosines: dropout noise
    and the seeded head make every trained seed's cosines differ, so equal ones are one
    evaluation counted as several seeds (its interval would be far too narrow)."""
    seen: dict[tuple[str, str, str], tuple[str, str]] = {}
    for path, result in results:
        digest = _cosine_digest(result)
        if digest is None or "seed" not in result:
            continue
        key = (str(result.get("method")), str(result.get("backbone")), digest)
        first = seen.setdefault(key, (path, str(result["seed"])))
        if first[1] != str(result["seed"]):
            raise TableInputError(
                f"{path}: its per-pair cosines (seed {result['seed']}) are bit-identical to "
                f"those of {first[0]} (seed {first[1]}): a copy, not another seed of "
                f"{key[0]}/{key[1]}; rerun that seed's evaluation"
            )
