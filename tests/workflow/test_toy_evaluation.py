"""Adding an evaluation is its module alone: a toy evaluation outside the package, named in
$NEGCSE_EVALUATIONS, joins every model's evaluation job of the workflow (its option from its
config key, its output file) and runs through `negcse evaluate` on the mirror's splade-tiny."""

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
"""The mean L2 norm of two fixed sentences' embeddings."""
from typing import Any, ClassVar

import numpy as np

from negcse.evaluation.registry import Evaluation, Job, Options, register

SENTENCES = ["A man is playing a guitar.", "A woman is slicing an onion."]


def protocol_arg(protocol: str, config: Any) -> str:
    return f"--toy-protocol {protocol}"


@register
class Toy(Evaluation):
    name = "toy"
    help = "mean embedding norm of two sentences"
    options: ClassVar[Options] = {"protocol": {"default": "senteval"}}
    job = Job(order=10, config_key="evaluation.protocol", args=protocol_arg)

    def run(self, encoder: Any, settings: dict[str, Any]) -> dict[str, Any]:
        norms = np.linalg.norm(encoder(SENTENCES), axis=1)
        return {"norm": float(norms.mean()), "protocol": settings["protocol"]}
'''


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment that names the toy evaluation (its module on PYTHONPATH)."""
    folder = tmp_path_factory.mktemp("plugin")
    (folder / "toy_eval.py").write_text(TOY)
    path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, "NEGCSE_EVALUATIONS": "toy_eval"}


def test_the_workflow_runs_a_registered_evaluation_in_every_evaluation_job(
    tmp_path: Path, plugin: dict[str, str]
) -> None:
    ws = committed_copy(tmp_path)
    out = "results/eval/toy/untrained/splade-tiny.json"
    dry = sh([*SMOKE, "-n", "-p", "-F", out], ws, env=plugin).stdout
    block = dry[dry.index("rule evaluate_untrained:") :].split("\n\n")[0]
    assert f"results/eval/probe/untrained/splade-tiny.json, {out}" in block
    command = dry[dry.index("python -m negcse evaluate --only sts,transfer,splits,probe,toy ") :]
    assert (
        f"--probe-out results/eval/probe/untrained/splade-tiny.json --toy-protocol senteval --toy-out {out} 2>"
        in command
    )
    trained = "results/eval/toy/simcse/splade-tiny/seed1.json"
    dry = sh([*SMOKE, "-n", "-p", trained], ws, env=plugin).stdout
    assert "--only sts,transfer,splits,probe,analysis,toy " in dry
    assert f"--toy-out {trained}" in dry
    # without the variable, no job knows the toy
    plain = sh([*SMOKE, "-n", "-p", "-F", out], ws, check=False)
    assert plain.returncode != 0 and "MissingRuleException" in plain.stdout + plain.stderr


def test_the_toy_runs_through_negcse_evaluate(
    tmp_path: Path, plugin: dict[str, str], splade_tiny: Path
) -> None:
    out = tmp_path / "toy.json"
    args = ["--model", str(splade_tiny), "--pooler", "cls_before_pooler", "--only", "toy"]
    args += ["--toy-protocol", "mteb", "--toy-out", str(out), "--tag", "method=toy"]
    sh([sys.executable, "-m", "negcse", "evaluate", *args], tmp_path, env=plugin)
    result = json.loads(out.read_text())
    assert result["protocol"] == "mteb" and result["method"] == "toy"
    assert np.isfinite(result["norm"]) and result["norm"] > 0
