"""``negcse --help`` lists every command with its help without importing any command module
(torch, transformers: ~10 s on 2 busy cores), ``negcse evaluate --help`` imports no torch; a
named command still gets its full options."""

from __future__ import annotations

import importlib
import subprocess
import sys

from negcse.cli import command_help, command_names

HEAVY = ("torch", "transformers", "sklearn", "spacy", "pandas", "negcse.commands.train")
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
