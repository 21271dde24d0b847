"""Figures a two-column paper can print: groups of at most 8 methods with their baseline, one
column wide, every line told apart, the legend under the axes."""

from __future__ import annotations

import numpy as np
import pytest

from figure_size import pdf_size
from negcse.analysis.curves import Curve
from negcse.analysis.figures import (
    SHADES,
    WIDTH,
    curves_figure,
    line_styles,
    shade,
    similarity_figure,
)
from negcse.analysis.groups import MethodGroup, group_name, method_groups
from negcse.text.display import family

SMOKE = ["simcse", "una", "una_random_select", "una_random_replace", "una_random_both",
         "sncse", "sncse_pl", "sncse_nl", "sncse_infonce", "osscse", "simcse_san", "sncse_san",
         "una_baseline", "simcse_dropout15"]  # fmt: skip
BASELINES = {
    "una": "una_baseline", "una_baseline": "simcse", "una_random_select": "una",
    "una_random_replace": "una", "una_random_both": "una", "sncse": "simcse", "sncse_pl": "sncse",
    "sncse_nl": "sncse", "sncse_infonce": "sncse", "osscse": "simcse",
    "simcse_san": "simcse_dropout15", "sncse_san": "sncse", "simcse_dropout15": "simcse",
    "rankcse_san": "rankcse",  # not in this grid: ignored
}  # fmt: skip


def test_the_smoke_grid_packs_into_two_groups_by_hand() -> None:
    # simcse's tree holds all 14 (> 8): split below it, simcse heading each part (7 places
    # left). Its children in grid order: sncse's tree (sncse, pl, nl, infonce, sncse_san: 5),
    # osscse (1): 6; una_baseline's tree (una_baseline, una, 3 ablations: 5) does not fit: a new
    # group, which simcse_dropout15's tree (simcse_dropout15, simcse_san: 2) fills to 7.
    assert method_groups(SMOKE, BASELINES) == [
        MethodGroup("sncse+osscse", ("simcse", "sncse", "sncse_pl", "sncse_nl", "sncse_infonce",
                              "sncse_san", "osscse"), "simcse"),
        MethodGroup("una_baseline+simcse_dropout15", ("simcse", "una_baseline", "una", "una_random_select",
                                     "una_random_replace", "una_random_both", "simcse_dropout15",
                                     "simcse_san"), "simcse"),
    ]  # fmt: skip


def test_a_long_chain_keeps_every_method_beside_its_own_baseline() -> None:
    # a -> b -> c, and c has 4 children: with limit 3 the trees of a (7), b (6) and c (5) are
    # split; a shares a group with lone, b sits in a's group, c in b's, c's children in
    # two groups c heads.
    methods = ["a", "b", "c", "d1", "d2", "d3", "d4", "lone"]
    baselines = {"b": "a", "c": "b", "d1": "c", "d2": "c", "d3": "c", "d4": "c"}
    groups = method_groups(methods, baselines, limit=3)
    assert groups == [
        MethodGroup("a+lone", ("a", "lone"), None),  # named after the roots it holds
        MethodGroup("b", ("a", "b"), "a"),
        MethodGroup("c", ("b", "c"), "b"),
        MethodGroup("d1+d2", ("c", "d1", "d2"), "c"),
        MethodGroup("d3+d4", ("c", "d3", "d4"), "c"),
    ]
    assert {m for g in groups for m in g.methods} == set(methods)
    assert all(len(g.methods) <= 3 for g in groups)


def test_a_group_of_many_roots_is_named_by_its_first_and_their_count() -> None:
    assert group_name(["a", "b", "c"]) == "a+b+c"
    assert group_name(["a", "b", "c", "d", "e"]) == "a+4-more"


def test_bad_baselines_are_one_clear_error() -> None:
    with pytest.raises(ValueError, match="cycle: a -> b -> a"):
        method_groups(["a", "b"], {"a": "b", "b": "a"})
    with pytest.raises(ValueError, match="listed twice"):
        method_groups(["a", "a"], {})


def _curves(methods: list[str], losses: bool = False) -> dict[str, list[Curve]]:
    def loss(i: int, seed: int) -> dict[str, list[tuple[int, float]]]:
        total = [(10, 2.0 + i), (20, 1.5 + i), (30, 1.0 + i + seed), (40, 0.5 + i)]
        parts = {
            "infonce": total,
            "bml": [(s, 0.1 * v) for s, v in total],
            "rows": [(s, 64.0) for s, _ in total],
        }
        return {"loss": total, **parts} if losses else {}

    return {
        m: [Curve(m, "b", seed, [20, 40], [60.0 + i + seed, 62.0 + i], None, loss(i, seed))
            for seed in (1, 2)]
        for i, m in enumerate(methods)
    }  # fmt: skip


def _below(fig, ax) -> bool:
    """The legend's top is under the lowest x-label's bottom (pixels, y grows upwards)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend = fig.legends[0].get_window_extent(renderer)
    label = ax.xaxis.label.get_window_extent(renderer)
    return legend.y1 <= label.y0 and not legend.overlaps(ax.get_window_extent(renderer))


def test_curves_are_one_column_wide_with_distinct_lines_and_the_legend_below() -> None:
    methods = [f"m{i}" for i in range(8)]
    fig = curves_figure(_curves(methods), "bert-base-uncased", baseline="m0")
    ax = fig.axes[0]
    assert fig.get_size_inches()[0] == pytest.approx(WIDTH)
    styles = [(line.get_color(), str(line.get_linestyle()), line.get_marker())
              for line in ax.get_lines()]  # fmt: skip
    assert len(styles) == 8 and len(set(styles)) == 8
    colors = [c for c, _, _ in styles]
    assert colors[0] == "black" and len(set(colors)) == 8  # the baseline black, 7 shades
    assert len({m for _, _, m in styles}) == 8  # a marker each: overlapping lines stay apart
    assert fig.legends[0].get_texts()[0].get_text() == "m0 (baseline)"
    assert not ax.get_legend()  # no legend inside the axes
    assert ax.get_ylabel() == "STS-B dev Spearman ×100" and ax.get_title() == "BERT-base"
    assert _below(fig, fig.axes[-1])


def test_a_family_shares_a_hue_and_the_legend_reads_display_names() -> None:
    styles = line_styles(["simcse", "sncse", "sncse_pl", "una", "una_random_select"], "simcse")
    sncse, una = family("sncse").color.lower(), family("una").color.lower()
    assert styles["sncse"]["color"] == sncse and styles["una"]["color"] == una
    # the second of a family: the family's hue, darker; never another family's
    assert styles["sncse_pl"]["color"] == shade(sncse, SHADES[1]) != sncse
    assert styles["una_random_select"]["color"] == shade(una, SHADES[1])
    assert shade("#808080", 0.5) == "#c0c0c0" and shade("#808080", -0.5) == "#404040"
    fig = curves_figure(_curves(["simcse", "sncse_pl"]), "b", baseline="simcse")
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["SimCSE (baseline)", "SNCSE (PL)"]


def test_the_loss_and_its_parts_are_drawn_below_the_dev_curve() -> None:
    fig = curves_figure(_curves(["m0", "m1"], losses=True), "b", baseline="m0")
    # dev, loss, bml; infonce is the whole loss and rows never changes: in the CSV only
    assert [ax.get_ylabel() for ax in fig.axes] == [
        "STS-B dev Spearman ×100",
        "training loss",
        "bml",
    ]
    loss = fig.axes[1].get_lines()[1]  # m1: the mean over its seeds, by hand
    assert list(loss.get_xdata()) == [10, 20, 30, 40]
    assert list(loss.get_ydata()) == pytest.approx([3.0, 2.5, 3.5, 1.5])
    assert fig.axes[-1].get_xlabel() == "training step" and _below(fig, fig.axes[-1])


def test_pdfs_embed_truetype_fonts_and_pngs_stay_small(tmp_path) -> None:
    from PIL import Image

    from negcse.analysis.figures import save_figure

    fig = curves_figure(_curves([f"m{i}" for i in range(8)], losses=True), "b", baseline="m0")
    save_figure(fig, tmp_path / "f.pdf")
    save_figure(fig, tmp_path / "f.png")
    pdf = (tmp_path / "f.pdf").read_bytes()
    # TrueType (Type 42) fonts are embedded as FontFile2 streams; no Type 3 font at all
    assert b"/FontFile2" in pdf and b"/Type3" not in pdf
    image = Image.open(tmp_path / "f.png")
    assert image.mode == "P" and round(image.info["dpi"][0]) == 150
    assert (tmp_path / "f.png").stat().st_size < 60_000


def test_similarity_panels_share_one_legend_below_the_last() -> None:
    rng = np.random.default_rng(0)
    groups = {m: rng.normal(0.5, 0.1, 200) for m in ("a", "b", "c")}
    fig = similarity_figure([("(a)", groups), ("(b)", groups)], "t", positive_line=True)
    assert len(fig.legends) == 1 and [t.get_text() for t in fig.legends[0].get_texts()] == [
        "a",
        "b",
        "c",
    ]
    assert fig.get_size_inches()[0] == pytest.approx(WIDTH)
    assert _below(fig, fig.axes[-1])


def test_long_method_names_keep_the_saved_figure_one_column_wide(tmp_path) -> None:
    from PIL import Image

    from negcse.analysis.figures import save_figure

    methods = ["gcse_domain", *(f"simcse_san_tau0.0{i}_p0.15" for i in range(5, 10))]
    path = tmp_path / "f.png"
    save_figure(curves_figure(_curves(methods), "b", baseline="gcse_domain"), path)
    width, _ = Image.open(path).size
    assert width <= WIDTH * 150  # 150 dpi; the tight box still within one column


def test_a_curves_figure_of_many_parts_fits_a_column_and_a_page(tmp_path) -> None:
    """Eight methods whose losses log six parts: one column wide (at most 240 pt) and, with
    its legend, short enough for a float and its caption on a page (at most 540 pt)."""
    from negcse.analysis.figures import MAX_HEIGHT, MAX_WIDTH_PT, panel_heights, save_figure

    methods = ["gcse_domain", *(f"simcse_san_tau0.0{i}_p0.15" for i in range(5, 10)), "una",
               "sncse"]  # fmt: skip
    curves = _curves(methods, losses=True)
    for i, runs in enumerate(curves.values()):
        for run in runs:
            for k in range(6):
                run.losses[f"part{k}"] = [(s, v * (k + 1) + i) for s, v in run.losses["loss"]]
    fig = curves_figure(curves, "bert-base-uncased", baseline="gcse_domain")
    assert len(fig.axes) == 9  # the dev curve, the loss, bml, six parts
    save_figure(fig, tmp_path / "f.pdf")
    width, height = pdf_size(tmp_path / "f.pdf")
    assert width <= MAX_WIDTH_PT and height <= 540, (width, height)
    # the panels shrink together only where they must: two panels keep their full heights
    assert panel_heights(2, ["a", "b"]) == [1.7, 1.0]
    heights = panel_heights(8, [f"m{i}" for i in range(8)])
    assert heights[1] / heights[0] == pytest.approx(1.0 / 1.7)
    assert sum(heights) == pytest.approx(MAX_HEIGHT - 0.6 - (0.25 + 0.16 * 4))
