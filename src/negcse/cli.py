"""``negcse <command>`` (``python -m negcse``): the suite's command line. The commands a person
runs (check the machine, watch or estimate a run, train, evaluate or export one model) come
first; the steps that the workflow's rules run follow in a group of their own.

Each module in ``negcse.commands`` is one command named after the module (``fetch_data`` ->
``fetch-data``): it defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``. Only the module of the command being run is imported (torch is slow to
import); ``negcse --help`` reads each command's ``HELP`` (a string literal) from its source and
imports none.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import json
import logging
import os
import pkgutil
import re
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import negcse
import negcse.commands as commands_pkg
from negcse.errors import UserError
from negcse.finite import finite_float
from negcse.io_utils import check_writable

DESCRIPTION = (
    "negcse: a reproducibility suite for unsupervised sentence embeddings trained with "
    "synthetic negatives (SimCSE, SNCSE, UNA, SAN + HiNCE, GCSE, OssCSE, RankCSE, RLRD). "
    "Snakemake runs its grid (make smoke; snakemake --profile profiles/local); these commands "
    "check the machine, watch and estimate a run, train, evaluate and export one model, and are "
    "the steps the workflow's rules run."
)
#: the commands a person runs, by group, in the order ``negcse --help`` lists them; every other
#: command is a step of the workflow (its rules run it)
PERSON_COMMANDS = {
    "set up and check": ("doctor", "quickstart", "remote-check", "fetch-data", "fetch-mteb"),
    "plan and watch a run": ("estimate", "fidelity", "status", "dvc-lock"),
    "one model or table": ("train", "evaluate", "export", "table"),
}
STEPS_GROUP = "workflow steps (Snakemake's rules run these; each takes --help)"
#: help of options many commands share, where a command gives none of its own
SHARED_HELP = {
    "mirror": "mirror folder (default: $NEGCSE_MIRROR)",
    "threads": "torch CPU threads (default: torch's own)",
    "no_progress": "no progress bar",
}
DEBUG_ENV = "NEGCSE_DEBUG"
#: the exit status of an expected error (as argparse's for a bad argument); a bug's traceback
#: exits 1
USER_ERROR = 2


def command_names() -> dict[str, str]:
    """Command name -> module name, without importing anything."""
    infos = sorted(pkgutil.iter_modules(commands_pkg.__path__), key=lambda i: i.name)
    return {info.name.replace("_", "-"): info.name for info in infos}


def _commands(only: str | None = None) -> dict[str, object]:
    found = {}
    for name, module_name in command_names().items():
        if only is not None and name != only:
            continue
        module = importlib.import_module(f"negcse.commands.{module_name}")
        if getattr(module, "NAME", None) != name:
            raise RuntimeError(f"negcse.commands.{module_name} must define NAME = '{name}'")
        found[name] = module
    return found


def command_help(module_name: str) -> str:
    """A command's ``HELP``, read from its module's source without importing it."""
    spec = importlib.util.find_spec(f"negcse.commands.{module_name}")
    origin = Path(str(spec.origin if spec else module_name))
    for node in ast.parse(origin.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == "HELP" for t in targets):
            return str(ast.literal_eval(node.value))  # type: ignore[union-attr]
    raise RuntimeError(f"{origin}: no HELP = '...' string literal")


def build_parser(
    argv: Sequence[str] | None = None,
) -> tuple[argparse.ArgumentParser, dict[str, object]]:
    """The parser of the command named in ``argv`` (only its module imported), or of every
    command's name and help when none is named (``negcse --help``: no module imported)."""
    names = command_names()
    parser = argparse.ArgumentParser(
        prog="negcse",
        description=textwrap.fill(DESCRIPTION, 100),
        epilog=grouped_commands(names),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"negcse {negcse.__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.add_argument(
        "--debug",
        action="store_true",
        help=f"show the traceback of expected errors too (or set {DEBUG_ENV}=1)",
    )
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", help="one of the commands below"
    )
    words = [a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")]
    chosen = words[0] if words and words[0] in names else None
    modules = _commands(chosen) if chosen else {}
    for name, module in modules.items():
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)  # type: ignore[attr-defined]
        module.add_arguments(p)  # type: ignore[attr-defined]
        for action in p._actions:  # a number option takes no NaN or infinity
            if action.type is float:
                action.type = finite_float
            if action.help is None and action.dest in SHARED_HELP:
                action.help = SHARED_HELP[action.dest]
    if not chosen:  # listed by the epilog, in groups
        for name in names:
            sub.add_parser(name)
    return parser, modules


def grouped_commands(names: dict[str, str], width: int = 100) -> str:
    """``negcse --help``'s list of commands: the person's groups, then the workflow's steps,
    each command with its ``HELP`` (read from its source)."""
    listed = [name for group in PERSON_COMMANDS.values() for name in group]
    unknown = sorted(set(listed) - set(names))
    if unknown:
        raise RuntimeError(f"PERSON_COMMANDS names no command: {', '.join(unknown)}")
    groups = {**PERSON_COMMANDS, STEPS_GROUP: tuple(n for n in names if n not in listed)}
    lines = []
    for title, members in groups.items():
        lines.append(f"{title}:")
        for name in members:
            lines += textwrap.wrap(
                command_help(names[name]),
                width=width,
                initial_indent=f"    {name:<19} ",
                subsequent_indent=" " * 24,
            )
        lines.append("")
    return "\n".join(lines).rstrip()


#: options that name files a command writes: checked before the command runs
OUTPUT_OPTIONS = ("out", "output", "stats", "manifest", "cases_tex", "png", "pdf", "tex", "csv",
                  "md", "html", "metrics")  # fmt: skip


def parse(argv: Sequence[str] | None = None) -> tuple[argparse.Namespace, object]:
    """The parsed arguments and the command's module (argparse exits 2 on a bad argument)."""
    parser, modules = build_parser(argv)
    args = parser.parse_args(argv)
    return args, modules[args.command]


#: options that name the trained model folders a command reads (a DVC output: never written)
MODEL_OPTIONS = ("model", "models")


def _outputs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(option, path) of every output option given: :data:`OUTPUT_OPTIONS` and each ``--*-out``
    (``--loss-out``, ``negcse evaluate``'s ``--sts-out``)."""
    names = [*OUTPUT_OPTIONS, *sorted(n for n in vars(args) if n.endswith("_out"))]
    values = ((name, getattr(args, name, None)) for name in dict.fromkeys(names))
    return [(n, os.fspath(v)) for n, v in values if isinstance(v, str | os.PathLike) and v]


def check_outputs(args: argparse.Namespace) -> None:
    """Before any model loads or corpus is read: every output option's folder can be written,
    no two options name one file (the second would replace the first), and none lies in a
    model folder the command reads (it would change the model, or replace what it reads)."""
    outputs = _outputs(args)
    check_writable(*(path for _, path in outputs), folder=True)
    flag = {name: "--" + re.sub("_+", "-", name) for name, _ in outputs}  # sts__out: --sts-out
    seen: dict[Path, str] = {}
    for name, path in outputs:
        resolved = Path(path).resolve()
        if resolved in seen:
            raise UserError(f"{seen[resolved]} and {flag[name]} both name {path}: one file each")
        seen[resolved] = flag[name]
    for option in MODEL_OPTIONS:
        given = getattr(args, option, None)
        for model in given if isinstance(given, list) else [given]:
            if not isinstance(model, str | os.PathLike) or not Path(model).is_dir():
                continue
            folder = Path(model).resolve()
            for name, path in outputs:
                if folder == Path(path).resolve() or folder in Path(path).resolve().parents:
                    raise UserError(
                        f"{flag[name]} {path}: inside the model folder {model} that --{option} "
                        "reads; write it outside"
                    )


class _StderrHandler(logging.StreamHandler):
    """Writes each record to ``sys.stderr`` as it is then: a caller that ran :func:`main`
    before (a test, a notebook) may have replaced and closed the stream of its first call."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    try:  # a command's options may read the environment ($NEGCSE_EVALUATIONS)
        args, module = parse(argv)
    except Exception as exc:
        debug = "--debug" in words or os.environ.get(DEBUG_ENV, "0") not in ("", "0")
        if debug or not expected_error(exc):
            raise
        print(f"negcse: error: {describe_error(exc)}", file=sys.stderr)
        return USER_ERROR
    if args.debug:
        os.environ[DEBUG_ENV] = "1"
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, handlers=[handler])
    for noisy in ("urllib3", "filelock", "httpx", "huggingface_hub"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        check_outputs(args)
        return int(module.run(args) or 0)  # type: ignore[attr-defined]
    except Exception as exc:
        if os.environ.get(DEBUG_ENV, "0") not in ("", "0") or not expected_error(exc):
            raise
        print(f"negcse {args.command}: error: {describe_error(exc)}", file=sys.stderr)
        return USER_ERROR


def expected_error(exc: BaseException) -> bool:
    """Errors a user causes and fixes (config, files, models): no traceback for those; any
    other exception is a bug and keeps its traceback."""
    return isinstance(exc, (UserError, OSError, json.JSONDecodeError))


def describe_error(exc: BaseException) -> str:
    """``path: reason`` for an operating-system error, else the exception's own message, on
    one line (a multi-line message's lines joined with "; ")."""
    if isinstance(exc, OSError) and not isinstance(exc, UserError) and exc.filename:
        text = f"{exc.filename}: {exc.strerror or exc}"
    elif isinstance(exc, json.JSONDecodeError):
        text = f"invalid JSON: {exc}"
    else:
        text = str(exc) or type(exc).__name__
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())
