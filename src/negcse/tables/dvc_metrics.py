"""The DVC metrics files: nested ``{method: {backbone: {leaf: value}}}`` per table, and the short
headline file ``dvc exp show`` / ``dvc metrics diff`` read by default.

Each table writes ``results/metrics/<table>.json`` (``negcse table --metrics``): its headline
column per method x backbone, e.g. ``{"simcse": {"bert-base-uncased": {"avg": 76.3}}}``, which
DVC flattens to ``simcse.bert-base-uncased.avg``; MTEB nests its group above the method, the
verdicts the claim's measure and baseline below the backbone
(``sncse.bert-base-uncased.sts.vs_simcse.{delta,verdict}``). The headline file (``negcse
headline-metrics``) gathers each row's STS average and the Δ and verdict of each claim that
has a verdict: ``sts.<method>.<backbone>.avg``,
``claims.<method>.<backbone>.<measure>.vs_<baseline>.{delta,verdict}``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from negcse.finite import is_finite_number
from negcse.io_utils import read_json

#: ``{method: {backbone: {leaf: value}}}``
Nested = dict[str, dict[str, dict[str, float | str]]]

#: the leaves of a verdict row: the difference to the paper's baseline and the verdict
DELTA, VERDICT = "delta", "verdict"
#: a verdict row below the seeds a verdict needs (not a headline claim)
NO_VERDICT = "no verdict"


def metric_key(name: str) -> str:
    """A column name as a metrics leaf: lower case, runs of other characters as one ``_``
    (``"Avg. MAP"`` -> ``avg_map``), so DVC's dotted names stay unambiguous."""
    key = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    if not key:
        raise ValueError(f"metric name {name!r} has no letter or digit")
    return key


def nest(rows: Iterable[tuple[str, str, Mapping[str, float | str]]]) -> Nested:
    """``(method, backbone, leaves)`` rows as ``{method: {backbone: leaves}}``, in row order."""
    out: Nested = {}
    for method, backbone, leaves in rows:
        row = out.setdefault(method, {})
        if backbone in row:
            raise ValueError(f"two metrics rows for {method}/{backbone}")
        row[backbone] = dict(leaves)
    return out


def read_nested(
    path: str | Path, leaf: str | None = None, empty: bool = False
) -> dict[str, Any]:
    """A table's metrics file, ``{method: {backbone: {...}}}``, every row holding ``leaf``
    (when given) and numbers, texts or groups of them; a one-line error naming the file (and
    row). ``empty``: no rows is a valid file (the verdicts of a grid without a claim)."""
    data = read_json(path)  # UTF-8 JSON, an object, every number finite: else one line
    if not data and not empty:
        raise ValueError(f"{path}: no rows (an empty metrics file?)")
    for method, rows in data.items():
        for backbone, leaves in rows.items() if isinstance(rows, dict) else [(None, rows)]:
            if (
                not isinstance(leaves, dict)
                or (leaf is not None and not is_finite_number(leaves.get(leaf)))
                or any(isinstance(v, bool) or not isinstance(v, int | float | str | dict)
                       for v in leaves.values())
            ):  # fmt: skip
                where = f"{method}.{backbone}" if backbone is not None else method
                what = (
                    "not a {...} row" if leaf is None
                    else f"no {leaf!r}" if not isinstance(leaves, dict) or leaf not in leaves
                    else f"{leaf!r} is not a number"
                )  # fmt: skip
                raise ValueError(f"{path}: {where}: {what} (a {{backbone: {{...}}}} row)")
    return data


def _claims(verdicts: dict[str, Any]) -> dict[str, Any]:
    """The verdict rows that judge a claim (a verdict, not "no verdict"), Δ and verdict only:
    ``{method: {backbone: {measure: {vs_<baseline>: {delta, verdict}}}}}``."""
    out: dict[str, Any] = {}
    for method, rows in verdicts.items():
        for backbone, measures in rows.items():
            for measure, pairs in measures.items():
                for versus, leaves in pairs.items():
                    if not isinstance(leaves, dict) or DELTA not in leaves:
                        raise ValueError(
                            f"{method}.{backbone}.{measure}.{versus}: no {DELTA!r} (a verdicts "
                            "row: {measure: {vs_<baseline>: {delta, verdict}}})"
                        )
                    if leaves.get(VERDICT, NO_VERDICT) == NO_VERDICT:
                        continue
                    chosen = {k: leaves[k] for k in (DELTA, VERDICT)}
                    where = out.setdefault(method, {}).setdefault(backbone, {})
                    where.setdefault(measure, {})[versus] = chosen
    return out


def headline(sts: Nested, verdicts: dict[str, Any]) -> dict[str, Any]:
    """Each row's STS average and each claim's Δ and verdict (where it has one)."""
    out: dict[str, Any] = {
        "sts": nest((m, b, {"avg": v["avg"]}) for m, r in sts.items() for b, v in r.items())
    }
    if chosen := _claims(verdicts):
        out["claims"] = chosen
    return out


def headline_files(sts: str | Path, verdicts: str | Path) -> dict[str, Any]:
    """:func:`headline` of the two tables' metrics files."""
    data = read_nested(verdicts, empty=True)  # a grid may hold no claim
    rows = read_nested(sts, "avg")  # its errors name the sts file
    try:
        return headline(rows, data)
    except ValueError as exc:
        raise ValueError(f"{verdicts}: {exc}") from None
