"""The verdict and released-checkpoint tables (negcse.tables.verdicts) from STS evaluation
files that carry their per-pair cosines and keys, as `negcse evaluate` writes them."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from negcse.analysis.bootstrap import KEY_DIGITS
from negcse.analysis.verdict_rules import Rule
from negcse.cli import main
from negcse.tables.build import Options, TableInputError
from negcse.tables.published import TASKS
from negcse.tables.specs import table_spec
from negcse.tables.verdicts import UNTESTABLE, checkpoint_frame, verdict_frame

#: test sets large enough (600-1,000 pairs a task) that the test set's floor (about 1 point)
#: lies below the claims judged here
SIZES = {task: (600, 400) if task.startswith("STS1") else (800,) for task in TASKS}
GOLD = {t: np.random.default_rng(i).uniform(0, 5, sum(s)) for i, (t, s) in enumerate(SIZES.items())}
#: STS-B's first 50 pairs are STS12's first 50 (as 60.8% of the real STS-B test is in STS12-16)
KEYS = {t: [f"{t[:5]}{i:05d}"[-KEY_DIGITS:].replace("S", "a").replace("T", "b") for i in
            range(sum(s))] for t, s in SIZES.items()}  # fmt: skip
KEYS["STSBenchmark"][:50] = KEYS["STS12"][:50]
BASE = "bert-base-uncased"


def _write(tmp: Path, method: str, seed: int, noise: float, backbone: str = BASE,
           llm: str = "") -> str:  # fmt: skip
    """An STS evaluation whose cosines are gold plus noise of this scale (seeded)."""
    rng = np.random.default_rng([seed, int(noise * 100)])
    details = {
        task: {
            "pairs": {
                "cosine": (GOLD[task] + rng.normal(0, noise, len(GOLD[task]))).tolist(),
                "gold": GOLD[task].tolist(),
                "subset_sizes": list(SIZES[task]),
                "key": "".join(KEYS[task]),
            }
        }
        for task in TASKS
    }
    path = tmp / f"{method}-{backbone}-{seed}.json"
    tags = {
        "method": method,
        "backbone": backbone,
        "seed": str(seed),
        **({"llm": llm} if llm else {}),
    }
    path.write_text(json.dumps({**tags, "details": details}))
    return str(path)


@pytest.fixture
def evals(tmp_path: Path) -> list[str]:
    files = []
    for seed in (1, 2, 3):
        files += [
            _write(tmp_path, "simcse", seed, 1.5),
            _write(tmp_path, "sncse", seed, 0.5),  # far better: the claim holds
            _write(tmp_path, "osscse", seed, 3.0),  # far worse: reversed
            _write(tmp_path, "una_baseline", seed, 1.5),
            _write(tmp_path, "una", seed, 1.5),  # the same files as its baseline
            _write(tmp_path, "simcse_dropout15", seed, 1.4),  # our control: no claim
            _write(tmp_path, "simcse", seed, 1.5, "tiny"),
            _write(tmp_path, "sncse", seed, 0.5, "tiny"),
        ]
    files += [_write(tmp_path, "sncse_pl", seed, 0.5) for seed in (1, 2)]  # two seeds only
    files.append(_write(tmp_path, "untrained", 0, 2.0))
    return files


def _rows(frame) -> dict[tuple[str, str, str], dict]:
    return {(r["method"], r["baseline"], r["backbone"]): r for r in frame.to_dict("records")}


def test_verdict_frame(evals: list[str]) -> None:
    rows = _rows(verdict_frame(evals, Options()))
    assert set(rows) == {("sncse", "simcse", BASE), ("osscse", "simcse", BASE),
                         ("una", "una_baseline", BASE), ("sncse_pl", "sncse", BASE),
                         ("sncse", "simcse", "tiny")}  # fmt: skip
    sncse = rows[("sncse", "simcse", BASE)]
    # far above 0 and above the paper's +2.72 (SNCSE Table 2): reproduced, before and after the family's correction
    assert (
        sncse["vs_baseline_low"] > 2.72 and sncse["verdict_raw"] == sncse["verdict"] == "reproduced"
    )
    assert (sncse["paper_delta_text"], sncse["comparison"], sncse["seeds_text"]) == (
        "+2.72 (SNCSE Table 2)",
        "paper",
        "3/3",
    )
    assert sncse["test_set"] == "yes" and sncse["p_corrected"] < 0.05
    # its family: SNCSE's verdicts on the STS average, one row here
    assert (sncse["family"], sncse["family_size"]) == ("SNCSE STS avg.", 1)
    assert 0 < sncse["floor"] < 2.72 and sncse["mde"] > sncse["floor"]
    assert sncse["paper"] == 78.97 and sncse["vs_paper_ci"].startswith("[")  # one-run interval
    assert rows[("osscse", "simcse", BASE)]["verdict_raw"] == "reversed"
    una = rows[("una", "una_baseline", BASE)]  # identical: exactly 0, the paper's +0.82 excluded
    assert (una["vs_baseline"], una["vs_baseline_ci"]) == (0.0, "[+0.00, +0.00]")
    assert una["verdict_raw"] == "not reproduced"
    pl = rows[("sncse_pl", "sncse", BASE)]  # two seeds: the estimate, no interval, no verdict
    assert pl["verdict"] == "no verdict" and pl["vs_baseline_ci"] == ""
    assert "fewer than 3 seeds a side" in pl["note"] and not np.isnan(pl["vs_baseline"])
    assert 0 < pl["mde"] < np.inf  # two seeds a side: the seeds' variance, an MDE
    tiny = rows[("sncse", "simcse", "tiny")]  # the claim borrowed from BERT-base: its sign only
    assert tiny["verdict_raw"] == "direction check: as claimed" and tiny["comparison"] != "paper"
    assert tiny["paper_delta_text"] == "+2.72 (SNCSE Table 2, BERT-base)"
    assert tiny["note"] == "backbone tiny is not in the paper" and np.isnan(tiny["paper"])
    assert (tiny["family"], tiny["family_size"]) == ("", 0) and tiny["mde"] > 0  # no family


def test_a_claim_below_the_test_sets_floor_is_untestable(evals: list[str], tmp_path: Path) -> None:
    """SAN's +0.41 (SimCSE+SAN vs SimCSE, BERT-base) is below what these test sets can tell
    from 0 at any seed count: no verdict words, the floor in the note, outside SAN's family."""
    files = evals + [_write(tmp_path, "simcse_san", seed, 1.2) for seed in (1, 2, 3)]
    row = _rows(verdict_frame(files, Options()))[("simcse_san", "simcse", BASE)]
    assert row["floor"] > 0.41 and row["verdict"] == row["verdict_raw"] == UNTESTABLE
    assert f"below the test set's floor {row['floor']:.2f}" in row["note"]
    assert row["family"] == "" and row["family_size"] == 0


def test_a_reduced_scale_grid_gives_only_direction_checks(evals: list[str]) -> None:
    frame = verdict_frame(evals, Options(scale_note="Reduced-scale run (40 training steps a run)"))
    judged = frame[frame["verdict"] != "no verdict"]
    assert judged["verdict"].str.startswith("direction check").all()
    assert judged["verdict_raw"].str.startswith("direction check").all()
    assert frame["note"].str.contains("reduced-scale grid").all()
    assert not frame["verdict"].isin(["reproduced", "reversed"]).any()


def test_min_seeds_is_a_setting(evals: list[str]) -> None:
    rows = _rows(verdict_frame(evals, Options(min_seeds=2)))
    assert rows[("sncse_pl", "sncse", BASE)]["verdict"] != "no verdict"
    rows = _rows(verdict_frame(evals, Options(min_seeds=4)))
    assert {r["verdict"] for r in rows.values()} == {"no verdict"}


def test_mixed_test_pairs_are_refused(evals: list[str], tmp_path: Path) -> None:
    other = json.loads(Path(evals[0]).read_text())
    other["details"]["STS12"]["pairs"]["gold"][0] += 1.0
    other["method"] = "sncse_nl"
    bad = tmp_path / "other.json"
    bad.write_text(json.dumps(other))
    with pytest.raises(TableInputError, match=r"other\.json: its STS test pairs differ"):
        verdict_frame([*evals, str(bad)], Options())
    other["details"]["STS12"]["pairs"]["cosine"].pop()
    bad.write_text(json.dumps(other))
    with pytest.raises(TableInputError, match=r"other\.json: details\.STS12\.pairs: 999 cos"):
        verdict_frame([str(bad)], Options())
    other["details"]["STS12"]["pairs"]["cosine"].append(0.0)
    other["details"]["STS12"]["pairs"]["key"] += "0"
    bad.write_text(json.dumps(other))
    with pytest.raises(TableInputError, match=r"details\.STS12\.pairs: a length of 10001"):
        verdict_frame([str(bad)], Options())
    other["details"]["STS12"]["pairs"]["key"] = other["details"]["STS12"]["pairs"]["key"][:-1]
    del other["details"]["STS13"]["pairs"]
    bad.write_text(json.dumps(other))
    with pytest.raises(TableInputError, match=r"other\.json: no per-pair cosines for STS13"):
        verdict_frame([str(bad)], Options())


def test_command_writes_every_twin(evals: list[str], tmp_path: Path) -> None:
    out = {ext: tmp_path / f"verdicts.{ext}" for ext in ("tex", "csv", "md", "html")}
    metrics = tmp_path / "metrics.json"
    note = "Reduced-scale run (40 training steps a run): it checks the plumbing, not the papers."
    args = ["table", "verdicts", "--evals", *evals, "--scale-note", note]
    args += [f"--{ext}={path}" for ext, path in out.items()] + [f"--metrics={metrics}"]
    assert main(args) == 0
    md, tex = out["md"].read_text(), out["tex"].read_text()
    assert md.startswith(f"**{note}**\n") and tex.startswith(f"% {note}\n")
    assert note in out["html"].read_text().split("<table")[0]  # before the table
    assert "| SNCSE | tiny | STS avg. | SimCSE | 3/3 |" in md and "direction check" in md
    assert "reproduced |" not in md and "reversed |" not in md  # a reduced-scale grid
    assert r"95\% CI" in tex and "every row is a direction check" in tex
    rows = {(r["method"], r["backbone"]): r for r in csv.DictReader(out["csv"].open())}
    assert rows[("una", BASE)]["verdict"] == "direction check: inconclusive"
    dvc = json.loads(metrics.read_text())
    assert dvc["una"][BASE]["sts"]["vs_una_baseline"] == {
        "delta": 0.0, "verdict": "direction check: inconclusive"
    }  # fmt: skip
    assert {(m, b) for m, by in dvc.items() for b in by} == set(rows)
    assert main(["table", "verdicts", "--evals", *evals, "--min-seeds", "1"]) == 2
    assert main(["table", "verdicts", "--evals", *evals, "--fraction", "1.5"]) == 2


def test_the_rule_is_a_setting(evals: list[str]) -> None:
    """The fraction of the paper's difference that "reproduced" needs is a setting: the minimum
    detectable effect grows as 1 / (1 - fraction)."""
    loose = _rows(verdict_frame(evals, Options()))[("sncse", "simcse", BASE)]
    strict = _rows(verdict_frame(evals, Options(rule=Rule(fraction=0.9))))[
        ("sncse", "simcse", BASE)
    ]
    assert strict["mde"] == pytest.approx(loose["mde"] * 0.5 / 0.1, rel=1e-6)


def test_released_checkpoint_gaps(tmp_path: Path) -> None:
    """Released minus paper (evaluation gap, no interval) and ours minus released (training
    gap, with the interval of one run)."""
    files = [_write(tmp_path, "simcse", s, 1.5) for s in (1, 2, 3)]
    files.append(_write(tmp_path, "simcse_checkpoint", 0, 0.5))
    row = checkpoint_frame(files).iloc[0]
    assert (row["method"], row["ours_method"], row["seeds"]) == ("simcse_checkpoint", "simcse", 3)
    assert row["paper"] == 76.25  # SimCSE's own BERT-base number
    assert row["eval_gap"] == pytest.approx(row["released"] - 76.25)
    assert row["training_gap"] == pytest.approx(row["ours"] - row["released"])
    assert row["training_gap"] < 0 and row["training_gap_ci"].endswith("]")
    assert checkpoint_frame(files[1:]).iloc[0]["training_gap_ci"] == ""  # two seeds
    empty = table_spec("checkpoints").build(table_spec("checkpoints"), files[:3], Options())
    assert "No released checkpoint was evaluated" in empty.tex


def test_the_llm_note_names_the_runs_llm(tmp_path: Path) -> None:
    """A GCSE row's † note names the LLM that wrote the run's data, not the paper's (the claim
    borrowed from ChatGLM3-6B keeps the paper's in its own column and text)."""
    llm = "HuggingFaceTB/SmolLM2-135M-Instruct"
    files = [_write(tmp_path, "simcse", s, 1.5) for s in (1, 2, 3)]
    files += [_write(tmp_path, "gcse", s, 0.5, llm=llm) for s in (1, 2, 3)]
    spec = table_spec("verdicts")
    table = spec.build(spec, files, Options())
    row = table.frame.iloc[0]
    assert (row["llm"], row["claim_llm"]) == (llm, "ChatGLM3-6B")
    assert f"data written by the LLM {llm}" in table.md
    assert "data written by the LLM ChatGLM3-6B" not in table.md


def test_the_probe_claims_are_judged(tmp_path: Path) -> None:
    """OssCSE Section 5.2: the probe's mean cosine to the paraphrases rises (0.79 to 0.88) and
    to the negations falls (0.93 to 0.87), each a claim on its own measure and family, seeds
    only (the probe's eight sentences are not resampled: no floor)."""
    files = []
    for seed in (1, 2, 3):
        for method, para, neg, spread in (("simcse", 0.79, 0.93, 0.002),
                                          ("osscse", 0.90, 0.86, 0.004)):  # fmt: skip
            path = tmp_path / f"{method}-probe-{seed}.json"
            jitter = spread * (seed - 2)
            path.write_text(json.dumps({"method": method, "backbone": BASE, "seed": str(seed),
                                        "paraphrase": para + jitter, "negation": neg - jitter,
                                        "gap": para - neg}))  # fmt: skip
            files.append(str(path))
    frame = verdict_frame(files, Options())
    rows = {r["measure"]: r for r in frame.to_dict("records")}
    assert set(rows) == {"probe_paraphrase", "probe_negation"}
    para, neg = rows["probe_paraphrase"], rows["probe_negation"]
    assert para["vs_baseline"] == pytest.approx(0.11) and para["paper_delta"] == 0.09
    assert para["verdict"] == "reproduced" and para["family"] == "OssCSE probe: paraphrases"
    assert neg["vs_baseline"] == pytest.approx(-0.07) and neg["verdict"] == "reproduced"
    assert para["paper"] == 0.88 and para["test_set"] == "no" and np.isnan(para["floor"])
    assert para["vs_baseline_low"] < 0.11 < para["vs_baseline_high"]  # the seeds' spread


def test_a_declared_baseline_without_evaluations_is_said(
    evals: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    """``--baselines simcse_dropout15=nosuch``: no row can compare them, and the table says
    why in the log instead of leaving the method's row out unseen."""
    import logging

    caplog.set_level(logging.WARNING, "negcse")
    frame = verdict_frame(evals, Options(baselines={"simcse_dropout15": "nosuch"}))
    assert not (frame["method"] == "simcse_dropout15").any()
    said = [r.getMessage() for r in caplog.records if "declared baseline nosuch" in r.getMessage()]
    assert said and "simcse_dropout15 on bert-base-uncased" in said[0], said
