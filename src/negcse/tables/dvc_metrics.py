"""The DVC metrics files: nested ``{method: {backbone: {leaf: value}}}`` per table, and the short
headline file ``dvc exp show`` / ``dvc metrics diff`` read by default.

Each table writes ``results/metrics/<table>.json`` (``negcse table --metrics``): its headline
column per method x backbone, e.g. ``{"simcse": {"bert-base-uncased": {"avg": 76.3}}}``, which
DVC flattens to ``simcse.bert-base-uncased.avg``; MTEB nests its group above the method. The
headline file (``negcse headline-metrics``) gathers each row's STS average and each claim's Δ
and verdict: ``sts.<method>.<backbone>.avg``, ``claims.<method>.<backbone>.{delta,verdict}``
and ``transfer_claims.<...>`` for the transfer claims.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

#: ``{method: {backbone: {leaf: value}}}``
Nested = dict[str, dict[str, dict[str, float | str]]]

#: the leaves of a verdict row: the difference to the paper's baseline and the verdict
DELTA, VERDICT = "delta", "verdict"


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


def read_nested(path: str | Path, leaf: str) -> Nested:
    """A table's metrics file, every row holding ``leaf``; ValueError naming the file and row."""
    with open(path, encoding="utf-8") as fh:
        try:
            data = json.load(fh)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a {{method: {{backbone: {{...}}}}}} metrics file")
    for method, rows in data.items():
        for backbone, leaves in rows.items() if isinstance(rows, dict) else [(None, rows)]:
            if not isinstance(leaves, dict) or leaf not in leaves:
                where = f"{method}.{backbone}" if backbone is not None else method
                raise ValueError(f"{path}: {where}: no {leaf!r} (a {{backbone: {{...}}}} row)")
    return data


def _claims(verdicts: Nested) -> Nested:
    """The verdict rows that judge a claim (a verdict is set), Δ and verdict only."""
    return nest(
        (method, backbone, {k: leaves[k] for k in (DELTA, VERDICT)})
        for method, rows in verdicts.items()
        for backbone, leaves in rows.items()
        if leaves.get(VERDICT)
    )


def headline(sts: Nested, verdicts: Nested, transfer_verdicts: Nested) -> dict[str, Nested]:
    """Each row's STS average and each claim's Δ and verdict (STS, then transfer)."""
    out = {"sts": nest((m, b, {"avg": v["avg"]}) for m, r in sts.items() for b, v in r.items())}
    for key, claims in (("claims", verdicts), ("transfer_claims", transfer_verdicts)):
        if chosen := _claims(claims):
            out[key] = chosen
    return out


def headline_files(
    sts: str | Path, verdicts: str | Path, transfer_verdicts: str | Path
) -> dict[str, Nested]:
    """:func:`headline` of the three tables' metrics files."""
    return headline(
        read_nested(sts, "avg"),
        read_nested(verdicts, DELTA),
        read_nested(transfer_verdicts, DELTA),
    )
