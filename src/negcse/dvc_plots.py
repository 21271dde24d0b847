"""An HTML page template for ``dvc plots show`` that works offline.

DVC's default page loads Vega, Vega-Lite and vega-embed from a CDN, so without a network it is
blank. Snakemake's wheel ships the same three libraries (for its reports), each pinned by a
sha256 in ``snakemake.assets.Assets.spec``; this template inlines them. ``.dvc/config`` names
it (``plots.html_template``), so ``dvc plots show`` and ``dvc plots diff`` write pages that load
nothing from the network. The template is ~2 MB and generated (``make setup``), not in git.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import os

from negcse.errors import UserError
from negcse.io_utils import atomic_open

#: the libraries in load order (vega-lite needs vega; vega-embed needs both)
LIBRARIES = ("vega/vega.js", "vega-lite/vega-lite.js", "vega-embed/vega-embed.js")
#: where ``.dvc/config`` expects the template (``plots.html_template``, relative to ``.dvc``)
DEFAULT_PATH = os.path.join(".dvc", "plots-offline.html")
#: what DVC fills in: its script tags (left out: they point at the CDN), the plots, a refresh
PLACEHOLDERS = ("{scripts}", "{plot_divs}", "{refresh_tag}")

PAGE = """<!DOCTYPE html>
<html>
<head>
    {refresh_tag}
    <meta charset="utf-8">
    <title>DVC Plot</title>
    <!-- {versions}: inlined from snakemake's wheel (negcse plots-template), no CDN -->
{libraries}
    <style>
        table {
            border-spacing: 15px;
        }
    </style>
</head>
<body>
    {plot_divs}
</body>
</html>
"""


def library_sources() -> dict[str, str]:
    """Each library's JavaScript, checked against snakemake's pinned sha256."""
    from snakemake.assets import Assets

    base = importlib.resources.files("snakemake.assets") / "data"
    sources = {}
    for name in LIBRARIES:
        path = base / name
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise UserError(
                f"{path}: {exc.strerror or exc}; reinstall snakemake (make setup)"
            ) from None
        pinned = Assets.spec[name].sha256
        if hashlib.sha256(data).hexdigest() != pinned:
            raise UserError(f"{path}: sha256 differs from snakemake's pin {pinned}")
        text = data.decode("utf-8")
        for bad in ("</script", *PLACEHOLDERS):
            if bad in text:
                raise UserError(f"{path}: contains {bad!r}, cannot be inlined in the template")
        sources[name] = text
    return sources


def page_template() -> str:
    """The template: the three libraries inline, DVC's ``{plot_divs}`` and ``{refresh_tag}``."""
    from snakemake.assets import Assets

    sources = library_sources()
    versions = ", ".join(f"{n.split('/')[0]} {Assets.get_version(n)}" for n in LIBRARIES)
    scripts = "\n".join(f"<script>\n{sources[n]}\n</script>" for n in LIBRARIES)
    return PAGE.replace("{versions}", versions).replace("{libraries}", scripts)


def write_template(path: str | os.PathLike[str] = DEFAULT_PATH) -> str:
    with atomic_open(path) as fh:
        fh.write(page_template())
    return os.fspath(path)
