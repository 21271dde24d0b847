"""GCSE's prompts, loaded from ``resources/gcse_prompts.json`` (texts as data, each with its
source: a figure of the paper or a file of the released code)."""

from __future__ import annotations

import json
import string
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

ROLES = ("extraction", "positive", "negative", "extension")
MODES = ("paper", "released")
KINDS = ("extraction", "rewrite", "antisense", "entity_revision", "quantity_revision", "extension")


@dataclass(frozen=True)
class Prompt:
    name: str
    role: str
    kind: str
    modes: tuple[str, ...]
    source: str
    template: str
    fields: frozenset[str]
    required: tuple[str, ...] = ("text",)
    text_field: str | None = "text"
    fills: dict[str, tuple[str, ...]] = field(default_factory=dict)
    weight: float = 1.0
    as_list: bool = False  # the answer is a JSON list (the released entity extraction)

    def render(self, **values: str) -> str:
        missing = self.fields - values.keys()
        if missing:
            raise KeyError(f"prompt {self.name} needs {sorted(missing)}")
        return self.template.format(**{k: v for k, v in values.items() if k in self.fields})


def _fields(template: str) -> frozenset[str]:
    return frozenset(f for _, f, _, _ in string.Formatter().parse(template) if f)


def load_prompts(path: str | Path | None = None) -> dict[str, Prompt]:
    """All prompts by name; a malformed entry raises ValueError naming the file and entry."""
    if path is None:
        text = resources.files("negcse.resources").joinpath("gcse_prompts.json").read_text("utf-8")
        where = "negcse/resources/gcse_prompts.json"
    else:
        text, where = Path(path).read_text("utf-8"), str(path)
    try:
        entries: list[dict[str, Any]] = json.loads(text)["prompts"]
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        raise ValueError(f"{where}: not a prompts file ({err})") from err
    out: dict[str, Prompt] = {}
    for n, e in enumerate(entries):
        label = f"{where}: prompt {n} ({e.get('name', '?')})"
        try:
            role = e["role"]
            kind = e.get("kind", role)
            mode = e["mode"]
            if role not in ROLES or kind not in KINDS or mode not in (*MODES, "both"):
                raise ValueError(f"role {role!r}, kind {kind!r} or mode {mode!r} is unknown")
            fields = _fields(e["template"])
            if "input_text" not in fields:
                raise ValueError("template has no {input_text}")
            fills = {k: tuple(v) for k, v in e.get("fills", {}).items()}
            if not set(fills) <= fields:
                raise ValueError(f"fills {sorted(set(fills) - fields)} are not template fields")
            required = tuple(e.get("required", ["text"]))
            prompt = Prompt(
                name=e["name"],
                role=role,
                kind=kind,
                modes=MODES if mode == "both" else (mode,),
                source=e["source"],
                template=e["template"],
                fields=fields,
                required=required,
                text_field=e.get("text_field", "text" if required == ("text",) else None),
                fills=fills,
                weight=float(e.get("weight", 1.0)),
                as_list=bool(e.get("as_list", False)),
            )
            prompt.render(**dict.fromkeys(fields, "x"))  # the template formats
        except (KeyError, ValueError, IndexError) as err:
            raise ValueError(f"{label}: {err}") from err
        if prompt.name in out:
            raise ValueError(f"{label}: duplicate name")
        out[prompt.name] = prompt
    return out


def prompts_for(prompts: dict[str, Prompt], role: str, mode: str) -> list[Prompt]:
    return [p for p in prompts.values() if p.role == role and mode in p.modes]
