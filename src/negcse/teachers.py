"""Teachers of a method as the workflow sees them: ``methods.<m>.teachers`` in params.yaml.

A method with frozen guides (``Method.guides()``, e.g. RankCSE's ``teacher1`` and ``teacher2``)
names each guide's model under ``teachers``:

- ``{method: M, backbone: B, seed: S}``: the suite's own run of method M, trained by the
  workflow upstream of the student (``backbone`` and ``seed`` default to the student's, so a
  teacher is seed-matched unless a seed is pinned);
- ``{model: NAME}``: a released checkpoint or a local folder (resolved like a backbone).

The rules read three things from here: the teacher model folders to list as the student's
inputs (:func:`teacher_outputs`), the ``--guide`` arguments (:func:`guide_args`) and the
teachers' own run specs to fold into the student's (:func:`teacher_specs`), so that a changed
teacher setting reruns the teacher, its students, their evaluations and the tables.
"""

from __future__ import annotations

from typing import Any

from negcse.config import ConfigError, method_params, resolve_method
from negcse.methods.registry import build_method

#: the folder rule ``train`` writes (rules/train.smk)
MODEL_DIR = "results/models/{method}/{backbone}/seed{seed}"


class TeacherError(ConfigError):
    """A ``teachers`` entry is wrong; the message names ``methods.<m>.teachers.<guide>``."""


def _entries(config: dict[str, Any], method: str) -> dict[str, dict[str, Any]]:
    return dict(config["methods"][method].get("teachers") or {})


def _where(method: str, guide: str) -> str:
    return f"methods.{method}.teachers.{guide}"


def teacher_models(
    config: dict[str, Any], method: str, backbone: str, seed: int | str
) -> dict[str, str]:
    """Guide name -> the model given to ``--guide``: a run's folder (:data:`MODEL_DIR`) or a
    model name, for the student ``method`` x ``backbone`` x ``seed``."""
    out: dict[str, str] = {}
    for guide, entry in _entries(config, method).items():
        if "model" in entry:
            out[guide] = str(entry["model"])
        else:
            out[guide] = MODEL_DIR.format(
                method=entry["method"],
                backbone=entry.get("backbone", backbone),
                seed=entry.get("seed", seed),
            )
    return out


def teacher_outputs(
    config: dict[str, Any], method: str, backbone: str, seed: int | str
) -> dict[str, str]:
    """Guide name -> the teacher run's folder, for the teachers the workflow trains (the
    student's inputs; Snakemake then runs the teacher jobs first)."""
    runs = {g for g, e in _entries(config, method).items() if "model" not in e}
    return {g: p for g, p in teacher_models(config, method, backbone, seed).items() if g in runs}


def guide_args(config: dict[str, Any], method: str, backbone: str, seed: int | str) -> str:
    """``--guide NAME=MODEL`` for every teacher (empty for a method without teachers)."""
    models = teacher_models(config, method, backbone, seed)
    return " ".join(f"--guide {guide}={model}" for guide, model in sorted(models.items()))


def teacher_specs(config: dict[str, Any], method: str, backbone: str) -> dict[str, Any]:
    """Guide name -> what determines that teacher: its run spec (``resolve_method``), its seed
    rule and its own teachers', or its model name. Part of the student's run spec."""
    out: dict[str, Any] = {}
    for guide, entry in sorted(_entries(config, method).items()):
        if "model" in entry:
            out[guide] = {"model": entry["model"]}
            continue
        t_method, t_backbone = entry["method"], entry.get("backbone", backbone)
        out[guide] = {
            "run": resolve_method(config, t_method, t_backbone),
            "seed": entry.get("seed", "student"),
            "teachers": teacher_specs(config, t_method, t_backbone),
        }
    return out


def check_teachers(config: dict[str, Any], source: str = "params.yaml") -> None:
    """Each ``teachers`` entry is one of the two forms, names a configured method other than
    the student, forms no cycle, and the guides are exactly those the method declares."""
    methods = config["methods"]
    for method, settings in methods.items():
        entries = _entries(config, method)
        for guide, entry in entries.items():
            where = f"{source}: {_where(method, guide)}"
            if not isinstance(entry, dict) or ("model" in entry) == ("method" in entry):
                raise TeacherError(f"{where}: give either 'method' (a run) or 'model' (a name)")
            extra = set(entry) - ({"model"} if "model" in entry else {"method", "backbone", "seed"})
            if extra:
                raise TeacherError(f"{where}: unknown key(s) {sorted(extra)}")
            if "method" in entry and entry["method"] not in methods:
                raise TeacherError(f"{where}: '{entry['method']}' is not a configured method")
        _check_acyclic(config, method, [method], source)
        backbones = [*config["grid"]["backbones"], *(settings.get("backbones") or {})]
        for backbone in dict.fromkeys(backbones):
            params = method_params(config, method, backbone)
            impl = build_method(settings["implementation"], params, backbone)
            declared = {g.name for g in impl.guides()}
            if declared != set(entries):
                raise TeacherError(
                    f"{source}: methods.{method}.teachers: the method's guides on {backbone} are "
                    f"{sorted(declared) or 'none'}, the entry names {sorted(entries) or 'none'}"
                )


def _check_acyclic(config: dict[str, Any], method: str, path: list[str], source: str) -> None:
    for entry in _entries(config, method).values():
        teacher = entry.get("method")
        if teacher is None:
            continue
        if teacher in path:
            cycle = " -> ".join([*path, teacher])
            raise TeacherError(f"{source}: methods.{path[0]}.teachers: a cycle: {cycle}")
        _check_acyclic(config, teacher, [*path, teacher], source)
