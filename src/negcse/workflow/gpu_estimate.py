"""Estimated GPU hours of a grid, from the unit costs benchmarks/gpu.py measured.

``benchmarks/gpu_costs.csv`` holds seconds per training step (implementation x precision at a
batch size, BERT-base), per STS-B dev evaluation, per evaluation job and per generated sentence,
measured on one GPU. A run of method m on backbone b costs steps x step seconds (scaled by batch
size and by the backbone's transformer-layer FLOPs relative to BERT-base) plus its dev
evaluations plus one evaluation job; a generator costs its per-sentence time over the corpus
for each distinct output the grid needs. The dry run prints the table (rules/common.smk).
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from negcse.generators.registry import producer, settings
from negcse.methods.registry import method_class
from negcse.workflow.config import method_seeds, resolve_method

WIKI1M = 1_000_000
#: transformer-layer FLOPs per token relative to BERT-base (layers x hidden^2): 24 x 1024^2
#: over 12 x 768^2 for the large models; RoBERTa-base has BERT-base's layers
LARGE_FACTOR = 24 * 1024**2 / (12 * 768**2)


#: implementations priced by the measured one with the same forward passes per step (UNA's
#: variants swap a column; SNCSE's ablations keep its three prompt views, or drop one)
SAME_COST = {
    "una_baseline": "simcse",  # UNA's own SimCSE run (fp32, no injection)
    "una_paraphrase": "una",
    "una_both": "una",
    "sncse_pl": "sncse",
    "sncse_nl": "sncse",
    "sncse_infonce": "sncse",
    # ESTIMATE until measured: GCSE stage 2 trains three views (anchor, positive, negative) as
    # OssCSE does, plus two no-grad forwards of the frozen stage-1 model
    "gcse": "osscse",
}


def backbone_factor(backbone: str) -> float:
    return LARGE_FACTOR if "large" in backbone.lower() else 1.0


@dataclass
class Costs:
    """Unit costs from gpu_costs.csv (seconds)."""

    device: str
    step: dict[tuple[str, str], tuple[float, int]] = field(default_factory=dict)
    dev_eval: dict[str, float] = field(default_factory=dict)
    eval_job: float | None = None  # None: not measured (the benchmark's job did not finish)
    generator: dict[str, float] = field(default_factory=dict)

    def step_seconds(self, implementation: str, precision: str, batch: int) -> float | None:
        """Seconds of one step, from the eager measurement at the paper settings; another
        precision is priced by SimCSE's measured ratio; batch size scales linearly."""
        implementation = SAME_COST.get(implementation, implementation)
        got = self.step.get((implementation, precision))
        if got is None:
            other = [(p, v) for (i, p), v in self.step.items() if i == implementation]
            if not other:
                return None
            measured_precision, got = other[0]
            ref = (
                self.step.get(("simcse", precision)),
                self.step.get(("simcse", measured_precision)),
            )
            if ref[0] and ref[1]:
                got = (got[0] * ref[0][0] / ref[1][0], got[1])
        seconds, measured_batch = got
        return seconds * batch / measured_batch


def load_costs(path: str | Path) -> Costs:
    path = Path(path)
    costs = Costs(device="")
    with path.open(encoding="utf-8", newline="") as fh:
        for line, row in enumerate(csv.DictReader(fh), start=2):
            try:
                seconds = float(row["seconds"])
                costs.device = row["device"]
                kind = row["kind"]
                if kind == "train_step" and not row["options"]:
                    costs.step[(row["name"], row["precision"])] = (seconds, int(row["batch_size"]))
                elif kind == "dev_eval":
                    costs.dev_eval[row["precision"]] = seconds
                elif kind == "eval_job":
                    costs.eval_job = seconds
                elif kind == "generator_sentence":
                    costs.generator[row["name"]] = seconds
            except (KeyError, ValueError, TypeError) as err:
                raise ValueError(f"{path}, line {line}: bad cost row {row} ({err})") from err
    return costs


@dataclass
class Row:
    name: str
    jobs: int = 0
    train_h: float = 0.0
    eval_h: float = 0.0
    unpriced: bool = False

    @property
    def total_h(self) -> float:
        return self.train_h + self.eval_h


def estimate(
    config: Mapping[str, Any],
    costs: Costs,
    corpus_sentences: int,
    generator_outputs: Mapping[str, int],
    method_sentences: Mapping[str, int] | None = None,
) -> list[Row]:
    """One row per grid method (trainings + their evaluations), per GPU generator, untrained
    baselines; GPU hours on the benchmarked GPU. ``method_sentences``: the corpus size of a
    method that trains on another corpus (GCSE's domain setting), else ``corpus_sentences``."""
    grid = config["grid"]
    rows = []
    for method in grid["methods"]:
        sentences = (method_sentences or {}).get(method, corpus_sentences)
        row = Row(method)
        for backbone in grid["backbones"]:
            spec = resolve_method(dict(config), method, backbone)
            t = spec["train"]
            precision = "fp16" if t["precision"] == "auto" else t["precision"]
            precision = "fp32" if precision == "tf32" else precision
            steps = math.ceil(sentences / t["batch_size"]) * t["epochs"]
            if t.get("max_steps"):
                steps = min(steps, t["max_steps"])
            step_s = costs.step_seconds(spec["implementation"], precision, t["batch_size"])
            factor = backbone_factor(backbone)
            if step_s is None:
                row.unpriced = True
                step_s = 0.0
            dev_s = costs.dev_eval.get(precision, costs.dev_eval.get("fp32", 0.0))
            per_run = steps * step_s + (steps // t["eval_steps"] + 1) * dev_s
            for _ in method_seeds(dict(config), method, backbone):
                row.jobs += 2
                row.train_h += per_run * factor / 3600
                row.eval_h += (costs.eval_job or 0.0) * factor / 3600
        rows.append(row)
    if config.get("evaluation", {}).get("baseline", True):
        base = Row("untrained baselines")
        for backbone in grid["backbones"]:
            base.jobs += 1
            base.eval_h += (costs.eval_job or 0.0) * backbone_factor(backbone) / 3600
        rows.append(base)
    for generator, outputs in sorted(generator_outputs.items()):
        per = costs.generator.get(generator)
        gen = Row(f"generator: {generator}", jobs=outputs, unpriced=per is None)
        gen.train_h = (per or 0.0) * corpus_sentences * outputs / 3600
        rows.append(gen)
    return rows


def gpu_generators(
    config: Mapping[str, Any], column_paths: Iterable[tuple[str, str]]
) -> dict[str, int]:
    """Distinct GPU generator outputs: (column, output path) pairs -> the GPU rule its
    generator's spec names (``gpu_rule``) -> count; columns of no generator are skipped."""
    seen: dict[str, set[str]] = defaultdict(set)
    for column, path in column_paths:
        try:
            gen = producer(column)
        except KeyError:
            continue
        rule = gen.gpu_rule(settings(config, gen.name))
        if rule is not None:
            seen[rule].add(path)
    return {k: len(v) for k, v in seen.items()}


def method_columns(config: Mapping[str, Any], method: str) -> tuple[str, ...]:
    return method_class(config["methods"][method]["implementation"]).columns


def format_table(
    rows: list[Row], costs: Costs, corpus_sentences: int, source: str, unpriced: str = ""
) -> str:
    lines = [
        f"Estimated GPU hours on one {costs.device} (unit costs: {source}; corpus "
        f"{corpus_sentences:,} sentences; large backbones x{LARGE_FACTOR:.2f} of base):",
        f"{'what':<34} {'GPU jobs':>8} {'train/gen h':>11} {'eval h':>8} {'total h':>8}",
    ]
    for r in rows:
        mark = " (no measured cost: not counted)" if r.unpriced else ""
        lines.append(
            f"{r.name:<34} {r.jobs:>8} {r.train_h:>11.1f} {r.eval_h:>8.1f} {r.total_h:>8.1f}{mark}"
        )
    total = sum(r.total_h for r in rows)
    jobs = sum(r.jobs for r in rows)
    lines.append(f"{'total':<34} {jobs:>8} {'':>11} {'':>8} {total:>8.1f}")
    lines.append(f"(on N GPUs with --resources gpu=N: about {total:.0f} / N hours)")
    missing = [unpriced] if unpriced else []
    if costs.eval_job is None:
        missing.append("the evaluation jobs (eval h = 0: no finished measurement)")
    if missing:
        lines.append(f"Not counted (no measured cost): {'; '.join(missing)}")
    return "\n".join(lines)
