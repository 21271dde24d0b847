"""How often the verdicts' interval holds the truth, and how often a verdict is wrong
(benchmarks/verdict_coverage.md, docs/statistics.md).

Three parts, each printed as a Markdown table:

1. ``coverage``: negcse.analysis.verdict_rules.simulate at 1-10 seeds and seed/test-set spread
   ratios 1, 2, 4 (the interval of the verdicts table: a t over the seeds blended with the
   normal test-set share), beside the Welch-Satterthwaite t-interval and the two-level
   percentile bootstrap (seeds drawn with replacement, then the test set).
2. ``rates``: each verdict's rate for four truths (identical methods, a gain half the claimed
   one, the claimed gain, a reversed gain) at 3, 5 and 10 seeds, before and after Holm over a
   grid of 16 claims.
3. ``end-to-end``: the whole procedure on synthetic STS-like test sets (real Spearman, the real
   paired bootstrap of negcse.analysis.bootstrap, a third of one task's pairs shared with
   another as STS-B's are with STS12-16): its coverage with the shared pairs drawn together
   (keys) and apart.

    OMP_NUM_THREADS=1 python benchmarks/verdict_coverage.py [--replicates 4000] [--e2e 300]
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


def rates(reps: int) -> None:
    truths = {"identical (0)": 0.0, "half the claim (+1)": 1.0, "as claimed (+2)": 2.0,
              "reversed (-2)": -2.0}  # fmt: skip
    print("| truth | seeds | " + " | ".join(vr.WORDS) + " | any false, grid of 16 (Holm) |")
    print("|---|---:|" + "---:|" * (len(vr.WORDS) + 1))
    false = {0.0: (vr.REPRODUCED, vr.SMALLER, vr.REVERSED), 1.0: (vr.REVERSED,),
             2.0: (vr.REVERSED, vr.SMALLER, vr.NOT_REPRODUCED), -2.0: (vr.REPRODUCED, vr.SMALLER)}  # fmt: skip
    rng = np.random.default_rng(1)
    for name, truth in truths.items():
        for seeds in (3, 5, 10):
            run = vr.simulate(seeds, truth, 2.0, 2.0, 16, reps // 4, rng=rng)
            cells = " | ".join(f"{(run['verdict'] == k).mean():.3f} / {(run['holm'] == k).mean():.3f}"
                               for k in range(len(vr.WORDS)))  # fmt: skip
            family = np.isin(run["holm"], false[truth]).any(axis=1).mean()
            print(f"| {name} | {seeds} | {cells} | {family:.3f} |")


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
    parser.add_argument("--widths", nargs=2, metavar="STS_JSON",
                        help="two STS evaluation files (with pairs and keys): widths only")  # fmt: skip
    args = parser.parse_args()
    if args.widths:
        widths(args.widths)
        return
    coverage(args.replicates)
    print()
    rates(args.replicates)
    print()
    end_to_end(args.e2e)


if __name__ == "__main__":
    main()
