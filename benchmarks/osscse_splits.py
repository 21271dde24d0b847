"""OssCSE Cont./Oppn. split sizes on the mirror data beside the paper's Table 2.

Usage: NEGCSE_MIRROR=/work/shared/mirror python benchmarks/osscse_splits.py [--jiwer DIR]

Prints, per text version (SentEval-processed, raw) and MER alignment (backtrace, max_hits),
the Cont. counts and median MERs against Table 2. With --jiwer DIR (a folder where
`pip install --target DIR jiwer` put jiwer), it also checks that the backtrace alignment gives
jiwer.mer's value on every candidate pair.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from negcse.evaluation.splits import build_splits, candidate_pairs, pair_mer
from negcse.tables.published import splits_table2
from negcse.text.mer import ALIGNMENTS, words


def check_jiwer(folder: str) -> None:
    sys.path.append(folder)
    import jiwer

    total = bad = 0
    for protocol in ("senteval", "mteb"):
        for name, (s1, s2, _) in candidate_pairs(protocol).items():
            for a, b in zip(s1, s2, strict=True):
                ra, rb = " ".join(words(a)), " ".join(words(b))
                if not ra or not rb:
                    continue
                total += 1
                if abs(jiwer.mer(ra, rb) - pair_mer(a, b, "backtrace")) > 1e-12:
                    bad += 1
                    if bad <= 5:
                        print(f"  differs: {protocol} {name}: {a!r} / {b!r}")
    print(f"jiwer check: {total} pairs, {bad} differ")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jiwer", default=None)
    args = parser.parse_args()
    paper = splits_table2()
    for protocol in ("senteval", "mteb"):
        for alignment in ALIGNMENTS:
            start = time.perf_counter()
            datasets = {d.name: d for d in build_splits(protocol, alignment)}
            secs = time.perf_counter() - start
            print(f"\n### {protocol} text, {alignment} alignment ({secs:.1f} s)\n")
            print(
                "| dataset | median score (paper) | median MER (paper) | Cont. (paper) | "
                "Oppn. (paper) | Δ Cont. | in [2, 3.5] |"
            )
            print("|---|---|---|---|---|---|---|")
            diffs = []
            for name, d in datasets.items():
                p = paper.get(name)
                if p is None and not d.in_range:
                    continue
                if p is None:
                    ref = ("--", "--", "--", "--", "--")
                else:
                    diffs.append(d.n_cont - p["n_cont"])
                    ref = (
                        f"{p['median_score']:g}",
                        f"{p['median_mer']:g}",
                        p["n_cont"],
                        p["n_oppn"],
                        f"{d.n_cont - p['n_cont']:+d}",
                    )
                print(
                    f"| {name} | {d.median_score:g} ({ref[0]}) | {d.median_mer:.4f} ({ref[1]}) "
                    f"| {d.n_cont} ({ref[2]}) | {d.n_oppn} ({ref[3]}) | {ref[4]} | "
                    f"{'yes' if d.in_range else 'no'} |"
                )
            exact = sum(x == 0 for x in diffs)
            print(f"\nsum |Δ Cont.| over Table 2: {int(np.abs(diffs).sum())}; exact: {exact}/16")
    if args.jiwer:
        check_jiwer(args.jiwer)


if __name__ == "__main__":
    main()
