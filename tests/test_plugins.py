"""Plug-ins from an installed package: a throwaway package in a temporary folder declares a
method, a generator (the method's negatives), an evaluation and a table through the four
entry-point groups; pip installs it (offline, no build isolation) into a throwaway venv that sees
this project's packages; the workflow then plans, trains, evaluates and tables the plug-in
method as it does a built-in one, on the smoke grid reduced to that method at one seed."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from plugin_venv import make_venv, pip_install, venv_env
from workflow_copy import CI_REDUCTIONS, SMOKE, committed_copy, sh

pytestmark = [pytest.mark.slow, pytest.mark.mirror]

PYPROJECT = """
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "negcse-toy-plugin"
version = "0.1.0"

[tool.setuptools.packages.find]
where = ["src"]

[project.entry-points."negcse.methods"]
toy_neg = "toy_plugin.method"

[project.entry-points."negcse.generators"]
toy_negatives = "toy_plugin.negatives:SPEC"

[project.entry-points."negcse.evaluations"]
toy_norm = "toy_plugin.evaluation:ToyNorm"

[project.entry-points."negcse.tables"]
toy_norm = "toy_plugin.tables:TABLE"
"""

METHOD = '''"""SimCSE's InfoNCE with the toy generator's sentences as hard negatives, at a sharper
temperature."""
from __future__ import annotations

from dataclasses import dataclass

from negcse.losses import info_nce
from negcse.methods.base import LossOutput, Method, MethodParams, StepContext, View
from negcse.methods.params import bounded
from negcse.methods.registry import register


@dataclass(frozen=True)
class ToyParams(MethodParams):
    sharpness: float = bounded(1.0, gt=0)


@register
class ToyNeg(Method[ToyParams]):
    name = "toy_neg"
    Params = ToyParams
    columns = ("toy_negative",)

    def views(self, step):
        return [View("anchor"), View("positive"), View("negative", column="toy_negative")]

    def loss(self, emb, ctx: StepContext) -> LossOutput:
        tau = self.params.temperature / self.params.sharpness
        loss = info_nce(emb["anchor"], emb["positive"], tau, hard_negatives=emb["negative"])
        return LossOutput(loss, {"infonce": loss.detach()})
'''

NEGATIVES = '''"""Each corpus line with the first share of its words dropped (not registered here: the entry
point names SPEC)."""
from dataclasses import dataclass

from negcse.generators.registry import GeneratorSpec
from negcse.generators.settings import GeneratorSettings, options, setting
from negcse.generators.steps import Step, alternation

OUTPUT = "results/negatives/toy_negatives/{corpus}/{variant}/seed{seed}.txt"


@dataclass(frozen=True)
class ToySettings(GeneratorSettings):
    rate: float = setting(0.5, "share of each line's first words dropped", minimum=0, maximum=1)


def _settings(ctx, wc):
    return options(ctx.variants("toy_negatives")[wc["variant"]], ToySettings)


SPEC = GeneratorSpec(
    name="toy_negatives",
    columns=("toy_negative",),
    output=OUTPUT,
    settings=ToySettings,
    per_method=True,
    variant=lambda settings, column: f"r{settings['rate']:g}",
    steps=(
        Step(
            name="toy_negatives",
            outputs={"negatives": OUTPUT},
            wildcards=lambda ctx: {"variant": alternation(ctx.variants("toy_negatives"))},
            params={"settings": _settings},
            command="python -m toy_plugin.make_negatives {input.corpus:q} {output:q} "
            "{params.settings}",
            log="logs/negatives/toy_negatives/{corpus}/{variant}/seed{seed}.log",
            benchmark="benchmarks/rules/negatives/toy_negatives/{corpus}/{variant}/seed{seed}.tsv",
        ),
    ),
)
'''

MAKE_NEGATIVES = """import argparse
from pathlib import Path

from negcse.generators.settings import add_options, from_args
from toy_plugin.negatives import ToySettings

parser = argparse.ArgumentParser()
parser.add_argument("corpus")
parser.add_argument("output")
add_options(parser, ToySettings)
args = parser.parse_args()
rate = from_args(args, ToySettings).rate
lines = Path(args.corpus).read_text().splitlines()
out = [" ".join(words[round(rate * len(words)):]) or "." for words in map(str.split, lines)]
Path(args.output).write_text("".join(f"{line}\\n" for line in out))
"""

EVALUATION = '''"""The mean embedding norm of two fixed sentences, times a scale (its own config key)."""
from typing import Any, ClassVar

import numpy as np

from negcse.evaluation.registry import Evaluation, Job, Options

SENTENCES = ["A man is playing a guitar.", "A woman is slicing an onion."]


class ToyNorm(Evaluation):
    name = "toy_norm"
    help = "mean embedding norm of two sentences, scaled"
    options: ClassVar[Options] = {"scale": {"type": float}}
    job = Job(
        order=10,
        config_key="evaluation.toy_norm",
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

TABLES = """from negcse.tables import build
from negcse.tables.render import Column
from negcse.tables.specs import TableSpec

TABLE = TableSpec(
    name="toy_norm",
    inputs="results/eval/toy_norm/{method}/{backbone}/seed{seed}.json",
    untrained="results/eval/toy_norm/untrained/{backbone}.json",
    columns=(Column("norm", "Norm"),),
    metric="norm",
    caption="Mean embedding norm of two sentences, scaled.",
    summary="Toy: the scaled mean norm.",
    category="Toy",
    build=build.summary_table,
)
"""

#: the grid: the plug-in method alone, at one seed, its generator's and evaluation's own keys
OVERLAY = """
grid: {methods: [toy_neg], seeds: [1]}
methods:
  toy_neg:
    implementation: toy_neg
    params: {sharpness: 2.0}
    generators: {toy_negatives: {rate: 0.25}}
evaluation:
  baseline: false
  toy_norm: {scale: 2.0}
  splits: {datasets: [STS16-headlines]}
analysis: {sentences: 50}
"""
NEGATIVES_FILE = "results/negatives/toy_negatives/wiki-smoke/r0.25/seed1.txt"
MODEL = "results/models/toy_neg/splade-tiny/seed1"


def write_package(root: Path) -> Path:
    files = {
        "pyproject.toml": PYPROJECT,
        "src/toy_plugin/__init__.py": "",
        "src/toy_plugin/method.py": METHOD,
        "src/toy_plugin/negatives.py": NEGATIVES,
        "src/toy_plugin/make_negatives.py": MAKE_NEGATIVES,
        "src/toy_plugin/evaluation.py": EVALUATION,
        "src/toy_plugin/tables.py": TABLES,
        "toy.yaml": OVERLAY,
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """(the workspace: a committed copy, the plug-in's folder, the environment of the venv it
    is installed in)."""
    root = tmp_path_factory.mktemp("plugins")
    package = write_package(root / "negcse-toy-plugin")
    python = make_venv(root / "venv")
    pip_install(python, package)  # a regular install: the package is copied into the venv
    ws = committed_copy(root)
    return ws, package, venv_env(python, ws / "src")


def configs(package: Path) -> list[str]:
    return ["--configfile", "tests/smoke/config.yaml", CI_REDUCTIONS, str(package / "toy.yaml")]


def test_the_workflow_plans_every_kind_of_plugin(
    installed: tuple[Path, Path, dict[str, str]],
) -> None:
    ws, package, env = installed
    dry = sh([*SMOKE, "-n", "-p", *configs(package)], ws, env=env).stdout
    blocks = dry.split("\n\n")
    (gen,) = [b for b in blocks if "rule toy_negatives:" in b]
    assert f"output: {NEGATIVES_FILE}" in gen
    assert "python -m toy_plugin.make_negatives results/data/corpus/wiki-smoke.txt" in gen
    assert "--rate 0.25" in gen
    (train,) = [b for b in blocks if "rule train:" in b]
    command = train[train.index("python -m negcse train ") :].splitlines()[0]
    words = shlex.split(command)
    run = json.loads(words[words.index("--run") + 1])
    assert run["implementation"] == "toy_neg"
    assert run["params"] == {"temperature": 0.05, "sharpness": 2.0}
    assert f"--column toy_negative={NEGATIVES_FILE}" in command
    (evaluate,) = [b for b in blocks if "rule evaluate_model:" in b]
    assert re.search(r"--only sts,transfer,splits,probe,analysis,toy_norm ", evaluate)
    assert "--toy_norm-scale 2.0 --toy_norm-out results/eval/toy_norm/toy_neg/" in evaluate
    (table,) = [b for b in blocks if "rule table:" in b and "table=toy_norm" in b]
    assert "results/eval/toy_norm/toy_neg/splade-tiny/seed1.json" in table
    # priced in the GPU-hours estimate: SimCSE's step per trained view, three views
    assert re.search(
        r"^toy_neg +2 .*\(derived from simcse's step per view x 3 views\)$", dry, re.M
    ), dry[:3000]
    # without the package (the project's own environment) the plug-ins' keys are unknown
    plain = sh([*SMOKE, "-n", *configs(package)], ws, check=False)
    assert plain.returncode != 0
    assert "unknown key 'evaluation.toy_norm'" in plain.stdout + plain.stderr
    assert "unknown key 'methods.toy_neg.generators.toy_negatives'" in plain.stdout


def test_a_plugin_method_trains_evaluates_and_tables_through_snakemake(
    installed: tuple[Path, Path, dict[str, str]],
) -> None:
    """The reduced grid run for real: the generator's file, the training reading it, the
    evaluation job with the plug-in evaluation in it, the plug-in table and the STS table."""
    ws, package, env = installed
    targets = ["results/tables/toy_norm.md", "results/tables/sts.md"]
    sh([*SMOKE, *targets, *configs(package)], ws, env=env)
    corpus = (ws / "results/data/corpus/wiki-smoke.txt").read_text().splitlines()
    negatives = (ws / NEGATIVES_FILE).read_text().splitlines()
    assert len(negatives) == len(corpus)
    words = corpus[0].split()
    assert negatives[0] == " ".join(words[round(0.25 * len(words)) :])
    meta = json.loads((ws / MODEL / "negcse.json").read_text())
    assert meta["implementation"] == "toy_neg"
    norm = json.loads((ws / "results/eval/toy_norm/toy_neg/splade-tiny/seed1.json").read_text())
    assert norm["scale"] == 2.0 and norm["method"] == "toy_neg" and norm["norm"] > 0
    table = (ws / "results/tables/toy_norm.md").read_text()
    # one backbone: named in the caption, not in a column
    assert re.search(rf"\| toy_neg \| \**{norm['norm']:.2f}\** \|", table), table
    assert "Backbone: splade-tiny." in table
    assert "\n| toy_neg | " in (ws / "results/tables/sts.md").read_text()  # backbone: caption


def test_a_broken_plugin_is_one_error_naming_its_entry_point(
    installed: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    ws = installed[0]
    package = write_package(tmp_path / "negcse-toy-plugin")
    python = make_venv(tmp_path / "venv")
    pip_install(python, package, editable=True)
    (package / "src/toy_plugin/method.py").write_text("import not_a_module_anywhere\n")
    env = venv_env(python, ws / "src")
    proc = subprocess.run(
        [str(python), "-m", "negcse", "estimate", "--configfile", "tests/smoke/config.yaml"],
        cwd=ws,
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(
        "negcse estimate: error: plug-in entry point 'toy_neg = toy_plugin.method' of group "
        "negcse.methods (distribution negcse-toy-plugin 0.1.0): cannot import it "
        "(ModuleNotFoundError: No module named 'not_a_module_anywhere')"
    ), line
