"""The forest plot of a paper's claims (negcse.analysis.figures.forest_figure)."""

from __future__ import annotations

import math

from negcse.analysis.figures import CHECK_COLOR, VERDICT_COLORS, forest_figure


def test_each_claim_is_a_row_with_its_interval_and_the_papers_difference() -> None:
    nan = math.nan
    fig = forest_figure(
        ["a - b (STS avg., bert-base-uncased)", "c - b (STS avg., tiny)", "d - b (STS avg., tiny)"],
        [2.1, 0.3, -0.4],
        [1.2, -0.5, nan],
        [3.0, 1.1, nan],
        [2.72, 2.72, -1.86],
        ["smaller than claimed", "direction check: inconclusive", "no verdict"],
        borrowed=[False, True, True],
    )
    ax = fig.axes[0]
    assert ax.get_yticklabels()[0].get_text().startswith("a - b")
    lines = ax.get_lines()
    intervals = [ln for ln in lines if len(ln.get_xdata()) == 2 and ln.get_linestyle() == "-"]
    assert sorted(tuple(ln.get_xdata()) for ln in intervals) == [(-0.5, 1.1), (1.2, 3.0)]
    assert {ln.get_color() for ln in intervals} == {VERDICT_COLORS["smaller than claimed"],
                                                    CHECK_COLOR}  # fmt: skip
    diamonds = [ln for ln in lines if ln.get_marker() == "D"]
    assert [ln.get_markeredgecolor() for ln in diamonds] == ["black", "#999999", "#999999"]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["smaller than claimed", "direction check", "paper's difference",
                      "paper's (direction check)", "no verdict (too few seeds)"]  # fmt: skip


def test_a_forest_plot_fits_the_text_width_of_a_paper(tmp_path) -> None:
    """A paper's twelve claims with long labels under a reduced-scale run's note: the saved PDF
    is at most the text width of a two-column paper (505 pt) wide, its labels and title
    wrapped."""
    from figure_size import pdf_size
    from negcse.analysis.figures import MAX_TEXT_WIDTH_PT, save_figure

    n = 12
    labels = [f"UNA, random selection + replacement {i} - UNA (transfer avg., RoBERTa-large)"
              for i in range(n)]  # fmt: skip
    title = ("Reduced-scale run (40 training steps a run, a corpus of 3,200 sentences): it checks "
             "the plumbing, not the papers.\nUNA: our difference (95% interval) and the paper's")
    fig = forest_figure(labels, [0.5] * n, [-1.0] * n, [2.0] * n, [2.7] * n,
                        ["direction check: inconclusive"] * n, title, [True] * n)  # fmt: skip
    save_figure(fig, tmp_path / "f.pdf")
    width, _ = pdf_size(tmp_path / "f.pdf")
    assert width <= MAX_TEXT_WIDTH_PT, width
    assert all("\n" in t.get_text() for t in fig.axes[0].get_yticklabels())  # wrapped
