"""``negcse --help`` lists every command with its help without importing any command module
(torch, transformers: ~10 s on 2 busy cores), ``negcse evaluate --help`` imports no torch, the
model and generator commands' ``--help`` import none of torch, transformers, scipy, scikit-learn
or nltk (their modules are ``negcse.runtime.lazy.LazyModule``s); a named command still gets its full
options."""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from negcse.cli import PERSON_COMMANDS, STEPS_GROUP, build_parser, command_help, command_names
from negcse.runtime.lazy import LazyModule

REPO = Path(__file__).resolve().parents[1]

HEAVY = ("torch", "transformers", "sklearn", "spacy", "pandas", "scipy", "nltk",
         "negcse.commands.train")  # fmt: skip
#: `negcse ARGS` in a fresh interpreter, then the heavy modules it imported
PROBE = f"""import sys
from negcse.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("imported:", *sorted(m for m in {HEAVY!r} if m in sys.modules))
"""


def _imported(*args: str) -> tuple[str, list[str]]:
    """What ``negcse ARGS`` printed, and the heavy modules it imported."""
    out = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    head, _, tail = out.rpartition("imported:")
    return head, tail.split()


def test_top_level_help_imports_no_command() -> None:
    out, heavy = _imported("--help")
    assert heavy == []
    for name in command_names():
        assert f"    {name} " in out or f"    {name}\n" in out, name


def test_static_help_is_each_modules_help() -> None:
    for name, module_name in command_names().items():
        module = importlib.import_module(f"negcse.commands.{module_name}")
        assert name == module.NAME
        assert command_help(module_name) == module.HELP


def test_a_named_command_still_gets_its_options() -> None:
    out = subprocess.run([sys.executable, "-m", "negcse", "plots-template", "--help"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert "--out OUT" in out and "(no CDN: works" in out


def test_evaluate_help_imports_no_torch() -> None:
    out, heavy = _imported("evaluate", "--help")
    assert "torch" not in heavy and "transformers" not in heavy, heavy
    assert "--sts-out JSON" in out and "--transfer-out JSON" in out


#: commands whose run() needs torch, transformers or nltk, and an option of each
LIGHT_HELP = {
    "train": "--checkpoint-dir CHECKPOINT_DIR",
    "back-translate": "--pivot",
    "gcse-synthesize": "--max-in-flight MAX_IN_FLIGHT",  # generators.gcse's concurrency
    "gcse-denoise": "--order {roles,listed}",
    "paraphrase": "--num-beams NUM_BEAMS",
    "select-paraphrases": "--mer-min MER_MIN",
    "surface-edits": "--rate RATE",
    "tfidf": "--chunk-size CHUNK_SIZE",
}


@pytest.mark.parametrize("command", sorted(LIGHT_HELP))
def test_model_commands_help_imports_no_model_stack(command: str) -> None:
    out, heavy = _imported(command, "--help")
    stack = {"torch", "transformers", "scipy", "sklearn", "nltk"}
    assert not stack & set(heavy), heavy
    assert LIGHT_HELP[command] in out


def test_every_lazy_name_a_command_uses_exists() -> None:
    """A misspelt ``module.name`` behind a LazyModule fails only when run() reaches it: check
    every such attribute in every command's source against the real module."""
    checked = 0
    for module_name in command_names().values():
        module = importlib.import_module(f"negcse.commands.{module_name}")
        lazy = {k: v for k, v in vars(module).items() if isinstance(v, LazyModule)}
        tree = ast.parse(inspect.getsource(module))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in lazy:  # fmt: skip
                real = importlib.import_module(object.__getattribute__(lazy[node.value.id],
                                                                       "_name"))  # fmt: skip
                assert hasattr(real, node.attr), f"{module_name}: {node.value.id}.{node.attr}"
                checked += 1
    assert checked >= 15  # train alone uses eight


def _command_parser(name: str) -> argparse.ArgumentParser:
    parser, _ = build_parser([name])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def test_top_help_says_what_negcse_is_and_groups_the_commands() -> None:
    out = subprocess.run([sys.executable, "-m", "negcse", "--help"], capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    assert "reproducibility suite for unsupervised sentence embeddings" in out
    assert "thin entry points" not in out
    titles = [*PERSON_COMMANDS, STEPS_GROUP]
    at = [out.index(f"\n{title}:\n") for title in titles]
    assert at == sorted(at)  # the person's groups first, the workflow's steps last
    steps = out[at[-1]:]
    for name in command_names():  # each command once, in its group
        in_steps = re.search(rf"^    {re.escape(name)}( |$)", steps, re.M) is not None
        assert in_steps != any(name in group for group in PERSON_COMMANDS.values()), name
    assert not re.search(r"^    train ", steps, re.M) and "    san-negatives " in steps


def test_version() -> None:
    out = subprocess.run([sys.executable, "-m", "negcse", "--version"], capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert out.strip() == f"negcse {project['version']}"


@pytest.mark.parametrize("name", sorted(command_names()))
def test_every_option_of_every_command_has_help(name: str) -> None:
    parser = _command_parser(name)
    bare = [a.option_strings or [a.dest] for a in parser._actions
            if not a.help or a.help == argparse.SUPPRESS]  # fmt: skip
    assert not bare, f"negcse {name}: options without help: {bare}"


#: the old names of the output option, kept as aliases
OLD_OUTPUT_NAMES = ("--output", "--to")


@pytest.mark.parametrize("name", sorted(command_names()))
def test_the_output_option_is_named_out(name: str) -> None:
    """One name for the file or folder a command writes: ``--out``; the old names still parse
    as aliases of the same option."""
    parser = _command_parser(name)
    for alias in OLD_OUTPUT_NAMES:
        if alias in parser._option_string_actions:
            action = parser._option_string_actions[alias]
            assert action.option_strings[0] == "--out", (name, action.option_strings)
            assert parser._option_string_actions["--out"] is action


def test_old_output_names_parse_as_out() -> None:
    parser, _ = build_parser(["tfidf"])
    by_old = parser.parse_args(["tfidf", "--input", "c.txt", "--output", "t.tsv"])
    by_new = parser.parse_args(["tfidf", "--input", "c.txt", "--out", "t.tsv"])
    assert by_old.output == by_new.output == "t.tsv"
