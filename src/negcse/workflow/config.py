"""The experiment config: validation and per-run resolution.

The config is config/defaults.yaml (the methods and the papers' settings) with params.yaml (the
run settings DVC tracks: profile, device, grid, seeds, and any override of a default) merged over
it, then any overlay (``--configfile``), key by key, later wins (:func:`config_files`).

Precedence for a run of method m on backbone b (later wins): ``train`` < ``methods.m.train``
< ``methods.m.backbones.b.train`` < ``train_overrides``. Method parameters: ``methods.m.params``
< ``methods.m.backbones.b.params``, checked against the method's Params dataclass.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from negcse.data.sources import ResolveError, is_local_path, registry, resolve_model
from negcse.encoders.poolers import POOLERS
from negcse.errors import UserError
from negcse.evaluation.registry import workflow_evaluations
from negcse.finite import YAML11_BOOLEANS, first_non_finite, schema_message, schema_validator
from negcse.generators.registry import provenance, settings_schema, specs
from negcse.generators.registry import settings as generator_settings
from negcse.io_utils import YAML_LOADER, read_text, yaml_value
from negcse.methods.params import ParamError
from negcse.methods.registry import build_method, method_class
from negcse.schemas import config_schema
from negcse.tables.published import PAPERS
from negcse.training.settings import TrainSettings
from negcse.workflow import seed_plan

#: The papers' backbones (Hugging Face hub ids). Other models are accepted where they can be
#: found without the network (a local folder, the mirror or the Hugging Face cache). A backbone
#: names folders under results/ as it is (``org/name`` -> ``.../org/name/seed1``), so it is
#: ``name`` or ``org/name`` of letters, digits and ``_ . + -`` (config.schema.yaml).
KNOWN_BACKBONES = ("bert-base-uncased", "bert-large-uncased", "roberta-base", "roberta-large")


#: The suite's defaults and the run settings merged over them, relative to the checkout.
DEFAULTS = Path("config/defaults.yaml")
PARAMS = Path("params.yaml")


class ConfigError(UserError, ValueError):
    """The config is invalid; the message names the file and the key."""


def config_files(
    root: str | os.PathLike[str] = ".", params: str | os.PathLike[str] | None = None
) -> list[Path]:
    """The files every config starts from, in merge order: ``root``'s config/defaults.yaml,
    then its params.yaml (or ``params``); overlays go after them."""
    return [Path(root) / DEFAULTS, Path(params) if params is not None else Path(root) / PARAMS]


def project_config(
    root: str | os.PathLike[str] = ".",
    *overlays: str | os.PathLike[str],
    params: str | os.PathLike[str] | None = None,
    check: bool = True,
) -> dict[str, Any]:
    """The config of the checkout at ``root``: :func:`config_files` then ``overlays`` merged
    (later wins) and, with ``check``, validated (:func:`load_config`); without, as merged."""
    files = [*config_files(root, params), *overlays]
    if check:
        if not load_yaml(files[1]):  # its grid and profile are what a run is
            raise ConfigError(f"{files[1]}: empty; it holds the run settings (workflow, grid)")
        return load_config(*files)
    merged: dict[str, Any] = {}
    for path in files:
        merged = deep_merge(merged, load_yaml(path))
    return merged


def schema(generators: bool = True) -> dict[str, Any]:
    """config.schema.yaml with each evaluation's own key (its ``Job.schema``) and, with
    ``generators``, each generator's settings (its spec's schema) filled in."""
    out = config_schema()
    _add_evaluation_keys(out)
    if generators:
        props = out["properties"]
        props["generators"].update(settings_schema())
        props["methods"]["additionalProperties"]["properties"]["generators"].update(
            settings_schema(per_method=True)
        )
    return out


def _add_evaluation_keys(out: dict[str, Any]) -> None:
    """Each evaluation's ``Job.schema`` at its dotted ``config_key`` (``evaluation.transfer``:
    ``properties.evaluation.properties.transfer``); a key typed twice is an error."""
    for name, job in workflow_evaluations():
        if job.schema is None:
            continue
        if not job.config_key:
            raise ValueError(f"evaluation '{name}': a Job.schema needs its config_key")
        *parents, key = job.config_key.split(".")
        node = out
        for part in parents:
            node = node.get("properties", {}).get(part) or {}
            if node.get("type") != "object":
                raise ValueError(
                    f"evaluation '{name}': config key '{job.config_key}': '{part}' is not an "
                    "object of config.schema.yaml"
                )
        props = node.setdefault("properties", {})
        if key in props:
            raise ValueError(
                f"evaluation '{name}': config key '{job.config_key}' is typed twice (its "
                "Job.schema and config.schema.yaml, or another evaluation's)"
            )
        props[key] = copy.deepcopy(dict(job.schema))


def _key_path(error: jsonschema.ValidationError) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "<top level>"


def _closest(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """For ``anyOf`` / ``oneOf``: the error of the branch that got deepest into the value (the
    key that is wrong), when one got deeper than the value itself; else the error as it is."""
    while error.context:
        deepest = max(error.context, key=lambda e: len(e.absolute_path))
        if len(deepest.absolute_path) <= len(error.absolute_path):
            break
        error = deepest
    return error


#: The most values (mappings, lists and scalars) a config may hold with its YAML aliases
#: expanded; the suite's config holds about 3,000. An alias bomb (nine aliases of nine aliases...)
#: holds billions in a few lines, which validation would walk one by one.
MAX_CONFIG_VALUES = 500_000


def expanded_size(data: Any, source: str = "params.yaml") -> int:
    """How many values ``data`` holds once every shared (aliased) part is counted where it is
    used; a :class:`ConfigError` above :data:`MAX_CONFIG_VALUES`, for a part that holds itself
    (a recursive alias) or nesting too deep to walk. Counted without expanding anything."""
    sizes: dict[int, int] = {}
    open_parts: set[int] = set()

    def size(value: Any, where: str) -> int:
        if isinstance(value, dict):  # a key counts one, its value what it holds
            children = [(f"{where}.{k}" if where else str(k), v) for k, v in value.items()]
            total = 1 + len(value)
        elif isinstance(value, list | tuple):
            children = [(f"{where}[{i}]", v) for i, v in enumerate(value)]
            total = 1
        else:
            return 1
        key = id(value)
        if key in sizes:
            return sizes[key]
        if key in open_parts:
            raise ConfigError(f"{source}: key '{where}' holds itself (a recursive YAML alias)")
        open_parts.add(key)
        for child_where, child in children:
            total += size(child, child_where)
            if total > MAX_CONFIG_VALUES:
                raise ConfigError(
                    f"{source}: key '{where or '<top level>'}' holds over {MAX_CONFIG_VALUES:,} "
                    "values once its YAML aliases are expanded (an alias bomb?); not validated"
                )
        open_parts.discard(key)
        sizes[key] = total
        return total

    try:
        return size(data, "")
    except RecursionError:
        raise ConfigError(f"{source}: the config is nested too deeply to check") from None


def validate_schema(
    config: dict[str, Any],
    source: str = "params.yaml",
    files: Sequence[str | os.PathLike[str]] = (),
) -> None:
    """JSON-schema validation with messages that name the offending key; first the config's
    size with its aliases expanded (:func:`expanded_size`) and its numbers (finite). With the
    ``files`` merged into ``config``, the message names the one that wrote every wrong key."""
    expanded_size(config, source)
    found_nan = first_non_finite(config)
    if found_nan is not None:  # anywhere, typed by the schema or not
        key, value = found_nan
        raise ConfigError(f"{source}: key '{key}': {value!r} is not a finite number")
    validator = schema_validator()(schema())
    found = (_closest(e) for e in validator.iter_errors(config))
    errors = sorted(found, key=lambda e: [str(p) for p in e.absolute_path])
    if not errors:
        return
    lines: list[str] = []
    keys: list[list[str]] = []
    for err in errors:
        where = _key_path(err)
        at = [str(p) for p in err.absolute_path]
        if err.validator == "additionalProperties":
            extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
            for key in extra:
                full = f"{where}.{key}" if where != "<top level>" else key
                hint = YAML11_BOOLEANS if isinstance(key, bool) else "misspelt?"
                lines.append(f"unknown key '{full}' ({hint})")
                keys.append([*at, str(key)])
            continue
        keys.append(at)
        if err.validator == "pattern":  # a name or value that reaches paths and commands
            is_name = "propertyNames" in err.schema_path
            full = f"{where}.{err.instance}" if is_name and where != "<top level>" else where
            rule = err.schema.get("description") or f"must match {err.validator_value}"
            lines.append(
                f"key '{full}': {'name' if is_name else 'value'} {err.instance!r} is not "
                f"allowed ({rule})"
            )
        else:
            lines.append(f"key '{where}': {schema_message(err)}")
    source = _writer(keys, files) or source
    raise ConfigError(f"{source}: invalid config:\n  " + "\n  ".join(lines))


def _writer(keys: list[list[str]], files: Sequence[str | os.PathLike[str]]) -> str | None:
    """The last of ``files`` that writes each of ``keys`` (the value the merge kept), when one
    file holds them all; else None. A key's parts may hold dots (``simcse_san_tau0.05_p0.1``)."""
    if not keys or not files:
        return None
    raw = [(str(f), load_yaml(f)) for f in files]
    writers = set()
    for key in keys:
        found = next((name for name, data in reversed(raw) if _holds(data, key)), None)
        if found is None:
            return None
        writers.add(found)
    return writers.pop() if len(writers) == 1 else None


def _holds(node: Any, parts: list[str]) -> bool:
    if not parts:
        return True
    if isinstance(node, list):  # a list is written whole by one file (the merge replaces it)
        index = parts[0]
        return index.isdigit() and int(index) < len(node) and _holds(node[int(index)], parts[1:])
    if not isinstance(node, dict):
        return False
    names = {str(k): v for k, v in node.items()}
    return any(
        ".".join(parts[:n]) in names and _holds(names[".".join(parts[:n])], parts[n:])
        for n in range(len(parts), 0, -1)
    )


def load_config(path: str | os.PathLike[str], *more: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and deep-merge config files (later files override), then validate everything."""
    check_unique_keys((path, *more))
    merged: dict[str, Any] = {}
    for p in (path, *more):
        own = load_yaml(p)
        if not isinstance(own, dict):
            raise ConfigError(f"{p}: expected a mapping of keys at the top level, got {own!r:.40}")
        merged = deep_merge(merged, own)
    check_config(merged, source=" + ".join(str(p) for p in (path, *more)), files=(path, *more))
    check_config_files(merged, (path, *more))
    return merged


def load_yaml(path: str | os.PathLike[str], compose: bool = False) -> Any:
    """A YAML file's value ({} when empty), or its node tree with ``compose``; text that is not
    UTF-8 or not YAML is a :class:`ConfigError` naming the file and the line."""
    try:
        text = read_text(path)
        if compose:
            return yaml.compose(text, Loader=YAML_LOADER)
        return yaml_value(text) or {}
    except UserError as exc:
        raise ConfigError(str(exc)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{path}: not valid YAML{where}: {problem}") from None


def _repeated_keys(node: yaml.Node, where: str, seen: set[int]) -> tuple[str, int, int] | None:
    """The first key written twice in one mapping under ``node``: (dotted key, first line,
    second line). Keys brought in by a merge (``<<: *anchor``) may be overridden."""
    if id(node) in seen:
        return None
    seen.add(id(node))
    children: list[tuple[str, yaml.Node]] = []
    if isinstance(node, yaml.MappingNode):
        lines: dict[str, int] = {}
        for key, value in node.value:
            name = str(key.value) if isinstance(key, yaml.ScalarNode) else "?"
            dotted = f"{where}.{name}" if where else name
            if name != "<<":
                if name in lines:
                    return dotted, lines[name], key.start_mark.line + 1
                lines[name] = key.start_mark.line + 1
            children.append((where if name == "<<" else dotted, value))
    elif isinstance(node, yaml.SequenceNode):
        children = [(f"{where}[{i}]", item) for i, item in enumerate(node.value)]
    for child_where, child in children:
        found = _repeated_keys(child, child_where, seen)
        if found:
            return found
    return None


def check_unique_keys(paths: Iterable[str | os.PathLike[str]]) -> None:
    """No config file writes a key twice in one mapping (YAML loaders, Snakemake's too, keep the
    last value without a word), nor a number YAML 1.1 reads otherwise than it reads
    (:func:`_yaml11_trap`)."""
    for p in paths:
        root = load_yaml(p, compose=True)
        found = _repeated_keys(root, "", set()) if root is not None else None
        if found:
            key, first, second = found
            raise ConfigError(
                f"{p}: key '{key}' written twice (lines {first} and {second}); keep one"
            )
        trap = _yaml11_trap(root, "", set()) if root is not None else None
        if trap:
            raise ConfigError(f"{p}: {trap}")


#: integers YAML 1.1 (PyYAML, Snakemake) reads in another base: 010 is 8, 1:30 is 90
_OCTAL = re.compile(r"[-+]?0[0-7_]+")
_SEXAGESIMAL = re.compile(r"[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+")


def _yaml11_trap(node: yaml.Node, where: str, seen: set[int]) -> str | None:
    """The first integer under ``node`` written as YAML 1.1 octal (``010``) or base 60
    (``1:30``), named by line and key, with what it reads as; a config never means those."""
    if id(node) in seen:
        return None
    seen.add(id(node))
    if isinstance(node, yaml.ScalarNode):
        text = str(node.value)
        if node.tag != "tag:yaml.org,2002:int" or not (
            _OCTAL.fullmatch(text) or _SEXAGESIMAL.fullmatch(text)
        ):
            return None
        value = yaml_value(text)
        if _OCTAL.fullmatch(text):
            decimal = int(text.replace("_", ""), 10)
            if decimal == value:  # 07: the same number either way
                return None
            read, fix = f"the octal number {value}", f"write {decimal} (decimal) or {value}"
        else:
            read, fix = f"the base-60 number {value}", f"write {value}, or quote it as text"
        return f"line {node.start_mark.line + 1}: key '{where}': YAML 1.1 reads {text} as {read}: {fix}"
    if isinstance(node, yaml.MappingNode):
        children = [
            (where if str(k.value) == "<<" else f"{where}.{k.value}" if where else str(k.value), v)
            for k, v in node.value
        ]
    elif isinstance(node, yaml.SequenceNode):
        children = [(f"{where}[{i}]", item) for i, item in enumerate(node.value)]
    else:
        return None
    for child_where, child in children:
        found = _yaml11_trap(child, child_where, seen)
        if found:
            return found
    return None


def check_config_files(config: dict[str, Any], paths: Iterable[str | os.PathLike[str]]) -> None:
    """Every method that any one file's grid lists must be configured in the merged config: a
    file whose grid another file replaces (params.yaml under the smoke config) is checked too."""
    for p in paths:
        own = load_yaml(p)
        grid = own.get("grid") if isinstance(own, dict) else None
        methods = grid.get("methods") if isinstance(grid, dict) else None
        for method in methods if isinstance(methods, list) else []:
            if method not in config["methods"]:
                raise ConfigError(
                    f"{p}: grid.methods lists '{method}' but methods.{method} is missing "
                    "(misspelt?)"
                )


def deep_merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def check_config(
    config: dict[str, Any],
    source: str = "params.yaml",
    files: Sequence[str | os.PathLike[str]] = (),
) -> None:
    """Schema, then cross-checks: grid methods are configured, backbones are known, and every
    configured method (in the grid or not) has a known implementation and valid parameters.
    ``files``: those merged into ``config``, for an error to name the one that wrote the key."""
    try:
        _check_config(config, source, files)
    except ConfigError as exc:
        message = str(exc)
        key = re.match(r"(?:key ')?([\w.+-]+)", message.removeprefix(f"{source}: "))
        writer = _writer([key.group(1).split(".")], files) if key else None
        if not message.startswith(f"{source}: ") or writer is None:
            raise
        raise ConfigError(f"{writer}: {message.removeprefix(f'{source}: ')}") from None


def _check_config(
    config: dict[str, Any], source: str, files: Sequence[str | os.PathLike[str]]
) -> None:
    validate_schema(config, source, files)
    methods = config["methods"]
    for method, entry in methods.items():  # before anything builds the methods
        try:
            method_class(entry["implementation"])
        except KeyError as exc:
            raise ConfigError(f"{source}: methods.{method}.implementation: {exc.args[0]}") from None
    for method in config["grid"]["methods"]:
        if method not in methods:
            raise ConfigError(
                f"{source}: grid.methods lists '{method}' but methods.{method} is missing "
                "(misspelt?)"
            )
    check_backbones(config, source)
    check_generators(config, source)
    if config["corpus"]["source"] not in registry():
        raise ConfigError(
            f"{source}: corpus.source: '{config['corpus']['source']}' is not a registered data "
            "file (src/negcse/resources/datasets.tsv; misspelt?)"
        )
    check_corpora(config, source)
    check_released(config, source)
    for method, entry in methods.items():
        for backbone in dict.fromkeys(
            [*config["grid"]["backbones"], *(entry.get("backbones") or {})]
        ):
            try:
                resolve_method(config, method, backbone)
            except (KeyError, ValueError, TypeError) as exc:
                message = str(exc.args[0]) if exc.args else type(exc).__name__
                if not message.startswith(f"methods.{method}"):
                    message = f"methods.{method}.params (backbone {backbone}): {message}"
                raise ConfigError(f"{source}: {message}") from None
        base = entry.get("baseline")
        if base == method:
            raise ConfigError(
                f"{source}: methods.{method}.baseline names {method} itself; a method is "
                "compared with another (its paper's baseline), or leave the key out"
            )
        if base is not None and base not in methods:
            raise ConfigError(
                f"{source}: methods.{method}.baseline names '{base}', which is not a configured "
                "method (misspelt?)"
            )
        if entry.get("paper") is not None and entry["paper"] not in PAPERS:
            raise ConfigError(
                f"{source}: methods.{method}.paper: unknown paper '{entry['paper']}'; known: "
                f"{', '.join(PAPERS)} (a method of no paper: leave it out)"
            )
    check_guides(config, source)


# Guides (``methods.<m>.guides``, negcse.workflow.guide_config): checked with the config.


class GuideConfigError(ConfigError):
    """A ``guides`` entry is wrong; the message names ``methods.<m>.guides.<guide>``."""


def guide_entries(config: dict[str, Any], method: str, backbone: str) -> dict[str, dict[str, Any]]:
    """``methods.<m>.guides``, each guide replaced by ``backbones.<backbone>.guides`` if set."""
    entry = config["methods"][method]
    out = dict(entry.get("guides") or {})
    out.update(((entry.get("backbones") or {}).get(backbone) or {}).get("guides") or {})
    return out


def _where(method: str, guide: str) -> str:
    return f"methods.{method}.guides.{guide}"


def check_guides(config: dict[str, Any], source: str = "params.yaml") -> None:
    """On every backbone: each ``guides`` entry is one of the two forms and names a configured
    method, every guide the method declares without a default has one and no other has, and
    the guide runs form no cycle."""
    methods = config["methods"]
    for method, settings in methods.items():
        _check_acyclic(config, method, [method], source)
        for backbone in dict.fromkeys(
            [*config["grid"]["backbones"], *(settings.get("backbones") or {})]
        ):
            entries = guide_entries(config, method, backbone)
            for guide, entry in entries.items():
                _check_entry(entry, f"{source}: {_where(method, guide)} ({backbone})", methods)
            impl = build_method(
                settings["implementation"], method_params(config, method, backbone), backbone
            )
            declared = {g.name for g in impl.guides()}
            required = {g.name for g in impl.guides() if g.default is None}
            if not required <= set(entries) <= declared:
                raise GuideConfigError(
                    f"{source}: methods.{method}.guides: the method's guides on {backbone} are "
                    f"{sorted(declared) or 'none'} (needing a model: {sorted(required) or 'none'})"
                    f", the entry names {sorted(entries) or 'none'}"
                )


def _check_entry(entry: Any, where: str, methods: dict[str, Any]) -> None:
    if not isinstance(entry, dict) or ("model" in entry) == ("method" in entry):
        raise GuideConfigError(f"{where}: give either 'method' (a run) or 'model' (a name)")
    extra = set(entry) - ({"model"} if "model" in entry else {"method", "backbone", "seed"})
    if extra:
        raise GuideConfigError(f"{where}: unknown key(s) {sorted(extra)}")
    if "method" in entry and entry["method"] not in methods:
        raise GuideConfigError(f"{where}: '{entry['method']}' is not a configured method")
    model = str(entry.get("model", ""))
    if model and is_local_path(model) and not Path(model).expanduser().is_dir():
        raise GuideConfigError(
            f"{where}: model '{model}' is a path and no such folder exists (relative paths are "
            "read from the workflow's folder)"
        )


def _check_acyclic(config: dict[str, Any], method: str, path: list[str], source: str) -> None:
    """No method is its own guide run, directly or through others (on any backbone)."""
    entry = config["methods"].get(method) or {}
    overrides = [(o or {}).get("guides") or {} for o in (entry.get("backbones") or {}).values()]
    for guide in [
        *(entry.get("guides") or {}).values(),
        *(g for o in overrides for g in o.values()),
    ]:
        run = guide.get("method") if isinstance(guide, dict) else None
        if run is None:
            continue
        if run in path:
            raise GuideConfigError(
                f"{source}: methods.{path[0]}.guides: a cycle: {' -> '.join([*path, run])}"
            )
        _check_acyclic(config, run, [*path, run], source)


def method_seeds(config: dict[str, Any], method: str, backbone: str) -> list[int]:
    """The seeds ``method`` runs with on ``backbone``: ``methods.<m>.backbones.<b>.seeds``,
    else ``methods.<m>.seeds`` (the papers' run counts differ: UNA's Table D7 is ten seeds of
    two methods on BERT-base), else, where the grid follows the seed plan
    (:mod:`negcse.workflow.seed_plan`), the first seeds of ``grid.seeds`` its claim rows ask for
    (``seed_plan.other_seeds`` for a row of no claim), else ``grid.seeds``."""
    entry = config["methods"][method]
    own = ((entry.get("backbones") or {}).get(backbone) or {}).get("seeds")
    if own or entry.get("seeds"):
        return list(own or entry["seeds"])
    if seed_plan.planned(config):
        other = int(seed_plan.plan_settings(config)["other_seeds"])
        counts = seed_plan.cached_counts(config)
        return seed_plan.seed_values(config, counts.get((method, backbone), other))
    return list(config["grid"]["seeds"])


def grid_runs(
    config: dict[str, Any], backbones: list[str] | None = None
) -> list[tuple[str, str, int]]:
    """(method, backbone, seed) of every training of the grid, in grid order."""
    return [
        (method, backbone, seed)
        for method in config["grid"]["methods"]
        for backbone in backbones or config["grid"]["backbones"]
        for seed in method_seeds(config, method, backbone)
    ]


#: Where a named grid's grid-wide outputs go (``grid.name``); see :func:`grid_output`.
GRIDS_FOLDER = "grids"


def grid_output(config: dict[str, Any], path: str) -> str:
    """Where a grid-wide output (a table, its metrics, a figure, the training curves' data) or
    its log is written: ``path`` itself for the default grid; for a grid with a ``grid.name`` (an
    overlay such as tests/smoke/gcse-domain.yaml) the same path under ``results/grids/<name>/``
    (logs under ``logs/grids/<name>/``), so that grid never overwrites another's. Per-model
    outputs (models, evaluations, generator files) are shared by every grid and are not passed
    here: a run one grid trained is a run the other reuses."""
    name = config["grid"].get("name")
    if not name:
        return path
    top, _, rest = path.partition("/")
    if top not in ("results", "logs") or not rest:
        raise ValueError(f"grid_output: {path!r} is not under results/ or logs/")
    return f"{top}/{GRIDS_FOLDER}/{name}/{rest}"


def method_corpus(config: dict[str, Any], method: str) -> str:
    """The name of the corpus ``method`` trains on (and its generators read): its ``corpus``
    key, else ``corpus.name``."""
    return config["methods"][method].get("corpus") or config["corpus"]["name"]


def check_corpora(config: dict[str, Any], source: str = "params.yaml") -> None:
    """Every ``corpora`` entry reads registered files and can be mixed; every method's
    ``corpus`` names the main corpus or a ``corpora`` entry."""
    main, corpora = config["corpus"]["name"], config.get("corpora") or {}
    if main in corpora:
        raise ConfigError(f"{source}: corpora.{main}: the name of corpus.name (rename one)")
    for name, entry in corpora.items():
        parts = [(f"domain[{i}]", s) for i, s in enumerate(entry["domain"])]
        if entry.get("general"):
            parts.append(("general", entry["general"]))
        for where, part in parts:
            for file in part["files"]:
                if file not in registry():
                    raise ConfigError(
                        f"{source}: corpora.{name}.{where}.files: '{file}' is not a registered "
                        "data file (src/negcse/resources/datasets.tsv; misspelt?)"
                    )
        if entry.get("use_general", True) and not entry.get("general"):
            raise ConfigError(f"{source}: corpora.{name}: use_general is true but general is empty")
        if not (entry.get("use_domain", True) or entry.get("use_general", True)):
            raise ConfigError(f"{source}: corpora.{name}: use_domain and use_general both false")
    for method, entry in config["methods"].items():
        corpus = entry.get("corpus")
        if corpus is not None and corpus != main and corpus not in corpora:
            known = ", ".join([main, *corpora])
            raise ConfigError(
                f"{source}: methods.{method}.corpus: '{corpus}' is neither corpus.name nor a "
                f"corpora entry (known: {known}; misspelt?)"
            )


def check_corpus_entry(entry: Any, source: str) -> None:
    """One ``corpora.<name>`` entry (what the mixed-corpus job is given) against the schema,
    numbers finite; a :class:`ConfigError` naming ``source`` and the key."""
    found = first_non_finite(entry)
    if found is not None:
        raise ConfigError(f"{source}: key '{found[0]}': {found[1]!r} is not a finite number")
    full = schema(generators=False)
    entry_schema = {"$defs": full["$defs"], **full["properties"]["corpora"]["additionalProperties"]}
    for error in schema_validator()(entry_schema).iter_errors(entry):
        error = _closest(error)
        raise ConfigError(f"{source}: key '{_key_path(error)}': {schema_message(error)}")


def check_released(config: dict[str, Any], source: str = "params.yaml") -> None:
    """Released checkpoints: a row name that is no method's, a known pooler, known backbones;
    the untrained rows' pooler (evaluation.baseline_pooler) is a known one too."""
    pooler = (config.get("evaluation") or {}).get("baseline_pooler")
    if pooler is not None and pooler not in POOLERS:
        raise ConfigError(
            f"{source}: evaluation.baseline_pooler: unknown pooler '{pooler}' "
            f"(known: {', '.join(POOLERS)})"
        )
    for name, entry in (config.get("released") or {}).items():
        if name in config["methods"]:
            raise ConfigError(f"{source}: released.{name}: also a method's name (rename one)")
        if entry["pooler"] not in POOLERS:
            raise ConfigError(
                f"{source}: released.{name}.pooler: unknown pooler '{entry['pooler']}' "
                f"(known: {', '.join(POOLERS)})"
            )
        for backbone in entry["models"]:
            if not _known_backbone(config, backbone):
                raise ConfigError(
                    f"{source}: released.{name}.models.{backbone}: unknown backbone (misspelt?)"
                )


def released_models(config: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(row name, backbone, model) of every released checkpoint on a grid backbone, when
    ``evaluation.released`` is on."""
    if not (config.get("evaluation") or {}).get("released", True):
        return []
    return [
        (name, backbone, entry["models"][backbone])
        for name, entry in (config.get("released") or {}).items()
        for backbone in config["grid"]["backbones"]
        if backbone in entry["models"]
    ]


def column_readers(config: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """Configured method -> the generated columns its implementation reads (what the
    generators are told of the methods; unknown implementations skipped: the config check
    reports them)."""
    found = {}
    for method, entry in config["methods"].items():
        try:
            found[method] = tuple(method_class(entry["implementation"]).columns)
        except KeyError:
            continue
    return found


def check_generators(config: dict[str, Any], source: str = "params.yaml") -> None:
    """Every generator's settings, and every method's override of them, pass the spec's
    checks (those the schema cannot express, e.g. mer_min <= mer_max); a method overrides only
    generators whose columns it reads (any other override would never apply)."""
    for method, entry in config["methods"].items():
        try:
            impl = method_class(entry["implementation"])
        except KeyError:
            continue  # the params check names an unknown implementation
        reads = {*impl.columns, *([impl.corpus_column] if impl.corpus_column else [])}
        for name in entry.get("generators") or {}:
            gen = specs().get(name)
            if gen is not None and not reads & set(gen.columns):
                raise ConfigError(
                    f"{source}: methods.{method}.generators.{name}: {method} (implementation "
                    f"{entry['implementation']}) reads no column of generator {name} "
                    f"({', '.join(gen.columns)}), so the setting would never apply; remove it"
                )
    for name in specs():
        methods = [m for m, e in config["methods"].items() if (e.get("generators") or {}).get(name)]
        try:
            for method in [None, *methods]:
                generator_settings(config, name, method)
        except (KeyError, ValueError) as exc:
            raise ConfigError(f"{source}: {exc.args[0]}") from None


def check_backbones(config: dict[str, Any], source: str = "params.yaml") -> None:
    """Every ``grid.backbones`` entry is a known backbone or a model found here without the
    network (local folder, mirror, Hugging Face cache); every key under ``methods.*.backbones``
    is a known backbone or one of the grid's (a misspelt override would silently not apply)."""
    grid = config["grid"]["backbones"]
    known = ", ".join(KNOWN_BACKBONES)
    for backbone in grid:
        if backbone in KNOWN_BACKBONES:
            continue
        try:
            resolve_model(backbone, config.get("mirror") or None, network=False)
        except ResolveError as exc:
            tried = " ".join(line.strip() for line in str(exc).splitlines())  # every place
            raise ConfigError(
                f"{source}: grid.backbones: '{backbone}' is not a known backbone ({known}) and "
                f"was not found without the network: {tried} (misspelt? else fetch it into the "
                "mirror or the Hugging Face cache)"
            ) from None
    for method, entry in config["methods"].items():
        for backbone in entry.get("backbones") or {}:
            if not _known_backbone(config, backbone):
                raise ConfigError(
                    f"{source}: methods.{method}.backbones.{backbone}: unknown backbone "
                    f"(misspelt?); known: {known}; in grid.backbones: {', '.join(grid)}"
                )


def _known_backbone(config: dict[str, Any], backbone: str) -> bool:
    return backbone in KNOWN_BACKBONES or backbone in config["grid"]["backbones"]


def method_papers(config: dict[str, Any]) -> dict[str, str]:
    """Method -> the paper whose claims it tests (``methods.<m>.paper``), where set."""
    return {m: e["paper"] for m, e in config["methods"].items() if e.get("paper") is not None}


def method_baselines(config: dict[str, Any]) -> dict[str, str]:
    """Method -> the method its paper compared it with (``methods.<m>.baseline``), where set."""
    return {
        method: entry["baseline"]
        for method, entry in config["methods"].items()
        if entry.get("baseline") is not None
    }


def scale_note(config: dict[str, Any]) -> str:
    """The first line of every table and page of a reduced-scale grid (``train_overrides``, or
    a capped corpus: not the papers' training), which then gives no verdict on a paper; empty
    at the papers' scale."""
    overrides = config.get("train_overrides") or {}
    reasons = []
    if overrides:
        steps = overrides.get("max_steps")
        reasons.append(f"{steps} training steps a run" if steps else "train_overrides")
    cap = (config.get("corpus") or {}).get("max_sentences")
    if cap is not None:
        reasons.append(f"a corpus of {cap:,} sentences")
    if not reasons:
        return ""
    return f"Reduced-scale run ({', '.join(reasons)}): it checks the plumbing, not the papers."


def method_params(config: dict[str, Any], method: str, backbone: str) -> dict[str, Any]:
    entry = config["methods"][method]
    params = dict(entry.get("params") or {})
    params.update((entry.get("backbones") or {}).get(backbone, {}).get("params") or {})
    return params


def train_settings(config: dict[str, Any], method: str, backbone: str) -> TrainSettings:
    entry = config["methods"][method]
    values = dict(config["train"])
    values.update(entry.get("train") or {})
    values.update((entry.get("backbones") or {}).get(backbone, {}).get("train") or {})
    values.update(config.get("train_overrides") or {})
    return TrainSettings.from_dict(values)


def resolve_method(config: dict[str, Any], method: str, backbone: str) -> dict[str, Any]:
    """Everything that determines one training run (also what Snakemake compares for reruns)."""
    entry = config["methods"][method]
    params = method_params(config, method, backbone)
    # a key the backbone's override sets is named there (its value came from there)
    own = ((entry.get("backbones") or {}).get(backbone) or {}).get("params") or {}
    own_where = f"methods.{method}.backbones.{backbone}.params"
    where = f"methods.{method}.params"
    try:
        impl = build_method(entry["implementation"], params, backbone, where=where)
    except ParamError as exc:
        if exc.key in own:
            raise exc.at(own_where) from None
        raise
    except KeyError as exc:  # unknown keys: named where they were written
        message = str(exc.args[0]) if exc.args else ""
        unknown = {k for k in params if f"{where}.{k}:" in message or f"{where}.{k}," in message}
        if unknown and unknown <= set(own):
            raise KeyError(message.replace(f"{where}.", f"{own_where}.")) from None
        raise
    spec = {
        "method": method,
        "implementation": entry["implementation"],
        "backbone": backbone,
        "params": asdict(impl.params),
        "train": train_settings(config, method, backbone).to_dict(),
        "generators": entry.get("generators") or {},
    }
    if entry.get("corpus"):  # only where set: the other runs' specs (and results) stay as they were
        spec["corpus"] = entry["corpus"]
    # how its columns were made (GCSE: the LLM that wrote them)
    return {**spec, **provenance(config, method, impl.columns)}
