"""Every HTML page a reader opens renders in a real browser: the committed tables and paper pages
(``results/tables/*.html``, ``results/reports/*.html``) and pages built here from made-up
evaluations, each opened from disk in Debian's headless Chromium, driven by Playwright. A page
fails on an image that does not load, a link to a file that does not exist, or Markdown or LaTeX
left raw in the text a reader sees."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from fake_evals import table_inputs, write_run
from negcse.workflow.config import method_baselines, method_papers, project_config

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
#: headless and quiet: no sandbox (CI runs as root), no GPU, nothing fetched in the background
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip

playwright = pytest.importorskip("playwright.sync_api", reason="playwright (the dev extra)")
if not Path(CHROMIUM).is_file():
    # .ci/run installs chromium and sets NEGCSE_REQUIRE_CHROMIUM: there a skip is a failure
    if os.environ.get("NEGCSE_REQUIRE_CHROMIUM"):
        pytest.fail(f"{CHROMIUM} not found, and NEGCSE_REQUIRE_CHROMIUM is set", pytrace=False)
    pytest.skip("chromium not installed (Debian: apt-get install chromium)", allow_module_level=True)

#: what Markdown left unrendered looks like in a page's text
RAW_MARKDOWN = {
    "bold": re.compile(r"\*\*\S"),
    "link or image": re.compile(r"!?\[[^\]]*\]\([^)]*\)"),
    "heading": re.compile(r"^#{1,6} ", re.M),
    "table row": re.compile(r"^\|.*\|$", re.M),
    "table rule": re.compile(r"\|\s*-{3,}"),
    "code": re.compile(r"`"),
}
#: what LaTeX left raw looks like
RAW_LATEX = {
    "command": re.compile(r"\\[A-Za-z]+"),
    "math": re.compile(r"\$[^$\s][^$]*\$"),
    "subscript": re.compile(r"_\{"),
    "quotes": re.compile(r"``|''"),
}


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield browser
        browser.close()


def problems(browser: object, page_path: Path) -> list[str]:
    """What a reader of ``page_path`` would see broken (empty: the page renders)."""
    page = browser.new_page()  # type: ignore[attr-defined]
    try:
        page.goto(page_path.as_uri(), wait_until="load")
        found = []
        for src, ok in page.evaluate(
            "Array.from(document.images, i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0])"
        ):
            if not ok:
                found.append(f"image does not load: {src}")
        for href in page.evaluate("Array.from(document.links, a => a.href)"):
            url = urlparse(href)
            if url.scheme == "file" and not Path(unquote(url.path)).exists():
                found.append(f"link to a missing file: {href}")
        text = page.inner_text("body")
        for kind, pattern in (*RAW_MARKDOWN.items(), *RAW_LATEX.items()):
            if match := pattern.search(text):
                found.append(f"raw {kind}: {match.group(0)!r} in {text[max(0, match.start() - 40):match.end() + 40]!r}")
        return found
    finally:
        page.close()


def test_a_broken_page_is_caught(browser: object, tmp_path: Path) -> None:
    """The checks fail where they should: a missing image, a dead link, raw Markdown, raw LaTeX."""
    (tmp_path / "ok.png").write_bytes(_png())
    (tmp_path / "bad.html").write_text(
        '<!DOCTYPE html><html><body><img src="missing.png"><img src="ok.png">'
        '<a href="nowhere.html">x</a><p>**bold** and $\\Delta_{\\mathrm{paper}}$</p>'
        "<pre>| a | b |\n|---|---|</pre></body></html>"
    )
    found = problems(browser, tmp_path / "bad.html")
    kinds = " ".join(found)
    assert "image does not load: missing.png" in kinds and "ok.png" not in kinds
    assert "link to a missing file" in kinds and "nowhere.html" in kinds
    for kind in ("raw bold", "raw math", "raw command", "raw table row", "raw table rule"):
        assert kind in kinds, (kind, found)
    (tmp_path / "good.html").write_text(
        '<!DOCTYPE html><html><body><img src="ok.png"><a href="ok.png">figure</a>'
        "<p>Δ base = ours − paper, mean ± std, ×100</p></body></html>"
    )
    assert problems(browser, tmp_path / "good.html") == []


def _png() -> bytes:
    """A 1x1 PNG."""
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (1, 1)).save(out, format="png")
    return out.getvalue()


COMMITTED = sorted([*REPO.glob("results/tables/*.html"), *REPO.glob("results/reports/**/*.html")])


@pytest.mark.parametrize("page", COMMITTED, ids=lambda p: str(p.relative_to(REPO)))
def test_each_committed_page_renders(browser: object, page: Path) -> None:
    assert problems(browser, page) == []


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tables, figures and a paper page built from made-up evaluations, laid out as the
    workflow lays out results/."""
    from negcse.analysis.curves import Curve
    from negcse.analysis.figures import curves_figure, save_figure
    from negcse.cli import main

    root = tmp_path_factory.mktemp("site")
    evals = root / "evals"
    evals.mkdir()
    # a method of every family, and the baselines they are compared with
    methods = ["simcse", "una", "una_baseline", "sncse", "sncse_pl", "osscse", "simcse_san",
               "simcse_dropout15", "rankcse", "gcse"]  # fmt: skip
    config = project_config(REPO, check=False)
    baselines = [f"{m}={b}" for m, b in method_baselines(config).items()]
    files = [
        str(write_run(evals, f"{m}-{s}", m, "splade-tiny", s, i + int(s)))
        for i, m in enumerate(methods)
        for s in ("1", "2")
    ]
    files.append(str(write_run(evals, "u", "untrained", "splade-tiny", "", 3)))
    tables = root / "results/tables"
    papers = [f"{m}={p}" for m, p in method_papers(config).items()]
    for name in ("sts", "transfer", "splits", "probe", "analysis", "verdicts", "checkpoints",
                 "published"):  # fmt: skip
        args = ["table", name, "--evals", *table_inputs(name, files), "--baselines", *baselines, "--papers", *papers]
        args += ["--csv", str(tables / f"{name}.csv"), "--html", str(tables / f"{name}.html")]
        assert main(args) == 0, name
    figure = root / "results/figures/splade-tiny/training_curves/sncse+osscse.png"
    figure.parent.mkdir(parents=True)
    curves = {m: [Curve(m, "splade-tiny", 1, [20, 40], [60.0, 61.0], None,
                        {"loss": [(5, 1.0), (10, 0.5)]})] for m in ("simcse", "sncse")}  # fmt: skip
    save_figure(curves_figure(curves, "splade-tiny", "simcse"), figure)
    common = ["--methods", *methods, "--baselines", *baselines, "--papers", *papers]
    common += [f"--{t}={tables / t}.csv" for t in ("sts", "verdicts", "checkpoints")]
    common += ["--figures", str(figure)]
    report = root / "results/reports/sncse.md"
    forest = root / "results/figures/forest/sncse.png"
    args = ["paper-report", "--paper", "sncse", *common, "--forest", str(forest)]
    assert main([*args, "--out", str(report), "--html", str(report.with_suffix(".html"))]) == 0
    page = root / "results/reports/methods/simcse.md"
    args = ["paper-report", "--method", "simcse", *common]
    args += ["--published", str(tables / "published.csv")]
    assert main([*args, "--out", str(page), "--html", str(page.with_suffix(".html"))]) == 0
    return root


def test_pages_built_from_evaluations_render(browser: object, built: Path) -> None:
    pages = sorted(built.glob("results/**/*.html"))
    assert len(pages) == 10  # 8 tables, a paper's page, a method's page
    found = {str(p.relative_to(built)): problems(browser, p) for p in pages}
    assert not any(found.values()), found
    report = (built / "results/reports/sncse.html").read_text()
    assert '<img src="../figures/splade-tiny/training_curves/sncse+osscse.png"' in report
    assert '<img src="../figures/forest/sncse.png"' in report


def overflow(browser: object, page_path: Path, width: int = 1280) -> list[str]:
    """The tables of ``page_path`` that pass the right edge of a ``width``-pixel window."""
    page = browser.new_page(viewport={"width": width, "height": 800})  # type: ignore[attr-defined]
    try:
        page.goto(page_path.as_uri(), wait_until="load")
        rights = page.evaluate(
            "Array.from(document.querySelectorAll('table'), t => t.getBoundingClientRect().right)"
        )
        scroll = page.evaluate("document.documentElement.scrollWidth")
        found = [f"table {i} ends at {r:.0f} px" for i, r in enumerate(rights) if r > width]
        return found + ([f"the page scrolls to {scroll} px"] if scroll > width else [])
    finally:
        page.close()


def test_a_table_too_wide_is_caught(browser: object, tmp_path: Path) -> None:
    cells = "".join(f"<td style='white-space:nowrap'>{'word ' * 40}</td>" for _ in range(3))
    (tmp_path / "wide.html").write_text(f"<!DOCTYPE html><html><body><table><tr>{cells}</tr>"
                                        "</table></body></html>")  # fmt: skip
    assert overflow(browser, tmp_path / "wide.html")


def test_the_verdicts_and_pages_fit_a_1280_pixel_window(browser: object, built: Path) -> None:
    """The widest tables (the verdicts' Verdict and Note columns, on the verdicts page and the
    pages' claims tables) wrap their text to fit 1280 px."""
    pages = [built / "results/tables/verdicts.html", built / "results/reports/sncse.html",
             built / "results/reports/methods/simcse.html"]  # fmt: skip
    found = {str(p.relative_to(built)): overflow(browser, p) for p in pages}
    assert not any(found.values()), found
