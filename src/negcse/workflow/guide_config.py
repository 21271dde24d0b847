"""A method's frozen guide models as the workflow sees them: ``methods.<m>.guides`` in params.yaml.

A method with frozen guides (``Method.guides()``: RankCSE's and RLRD's teachers ``teacher1`` and
``teacher2``, GCSE's stage-1 model) names each guide's model under ``guides``:

- ``{method: M, backbone: B, seed: S}``: the suite's own run of method M, trained by the
  workflow upstream of the student (``backbone`` and ``seed`` default to the student's, so a
  teacher is seed-matched unless a seed is pinned);
- ``{model: NAME}``: a released checkpoint or a local folder (resolved like a backbone; a path
  that is no folder fails the dry run).

A guide with a ``Guide.default`` may be left out. The rules read three things from here: the
guide runs' folders to list as the student's inputs (:func:`guide_outputs`), the ``--guide``
arguments (:func:`guide_args`) and the guide runs' own specs to fold into the student's run
spec (:func:`guide_specs`), so that a changed teacher setting reruns the teacher, its
students, their evaluations and the tables.
"""

from __future__ import annotations

import shlex
from typing import Any

from negcse.generators.steps import StepContext
from negcse.workflow.config import (
    column_readers,
    guide_entries,
    method_corpus,
    method_seeds,
    resolve_method,
)

#: the folder rule ``train`` writes (rules/train.smk)
MODEL_DIR = "results/models/{method}/{backbone}/seed{seed}"


def guide_models(
    config: dict[str, Any], method: str, backbone: str, seed: int | str
) -> dict[str, str]:
    """Guide name -> the model given to ``--guide``: a run's folder (:data:`MODEL_DIR`) or a
    model name, for the student ``method`` x ``backbone`` x ``seed``."""
    out: dict[str, str] = {}
    for guide, entry in guide_entries(config, method, backbone).items():
        if "model" in entry:
            out[guide] = str(entry["model"])
        else:
            out[guide] = MODEL_DIR.format(
                method=entry["method"],
                backbone=entry.get("backbone", backbone),
                seed=entry.get("seed", seed),
            )
    return out


def guide_outputs(
    config: dict[str, Any], method: str, backbone: str, seed: int | str
) -> dict[str, str]:
    """Guide name -> the run's folder, for the guides the workflow trains (the student's
    inputs; Snakemake then runs those jobs first)."""
    runs = {g for g, e in guide_entries(config, method, backbone).items() if "model" not in e}
    return {g: p for g, p in guide_models(config, method, backbone, seed).items() if g in runs}


def guide_args(config: dict[str, Any], method: str, backbone: str, seed: int | str) -> str:
    """``--guide NAME=MODEL`` for every configured guide (empty for a method without any), as
    shell words: a model name or folder with spaces or shell characters stays one inert word."""
    models = guide_models(config, method, backbone, seed)
    return " ".join(
        f"--guide {shlex.quote(f'{guide}={model}')}" for guide, model in sorted(models.items())
    )


def guide_specs(config: dict[str, Any], method: str, backbone: str) -> dict[str, Any]:
    """Guide name -> what determines that guide: its run spec (``resolve_method``), its seed
    rule and its own guides', or its model name. Part of the student's run spec."""
    out: dict[str, Any] = {}
    for guide, entry in sorted(guide_entries(config, method, backbone).items()):
        if "model" in entry:
            out[guide] = {"model": entry["model"]}
            continue
        t_method, t_backbone = entry["method"], entry.get("backbone", backbone)
        out[guide] = {
            "run": resolve_method(config, t_method, t_backbone),
            "seed": entry.get("seed", "student"),
            "guides": guide_specs(config, t_method, t_backbone),
        }
    return out


def _all_entries(config: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for entry in config["methods"].values():
        out += (entry.get("guides") or {}).values()
        for override in (entry.get("backbones") or {}).values():
            out += ((override or {}).get("guides") or {}).values()
    return [e for e in out if isinstance(e, dict)]


def config_guide_models(config: dict[str, Any]) -> list[str]:
    """The released models the config names as guides (for the prefetch rule)."""
    return list(dict.fromkeys(str(e["model"]) for e in _all_entries(config) if "model" in e))


def guide_backbones(config: dict[str, Any]) -> list[str]:
    """Backbones that guide runs pin (they may lie outside grid.backbones)."""
    return list(dict.fromkeys(str(e["backbone"]) for e in _all_entries(config) if "backbone" in e))


def generator_context(config: dict[str, Any]) -> StepContext:
    """What the generators' steps read of this config: the columns each method reads, a
    method's corpus, its guide runs (GCSE's stage-1 model is the ``evaluation`` guide) and its
    seeds."""

    def guide(method: str, name: str, backbone: str, seed: str) -> tuple[str | None, str | None]:
        return (
            guide_models(config, method, backbone, seed).get(name),
            guide_outputs(config, method, backbone, seed).get(name),
        )

    return StepContext(
        config,
        column_readers(config),
        corpus_of=lambda method: method_corpus(config, method),
        guide=guide,
        seeds=lambda method, backbone: method_seeds(config, method, backbone),
    )
