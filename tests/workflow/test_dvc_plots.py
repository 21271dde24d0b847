"""``dvc plots show`` works offline: the page template inlines Vega (from snakemake's wheel,
checked by sha256), ``.dvc/config`` names it, and the page DVC writes loads no script from the
network and renders every run's curve in node with no network at all."""

from __future__ import annotations

import configparser
import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from negcse.dvc_plots import DEFAULT_PATH, LIBRARIES

REPO = Path(__file__).resolve().parents[2]
RENDER = Path(__file__).with_name("render_dvc_page.js")
#: a script or stylesheet the browser would fetch from the network
REMOTE = re.compile(
    r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*[\"']?(?:https?:)?//", re.I
)


def test_dvc_config_names_the_generated_template() -> None:
    config = configparser.ConfigParser()
    config.read(REPO / ".dvc" / "config")
    assert Path(REPO / ".dvc" / config["plots"]["html_template"]) == REPO / DEFAULT_PATH
    assert "/plots-offline.html" in (REPO / ".dvc" / ".gitignore").read_text().split()


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What `dvc plots show` writes for the committed curves with the generated template."""
    tmp = tmp_path_factory.mktemp("plots")
    negcse = [sys.executable, "-m", "negcse", "plots-template", "--out", str(tmp / "t.html")]
    subprocess.run(negcse, check=True, capture_output=True)
    dvc = [shutil.which("dvc") or "dvc", "plots", "show", "-o", str(tmp / "out")]
    subprocess.run([*dvc, "--html-template", str(tmp / "t.html")], cwd=REPO, check=True,
                   capture_output=True)  # fmt: skip
    return tmp / "out" / "index.html"


def test_page_loads_nothing_from_the_network(page: Path) -> None:
    html = page.read_text(encoding="utf-8")
    assert not REMOTE.search(html), REMOTE.search(html)
    assert "cdn.jsdelivr.net" not in html  # DVC's default script tags are left out
    bodies = re.findall(r"<script[^>]*>(.*?)</script>", html, re.S)
    # the three libraries inline, in load order, then one script per plot of dvc.yaml
    for body, name in zip(bodies, ("vega", "vegaLite", "vegaEmbed"), strict=False):
        assert f"global.{name} = " in body
    plots = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]["workflow"]["plots"]
    assert len(bodies) == len(LIBRARIES) + len(plots)
    assert all("vegaEmbed('#" in body for body in bodies[len(LIBRARIES) :])


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the page's scripts")
def test_page_renders_every_run_offline(page: Path) -> None:
    out = subprocess.run(["node", str(RENDER), str(page)], check=True, capture_output=True,
                         text=True)  # fmt: skip
    plots = json.loads(out.stdout)
    spec = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]["workflow"]["plots"]
    assert len(plots) == len(spec) == 2
    for entry in spec:
        ((path, settings),) = entry.items()
        (plot,) = [p for p in plots if settings["title"] in p["texts"]]
        for label in (settings["x_label"], settings["y_label"]):
            assert label in plot["texts"]
        with open(REPO / path, newline="") as fh:
            rows = list(csv.DictReader(fh))
        runs = {(r["method"], r["backbone"], r["seed"]) for r in rows}
        assert plot["marks"] >= len(runs)  # at least one line per run
        if path.endswith("training_curves.csv"):
            # a row of panels per family, each with a legend naming its methods as the tables do
            assert {r["name"] for r in rows} <= set(plot["texts"])
            assert {r["family"] for r in rows} <= set(plot["texts"])
        else:
            # a panel per quantity; the legend names the families, in the families' colours
            assert {r["quantity"] for r in rows} <= set(plot["texts"])
            assert {r["family"] for r in rows} <= set(plot["texts"])


def test_the_loss_plot_colours_each_family_as_the_figures_do() -> None:
    from negcse.text.display import FAMILIES, OTHER

    template = json.loads((REPO / ".dvc/plots/training_loss.json").read_text())
    scale = template["spec"]["encoding"]["color"]["scale"]
    families = [*FAMILIES, OTHER]
    assert scale == {"domain": [f.label for f in families], "range": [f.color for f in families]}
    curves = json.loads((REPO / ".dvc/plots/training_curves.json").read_text())
    assert curves["facet"]["row"]["sort"] == [f.label for f in families]


def test_a_library_that_differs_from_snakemakes_pin_is_refused(monkeypatch, tmp_path) -> None:
    from snakemake.assets import Asset, Assets

    from negcse.dvc_plots import write_template
    from negcse.errors import UserError

    fake = Asset(url="", version="0", sha256="0" * 64)
    monkeypatch.setitem(Assets.spec, "vega-lite/vega-lite.js", fake)
    with pytest.raises(UserError, match=r"vega-lite\.js: sha256 differs from snakemake's pin 0+$"):
        write_template(tmp_path / "t.html")
    assert not (tmp_path / "t.html").exists()
