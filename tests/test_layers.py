"""The package's layers point one way (docs/architecture.md draws them from ``LAYERS``).

An AST check over ``src/negcse``: no import from a lower layer into a higher one, no import loop
between two packages (of one layer), and no function-local ``negcse`` import beyond the few
listed below. A module that only some commands need and that is slow to import (torch, spaCy,
mteb) is bound at the top as ``negcse.runtime.lazy.LazyModule("negcse....")`` instead, which this check
reads as an import. ``if TYPE_CHECKING:`` imports count as imports too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "negcse"

#: the one layer map: top layer first; each entry names negcse's packages and top-level modules.
#: An import may point to its own layer or any layer below, never above; two packages of one
#: layer must not import each other (directly or around a loop).
LAYERS: dict[str, tuple[str, ...]] = {
    "entry points": ("__main__", "cli", "commands"),
    # what the Snakefile reads: config checks, guides, the GPU estimate and slots, the lock tools
    "workflow": ("workflow",),
    # tables read the evaluations' JSONs (and the analyses' helpers)
    "tables": ("tables", "dvc_plots"),
    # the evaluations and the frozen model they load (model_cli: the options of `negcse
    # evaluate`; st_module: the path that models saved by earlier versions name for
    # sentence-transformers, now negcse.encoders.st_module)
    "evaluation": ("evaluation", "model_cli", "st_module"),
    # the trainer drives the method contract, as sentence-transformers' trainer drives its
    # losses; the analyses (of a trained encoder) serve the evaluations and the tables
    "training": ("training", "analysis"),
    # methods read their generators' column names; generators write the columns
    "methods and generators": ("methods", "generators"),
    "losses and data": ("losses", "data", "gcse", "llm"),
    "base utilities": (
        # encoders: poolers, the pretrained transformer, prompt templates, the
        # sentence-transformers modules, sentence vectors; runtime: lazy imports, seeds, device,
        # the lock record; text: LaTeX/Markdown escaping, names, display names, MER
        "encoders", "runtime", "text", "errors", "finite", "io_utils", "plugins",
        "resources", "schemas",
    ),
}  # fmt: skip

#: top-level modules that belong to a package of their layer: one node for the loop check
PART_OF = {"model_cli": "evaluation", "st_module": "evaluation", "__main__": "cli"}

#: (module, imported module) of the function-local negcse imports that stay, each with why
LOCAL_IMPORTS: dict[tuple[str, str], str] = {}

#: Known violations that work in progress owns, each (module, imported module) -> whose
#: (none left: the generators import nothing of methods or workflow, and nothing function-local)
KNOWN: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted
    target: str  # the imported negcse module, dotted
    line: int
    local: bool  # inside a function


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")[: len(module.split(".")) - node.level + int(is_package)]
    return ".".join([*parts, *([node.module] if node.module else [])])


def imports(root: Path) -> Iterator[Import]:
    """Every import of a module of ``root``'s package (named after the folder) in its files;
    ``LazyModule("<pkg>.x")`` counts as a top-level import of ``<pkg>.x``."""
    pkg = root.name
    for path in sorted(root.rglob("*.py")):
        parts = (pkg, *path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        module = ".".join(parts[:-1] if is_package else parts)
        yield from _walk(ast.parse(path.read_text("utf-8")), module, is_package, pkg, False)


def _walk(node: ast.AST, module: str, is_package: bool, pkg: str, local: bool) -> Iterator[Import]:
    for child in ast.iter_child_nodes(node):
        targets: list[str] = []
        if isinstance(child, ast.Import):
            targets = [a.name for a in child.names]
        elif isinstance(child, ast.ImportFrom):
            base = _resolve(module, is_package, child)
            # `from pkg import sub` imports pkg.sub when sub is a module: keep both readings
            targets = [base] if child.module or not child.level else []
            targets += [f"{base}.{a.name}" for a in child.names if not child.module]
        elif (isinstance(child, ast.Call) and isinstance(child.func, ast.Name)
              and child.func.id == "LazyModule" and child.args
              and isinstance(child.args[0], ast.Constant)):  # fmt: skip
            targets = [str(child.args[0].value)]
        for target in targets:
            if target == pkg or target.startswith(pkg + "."):
                yield Import(module, target, getattr(child, "lineno", 0), local)
        inner = local or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        yield from _walk(child, module, is_package, pkg, inner)


def _name(module: str) -> str:
    """The layer map's name of a dotted module: its first part below the package."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


@dataclass
class Report:
    unplaced: list[str]  # modules of no layer
    upward: list[str]
    cycles: list[list[str]]
    local: list[str]


def check(root: Path, layers: Mapping[str, tuple[str, ...]], part_of: Mapping[str, str],
          allowed_local: Mapping[tuple[str, str], str],
          known: Mapping[tuple[str, str], str]) -> Report:  # fmt: skip
    """Every layer violation of the package at ``root`` but those in ``known``."""
    rank = {name: -i for i, names in enumerate(layers.values()) for name in names}
    rank["__init__"] = min(rank.values())  # the package's own __init__: a base module
    found = [i for i in imports(root) if (i.module, i.target) not in known]
    names = {_name(i.module) for i in found} | {p.stem for p in root.glob("*.py")}
    names |= {p.name for p in root.iterdir() if (p / "__init__.py").is_file()}
    report = Report(sorted(names - rank.keys() - {"__init__"}), [], [], [])
    graph: dict[str, set[str]] = {}
    for i in found:
        a, b = _name(i.module), _name(i.target)
        if a in rank and b in rank and rank[b] > rank[a]:
            report.upward.append(f"{i.module}:{i.line} imports {i.target} (a higher layer)")
        na, nb = part_of.get(a, a), part_of.get(b, b)
        if na != nb:
            graph.setdefault(na, set()).add(nb)
        if i.local and (i.module, i.target) not in allowed_local:
            report.local.append(f"{i.module}:{i.line} imports {i.target} inside a function")
    report.cycles = _cycles(graph)
    return report


def _cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """One loop per strongly connected group of two or more nodes (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    loops: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                loops.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return loops


def test_negcse_layers_point_one_way() -> None:
    report = check(SRC, LAYERS, PART_OF, LOCAL_IMPORTS, KNOWN)
    assert report.unplaced == [], "place these in tests/test_layers.py's LAYERS"
    assert report.upward == []
    assert report.cycles == []
    assert report.local == [], "import at the top, or bind a negcse.runtime.lazy.LazyModule there"


def test_the_allowances_are_few_and_still_needed() -> None:
    assert len(LOCAL_IMPORTS) <= 5
    everything = {(i.module, i.target) for i in imports(SRC)}
    assert set(LOCAL_IMPORTS) | set(KNOWN) <= everything, "an allowance no import needs"


def _package(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in files.items():
        path = root / "toy" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "toy"


def test_the_check_finds_an_upward_import_a_loop_and_a_local_import(tmp_path: Path) -> None:
    toy = _package(tmp_path, {
        "__init__.py": "",
        "top/__init__.py": "",
        "top/run.py": "from toy.low.a import f\n",
        "low/__init__.py": "",
        "low/a.py": "from toy.top import run\nfrom ..mid import b\n",
        "mid/__init__.py": "",
        "mid/b.py": "from toy.lazy import LazyModule\nA = LazyModule('toy.low.a')\n"
                    "def g():\n    import toy.base\n",
        "base.py": "",
        "lazy.py": "",
        "stray.py": "",
    })  # fmt: skip
    layers = {"top": ("top",), "mid": ("mid", "low"), "base": ("base", "lazy")}
    report = check(toy, layers, {}, {}, {})
    assert report.unplaced == ["stray"]
    assert report.upward == ["toy.low.a:1 imports toy.top (a higher layer)"]
    # top.run -> low.a -> top; low.a -> mid.b (relative), mid.b -> low.a (lazy)
    assert report.cycles == [["low", "mid", "top"]]
    assert report.local == ["toy.mid.b:4 imports toy.base inside a function"]
    # what is known or allowed is not reported
    allowed = check(
        toy, layers, {}, {("toy.mid.b", "toy.base"): "why"}, {("toy.low.a", "toy.top"): ""}
    )
    assert allowed.upward == allowed.local == []
    assert allowed.cycles == [["low", "mid"]]


def test_the_architecture_drawing_follows_the_map() -> None:
    """docs/architecture.md's drawing names each layer's members on its row (and the row under
    it), top layer first."""
    text = (SRC.parents[1] / "docs" / "architecture.md").read_text("utf-8")
    rows = [
        set(line.split()) for line in text.split("## Layers", 1)[1].split("```")[1].splitlines()
    ]
    row = -1
    for layer, names in LAYERS.items():
        row = next((i for i in range(row + 1, len(rows)) if names[0] in rows[i]), len(rows))
        shown = rows[row] | rows[row + 1] if row + 1 < len(rows) else set()
        assert set(names) <= shown, f"layer {layer!r}: {names} not drawn in order"
