"""Adding an evaluation is its module alone: a toy evaluation outside the package, named in
$NEGCSE_EVALUATIONS, with a config key of its own (``evaluation.toy``, typed by its
``Job.schema``: no schema edit), joins every model's evaluation job of the workflow (its option
from its key, its output file), runs for real through Snakemake on the mirror's untrained
splade-tiny, and through `negcse evaluate`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from workflow_copy import SMOKE, committed_copy, sh

pytestmark = [pytest.mark.slow, pytest.mark.mirror]

TOY = '''
"""The mean L2 norm of two fixed sentences' embeddings, times a scale (its own config key)."""
from typing import Any, ClassVar

import numpy as np

from negcse.evaluation.registry import Evaluation, Job, Options, register

SENTENCES = ["A man is playing a guitar.", "A woman is slicing an onion."]


@register
class Toy(Evaluation):
    name = "toy"
    help = "mean embedding norm of two sentences, scaled"
    options: ClassVar[Options] = {"scale": {"type": float}}  # its default: the schema's
    job = Job(
        order=10,
        config_key="evaluation.toy",
        schema={
            "type": "object",
            "additionalProperties": False,
            "default": {},
            "properties": {"scale": {"type": "number", "exclusiveMinimum": 0, "default": 1.0}},
        },
    )

    def run(self, encoder: Any, settings: dict[str, Any]) -> dict[str, Any]:
        norms = np.linalg.norm(encoder(SENTENCES), axis=1)
        return {"norm": settings["scale"] * float(norms.mean()), "scale": settings["scale"]}
'''

#: the untrained splade-tiny's evaluation job, as cheap as it gets: one transfer task at two
#: folds, one splits dataset; the toy's own key
OVERLAY = """
evaluation:
  transfer: {tasks: [TREC], kfold: 2}
  splits: {datasets: [STS16-headlines]}
  toy: {scale: 2.5}
"""
CONFIGS = ["--configfile", "tests/smoke/config.yaml", "toy.yaml"]
UNTRAINED = "results/eval/toy/untrained/splade-tiny.json"


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment that names the toy evaluation (its module on PYTHONPATH)."""
    folder = tmp_path_factory.mktemp("plugin")
    (folder / "toy_eval.py").write_text(TOY)
    path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, "NEGCSE_EVALUATIONS": "toy_eval"}


def _with_overlay(ws: Path) -> None:
    (ws / "toy.yaml").write_text(OVERLAY)


def test_the_workflow_runs_a_registered_evaluation_in_every_evaluation_job(
    tmp_path: Path, plugin: dict[str, str]
) -> None:
    ws = committed_copy(tmp_path, _with_overlay)
    out = UNTRAINED
    dry = sh([*SMOKE, "-n", "-p", "-F", out], ws, env=plugin).stdout
    block = dry[dry.index("rule evaluate_untrained:") :].split("\n\n")[0]
    assert f"results/eval/probe/untrained/splade-tiny.json, {out}" in block
    command = dry[dry.index("python -m negcse evaluate --only sts,transfer,splits,probe,toy ") :]
    # its key's schema default (no evaluation.toy in the smoke config)
    assert (
        f"--probe-out results/eval/probe/untrained/splade-tiny.json --toy-scale 1.0 --toy-out {out} 2>"
        in command
    )
    trained = "results/eval/toy/simcse/splade-tiny/seed1.json"
    dry = sh([*SMOKE, "-n", "-p", trained], ws, env=plugin).stdout
    assert "--only sts,transfer,splits,probe,analysis,toy " in dry
    assert f"--toy-out {trained}" in dry
    # the overlay's value of its own key
    dry = sh([*SMOKE, "-n", "-p", "-F", out, *CONFIGS], ws, env=plugin).stdout
    assert f"--toy-scale 2.5 --toy-out {out} 2>" in dry
    # the key is checked by its schema, and exists only with the module
    (ws / "bad.yaml").write_text("evaluation:\n  toy: {scale: 0}\n")
    bad = sh([*SMOKE, "-n", out, "--configfile", "bad.yaml"], ws, check=False, env=plugin)
    assert (
        bad.returncode != 0
        and "key 'evaluation.toy.scale': 0 is less than or equal to" in bad.stdout + bad.stderr
    )
    plain = sh([*SMOKE, "-n", out, *CONFIGS], ws, check=False)
    assert plain.returncode != 0 and "unknown key 'evaluation.toy'" in plain.stdout + plain.stderr
    # without the variable, no job knows the toy
    plain = sh([*SMOKE, "-n", "-p", "-F", out], ws, check=False)
    assert plain.returncode != 0 and "MissingRuleException" in plain.stdout + plain.stderr


def test_the_workflow_runs_the_toy_for_real(
    tmp_path: Path, plugin: dict[str, str], splade_tiny: Path
) -> None:
    """Snakemake runs the untrained splade-tiny's evaluation job (the data manifests first) with
    the toy in it: its result is 2.5 (its key's value) times the norm `negcse evaluate` gives at
    scale 1 on the same model and pooler, and the other evaluations wrote theirs."""
    ws = committed_copy(tmp_path, _with_overlay)
    sh([*SMOKE, UNTRAINED, *CONFIGS], ws, env=plugin)
    result = json.loads((ws / UNTRAINED).read_text())
    assert result["scale"] == 2.5 and result["method"] == "untrained"
    for name in ("sts", "transfer", "splits", "probe"):
        assert (ws / f"results/eval/{name}/untrained/splade-tiny.json").is_file()
    direct = tmp_path / "direct.json"
    args = ["--model", str(splade_tiny), "--pooler", "cls_before_pooler", "--only", "toy"]
    sh(
        [sys.executable, "-m", "negcse", "evaluate", *args, "--toy-out", str(direct)],
        ws,
        env=plugin,
    )
    assert result["norm"] == pytest.approx(2.5 * json.loads(direct.read_text())["norm"], rel=1e-5)


def test_the_toy_runs_through_negcse_evaluate(
    tmp_path: Path, plugin: dict[str, str], splade_tiny: Path
) -> None:
    out = tmp_path / "toy.json"
    args = ["--model", str(splade_tiny), "--pooler", "cls_before_pooler", "--only", "toy"]
    args += ["--toy-scale", "3", "--toy-out", str(out), "--tag", "method=toy"]
    sh([sys.executable, "-m", "negcse", "evaluate", *args], tmp_path, env=plugin)
    result = json.loads(out.read_text())
    assert result["scale"] == 3.0 and result["method"] == "toy"
    assert np.isfinite(result["norm"]) and result["norm"] > 0
