"""The fidelity table: every hyperparameter a configured run uses beside the released script's
value and the paper's, with the reason where they differ (``negcse fidelity``,
docs/fidelity-table.md), and the same tables inside the prose pages (:func:`fill_pages`).

The released and paper values have one declared source, ``negcse/resources/fidelity.yaml``
(each value with the citation of its file and lines, or its paper section); what the suite
uses is resolved from the config as the workflow resolves a run (``resolve_method``, the
generators' settings, the guides). A value that differs from the released one (or, where no
script exists, from the paper's) needs a declared reason: :func:`undeclared` lists those that
lack one, and the test that keeps docs/fidelity-table.md in step with this module fails on
them, so the defaults cannot drift from the documents unnoticed. Every row needs a reference:
a value, or a source's statement that it gives none (``none``); :func:`unreferenced` lists the
rows that have neither, and ``negcse fidelity`` fails on them too.

The reference file:

- ``sources``: id -> citation (``repo/file Lnn-mm``, or the paper and its section or table).
- ``methods.<m>``: ``like`` (another entry whose declarations this one starts from), then
  ``released`` and ``paper``: lists of blocks ``{source, values, backbones}``: ``values`` maps
  a setting (``train.<key>``, ``params.<key>``, ``generators.<gen>.<key>``, ``guides.<name>``,
  ``corpus``, ``eval.pooler``) to its value on every backbone (on the backbones of ``only``,
  where given), ``backbones.<b>`` overrides it on one; ``none``: the settings (or ``all``, every
  setting not otherwise declared) the source states no value for, on the same backbones (the
  released side: "not released", a script that does not run or does not exist; the paper's:
  "not stated"); later blocks win. ``scope``: the backbones the entry covers (a grid search
  run on one), else every grid backbone. ``why``: setting (or ``setting@backbone``) -> the
  reason the suite differs, or, where no source gives a value, what the suite's value is.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from negcse.errors import UserError
from negcse.finite import first_non_finite
from negcse.generators import registry as generators
from negcse.generators.specs.gcse import thresholds
from negcse.io_utils import read_text, yaml_value
from negcse.methods.registry import method_class
from negcse.training.settings import TrainSettings
from negcse.workflow.config import ConfigError, guide_entries, method_corpus, resolve_method

#: the training settings that are hyperparameters (speed and bookkeeping settings are not)
TRAIN_KEYS = (
    "epochs",
    "batch_size",
    "learning_rate",
    "max_seq_len",
    "dropout",
    "scheduler",
    "warmup_ratio",
    "warmup_steps",
    "schedule_horizon",
    "weight_decay",
    "max_grad_norm",
    "precision",
    "eval_steps",
    "dev_max_seq_len",
    "data_order",
)
RESOURCE = "fidelity.yaml"
ALL = "all"
#: a ``none`` block's key for every setting not otherwise declared
EVERY = "*"
#: the derived row of the pooler a method's evaluation (and saved model) uses
EVAL_POOLER = "eval.pooler"


class FidelityError(ConfigError):
    """The reference file is malformed; the message names the key."""


@dataclass(frozen=True)
class Declared:
    value: Any
    source: str  # an id of ``sources``
    #: False: the source states that it gives no value (``none``)
    stated: bool = True


@dataclass(frozen=True)
class Reference:
    """One method's declarations, ``like`` resolved: setting -> backbone (or ``all``) ->
    value, for the released code and the paper; setting (``@backbone``) -> reason."""

    released: dict[str, dict[str, Declared]] = field(default_factory=dict)
    paper: dict[str, dict[str, Declared]] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)

    def value(self, side: str, key: str, backbone: str) -> Declared | None:
        declared = getattr(self, side)
        for k in (key, EVERY):
            found = declared.get(k, {})
            hit = found.get(backbone, found.get(ALL))
            if hit is not None:
                return hit
        return None

    def reason(self, key: str, backbone: str) -> str | None:
        return self.why.get(f"{key}@{backbone}", self.why.get(key))

    def keys(self) -> set[str]:
        return set(self.released) | set(self.paper)


@dataclass(frozen=True)
class Row:
    method: str
    backbone: str
    key: str
    ours: Any
    released: Declared | None
    paper: Declared | None
    reason: str | None
    #: the suite's value differs from the released one (or the paper's, where none is released)
    deviates: bool
    #: a note on how the value was planned here (a substitute: SAN's lexicon)
    planned: str | None = None

    @property
    def target(self) -> Declared | None:
        """The value the suite's is compared with: the released one, else the paper's."""
        for side in (self.released, self.paper):
            if side is not None and side.stated:
                return side
        return None


def load_reference(path: str | Path | None = None) -> dict[str, Any]:
    """The reference file (the packaged one by default), its sources and ``like`` links
    checked."""
    if path is None:
        text = resources.files("negcse.resources").joinpath(RESOURCE).read_text("utf-8")
        where = f"negcse/resources/{RESOURCE}"
    else:
        try:
            text, where = read_text(path), str(path)
        except UserError as exc:
            raise FidelityError(str(exc)) from None
    try:
        data = yaml_value(text) or {}
    except yaml.YAMLError as exc:
        raise FidelityError(f"{where}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise FidelityError(f"{where}: expected a mapping of sources and methods")
    found = first_non_finite(data)
    if found is not None:
        raise FidelityError(f"{where}: {found[0]}: {found[1]!r} is not a finite number")
    sources, methods = data.get("sources") or {}, data.get("methods") or {}
    if not isinstance(sources, dict) or not isinstance(methods, dict):
        raise FidelityError(f"{where}: sources and methods must be mappings")
    if not sources or not methods:
        raise FidelityError(f"{where}: declares no sources or no methods (an empty file?)")
    for method, entry in methods.items():
        if not isinstance(entry, dict) or not all(
            isinstance(entry.get(side) or [], list)
            and all(isinstance(b, dict) for b in entry.get(side) or [])
            for side in ("released", "paper")
        ):
            raise FidelityError(f"{where}: methods.{method}: expected a mapping of lists of blocks")
        like = entry.get("like")
        if like is not None and like not in methods:
            raise FidelityError(f"{where}: methods.{method}.like: no entry '{like}'")
        for side in ("released", "paper"):
            for i, block in enumerate(entry.get(side) or []):
                if block.get("source") not in sources:
                    raise FidelityError(
                        f"{where}: methods.{method}.{side}[{i}].source: "
                        f"'{block.get('source')}' is not in sources"
                    )
    return {"sources": sources, "methods": methods, "where": where}


def reference(ref: Mapping[str, Any], method: str, seen: tuple[str, ...] = ()) -> Reference:
    """``method``'s declarations, its ``like`` chain applied first."""
    entry = ref["methods"].get(method)
    if entry is None:
        return Reference()
    if method in seen:
        raise FidelityError(f"{ref['where']}: methods.{method}.like: a cycle {list(seen)}")
    base = reference(ref, entry["like"], (*seen, method)) if entry.get("like") else Reference()
    out = Reference(
        {k: dict(v) for k, v in base.released.items()},
        {k: dict(v) for k, v in base.paper.items()},
        dict(base.why),
    )
    for side in ("released", "paper"):
        target = getattr(out, side)
        for block in entry.get(side) or []:
            source = block["source"]
            only = block.get("only")
            none = block.get("none") or []
            given = [(key, Declared(None, source, False)) for key in _none_keys(none)]
            given += [(k, Declared(v, source)) for k, v in (block.get("values") or {}).items()]
            for key, declared in given:
                if only is None:  # a new value on every backbone
                    target[key] = {ALL: declared}
                else:
                    target.setdefault(key, {}).update(dict.fromkeys(only, declared))
            for backbone, values in (block.get("backbones") or {}).items():
                for key, value in (values or {}).items():
                    target.setdefault(key, {})[backbone] = Declared(value, source)
    out.why.update(entry.get("why") or {})
    return out


def _none_keys(none: Any) -> list[str]:
    return [EVERY] if none == "all" else list(none)


def scope(ref: Mapping[str, Any], method: str) -> list[str] | None:
    """The backbones ``method``'s entry (or the first of its ``like`` chain that says) is
    declared for (``scope``: e.g. a grid search of one backbone); None: every grid backbone."""
    entry = ref["methods"].get(method) or {}
    if "scope" in entry:
        return list(entry["scope"])
    return scope(ref, entry["like"]) if entry.get("like") else None


def _guide(entry: Mapping[str, Any]) -> str:
    """``model NAME``, or ``run METHOD`` (the student's backbone and seed unless the entry
    names them: ``on B``, ``seed S``)."""
    if "model" in entry:
        return f"model {entry['model']}"
    where = f" on {entry['backbone']}" if "backbone" in entry else ""
    seed = f", seed {entry['seed']}" if "seed" in entry else ""
    return f"run {entry['method']}{where}{seed}"


#: (setting, the suite's value) -> the value it stands for where the papers ran (CUDA)
EQUIVALENT = {("train.precision", "auto"): "fp16"}


def ours(config: dict[str, Any], method: str, backbone: str, keys: Iterable[str]) -> dict[str, Any]:
    """What the run of ``method`` on ``backbone`` uses: every training hyperparameter, every
    method parameter, its corpus and guides, and the generator settings ``keys`` names."""
    spec = resolve_method(config, method, backbone)
    train = asdict(TrainSettings.from_dict(spec["train"]))
    out: dict[str, Any] = {f"train.{k}": train[k] for k in TRAIN_KEYS}
    out |= {f"params.{k}": v for k, v in spec["params"].items()}
    out["corpus"] = method_corpus(config, method)
    for name, entry in sorted(guide_entries(config, method, backbone).items()):
        out[f"guides.{name}"] = _guide(entry)
    impl = method_class(config["methods"][method]["implementation"])
    out[EVAL_POOLER] = impl.eval_pooler
    reads = {*impl.columns, *([impl.corpus_column] if impl.corpus_column else [])}
    for gen in generators.specs().values():
        if not reads & set(gen.columns):
            continue
        settings = generators.settings(config, gen.name, method if gen.per_method else None)
        for key in sorted(keys):
            prefix = f"generators.{gen.name}."
            if key.startswith(prefix) and key[len(prefix) :] in settings:
                out[key] = settings[key[len(prefix) :]]
        if "lexicon_source" in settings:  # SAN's released lexicon was substituted here
            out[f"generators.{gen.name}.lexicon"] = settings["lexicon_source"]
        if gen.name == "gcse":  # null thresholds: the mode's
            alpha, beta = thresholds(settings)
            out |= {"generators.gcse.alpha": alpha, "generators.gcse.beta": beta}
    return {k: v for k, v in out.items() if k in keys or not k.startswith("generators.")}


def same(a: Any, b: Any) -> bool:
    """Equal values, numbers to relative 1e-9 (1e-5 == 0.00001), a list as its tuple."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def rows(
    config: dict[str, Any],
    ref: Mapping[str, Any],
    methods: Sequence[str] | None = None,
    backbones: Sequence[str] | None = None,
) -> list[Row]:
    """One row per (method, backbone, setting) of the configured methods on the grid's
    backbones."""
    out = []
    for method in methods or list(config["methods"]):
        declared = reference(ref, method)
        wanted = backbones or config["grid"]["backbones"]
        only = scope(ref, method)
        for backbone in [b for b in wanted if only is None or b in only]:
            used = ours(config, method, backbone, declared.keys())
            for key, value in used.items():
                row = Row(
                    method,
                    backbone,
                    key,
                    value,
                    declared.value("released", key, backbone),
                    declared.value("paper", key, backbone),
                    declared.reason(key, backbone),
                    False,
                )
                target = row.target
                stands_for = EQUIVALENT.get((key, value), value)
                deviates = target is not None and not same(stands_for, target.value)
                planned = None
                if key == "generators.san.lexicon" and "unavailable" in str(value):
                    planned = f"substituted where planned: {value}"
                out.append(replace(row, deviates=deviates, planned=planned))
    return out


def undeclared(found: Iterable[Row]) -> list[Row]:
    """Rows whose value differs from the released (else the paper's) without a reason."""
    return [r for r in found if r.deviates and not r.reason and not r.planned]


def unreferenced(found: Iterable[Row]) -> list[Row]:
    """Rows with no reference at all: no released value, no paper value and no source
    stating that it gives none (a setting the drift check would be blind to)."""
    return [r for r in found if r.released is None and r.paper is None]


def unchecked(config: dict[str, Any], ref: Mapping[str, Any], found: Sequence[Row]) -> list[str]:
    """What the reference fails to cover or names in vain: configured methods without an
    entry, settings an entry declares (itself, not through ``like``) that none of its rows
    uses, and reasons for settings it never shows."""
    problems = [f"methods.{m}: no entry" for m in config["methods"] if m not in ref["methods"]]
    shown: dict[str, set[str]] = {}
    for r in found:
        shown.setdefault(r.method, set()).add(r.key)
    for method, entry in ref["methods"].items():
        if method not in shown:
            continue
        own = {
            key
            for side in ("released", "paper")
            for block in entry.get(side) or []
            for key in [
                *(block.get("values") or {}),
                *(k for v in (block.get("backbones") or {}).values() for k in v or {}),
                *(k for k in _none_keys(block.get("none") or []) if k != EVERY),
            ]
        }
        own |= {key.split("@")[0] for key in entry.get("why") or {}}
        problems += [
            f"methods.{method}: {key} is never used" for key in sorted(own - shown[method])
        ]
    return problems


def fmt(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(fmt(v) for v in value) or "[]"
    return str(value).replace("|", "\\|")


def _cell(declared: Declared | None, side: str) -> str:
    if declared is None:
        return "—"
    said = fmt(declared.value) if declared.stated else NONE_SAID[side]
    return f"{said} [{declared.source}]"


#: a ``none`` declaration's cell on each side
NONE_SAID = {"released": "not released", "paper": "not stated"}


def parent(config: Mapping[str, Any], ref: Mapping[str, Any], method: str) -> str | None:
    """The nearest configured method up ``method``'s ``like`` chain (its table is shown in
    full; ``method``'s shows only where the two differ)."""
    like = (ref["methods"].get(method) or {}).get("like")
    while like is not None and like not in config["methods"]:
        like = (ref["methods"].get(like) or {}).get("like")
    return like


def _cells(r: Row) -> tuple[str, str, str, str]:
    shown = fmt(r.ours)
    if (r.key, r.ours) in EQUIVALENT:
        shown += f" ({EQUIVALENT[(r.key, r.ours)]} on CUDA)"
    explained = r.deviates or r.planned or r.target is None
    return (
        f"**{shown}**" if r.deviates else shown,
        _cell(r.released, "released"),
        _cell(r.paper, "paper"),
        (r.planned or r.reason or "") if explained else "",
    )


def render(config: dict[str, Any], ref: Mapping[str, Any], found: Sequence[Row]) -> str:
    """The markdown page: the sources, then one table per method, backbones with the same
    row merged; a method declared ``like`` another configured one lists only what differs."""
    lines = [
        "# Fidelity table",
        "",
        "<!-- generated by `negcse fidelity --out docs/fidelity-table.md` from config/defaults.yaml,",
        "params.yaml and src/negcse/resources/fidelity.yaml; tests/workflow/test_fidelity_table.py",
        "keeps it in step: do not edit by hand -->",
        "",
        "Every hyperparameter each configured method uses on each backbone (resolved from",
        "config/defaults.yaml and params.yaml as the workflow resolves a run), beside the",
        "released script's value and the paper's, each with its source (below). A value in",
        "**bold** differs from the",
        "released one (or from the paper's, where no code was released); the last column says",
        'why. "not released" / "not stated": the source says it gives no value (no script',
        "for that backbone, a script that cannot run as written, no code at all; the last column",
        "then says what the suite uses); — : the source is silent where the other gives the",
        "value. Every row has a released or paper value or such a statement, so changing any",
        "default with a value fails `negcse fidelity --check`. `eval.pooler` is the pooler of",
        "the evaluation and of the saved model. `auto` precision is fp16 autocast on CUDA (where",
        "the papers trained), fp32 on CPU. A method whose declarations start from another",
        "method's lists only the rows where the two differ. The policy",
        "([fidelity.md](fidelity.md)): the paper's method with the released code's",
        "hyperparameters as defaults; a released bug that changes results fixed by default and",
        "reproducible behind a switch.",
        "",
        "## Sources",
        "",
    ]
    lines += [f"- `{sid}`: {cite}" for sid, cite in ref["sources"].items()]
    lines += sections(config, ref, found)
    return "\n".join(lines) + "\n"


def sections(
    config: Mapping[str, Any],
    ref: Mapping[str, Any],
    found: Sequence[Row],
    methods: Sequence[str] | None = None,
    level: int = 2,
) -> list[str]:
    """One table per method (of ``methods``, else every method of ``found``), backbones with
    the same row merged; a method declared ``like`` another one shown lists only where the two
    differ."""
    by_method: dict[str, list[Row]] = {}
    for r in found:
        if methods is None or r.method in methods:
            by_method.setdefault(r.method, []).append(r)
    cells = {(r.method, r.backbone, r.key): _cells(r) for r in found}
    backbones = list(dict.fromkeys(r.backbone for r in found))
    lines: list[str] = []
    for method, method_rows in by_method.items():
        entry = config["methods"][method]
        head = [f"implementation `{entry['implementation']}`"]
        if entry.get("baseline"):
            head.append(f"compared with `{entry['baseline']}`")
        base = parent(config, ref, method)
        if base is not None and base in by_method:
            head.append(f"as `{base}` except the rows below")
            method_rows = [
                r
                for r in method_rows
                if cells[(r.method, r.backbone, r.key)] != cells.get((base, r.backbone, r.key))
            ]
        lines += ["", f"{'#' * level} {method}", "", "; ".join(head) + ".", ""]
        if not method_rows:
            lines.append("No setting differs.")
            continue
        lines += [
            "| setting | backbones | ours | released | paper | why they differ |",
            "|---|---|---|---|---|---|",
        ]
        groups: dict[str, dict[tuple[str, ...], list[str]]] = {}
        for r in method_rows:
            groups.setdefault(r.key, {}).setdefault(
                cells[(r.method, r.backbone, r.key)], []
            ).append(r.backbone)
        for key, variants in groups.items():
            for row_cells, where in variants.items():
                named = ALL if where == backbones else ", ".join(where)
                lines.append(f"| `{key}` | {named} | " + " | ".join(row_cells) + " |")
    return lines


#: a generated block of a prose page: ``<!-- fidelity-table: m1 m2 -->`` ... ``<!-- /fidelity-table -->``
BLOCK = re.compile(
    r"(<!-- fidelity-table: (?P<methods>[^>]*?) -->\n)(?P<body>.*?)(<!-- /fidelity-table -->)",
    re.DOTALL,
)


def fill_pages(
    text: str,
    config: Mapping[str, Any],
    ref: Mapping[str, Any],
    found: Sequence[Row],
    where: str = "page",
) -> str:
    """``text`` with each marked block replaced by the tables of the methods its marker names
    (the rows of the table page, headings at level 4); a method not in ``found`` is an error
    naming the page."""
    shown = {r.method for r in found}

    def table(match: re.Match[str]) -> str:
        methods = match["methods"].split()
        missing = [m for m in methods if m not in shown]
        if not methods or missing:
            raise FidelityError(
                f"{where}: fidelity-table block names {missing or 'no method'}, not configured"
            )
        lines = sections(config, ref, found, methods, level=4)
        body = "\n".join(["<!-- generated by `negcse fidelity --pages`: do not edit -->", *lines])
        return f"{match[1]}{body}\n\n{match[4]}"

    return BLOCK.sub(table, text)
