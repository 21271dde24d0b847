"""``negcse quickstart``: SimCSE's headline number in one command (``make gpu-quickstart``).

Unsupervised SimCSE on BERT-base over wiki1m for one epoch at the paper's settings, through the
workflow on one CUDA GPU (``snakemake --profile profiles/local --configfile
config/gpu-quickstart.yaml``: the corpus, then the training, resumable), then the STS
evaluation (STS12-16, STS-B, SICK-R, SentEval's "all" setting) and the average beside the
paper's 76.25 with the band this check accepts. Without a CUDA GPU it stops with one line.
``--tiny`` runs the same commands at smoke size on the CPU (splade-tiny, 256 sentences, 6
steps, STS-B alone; config/gpu-quickstart-tiny.yaml): a check of the path whose number means
nothing.

The result, its timings and the device go to ``results/quickstart/<backbone>-seed<seed>.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from negcse.commands import evaluate as evaluate_command
from negcse.data.sources import hub_models
from negcse.errors import UserError
from negcse.finite import at_least
from negcse.io_utils import write_json
from negcse.runtime.lazy import LazyModule, torch
from negcse.workflow.config import resolve_method
from negcse.workflow.gpu_estimate import COSTS_FILE, estimate, load_costs
from negcse.workflow.plan.evaluate import MODEL_DIR
from negcse.workflow.plan.load import workflow_config

if TYPE_CHECKING:
    from negcse.runtime import device as device_policy
else:  # torch: imported when the command runs, not for --help
    device_policy = LazyModule("negcse.runtime.device")

NAME = "quickstart"
HELP = (
    "SimCSE's headline in one command: unsupervised SimCSE, BERT-base, wiki1m, one epoch on a "
    "CUDA GPU, then the STS average beside the paper's 76.25 (--tiny: smoke size on the CPU)"
)
logger = logging.getLogger(__name__)

CONFIG = "config/gpu-quickstart.yaml"
TINY_CONFIG = "config/gpu-quickstart-tiny.yaml"
#: --tiny evaluates one STS task (the same code path, a fraction of the CPU time)
TINY_TASKS = ["STSBenchmark"]
OUT_DIR = "results/quickstart"
#: SimCSE Table 5, unsupervised BERT-base, the average of the seven STS tasks
PAPER = 76.25
#: independent reruns of that setting (the suite's method notes: 74.8 to 76.0)
RERUNS = (74.8, 76.0)
#: the accepted band: the lowest rerun to the paper, each end widened by 0.5 points (about
#: 1.3 x 0.38, the seed standard deviation of ten BERT-base runs of one SimCSE-based method,
#: UNA's Table D7): one seed's run of a faithful reproduction lands inside
BAND = (RERUNS[0] - 0.5, PAPER + 0.5)
BAND_WHY = (
    f"from the lowest independent rerun ({RERUNS[0]}) to the paper ({PAPER}), each end widened "
    "by 0.5 points for one seed's spread (about 1.3 x the 0.38-point seed std of ten BERT-base "
    "runs in UNA's Table D7)"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--tiny", action="store_true", help="smoke size on the CPU (CI): checks the path only"
    )
    p.add_argument(
        "--cores", type=at_least(1), default=None, help="snakemake --cores (default: all)"
    )


def _estimate_minutes(config: dict[str, Any]) -> tuple[float, str] | None:
    """Minutes of the training and evaluation job the GPU-hours estimate gives, and its GPU."""
    if not Path(COSTS_FILE).is_file():
        return None
    costs = load_costs(COSTS_FILE)
    rows = estimate(config, costs, {})
    row = next(r for r in rows if r.name == "simcse")
    return row.total_h * 60, costs.device


def _snakemake(target: str, tiny: bool, cores: int | None, env: dict[str, str]) -> float:
    """Build ``target`` through the workflow; its wall seconds. Its output streams through."""
    configs = [CONFIG, *([TINY_CONFIG] if tiny else [])]
    cmd = [sys.executable, "-m", "snakemake", target, "--configfile", *configs]
    if tiny:  # no GPU profile: the CPU's cores, the device auto
        cmd += ["--cores", str(cores or 2), "--resources", "gpu=1", "--config", "device=auto"]
        cmd += ["--rerun-incomplete", "--show-failed-logs"]
    else:  # profiles/local: device cuda, every core, resumable
        cmd += ["--profile", "profiles/local", *(["--cores", str(cores)] if cores else [])]
    print("$", " ".join(cmd[2:]), flush=True)
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, check=False)
    if done.returncode != 0:
        raise UserError(f"the workflow stopped (exit {done.returncode}); its log is above")
    return time.perf_counter() - start


def run(args: argparse.Namespace) -> int:
    if not Path("Snakefile").is_file():
        raise UserError("run it in the negcse checkout (the folder with the Snakefile)")
    if not args.tiny:
        try:
            gpu = device_policy.choose("cuda")
        except device_policy.DeviceError:
            raise UserError(
                f"the GPU quick start needs a CUDA GPU, but {device_policy.cuda_missing()}; "
                "`make gpu-quickstart ARGS=--tiny` runs it at smoke size on the CPU"
            ) from None
        logger.info("GPU: %s", torch.cuda.get_device_name(gpu.device))
    config = workflow_config(".", [CONFIG, *([TINY_CONFIG] if args.tiny else [])])
    backbone = config["grid"]["backbones"][0]
    seed = config["grid"]["seeds"][0]
    spec = resolve_method(config, "simcse", backbone)
    t = spec["train"]
    pin = hub_models().get(backbone)
    print(
        f"Unsupervised SimCSE on {backbone}"
        + (f" (hub commit {pin.revision[:12]})" if pin and pin.revision else "")
        + f", corpus {config['corpus']['source']}, {t['epochs']} epoch(s), batch "
        f"{t['batch_size']}, lr {t['learning_rate']:g}, {t['precision']}, seed {seed}"
        + (f", {t['max_steps']} steps (tiny)" if args.tiny else "")
    )
    env = dict(os.environ)
    if not args.tiny:
        minutes = _estimate_minutes(config)
        if minutes is not None:
            print(
                f"Estimated time on one {minutes[1]}: {minutes[0]:.0f} min (training and its "
                f"evaluation job, from {COSTS_FILE}); not yet measured end to end"
            )
    model = MODEL_DIR.format(method="simcse", backbone=backbone, seed=seed)
    train_s = _snakemake(model, args.tiny, args.cores, env)

    out = Path(OUT_DIR) / f"{backbone.replace('/', '--')}-seed{seed}.json"
    start = time.perf_counter()
    parser = argparse.ArgumentParser(prog="negcse evaluate")
    evaluate_command.add_arguments(parser)
    tags = ["--tag", "method=simcse", "--tag", f"backbone={backbone}", "--tag", f"seed={seed}"]
    evaluation = parser.parse_args(
        ["--model", model, "--pooler", "auto", "--only", "sts", "--sts-out", str(out), *tags]
        + (["--sts-tasks", *TINY_TASKS] if args.tiny else [])
    )
    if evaluate_command.run(evaluation) != 0:
        raise UserError(f"the STS evaluation of {model} failed")
    eval_s = time.perf_counter() - start
    result = json.loads(out.read_text(encoding="utf-8"))
    trained = json.loads((Path(model) / "negcse.json").read_text(encoding="utf-8"))
    device = trained.get("device", "?")
    name = torch.cuda.get_device_name() if device == "cuda" else "CPU"
    result["quickstart"] = {
        "device": name,
        "train_and_corpus_seconds": round(train_s, 1),
        "evaluation_seconds": round(eval_s, 1),
        "paper": PAPER,
        "band": list(BAND),
        "tiny": args.tiny,
    }
    write_json(out, result)
    avg = result["avg"]
    print(
        f"STS avg {avg:.2f}  (paper {PAPER}; independent reruns {RERUNS[0]}-{RERUNS[1]}; "
        f"this check's band {BAND[0]:.2f}-{BAND[1]:.2f}: {BAND_WHY})"
    )
    print(
        f"time on {name}: workflow (corpus + training) {train_s / 60:.1f} min, STS evaluation "
        f"{eval_s / 60:.1f} min; result {out}"
    )
    if args.tiny:
        print("tiny: a check of the path at smoke size; the number means nothing")
        return 0
    inside = BAND[0] <= avg <= BAND[1]
    print("within the band" if inside else "OUTSIDE the band: see docs/gpu.md, 'When it differs'")
    return 0 if inside else 1
