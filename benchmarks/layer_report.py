"""The layer figures of benchmarks/architecture.md for any checkout: upward imports, package
loops and function-local ``negcse`` imports of its ``src/negcse``, by tests/test_layers.py's
check and layer map, with no allowances (``python benchmarks/layer_report.py TREE...``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_layers import LAYERS, PART_OF, check


def main(trees: list[str]) -> None:
    for tree in trees:
        report = check(Path(tree) / "src" / "negcse", LAYERS, PART_OF, {}, {})
        loops = "; ".join(", ".join(loop) for loop in report.cycles) or "none"
        print(
            f"{tree}: {len(report.upward)} upward imports, {len(report.cycles)} package loops "
            f"({loops}), {len(report.local)} function-local negcse imports, "
            f"unplaced modules: {report.unplaced or 'none'}"
        )


if __name__ == "__main__":
    main(sys.argv[1:] or ["."])
