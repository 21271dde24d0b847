"""Benchmark ``negcse negate`` against the released SNCSE negation script on the same input.

The released script is run beforehand, outside the project (see benchmarks/negation.md); this
script only reads its outputs and its timing:

- ``--reference-jsonl``: the released generator's output, one ``[sentence, negation]`` per line;
- ``--reference-effective``: the negation text the released trainer pairs with each input line
  (its lookup applied to that table), one per line;
- ``--reference-time``: ``/usr/bin/time -f "%e %U %S"`` output of the released script's process.

It then runs our command as whole processes (``python -m negcse negate``), timing wall clock and
CPU (user + sys of the process and its workers), and checks line for line:

- ``--reference-quirks`` output == the released trainer's effective negations;
- default output == our fixed lookup applied to the released generator's table, i.e. the
  released rules' output for every line (including those without final punctuation).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from negcse.data.sources import resolve_data
from negcse.generators.negation import load_nlp, negate, sncse_training_text
from negcse.io_utils import read_jsonl

WIKI10K = "unlabeled/wiki1m/wiki1m_random10k.txt"


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run_ours(inp: Path, out: Path, quirks: bool, n_process: int, batch_size: int) -> dict:
    cmd = [sys.executable, "-m", "negcse", "negate", "--input", str(inp), "--output", str(out)]
    cmd += ["--n-process", str(n_process), "--batch-size", str(batch_size), "--no-progress"]
    if quirks:
        cmd.append("--reference-quirks")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = load_average()
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "command": " ".join(["python", *cmd[1:]]),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "load_before": load,
        "load_after": load_average(),
    }


def time_in_process(sentences: list[str], n_process: int, batch_size: int) -> dict:
    """negate(reference_quirks=True) inside this process: no interpreter start, imports or load."""
    start = time.perf_counter()
    load_nlp()
    load_s = time.perf_counter() - start
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu0, load = time.process_time(), load_average()
    start = time.perf_counter()
    out = negate(sentences, reference_quirks=True, n_process=n_process, batch_size=batch_size)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time() - cpu0 + (after.ru_utime - before.ru_utime)
    cpu += after.ru_stime - before.ru_stime
    return {
        "mode": "reference_quirks (in-process negate())",
        "n_process": n_process,
        "pipeline_load_s": round(load_s, 2),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "load_before": load,
        "load_after": load_average(),
        "outputs": out,
    }


def compare(ours: list[str], expected: list[str]) -> tuple[int, list[int]]:
    if len(ours) != len(expected):
        raise SystemExit(f"line counts differ: ours {len(ours)}, reference {len(expected)}")
    bad = [i + 1 for i, (a, b) in enumerate(zip(ours, expected, strict=True)) if a != b]
    return len(ours) - len(bad), bad


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--input", type=Path, default=None, help="default: the mirror's wiki 10k sample")
    p.add_argument("--reference-jsonl", type=Path, required=True)
    p.add_argument("--reference-effective", type=Path, required=True)
    p.add_argument("--reference-time", type=Path, required=True)
    p.add_argument("--workdir", type=Path, required=True, help="where our outputs go")
    p.add_argument("--n-process", type=int, nargs="+", default=[2])
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--out", type=Path, default=None, help="JSON with all figures")
    args = p.parse_args()

    inp = args.input or resolve_data(WIKI10K)
    sentences = read_lines(inp)
    n = len(sentences)
    ref_wall, ref_user, ref_sys = (float(x) for x in args.reference_time.read_text().split()[-3:])
    table = {}
    for sentence, negation in read_jsonl(args.reference_jsonl):
        table[sentence] = negation
    effective = read_lines(args.reference_effective)
    fixed_expected = [sncse_training_text(s, table) for s in sentences]

    args.workdir.mkdir(parents=True, exist_ok=True)
    result: dict = {
        "input": str(inp),
        "sentences": n,
        "cpu_count": os.cpu_count(),
        "reference": {
            "wall_s": ref_wall,
            "cpu_s": round(ref_user + ref_sys, 2),
            "rate_wall": round(n / ref_wall, 1),
            "rate_cpu": round(n / (ref_user + ref_sys), 1),
        },
        "runs": [],
    }
    for n_process in args.n_process:
        for quirks in (True, False):
            out = args.workdir / f"ours_{'quirks' if quirks else 'default'}_np{n_process}.txt"
            run = run_ours(inp, out, quirks, n_process, args.batch_size)
            expected = effective if quirks else fixed_expected
            same, bad = compare(read_lines(out), expected)
            run.update(
                mode="reference_quirks" if quirks else "default",
                n_process=n_process,
                rate_wall=round(n / run["wall_s"], 1),
                rate_cpu=round(n / run["cpu_s"], 1),
                speedup_wall=round(ref_wall / run["wall_s"], 2),
                speedup_cpu=round((ref_user + ref_sys) / run["cpu_s"], 2),
                identical=same,
                mismatched_lines=bad[:20],
            )
            result["runs"].append(run)
            print(json.dumps(run), flush=True)

    for n_process in args.n_process:
        run = time_in_process(sentences, n_process, args.batch_size)
        same, bad = compare(run.pop("outputs"), effective)
        run.update(
            rate_wall=round(n / run["wall_s"], 1),
            rate_cpu=round(n / run["cpu_s"], 1),
            speedup_wall=round(ref_wall / run["wall_s"], 2),
            speedup_cpu=round((ref_user + ref_sys) / run["cpu_s"], 2),
            identical=same,
            mismatched_lines=bad[:20],
        )
        result["runs"].append(run)
        print(json.dumps(run), flush=True)

    ref = result["reference"]
    print(f"\nreference: {ref['wall_s']} s wall, {ref['rate_wall']} sent/s; {ref['cpu_s']} s CPU")
    print("| mode | n_process | wall s | sent/s | speed-up | CPU s | sent/CPU-s | identical |")
    print("|---|---|---|---|---|---|---|---|")
    for r in result["runs"]:
        print(
            f"| {r['mode']} | {r['n_process']} | {r['wall_s']} | {r['rate_wall']} | "
            f"{r['speedup_wall']}x | {r['cpu_s']} | {r['rate_cpu']} | {r['identical']}/{n} |"
        )
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0 if all(r["identical"] == n for r in result["runs"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
