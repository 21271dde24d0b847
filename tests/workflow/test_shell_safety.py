"""No config value runs as shell code.

Every string-typed key of the config schema (walked from the schema itself, generator settings
included: ``negcse.workflow.config.schema()``), and every name of a map (methods, backbones,
guides, corpora, released rows, pivots, ...), gets ``$(echo>M)``, backticks, ``;`` and a space
in turn. Each case is either refused by the suite's config check with a message naming the key,
or accepted; the accepted ones together go through the real workflow's DAG (``snakemake -n -p
-F``), and every job's printed shell command is then run by bash in a sandbox whose only
``python`` is a stub recording its arguments. No marker file M may appear, no argument may
start with a marker (what a value split at its space leaves), and the values of the keys that
reach a command (the mirror, models, the endpoint, ...) must arrive whole in one argument. What
this proves: the command lines Snakemake would run leave the values inert; the jobs' own code
is not run here (the guide-model case runs for real below, and ``dvc repro`` with a hostile
profile).
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import HTTPServer, SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
import yaml

from negcse.workflow.config import ConfigError, check_config, deep_merge, project_config, schema

pytestmark = pytest.mark.mirror
REPO = Path(__file__).resolve().parents[2]
ANY = object()  # a map's existing key (methods.<m>)
NAME = object()  # a map's key itself (a new one)

#: kind -> the injected value; {m} is the case's marker (a file name)
PAYLOADS = {
    "substitution": "$(echo>{m})",
    "backticks": "`echo>{m}`",
    "semicolon": "x;echo>{m};",
    "space": "sp4ce {m}",
}

#: a reduced grid on which every rule with config values in its command has a job: data,
#: every generator (paraphrase, back-translation, GCSE through an endpoint), training with a
#: released guide model and a guide run, evaluations (untrained, released, MTEB), tables
OVERLAY = """
grid: {methods: [simcse, una_paraphrase, sncse, osscse, simcse_san, rankcse, gcse],
       backbones: [splade-tiny], seeds: [1]}
methods:
  rankcse:
    backbones:
      splade-tiny:
        guides: {teacher1: {model: splade-tiny}, teacher2: {method: simcse}}
generators:
  osscse_paraphrase: {source: backtranslation}
  gcse: {backend: openai, base_url: "http://127.0.0.1:9/v1", max_sources: 2,
         released_bugs: [subject_key]}
released:
  gcse_checkpoint:
    models: {splade-tiny: org/released-model}
evaluation:
  mteb: true
  splits: {datasets: [STSB-test]}
analysis: {rank_tasks: [STS14]}
"""


def base_config(mirror: Path) -> dict[str, Any]:
    config = project_config(REPO, check=False)
    config = deep_merge(config, yaml.safe_load((REPO / "tests/smoke/config.yaml").read_text()))
    config = deep_merge(config, yaml.safe_load(OVERLAY))
    # the overlay's guides replace the smoke grid's (a merge would give teacher1 both keys)
    overlay_guides = yaml.safe_load(OVERLAY)["methods"]["rankcse"]["backbones"]["splade-tiny"]
    config["methods"]["rankcse"]["backbones"]["splade-tiny"] = copy.deepcopy(overlay_guides)
    # one released row, on the grid's backbone (the paper grid's others are not in this grid)
    released = config["released"]["gcse_checkpoint"]
    config["released"] = {
        "gcse_checkpoint": {**released, "models": {"splade-tiny": "org/released-model"}}
    }
    config["mirror"] = str(mirror)
    return config


# -- the schema's string keys ---------------------------------------------------------------------


def _resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target = root
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def string_keys(node: dict[str, Any], root: dict[str, Any], path: tuple = ()) -> Iterator[tuple]:
    """Every place of a string in the schema: a value (``type: string`` or a string enum) or a
    map's key (``propertyNames`` / ``additionalProperties``), as a path with ANY / NAME / 0."""
    node = _resolve(node, root)
    for sub in [*node.get("allOf", []), *node.get("anyOf", []), *node.get("oneOf", [])]:
        yield from string_keys(sub, root, path)
    types = node.get("type", [])
    types = [types] if isinstance(types, str) else types
    if "string" in types or any(isinstance(v, str) for v in node.get("enum", [])):
        yield path
    for key, sub in (node.get("properties") or {}).items():
        yield from string_keys(sub, root, (*path, key))
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) or "propertyNames" in node:
        yield (*path, NAME)
        if isinstance(extra, dict):
            yield from string_keys(extra, root, (*path, ANY))
    if isinstance(node.get("items"), dict):
        yield from string_keys(node["items"], root, (*path, 0))


def instantiate(config: Any, path: tuple) -> tuple | None:
    """``path`` with each ANY replaced by the first existing key under which the rest exists
    (else under which all but the last step exist: that one is set); None when the config has
    no such place."""
    return _place(config, path, strict=True) or _place(config, path, strict=False)


def _place(config: Any, path: tuple, strict: bool) -> tuple | None:
    head, rest = path[0], path[1:]
    if head is ANY:
        for key in config if isinstance(config, dict) else []:
            found = _place(config[key], rest, strict) if rest else (key,)
            if found is not None:
                return found if not rest else (key, *found)
        return None
    if head is NAME:
        return (head,) if isinstance(config, dict) and config else None
    if isinstance(head, int):
        there = isinstance(config, list) and len(config) > head
    else:
        there = isinstance(config, dict) and head in config
    if not rest:
        return (head,) if there or (not strict and isinstance(config, dict)) else None
    if not there:
        return None
    found = _place(config[head], rest, strict)
    return None if found is None else (head, *found)


def inject(config: dict[str, Any], path: tuple, value: str) -> str:
    """Set the value at ``path`` (or add a key named ``value`` holding a copy of an existing
    entry, for NAME); the dotted key a refusal must name."""
    parent = config
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    dotted = ".".join(str(p) for p in path[:-1])
    if last is NAME:
        parent[value] = copy.deepcopy(next(iter(parent.values()), {}))
        return f"{dotted}.{value}" if dotted else value
    parent[last] = value
    return ".".join(str(p) for p in path)


def _refusal_names(message: str, key: str) -> bool:
    """The message names the key: ``a.b.0`` (or ``a.b[0]``) or, for a list item, ``a.b``."""
    message = re.sub(r"\[(\d+)\]", r".\1", message)
    return key in message or re.sub(r"\.\d+$", "", key) in message


def odd_mirror(root: Path, value: str, mirror: Path) -> str:
    """A real mirror folder named ``value`` (the mirror must be a folder to be accepted)."""
    folder = root / value
    folder.mkdir(parents=True)
    for sub in ("data", "models"):
        (folder / sub).symlink_to(mirror / sub)
    return str(folder)


@pytest.fixture(scope="module")
def cases(mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every (string key, payload): refused (checked here) or accepted (to the dry run)."""
    mirrors = tmp_path_factory.mktemp("mirrors")
    base = base_config(mirror)
    check_config(copy.deepcopy(base), source="base")  # the reduced grid itself is valid
    full = schema()
    paths = list(dict.fromkeys(string_keys(full, full)))
    missing, accepted, refused = [], {k: {} for k in PAYLOADS}, 0
    for index, path in enumerate(paths):
        concrete = instantiate(base, path)
        if concrete is None:
            missing.append(
                ".".join("*" if p is ANY else "<name>" if p is NAME else str(p) for p in path)
            )
            continue
        for kind, template in PAYLOADS.items():
            marker = f"PWN{index}{kind[:3]}"  # the file a payload would create
            value = template.format(m=marker)
            if concrete == ("mirror",):
                value = odd_mirror(mirrors, value, mirror)
            config = copy.deepcopy(base)
            key = inject(config, concrete, value)
            try:
                check_config(config, source="cfg.yaml")
            except ConfigError as exc:
                refused += 1
                assert str(exc).startswith("cfg.yaml"), str(exc)
                assert _refusal_names(str(exc), key), (key, str(exc))
                continue
            accepted[kind][concrete] = (key, value, marker)
    return {
        "base": base,
        "paths": paths,
        "missing": missing,
        "accepted": accepted,
        "refused": refused,
    }


def test_every_string_key_of_the_schema_is_tried(cases: dict[str, Any]) -> None:
    """The walk reaches the schema's string keys and the reduced grid holds a place for each
    (a key with no place in it would go untested)."""
    assert len(cases["paths"]) > 60
    assert cases["missing"] == []
    assert cases["refused"] > 0


def test_names_that_become_paths_are_refused(cases: dict[str, Any]) -> None:
    """Method, backbone, guide, corpus, released-row and pivot names, a guide run's method and
    backbone, SAN's MLM and the DVC profile: every injected value refused, naming the key."""
    must_refuse = [
        ("grid", "methods", 0), ("grid", "backbones", 0), ("methods", NAME), ("corpora", NAME),
        ("corpus", "name"), ("released", NAME), ("workflow", "profile"),
        ("generators", "san", "mlm"), ("generators", "osscse_paraphrase", "pivots", NAME),
    ]  # fmt: skip
    for kind, accepted in cases["accepted"].items():
        keys = {key for key, _, _ in accepted.values()}
        for path in must_refuse:
            concrete = instantiate(cases["base"], path)
            assert concrete not in accepted, (kind, path, keys)
        for concrete in accepted:
            assert NAME not in concrete, (kind, concrete)  # no map name is accepted
            assert "guides" not in concrete or concrete[-1] == "model", (kind, concrete)


def _workspace(root: Path) -> Path:
    ws = root / "negcse"
    ws.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("Snakefile", "params.yaml", "config/defaults.yaml"):
        (ws / name).parent.mkdir(exist_ok=True)
        shutil.copy(REPO / name, ws / name)
    for folder in ("rules", "src", "profiles", "envs", "tests/smoke"):
        shutil.copytree(REPO / folder, ws / folder, ignore=ignore)
    return ws


STUB = """#!/bin/bash
for a in "$@"; do printf '%s\\0' "$a"; done >> "$ARGV_LOG"
"""


def _commands(out: str) -> list[tuple[str, list[str]]]:
    """(shell command, its log files) of every job of a dry run's output (``-p``)."""
    jobs, logs = [], []
    for line in out.splitlines():
        if line.startswith("    log: "):
            logs = line.removeprefix("    log: ").split(", ")
        elif line.startswith("Shell command: "):
            jobs.append((line.removeprefix("Shell command: "), logs))
            logs = []
    return jobs


@pytest.mark.parametrize("kind", list(PAYLOADS))
def test_accepted_values_stay_inert_in_every_job_command(
    kind: str, cases: dict[str, Any], tmp_path: Path
) -> None:
    accepted = cases["accepted"][kind]
    assert accepted, "nothing accepted: nothing reaches the workflow"
    config = copy.deepcopy(cases["base"])
    for concrete, (_, value, _) in accepted.items():
        inject(config, concrete, value)
    check_config(copy.deepcopy(config), source="merged")  # each alone passed; together too
    ws = _workspace(tmp_path)
    (ws / "cfg.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    env = {k: v for k, v in os.environ.items() if k not in ("NEGCSE_OFFLINE", "HF_HUB_OFFLINE")}
    # a hub that answers (loopback), so the released model is planned as a job
    hub = HTTPServer(("127.0.0.1", 0), SimpleHTTPRequestHandler)
    threading.Thread(target=hub.serve_forever, daemon=True).start()
    env["HF_ENDPOINT"] = f"http://127.0.0.1:{hub.server_address[1]}"
    try:
        proc = subprocess.run(
            ["snakemake", "-n", "-p", "-F", "--configfile", "cfg.yaml"],
            cwd=ws, capture_output=True, text=True, timeout=300, env=env,
        )  # fmt: skip
    finally:
        hub.shutdown()
        hub.server_close()
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = _commands(proc.stdout + proc.stderr)
    rules = set(re.findall(r"^(?:local)?rule (\w+):", proc.stdout + proc.stderr, flags=re.M))
    wanted = {"train", "evaluate_released", "back_translation", "paraphrase", "gcse_synthesize",
              "gcse_denoise", "evaluate_mteb", "san_negatives", "pos_lexicon", "table"}  # fmt: skip
    assert wanted <= rules, sorted(wanted - rules)
    blocks = re.findall(r"^(?:local)?rule \w+:", proc.stdout + proc.stderr, flags=re.M)
    assert len(jobs) >= len(blocks) - 1 > 40  # every job's command (rule all has none)
    sandbox, stubs = tmp_path / "sandbox", tmp_path / "stubs"
    sandbox.mkdir()
    stubs.mkdir()
    for name in ("python", "python3"):
        (stubs / name).write_text(STUB)
        (stubs / name).chmod(0o755)
    argv_log = tmp_path / "argv.bin"
    argv_log.touch()
    for command, logs in jobs:
        for log in logs:
            (sandbox / log).parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["/bin/bash", "-c", command], cwd=sandbox, capture_output=True, timeout=30,
            env={"PATH": str(stubs), "ARGV_LOG": str(argv_log), "HOME": str(tmp_path)},
        )  # fmt: skip
    markers = {marker: value for _, value, marker in accepted.values()}
    created = list(tmp_path.rglob("PWN*"))  # the sandbox, the workspace, anywhere here
    assert created == [], created
    args = argv_log.read_bytes().decode().split("\0")
    reached = set()
    for arg in args:
        for marker, value in markers.items():
            if value in arg:  # one word, unchanged
                reached.add(marker)
            else:  # a value split by the shell leaves a word that starts with the marker
                assert not arg.startswith(marker), (arg, value)
    by_key = {key: marker for key, _, marker in accepted.values()}
    must_reach = ["mirror", "generators.paraphrase.model", "generators.gcse.base_url",
                  "generators.gcse.model", "released.gcse_checkpoint.models.splade-tiny",
                  "methods.rankcse.backbones.splade-tiny.guides.teacher1.model",
                  "generators.osscse_paraphrase.pivots.de.0", "evaluation.splits.datasets.0"]  # fmt: skip
    for key in must_reach:
        assert by_key[key] in reached, (key, sorted(by_key))


def test_guide_model_with_shell_characters_trains_for_real(mirror: Path, tmp_path: Path) -> None:
    """The issue's case run, not printed: RankCSE's teacher1 is a model folder named with a
    space, ``;``, ``$(...)`` and backticks (the mirror's splade-tiny inside). The corpus and
    training jobs run to the end, the teacher is read from that folder, and nothing else runs."""
    odd = tmp_path / "teachers" / "x y;$(echo>PWNED)`echo>PWNED2`"
    odd.mkdir(parents=True)
    for file in (mirror / "models" / "splade-tiny").iterdir():
        (odd / file.name).symlink_to(file)
    ws = _workspace(tmp_path)
    guides = {"teacher1": {"model": str(odd)}, "teacher2": {"model": "splade-tiny"}}
    overlay = {
        "grid": {"methods": ["rankcse"], "backbones": ["splade-tiny"], "seeds": [1]},
        "corpus": {"max_sentences": 64},
        "train_overrides": {
            "batch_size": 8,
            "max_steps": 2,
            "eval_steps": 2,
            "checkpoint_steps": 2,
        },
        "methods": {"rankcse": {"backbones": {"splade-tiny": {"guides": guides}}}},
    }
    (ws / "cfg.yaml").write_text(yaml.safe_dump(overlay))
    # the smoke grid without its own RankCSE guides (merged, teacher1 would name both keys)
    smoke = yaml.safe_load((ws / "tests/smoke/config.yaml").read_text())
    smoke["methods"]["rankcse"]["backbones"] = {"splade-tiny": {}}
    (ws / "smoke.yaml").write_text(yaml.safe_dump(smoke, sort_keys=False))
    target = "results/models/rankcse/splade-tiny/seed1"
    proc = subprocess.run(
        ["snakemake", "-c1", "--configfile", "smoke.yaml", "cfg.yaml", "--", target],
        cwd=ws, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    log = ws / "logs/train/rankcse/splade-tiny/seed1.log"
    assert proc.returncode == 0, proc.stderr[-3000:] + (log.read_text() if log.exists() else "")
    assert [p for root in (ws, tmp_path) for p in root.rglob("PWNED*")] == []
    meta = yaml.safe_load((ws / target / "negcse.json").read_text())  # JSON is YAML
    assert meta["guides"]["teacher1"] == str(odd)
    assert meta["steps"] == 2


# -- dvc.yaml: the profile is read, checked and passed as one argument ----------------------------

DVC_RUN = REPO / "src" / "negcse" / "workflow" / "dvc_run.py"
RECORD = """#!/bin/bash
printf '%s\\n' "$@" > "$(dirname "$0")/argv.txt"
"""


def test_dvc_stage_pastes_no_param_into_its_command() -> None:
    stage = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]["workflow"]
    assert not [cmd for cmd in stage["cmd"] if "${" in cmd]
    assert stage["cmd"][0] == f"python {DVC_RUN.relative_to(REPO)}"


def _dvc_run(tmp_path: Path, profile: str, *more: str) -> subprocess.CompletedProcess[str]:
    """dvc_run.py in ``tmp_path`` with a params.yaml naming ``profile``; its ``snakemake`` is a
    stub writing its arguments to bin/argv.txt."""
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"workflow": {"profile": profile}}))
    stub = tmp_path / "bin" / "snakemake"
    stub.parent.mkdir()
    stub.write_text(RECORD)
    stub.chmod(0o755)
    env = {**os.environ, "PATH": f"{stub.parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        [sys.executable, str(DVC_RUN), *more], cwd=tmp_path, capture_output=True, text=True,
        env=env, timeout=60,
    )  # fmt: skip


@pytest.mark.parametrize("kind", list(PAYLOADS))
def test_dvc_profile_with_shell_characters_is_refused_before_anything_runs(
    kind: str, tmp_path: Path
) -> None:
    value = "profiles/smoke" + PAYLOADS[kind].format(m="PWNED")
    (tmp_path / value).mkdir(parents=True)  # a folder of that name exists: refused all the same
    proc = _dvc_run(tmp_path, value)
    assert proc.returncode == 2
    assert proc.stderr.startswith("negcse.workflow.dvc_run: error: params.yaml: workflow.profile")
    assert repr(value) in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert not (tmp_path / "bin" / "argv.txt").exists()  # snakemake never started
    assert not list(tmp_path.rglob("PWNED"))


def test_dvc_profile_reaches_snakemake_as_one_argument(tmp_path: Path) -> None:
    (tmp_path / "profiles" / "smoke").mkdir(parents=True)
    proc = _dvc_run(tmp_path, "profiles/smoke", "--", "-n")
    assert proc.returncode == 0, proc.stderr
    argv = (tmp_path / "bin" / "argv.txt").read_text().splitlines()
    assert argv == ["--profile", "profiles/smoke", "-n"]
    other = tmp_path / "other"
    other.mkdir()
    missing = _dvc_run(other, "profiles/nope")
    assert missing.returncode == 2 and "'profiles/nope' is not a folder" in missing.stderr


def test_dvc_repro_with_a_hostile_profile_runs_nothing(tmp_path: Path) -> None:
    """The issue's case through DVC itself: ``dvc repro`` on a committed copy whose params.yaml
    names the profile ``profiles/smoke;echo>PWNED``."""
    from workflow_copy import committed_copy

    def hostile(ws: Path) -> None:
        params = ws / "params.yaml"
        text = params.read_text()
        assert "  profile: profiles/smoke\n" in text
        params.write_text(text.replace("profiles/smoke\n", '"profiles/smoke;echo>PWNED"\n', 1))

    ws = committed_copy(tmp_path, hostile)
    proc = subprocess.run(["dvc", "repro"], cwd=ws, capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "dvc_run: error: params.yaml: workflow.profile: 'profiles/smoke;echo>PWNED'" in out
    assert not list(ws.rglob("PWNED"))
    assert not (ws / ".snakemake").exists()  # Snakemake never started
