"""How often the verdicts' interval holds the truth, and how often a verdict is wrong
(benchmarks/verdict_coverage.md, docs/statistics.md).

Three parts, each printed as a Markdown table:

1. ``coverage``: negcse.analysis.verdict_rules.simulate at 1-10 seeds and seed/test-set spread
   ratios 1, 2, 4 (the interval of the verdicts table: a t over the seeds blended with the
   normal test-set share), beside the Welch-Satterthwaite t-interval and the two-level
   percentile bootstrap (seeds drawn with replacement, then the test set).
2. ``families``: the minimum detectable effect by seeds, test-set sd and family size; then
   every family of the paper grid (claims.csv: a paper's claims on one measure, at its real
   size) at 3, 5 and 10 seeds, truths 0, half, all and minus the paper's difference, normal,
   t(3) and one-bad-seed noise: the share of families with a false "reproduced" or "reversed"
   after the family's correction, the rows below the test set's floor, the power at the
   paper's difference and the median MDE.
3. ``end-to-end``: the whole procedure on synthetic STS-like test sets (real Spearman, the real
   paired bootstrap of negcse.analysis.bootstrap, a third of one task's pairs shared with
   another as STS-B's are with STS12-16): its coverage with the shared pairs drawn together
   (keys) and apart.

    OMP_NUM_THREADS=1 python benchmarks/verdict_coverage.py [--replicates 4000] [--e2e 300]
        [--families 1000] [--parts coverage families end-to-end]
    OMP_NUM_THREADS=1 python benchmarks/verdict_coverage.py --widths A.json B.json

``--widths`` instead measures how much drawing the shared STS pairs together widens the test
set's share of the interval, on two real STS evaluation files.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from negcse.analysis import verdict_rules as vr
from negcse.analysis.bootstrap import Draws, TaskPairs, observed_average, resampled_average

RATIOS = (1.0, 2.0, 4.0)
PARTS = ("coverage", "families", "end-to-end")


def percentile_two_level(seeds: int, ratio: float, reps: int, rng: np.random.Generator,
                         resamples: int = 1000) -> float:  # fmt: skip
    """Coverage of a two-level percentile interval: per resample, ``seeds`` seeds drawn with replacement
    (one seed: itself) and the test set's share drawn from its normal (sd 1), percentiles."""
    test = rng.normal(0, 1, reps)
    per_seed = test[:, None] + rng.normal(0, ratio, (reps, seeds))
    hits = 0
    for i in range(reps):
        picks = (
            rng.integers(0, seeds, (resamples, seeds))
            if seeds > 1
            else np.zeros((resamples, 1), int)
        )
        # the seeds' observed values already hold this test set's deviation (test[i]); a
        # resample of the test set adds a fresh one around them
        draws = per_seed[i][picks].mean(axis=1) + rng.normal(0, 1, resamples)
        low, high = np.quantile(draws, [0.025, 0.975])
        hits += low <= 0 <= high
    return hits / reps


def welch_t(seeds: int, ratio: float, reps: int, rng: np.random.Generator) -> float:
    """Coverage of the Welch-Satterthwaite t with the test-set variance known."""
    if seeds < 2:
        return float("nan")
    per_seed = rng.normal(0, 1, reps)[:, None] + rng.normal(0, ratio, (reps, seeds))
    seed_var = per_seed.var(axis=1, ddof=1) / seeds
    total = seed_var + rng.chisquare(999, reps) / 999
    df = total**2 / (seed_var**2 / (seeds - 1))
    return float((np.abs(per_seed.mean(axis=1)) <= stats.t.ppf(0.975, df) * np.sqrt(total)).mean())


def coverage(reps: int) -> None:
    print(
        "| ratio | interval | "
        + " | ".join(f"{n} seed{'s' * (n > 1)}" for n in range(1, 11))
        + " |"
    )
    print("|---|---|" + "---:|" * 10)
    rng = np.random.default_rng(0)
    for ratio in RATIOS:
        ours = [vr.simulate(n, 0.0, 1.0, ratio, 1, reps, rng=rng)["covered"].mean()
                for n in range(1, 11)]  # fmt: skip
        welch = [welch_t(n, ratio, reps, rng) for n in range(1, 11)]
        old = [percentile_two_level(n, ratio, min(reps, 2000), rng) for n in range(1, 11)]
        for name, row in (("verdicts (t blend; 1 seed: test set only)", ours),
                          ("Welch-Satterthwaite t", welch), ("two-level percentile", old)):  # fmt: skip
            cells = " | ".join("--" if np.isnan(c) else f"{c:.3f}" for c in row)
            print(f"| {ratio:g} | {name} | {cells} |")


#: the variance model of the families' simulation: paired seeds' sd (UNA Table D7: SimCSE vs
#: paraphrasing & UNA over ten seeds) and the test set's sd of a difference (STS average)
SEED_SD, TEST_SD = 0.67, 0.3
MULTIPLES = {"0": 0.0, "½Δ": 0.5, "Δ": 1.0, "−Δ": -1.0}


def families(reps: int) -> None:
    """Per family of the paper grid (claims.csv, each paper's claims on one measure) at 3, 5
    and 10 seeds: the share of families with any false "reproduced" (truth 0, ½Δ or −Δ; a
    direction only: 0 or −Δ) and with any false "reversed" (truth 0, ½Δ or Δ), the worst over
    those truths, for normal seeds, t(3) seeds and one bad seed; then the rows below the test
    set's floor, the share of the others read "reproduced" at truth Δ (normal seeds), and the
    median MDE over them. The probe's cosines: the variance model x 0.01."""
    from negcse.tables.claims import claim_families, family_design

    print("| family | rows | seeds | false reproduced (normal / t3 / bad seed) | "
          "false reversed (normal / t3 / bad seed) | untestable | reproduced at Δ | "
          "median MDE / abs(Δ) |")  # fmt: skip
    print("|---|---:|---:|---|---|---:|---:|---:|")
    for f, ((paper, measure), claims) in enumerate(claim_families().items()):
        delta, sized, unit = family_design(claims)
        for seeds in (3, 5, 10):
            rep, rev, found = {}, {}, (np.nan, np.nan, np.nan)
            for n, noise in enumerate(vr.NOISES):
                rep[noise], rev[noise] = 0.0, 0.0
                for m, multiple in enumerate(MULTIPLES.values()):
                    run = vr.simulate(seeds, multiple * delta, delta, unit * SEED_SD, replicates=reps,
                                      rng=np.random.default_rng([f, seeds, n, m]), noise=noise,
                                      test_sd=unit * TEST_SD, sized=sized,
                                      mde_samples=20 if (noise, multiple) == ("normal", 1.0) else 0)  # fmt: skip
                    got = run["corrected"]
                    false_rep = multiple <= np.where(sized, 0.5, 0.0)
                    rep[noise] = max(
                        rep[noise], float(((got == vr.REPRODUCED) & false_rep).any(1).mean())
                    )
                    if multiple >= 0:
                        rev[noise] = max(rev[noise], float((got == vr.REVERSED).any(1).mean()))
                    if (noise, multiple) == ("normal", 1.0):
                        testable = ~run["untestable"]
                        ratio = run["mde"][:20] / np.abs(delta)
                        found = (float(run["untestable"].mean() * len(delta)),
                                 float((got == vr.REPRODUCED)[testable].mean()) if testable.any() else np.nan,
                                 float(np.nanmedian(np.where(testable[:20], ratio, np.nan))))  # fmt: skip
            cells = [" / ".join(f"{d[k]:.3f}" for k in vr.NOISES) for d in (rep, rev)]
            print(
                f"| {paper} {measure} | {len(delta)} | {seeds} | {cells[0]} | {cells[1]} | "
                f"{found[0]:.1f} | {found[1]:.3f} | {found[2]:.2f} |"
            )


def mde_table() -> None:
    """The minimum detectable effect (a true effect read "reproduced" with 80% power) under
    the variance model, by seeds, test-set sd and family size (1: no correction)."""
    print("| seeds | test-set sd | MDE, no family | family of 10 (SNCSE STS) | family of 46 (GCSE STS) "
          "| zero test, no family | test set's floor |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for seeds in (3, 5, 10, 20):
        for test_sd in (0.2, 0.4):
            cells = [vr.planned_mde(SEED_SD, seeds, test_sd, k) for k in (1, 10, 46)]
            cells.append(vr.planned_mde(SEED_SD, seeds, test_sd, 1, sized=False))
            floor = vr.detection_floor(test_sd**2)
            print(
                f"| {seeds} | {test_sd} | "
                + " | ".join(f"{c:.2f}" for c in cells)
                + f" | {floor:.2f} |"
            )


# End to end: synthetic STS-like tasks, the real bootstrap.

SIZES = {"t1": (400, 400), "t2": (600,), "t3": (300,)}
SHARED = 100  # t3's first 100 pairs are t1's first 100


def _population(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    gold = rng.uniform(0, 5, n)
    return gold, rng.normal(0, 1, n)  # a pair's difficulty, shared by the models


def _test_set(
    rng: np.random.Generator, pop: tuple[np.ndarray, np.ndarray]
) -> dict[str, np.ndarray]:
    """Pair indices into the population per task; t3 holds t1's first SHARED pairs."""
    n = len(pop[0])
    out = {t: rng.integers(0, n, sum(s)) for t, s in SIZES.items()}
    out["t3"][:SHARED] = out["t1"][:SHARED]
    return out


def _cosines(pop, method: int, seed_quality: float, rng) -> np.ndarray:
    """Model ``method`` (0: baseline, 1: the method, a little better) at a seed of quality
    ``seed_quality``: gold plus difficulty plus its own noise, per pair of the population (a
    pair two tasks hold has one cosine, as a real model's)."""
    gold, difficulty = pop
    scale = (1.0 - 0.06 * method) * (1.0 + seed_quality)
    return gold + 0.8 * difficulty + scale * 1.2 * rng.normal(0, 1, len(gold))


def _replicate(
    rng, pop, seeds: int, resamples: int, keys: bool, seed_sd: float
) -> tuple[float, vr.SeedInterval]:
    index = _test_set(rng, pop)
    tasks = {t: TaskPairs(pop[0][index[t]], SIZES[t],
                          tuple(f"{i:010x}" for i in index[t]) if keys else ()) for t in SIZES}  # fmt: skip
    draws = Draws.draw(tasks, resamples, seed=int(rng.integers(1 << 30)))
    values, resampled = [[], []], [[], []]
    for _ in range(seeds):
        for method in (0, 1):
            cosine = _cosines(pop, method, rng.normal(0, seed_sd), rng)
            preds = {t: cosine[index[t]] for t in SIZES}
            values[method].append(observed_average(preds, tasks))
            resampled[method].append(resampled_average(preds, draws))
    a, b = np.array(values[1]), np.array(values[0])
    test_var = float(np.var(np.mean(resampled[1], 0) - np.mean(resampled[0], 0), ddof=1))
    interval = vr.seed_interval(a, b, paired=False, test_var=test_var)
    return float(a.mean() - b.mean()), interval


def end_to_end(reps: int) -> None:
    """Coverage of the truth (the mean difference over fresh test sets and seeds) with the
    shared pairs drawn together and apart; the seeds' spread large (a seed's noise scale
    varies by 8%) or small (0.5%: the test set dominates, where drawing apart shows)."""
    rng = np.random.default_rng(2)
    pop = _population(rng, 200_000)
    start = time.perf_counter()
    print("| seeds | seed spread | truth | pairs drawn | coverage | mean half-width | "
          "mean test-set sd | mean seeds' sd |")  # fmt: skip
    print("|---:|---:|---:|---|---:|---:|---:|---:|")
    for seeds, seed_sd in ((3, 0.08), (5, 0.08), (3, 0.005)):
        truth = float(np.mean([_replicate(rng, pop, 2, 20, True, seed_sd)[0] for _ in range(400)]))
        for keys in (True, False):
            hits, halves, tests, seed_sds = 0, [], [], []
            for _ in range(reps):
                _, interval = _replicate(rng, pop, seeds, 200, keys, seed_sd)
                hits += interval.low <= truth <= interval.high
                halves.append(interval.half_width)
                tests.append(np.sqrt(interval.test_var))
                seed_sds.append(np.sqrt(interval.seed_var))
            label = "together (keys)" if keys else "apart (no keys)"
            print(
                f"| {seeds} | {seed_sd:g} | {truth:+.3f} | {label} | {hits / reps:.3f} | "
                f"{np.mean(halves):.3f} | {np.mean(tests):.3f} | {np.mean(seed_sds):.3f} |"
            )
    print(
        f"({time.perf_counter() - start:.0f} s; truth: the mean over 400 fresh test sets x 2 seeds)"
    )


def widths(paths: list[str], resamples: int = 2000) -> None:
    """The test set's sd of one model's STS average and of two models' difference, the pairs
    several tasks share drawn together (the evaluation files' keys) and apart (no keys: every
    subset keeps its size), on real evaluation files."""
    from dataclasses import replace

    from negcse.tables.verdicts import read_evaluations

    data = read_evaluations(paths)
    design = data.designs[next(iter(data.designs))][1]
    apart = {t: replace(task, keys=()) for t, task in design.items()}
    models = list(data.models.values())[:2]
    print("| what | drawn apart (sd) | drawn together (sd) | together / apart |")
    print("|---|---:|---:|---:|")
    sds = {}
    for name, tasks in (("apart", apart), ("together", design)):
        draws = Draws.draw(tasks, resamples, seed=0)
        values = [resampled_average(m.preds[0], draws) for m in models]
        sds[name] = (np.std(values[0], ddof=1), np.std(values[1], ddof=1),
                     np.std(values[0] - values[1], ddof=1))  # fmt: skip
    labels = [f"{models[0].method}'s average", f"{models[1].method}'s average",
              f"{models[0].method} - {models[1].method}"]  # fmt: skip
    for i, label in enumerate(labels):
        a, t = sds["apart"][i], sds["together"][i]
        print(f"| {label} | {a:.3f} | {t:.3f} | {t / a:.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=4000)
    parser.add_argument("--e2e", type=int, default=300, help="end-to-end replicates per row")
    parser.add_argument("--families", type=int, default=1000,
                        help="replicates per family, seed count, noise and truth")  # fmt: skip
    parser.add_argument("--parts", nargs="+", default=list(PARTS), choices=PARTS)
    parser.add_argument("--widths", nargs=2, metavar="STS_JSON",
                        help="two STS evaluation files (with pairs and keys): widths only")  # fmt: skip
    args = parser.parse_args()
    if args.widths:
        widths(args.widths)
        return
    if "coverage" in args.parts:
        coverage(args.replicates)
        print()
    if "families" in args.parts:
        mde_table()
        print()
        families(args.families)
        print()
    if "end-to-end" in args.parts:
        end_to_end(args.e2e)


if __name__ == "__main__":
    main()
