"""README's "Adding a method" and "Adding a table", each done as written in a copy of the
committed repository and seen through the smoke grid's dry run: a method is its module plus
its block under ``methods:`` (here an overlay, which also puts it in ``grid.methods``); a table is
one ``TableSpec`` in ``src/negcse/tables/specs.py``. Nothing else is edited. (Generators:
tests/generators/test_generator_registry.py; evaluations: test_toy_evaluation.py.)"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from workflow_copy import SMOKE, committed_copy, sh

pytestmark = [pytest.mark.slow, pytest.mark.mirror]

TOY_METHOD = '''"""A toy method: SimCSE's dropout views, InfoNCE at its temperature over a sharpness."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from negcse.losses import info_nce
from negcse.methods.base import LossOutput, Method, MethodParams, StepContext
from negcse.methods.params import bounded
from negcse.methods.registry import register

if TYPE_CHECKING:
    from torch import Tensor


@dataclass(frozen=True)
class ToyParams(MethodParams):
    sharpness: float = bounded(1.0, gt=0)


@register
class Toy(Method[ToyParams]):
    name = "toy"
    Params = ToyParams

    def loss(self, emb: dict[str, Tensor], ctx: StepContext) -> LossOutput:
        tau = self.params.temperature / self.params.sharpness
        loss = info_nce(emb["anchor"], emb["positive"], tau)
        return LossOutput(loss, {"infonce": loss.detach()})
'''

#: its params block, and its name in the grid (the smoke grid's methods replaced by it alone)
TOY_PARAMS = """
grid:
  methods: [toy]
methods:
  toy:
    implementation: toy
    params: {temperature: 0.05, sharpness: 2.5}
"""
CONFIGS = ["--configfile", "tests/smoke/config.yaml", "toy.yaml"]

TOY_TABLE = """        TableSpec(
            name="toy",
            **_eval("sts"),
            columns=(Column("avg", "Avg."),),
            caption="The 7-task STS average (Spearman $\\\\times$100), mean $\\\\pm$ std over seeds.",
            summary="Toy: the STS average alone.",
            category="STS",
            build=build.summary_table,
        ),
"""
#: where TABLES' list ends in specs.py
TABLES_END = "    ]\n    return {spec.name: spec for spec in specs}"


def _blocks(dry: str, rule: str) -> list[str]:
    """The dry run's job blocks of ``rule`` (each up to its shell command)."""
    return [b for b in dry.split("\n\n") if f"rule {rule}:" in b]


def _add_method(ws: Path) -> None:
    (ws / "src/negcse/methods/toy.py").write_text(TOY_METHOD)
    (ws / "toy.yaml").write_text(TOY_PARAMS)


def test_a_method_is_its_module_and_its_params_block(tmp_path: Path) -> None:
    ws = committed_copy(tmp_path, _add_method)
    dry = sh([*SMOKE, "-n", "-p", *CONFIGS], ws).stdout
    trains = [b for b in _blocks(dry, "train") if "method=toy," in b]
    (train,) = trains  # the smoke grid's one seed (grid.seeds)
    assert "seed=1" in train
    command = train[train.index("python -m negcse train ") :].splitlines()[0]
    words = shlex.split(command)
    run = json.loads(words[words.index("--run") + 1])
    assert run["implementation"] == "toy" and run["method"] == "toy"
    assert run["params"] == {"temperature": 0.05, "sharpness": 2.5}
    assert run["train"]["max_steps"] == 40  # the smoke grid's training settings apply
    assert "output: results/models/toy/splade-tiny/seed1" in train
    evaluate = [b for b in _blocks(dry, "evaluate_model") if "method=toy," in b]
    assert len(evaluate) == 1  # the smoke grid's one seed
    assert "--model results/models/toy/splade-tiny/seed1 " in "".join(evaluate)
    # its params dataclass checks its block
    (ws / "bad.yaml").write_text(TOY_PARAMS.replace("sharpness: 2.5", "sharpness: 0"))
    bad = sh([*SMOKE, "-n", "--configfile", "tests/smoke/config.yaml", "bad.yaml"], ws, check=False)
    assert bad.returncode != 0
    assert "methods.toy.params.sharpness: must be > 0, got 0" in bad.stdout + bad.stderr


def test_without_its_module_the_block_is_an_error(tmp_path: Path) -> None:
    ws = committed_copy(tmp_path, lambda ws: (ws / "toy.yaml").write_text(TOY_PARAMS))
    out = sh([*SMOKE, "-n", *CONFIGS], ws, check=False)
    assert out.returncode != 0
    assert (
        "methods.toy.implementation: unknown method implementation 'toy'" in out.stdout + out.stderr
    )


def _add_table(ws: Path) -> None:
    specs = ws / "src/negcse/tables/specs.py"
    text = specs.read_text()
    assert text.count(TABLES_END) == 1
    specs.write_text(text.replace(TABLES_END, TOY_TABLE + TABLES_END))


def test_a_table_is_one_table_spec(tmp_path: Path) -> None:
    ws = committed_copy(tmp_path, _add_table)
    dry = sh([*SMOKE, "-n", "-p"], ws).stdout  # the default target: every table
    (table,) = [b for b in _blocks(dry, "table") if "wildcards: table=toy" in b]
    outputs = ", ".join(f"results/tables/toy.{ext}" for ext in ("tex", "csv", "md", "html"))
    assert f"output: {outputs}, results/metrics/toy.json" in table
    command = table[table.index("python -m negcse table toy ") :].splitlines()[0]
    evals = shlex.split(command.split(" --evals ")[1].split(" --tex ")[0])
    # its inputs: every smoke run's STS file, and the untrained backbone's
    assert "results/eval/sts/simcse/splade-tiny/seed2.json" in evals
    assert evals[-1] == "results/eval/sts/untrained/splade-tiny.json"
    assert all(e.startswith("results/eval/sts/") for e in evals)
    assert "--tex results/tables/toy.tex " in command and "2> logs/tables/toy.log" in command
