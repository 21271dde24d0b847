"""Cost of the verdict table's paired bootstrap at smoke scale (benchmarks/bootstrap.md).

Writes STS evaluation files holding the real SentEval test pairs (gold scores, subset sizes and
pair keys from the mirror) and noisy cosines (one per distinct pair, as a model gives), as
`negcse evaluate` writes them, for the smoke grid's methods x seeds plus the untrained row, and
transfer files of the smoke protocol (CR in 5 folds, TREC's test split) with each test
example's correctness; then times each table job that reads them as the table rule runs it
(`python -m negcse table NAME`, a process of its own: imports, reading, resampling, rendering):
verdicts (STS and transfer files together, as the workflow gives them), checkpoints (no
released row, as offline in smoke), sts with and without the per-pair records in its files,
and transfer with and without the per-example records.

    NEGCSE_MIRROR=/work/shared/mirror python benchmarks/bootstrap.py [--seeds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from negcse.analysis.bootstrap import pair_key
from negcse.data.sts import STS_TASKS, load_sts
from negcse.workflow.config import method_baselines, project_config

SMOKE_METHODS = (
    "simcse", "una", "una_random_select", "una_random_replace", "una_random_both", "sncse",
    "sncse_pl", "sncse_nl", "sncse_infonce", "osscse", "simcse_san", "sncse_san",
    "una_baseline", "simcse_dropout15",
)  # fmt: skip


def _runs(seeds: int) -> list[tuple[str, int]]:
    """(method, seed) of every smoke method at each seed, then the untrained backbone."""
    return [(m, s) for m in SMOKE_METHODS for s in range(1, seeds + 1)] + [("untrained", 0)]


def write_evals(folder: Path, seeds: int, pairs: bool) -> list[str]:
    data = {task: load_sts(task) for task in STS_TASKS}
    keys = {
        t: [pair_key(a, b) for a, b in zip(d.sent1, d.sent2, strict=True)] for t, d in data.items()
    }
    distinct = sorted({k for task in keys.values() for k in task})
    rng = np.random.default_rng(0)
    paths = []
    for method, seed in _runs(seeds):
        result: dict = {"method": method, "backbone": "splade-tiny", "seed": str(seed)}
        details = {}
        noise = dict(zip(distinct, rng.normal(0, 0.4, len(distinct)), strict=True))
        for task, d in data.items():
            cosine = d.gold / 5 + np.array([noise[k] for k in keys[task]])
            result[task] = 100 * spearmanr(cosine, d.gold).statistic
            details[task] = {"all": result[task], "n": len(d)}
            if pairs:
                details[task]["pairs"] = {
                    "cosine": cosine.tolist(),
                    "gold": d.gold.tolist(),
                    "subset_sizes": [s.stop - s.start for s in d.subsets.values()],
                    "key": "".join(keys[task]),
                }
        result["avg"] = float(np.mean([result[t] for t in STS_TASKS]))
        path = folder / f"{method}-{seed}.json"
        path.write_text(json.dumps({**result, "details": details}))
        paths.append(str(path))
    return paths


#: the smoke grid's transfer protocol: CR's 3,775 rows in 5 outer folds, TREC's 500 test rows
TRANSFER_FOLDS = {"CR": np.arange(3775) % 5, "TREC": np.zeros(500, dtype=np.int64)}


def write_transfer_evals(folder: Path, seeds: int, record: bool) -> list[str]:
    rng = np.random.default_rng(0)
    paths = []
    for method, seed in _runs(seeds):
        result: dict = {"method": method, "backbone": "splade-tiny", "seed": str(seed)}
        details = {}
        for task, fold in TRANSFER_FOLDS.items():
            correct = rng.random(len(fold)) < rng.uniform(0.6, 0.85)
            folds = int(fold.max()) + 1
            accs = [round(100 * float(correct[fold == f].mean()), 2) for f in range(folds)]
            result[task] = round(float(np.mean(accs)), 2)
            details[task] = {"acc": result[task], "kfold": folds if folds > 1 else None}
            if record:
                details[task]["test"] = {"correct": "".join("01"[int(c)] for c in correct)}
                if folds > 1:
                    details[task]["test"]["fold"] = "".join(str(f) for f in fold)
        result["avg"] = round(float(np.mean([result[t] for t in TRANSFER_FOLDS])), 2)
        path = folder / f"{method}-{seed}.json"
        path.write_text(json.dumps({**result, "details": details}, indent=2))
        paths.append(str(path))
    return paths


def timed(args: list[str]) -> tuple[float, float, float]:
    """Wall s, CPU s and peak RSS (MB) of ``python -m negcse ARGS`` (that child's own)."""
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "negcse", *args], stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if status:
        raise SystemExit(f"negcse {' '.join(args[:2])} failed ({status})")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    config = project_config(".", check=False)
    baselines = [f"{m}={b}" for m, b in method_baselines(config).items()]
    print("| table job | files | MB per file | wall s | CPU s | peak RSS MB |")
    print("|---|---:|---:|---:|---:|---:|")

    def job(name: str, evals: list[str], folder: Path, label: str) -> None:
        size = sum(Path(p).stat().st_size for p in evals) / len(evals) / 1e6
        out = ["--md", str(folder / f"{name}.md"), "--baselines", *baselines]
        wall, cpu, peak = timed(["table", name, "--evals", *evals, *out])
        print(f"| {label} | {len(evals)} | {size:.3f} | {wall:.1f} | {cpu:.1f} | {peak:.0f} |")

    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for kind, write in (("sts", write_evals), ("transfer", write_transfer_evals)):
            for record in (True, False):
                folder = Path(tmp) / f"{kind}-{record}"
                folder.mkdir()
                files[(kind, record)] = (write(folder, args.seeds, record), folder)
        sts, folder = files[("sts", True)]
        job("verdicts", sts + files[("transfer", True)][0], folder, "verdicts (STS + transfer)")
        job("checkpoints", sts, folder, "checkpoints")
        for kind in ("sts", "transfer"):
            for record in (True, False):
                evals, folder = files[(kind, record)]
                job(kind, evals, folder, kind + ("" if record else " (files without records)"))


if __name__ == "__main__":
    main()
