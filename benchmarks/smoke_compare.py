"""Two smoke runs' outputs, file by file: byte-identical, equal JSON but for timing keys, or
different (or only in one run).

    python benchmarks/smoke_compare.py RUN_A RUN_B [--ignore GLOB ...]

RUN_A and RUN_B are run folders holding ``results/`` (or ``results/`` folders themselves). Every
file under either is compared; a ``.json`` file whose bytes differ is compared as JSON without the
keys of :data:`TIMING_KEYS`, at any depth. ``--ignore GLOB`` leaves out the files whose path
under ``results/`` matches (a known nondeterministic output). Prints a count per kind and each
file that differs; exits 1 when any does, else 0.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
from pathlib import Path

#: keys that hold a duration: the only ones two runs of the same jobs may differ in
TIMING_KEYS = frozenset({"seconds", "encode_seconds", "fit_seconds"})


def results_tree(run: Path) -> Path:
    return run / "results" if (run / "results").is_dir() else run


def without_timing(value: object) -> object:
    """``value`` (parsed JSON) without the keys of :data:`TIMING_KEYS`, at every depth."""
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def files(tree: Path, ignore: list[str]) -> set[str]:
    """The files under ``tree``, as paths relative to it, less those ``ignore`` matches."""
    names = (p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file())
    return {name for name in names if not any(fnmatch.fnmatch(name, g) for g in ignore)}


def compare(a: Path, b: Path, ignore: list[str] = []) -> dict[str, list[str]]:  # noqa: B006
    """Each file's kind: ``identical``, ``timing`` (JSON equal but for timing keys),
    ``different``, ``only_a``, ``only_b``; the paths under ``results/``, sorted."""
    a, b = results_tree(a), results_tree(b)
    in_a, in_b = files(a, ignore), files(b, ignore)
    kinds: dict[str, list[str]] = {k: [] for k in ("identical", "timing", "different")}
    kinds["only_a"] = sorted(in_a - in_b)
    kinds["only_b"] = sorted(in_b - in_a)
    for name in sorted(in_a & in_b):
        left, right = (a / name).read_bytes(), (b / name).read_bytes()
        if left == right:
            kinds["identical"].append(name)
        elif name.endswith(".json") and _json_equal(left, right):
            kinds["timing"].append(name)
        else:
            kinds["different"].append(name)
    return kinds


def _json_equal(left: bytes, right: bytes) -> bool:
    try:
        return without_timing(json.loads(left)) == without_timing(json.loads(right))
    except ValueError:  # not JSON: the bytes decide
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_a", type=Path)
    parser.add_argument("run_b", type=Path)
    parser.add_argument("--ignore", action="append", default=[], metavar="GLOB")
    args = parser.parse_args(argv)
    for run in (args.run_a, args.run_b):
        if not run.is_dir():
            print(f"smoke_compare: error: {run}: no such folder", file=sys.stderr)
            return 2
    kinds = compare(args.run_a, args.run_b, args.ignore)
    print(
        f"identical {len(kinds['identical'])}, equal but timing keys {len(kinds['timing'])}, "
        f"different {len(kinds['different'])}, only in A {len(kinds['only_a'])}, "
        f"only in B {len(kinds['only_b'])}"
    )
    for kind in ("different", "only_a", "only_b"):
        for name in kinds[kind]:
            print(f"{kind}: {name}")
    return 1 if kinds["different"] or kinds["only_a"] or kinds["only_b"] else 0


if __name__ == "__main__":
    sys.exit(main())
