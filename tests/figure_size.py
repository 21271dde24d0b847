"""The size of a figure as saved: a matplotlib PDF's page (its MediaBox) in points."""

from __future__ import annotations

import re
from pathlib import Path


def pdf_size(path: Path) -> tuple[float, float]:
    """A PDF's page width and height in points (its MediaBox, as matplotlib writes it)."""
    box = re.search(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", path.read_bytes())
    assert box, path
    return float(box.group(1)), float(box.group(2))
