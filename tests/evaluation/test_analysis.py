"""The papers' analyses: rank errors, overlap filter and score normalization by hand, on real
mirror data, and every figure / table written end to end with the mirror's splade-tiny."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

from negcse.analysis.density import GRID, peak
from negcse.analysis.normalization import median_minmax
from negcse.analysis.overlap import hard_positive_pairs, lexical_overlap, token_set
from negcse.analysis.pairs import random_partners, sample_sentences
from negcse.analysis.rank_errors import rank_errors, ranks
from negcse.data.sts import STS_TASKS, STSData, load_sts
from negcse.tables.build import case_study_frame, case_study_render

# --- (c) SNCSE rank errors, Eq. 10-11 ----------------------------------------------------------


def test_rank_errors_by_hand() -> None:
    pred = np.array([0.9, 0.1, 0.5, 0.3])  # R_E (ascending): 4, 1, 3, 2
    gold = np.array([1.0, 2.0, 4.0, 3.0])  # R_G: 1, 2, 4, 3
    err = rank_errors(pred, gold)
    assert err.r_e.tolist() == [4, 1, 3, 2]
    assert err.r_g.tolist() == [1, 2, 4, 3]
    assert err.error.tolist() == [9, 1, 1, 1]  # (R_E - R_G)^2
    # Eq. 10: 1 - 12 / ((64 - 4) / 6) = -0.2, Spearman's rho without ties
    assert err.rho() == pytest.approx(-0.2)
    assert err.rho() == pytest.approx(spearmanr(pred, gold).statistic)
    assert err.top(2).tolist() == [0, 1]  # largest error first, ties by index


def test_tied_scores_get_average_ranks_by_default() -> None:
    gold = np.array([1.0, 2.0, 2.0, 3.0])
    assert ranks(gold).tolist() == [1, 2.5, 2.5, 4]
    assert ranks(gold, "ordinal").tolist() == [1, 2, 3, 4]
    assert ranks(gold, "min").tolist() == [1, 2, 2, 4]
    with pytest.raises(ValueError, match="tie method"):
        ranks(gold, "dense")


@pytest.mark.mirror
def test_rank_ranges_of_sncse_table4_on_real_data() -> None:
    """STS14 pair 1 of SNCSE Table 4 (gold 4.8): its printed R_G 3564 lies in the tie range."""
    data = load_sts("STS14")
    row = next(i for i, s in enumerate(data.sent1) if s.startswith("i wood have asked her"))
    gold = data.gold
    lo, hi = ranks(gold, "min")[row], ranks(gold, "max")[row]
    assert gold[row] == 4.8 and lo <= 3564 <= hi
    assert ranks(gold)[row] == (lo + hi) / 2
    assert len(data) == 3750 and ranks(gold).max() <= 3750


# --- (b) SAN overlap filter --------------------------------------------------------------------


def test_overlap_by_hand() -> None:
    a = "The motocross rider is wearing blue and black pants"
    b = "Blue and black pants are being worn by the motocross rider"
    assert len(token_set(a)) == 9 and len(token_set(b)) == 11
    assert lexical_overlap(a, b) == pytest.approx(7 / 13)  # 7 shared of 13 distinct
    assert lexical_overlap(a, b, "dice") == pytest.approx(14 / 20)
    assert token_set("Don't stop!") == {"don", "'", "t", "stop", "!"}
    assert lexical_overlap("", "") == 1.0
    with pytest.raises(ValueError, match="overlap kind"):
        lexical_overlap(a, b, "cosine")


def test_hard_positive_filter_by_hand() -> None:
    data = STSData("toy")
    data.add(
        "s",
        [
            ("a man is cutting broccoli", "broccoli are being cut by a man", 4.8),  # 3/9
            ("a man is cutting broccoli", "a man is cutting the broccoli", 5.0),  # 5/6
            ("a man is cutting broccoli", "broccoli are being cut by a man", 3.9),  # gold < 4
            ("a dog runs", "cats sleep", 4.0),  # overlap 0, gold exactly 4
        ],
    )
    kept = hard_positive_pairs([data], min_gold=4.0, max_overlap=0.6)
    assert [(p.row, p.overlap) for p in kept] == [(0, pytest.approx(1 / 3)), (3, 0.0)]


@pytest.mark.mirror
def test_san_table11_pairs_pass_the_filter_on_real_data() -> None:
    data = [load_sts(t) for t in STS_TASKS]
    kept = hard_positive_pairs(data)
    found = {(p.task, p.row) for p in kept}
    # SAN Table 11's pairs that are in the SentEval test files (the other two are SICK train)
    assert {("STS12", 2985), ("STS15", 412), ("STS12", 1792), ("STS14", 1355)} <= found
    assert all(p.gold >= 4 and p.overlap < 0.6 for p in kept)
    assert len(kept) == 3332
    # the documented alternative: Dice on MTEB's raw text (all SICK pairs) gives SAN's 1,900
    mteb = [load_sts(t, "mteb") for t in STS_TASKS]
    assert len(hard_positive_pairs(mteb, kind="dice")) == 1900


# --- (e) GCSE median normalization, Eq. 14 -----------------------------------------------------


def test_median_normalization_by_hand() -> None:
    gold = np.array([0.0, 0.0, 0.0, 5.0, 5.0, 2.5])
    pred = np.array([0.1, 0.3, 0.2, 0.9, 0.7, 0.5])
    norm = median_minmax(pred, gold)
    assert (norm.min_p, norm.max_p) == pytest.approx((0.2, 0.8))  # medians of C_0 and C_1
    # s' = clip((s - 0.2) / 0.6, 0, 1)
    assert norm.pred == pytest.approx([0.0, 1 / 6, 0.0, 1.0, 5 / 6, 0.5])
    assert norm.gold == pytest.approx([0, 0, 0, 1, 1, 0.5])
    # errors s' - l': 0, 1/6, 0, 0, -1/6, 0 -> nothing beyond 0.2; at 0.1: one each way
    assert not norm.false_positives().any() and not norm.false_negatives().any()
    assert norm.false_positives(0.1).tolist() == [False, True, False, False, False, False]
    assert norm.false_negatives(0.1).tolist() == [False, False, False, False, True, False]
    with pytest.raises(ValueError, match="labelled"):
        median_minmax(pred, gold, low=1.0)


def test_gcse_table8_cell_by_hand() -> None:
    """GCSE Table 8 prints 5 x s' and |5 s' - gold|: '4.37 (1.372)' for gold 3.00."""
    cases = [("A woman is cooking eggs .", "A woman is cooking something .", 3.0)]
    methods = {
        "simcse": {
            "pred_norm": [4.372 / 5],
            "false_positive_rate": 27.5,
            "false_negative_rate": math.nan,
        }
    }
    frame = case_study_frame(cases, methods, 0.0, 5.0, "b")
    tex = case_study_render(cases, frame, "cap", "tab:x").tex
    assert r"SimCSE & 4.37 (1.372) & 27.5 / -- \\" in tex
    assert r"\begin{tabular}{lrr}" in tex  # method + 1 case + FP / FN
    assert "\\toprule" in tex and "\\bottomrule" in tex
    assert "(1) A woman is cooking eggs . / A woman is cooking something . (3.00)." in tex


# --- (a) sampling, partners and encoding once ------------------------------------------------


def test_partners_are_a_derangement_and_seeded() -> None:
    for n in (2, 3, 50):
        partner = random_partners(n, seed=0)
        assert sorted(partner.tolist()) == list(range(n))
        assert (partner != np.arange(n)).all()
    assert (random_partners(50, 0) == random_partners(50, 0)).all()
    assert (random_partners(50, 0) != random_partners(50, 1)).any()
    pool = [f"s{i}" for i in range(100)]
    sample = sample_sentences(pool, 10, seed=3)
    assert len(set(sample)) == 10 and sample == sample_sentences(pool, 10, seed=3)


def test_peak_of_a_density() -> None:
    values = np.random.default_rng(0).normal(0.9, 0.02, size=2000)
    assert peak(values) == pytest.approx(0.9, abs=0.01)
    assert GRID[0] == -1.0 and GRID[-1] == 1.0


def test_read_curve_keeps_dev_scores_only(tmp_path: Path) -> None:
    from negcse.analysis.curves import CurveError, read_curve

    curve = [{"step": 40, "stsb_dev": 61.0}, {"step": 20, "stsb_dev": 60.0}]
    log = {"curve": [*curve, {"step": 40, "seconds": 9.5}], "method": "m", "backbone": "b"}
    (tmp_path / "train_log.json").write_text(json.dumps({**log, "seed": 2}))
    got = read_curve(tmp_path)
    assert (got.steps, got.stsb_dev, got.seed) == ([20, 40], [60.0, 61.0], 2)
    (tmp_path / "train_log.json").write_text(json.dumps({**log, "curve": [{"step": 1}]}))
    with pytest.raises(CurveError, match="no seed recorded"):
        read_curve(tmp_path)


def test_curves_data_is_one_csv_row_per_dev_evaluation_and_logged_loss(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from negcse.cli import main

    runs = {("sncse", 2): [(20, 55.5), (40, 57.25)], ("simcse", 1): [(20, 60.0), (40, 61.5)]}
    folders = []
    for (method, seed), points in runs.items():
        folder = tmp_path / f"{method}{seed}"
        folder.mkdir()
        curve = [{"step": s, "stsb_dev": d} for s, d in points] + [{"step": 40, "seconds": 3.0}]
        if method == "sncse":  # what negcse.training.loss_log records every log_steps steps
            curve += [{"step": 20, "loss": 1.5, "parts": {"infonce": 1.25, "bml": 0.25}}]
        log = {"curve": curve, "method": method, "backbone": "b", "seed": seed}
        (folder / "train_log.json").write_text(json.dumps(log))
        folders.append(str(folder))
    out, loss = tmp_path / "plots" / "curves.csv", tmp_path / "plots" / "loss.csv"
    args = ["curves-data", "--models", *folders, "--out", str(out), "--loss-out", str(loss)]
    assert main(args) == 0
    assert out.read_text().splitlines() == [
        "method,name,family,backbone,seed,step,stsb_dev",
        "simcse,SimCSE,SimCSE,b,1,20,60.0",
        "simcse,SimCSE,SimCSE,b,1,40,61.5",
        "sncse,SNCSE,SNCSE,b,2,20,55.5",
        "sncse,SNCSE,SNCSE,b,2,40,57.25",
    ]
    assert loss.read_text().splitlines() == [
        "method,name,family,backbone,seed,step,quantity,value",
        "sncse,SNCSE,SNCSE,b,2,20,loss,1.5",
        "sncse,SNCSE,SNCSE,b,2,20,infonce,1.25",
        "sncse,SNCSE,SNCSE,b,2,20,bml,0.25",
    ]
    out.unlink()
    assert main(["curves-data", "--models", folders[1], folders[1], "--out", str(out)]) == 2
    assert "two training logs for simcse/b/seed1" in capsys.readouterr().err
    assert not out.exists()


# --- end to end: the analysis evaluation, figures and tables with the mirror's splade-tiny -------------


@pytest.mark.mirror
@pytest.mark.slow
def test_commands_write_every_figure_and_table(tmp_path: Path, splade_tiny: Path) -> None:
    from negcse.cli import main

    model = tmp_path / "model"
    model.mkdir()
    for f in splade_tiny.iterdir():
        (model / f.name).symlink_to(f)
    curve = [{"step": 20, "stsb_dev": 60.0}, {"step": 40, "stsb_dev": 62.5}]
    curve.append({"step": 40, "seconds": 12.0})  # the trainer's closing timing entry
    (model / "negcse.json").write_text(json.dumps({"eval_pooler": "cls_before_pooler"}))
    log = {"curve": curve, "method": "toy", "backbone": "splade-tiny", "seed": 1, "best_step": 40}
    (model / "train_log.json").write_text(json.dumps(log))

    sents, negs = tmp_path / "s.txt", tmp_path / "n.txt"
    assert main(["analysis-sentences", "--out", str(sents), "--n", "40"]) == 0
    lines = sents.read_text().splitlines()
    assert len(lines) == 40
    negs.write_text("".join(f"not {s}\n" for s in lines))
    out = tmp_path / "a.json"
    rank_tex, case_tex = tmp_path / "rank.tex", tmp_path / "case.tex"
    args = ["evaluate", "--only", "analysis", "--model", str(model)]
    args += ["--analysis-sentences", str(sents), "--analysis-negations", str(negs)]
    args += ["--analysis-out", str(out), "--analysis-rank-tex", str(rank_tex)]
    args += ["--analysis-case-tex", str(case_tex)]
    args += ["--tag", "method=toy", "--tag", "backbone=splade-tiny"]
    assert main([*args, "--tag", "seed=1", "--threads", "1"]) == 0
    result = json.loads(out.read_text())
    assert result["pooler"] == "cls_before_pooler" and result["seed"] == "1"
    sim = result["similarity"]
    assert len(sim["soft_negative"]) == len(sim["random"]) == 40
    assert len(sim["hard_positive"]) == 3332
    for task in ("STS14", "SICKRelatedness"):
        section = result["rank_errors"][task]
        assert section["rho_eq10"] == pytest.approx(section["spearman"], abs=0.01)
        errors = [r["error"] for r in section["top"]]
        assert len(errors) == 5 and errors == sorted(errors, reverse=True)
        assert all(r["error"] == (r["r_e"] - r["r_g"]) ** 2 for r in section["top"])
    case = result["case_study"]
    assert len(case["pred_norm"]) == 1500 and all(c is not None for c in case["gcse_cases"])
    assert "STS14" in rank_tex.read_text() and "SICK-R" in rank_tex.read_text()
    assert "False negatives" in case_tex.read_text()

    second = tmp_path / "b.json"
    second.write_text(json.dumps({**result, "seed": "2"}))
    for kind in ("soft_negatives", "hard_positives", "training_curves"):
        inputs = [str(model)] if kind == "training_curves" else [str(out), str(second)]
        png, pdf = tmp_path / f"{kind}.png", tmp_path / f"{kind}.pdf"
        args = ["plot-analysis", "--kind", kind, "--inputs", *inputs]
        assert main([*args, "--png", str(png), "--pdf", str(pdf)]) == 0
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 3_000
        assert pdf.read_bytes()[:5] == b"%PDF-" and b"/FontFile2" in pdf.read_bytes()

    tex, cases = tmp_path / "analysis.tex", tmp_path / "cases.tex"
    assert main(["table", "analysis", "--evals", str(out), str(second), "--tex", str(tex)]) == 0
    assert main(["table", "case_study", "--evals", str(out), str(second), "--tex", str(cases)]) == 0
    row = next(line for line in tex.read_text().splitlines() if line.startswith("toy"))
    # one backbone (in the caption), 6 columns; 2 seeds, identical values: a std of 0
    assert r"$\pm$ 0.00" in row and row.count("&") == 6
    assert cases.read_text().count(" (") >= 5  # one score (error) per GCSE case
