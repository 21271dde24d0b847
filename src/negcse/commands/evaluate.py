"""``negcse evaluate``: several evaluations of one model in one process.

    python -m negcse evaluate --model M --only sts,probe --sts-out a.json --probe-out b.json

The evaluations are those of :mod:`negcse.evaluation` (``--help`` lists them with their
options, each prefixed by its name). The model is loaded once and every sentence encoded once
(one :class:`~negcse.encoders.vectors.SentenceCache`); they run in ``--only``'s order. Every
selected evaluation's settings and outputs are checked before the model loads, and the JSON
files are written when all have run, so a failure leaves no partial results.
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

from negcse.data.sources import ResolveError
from negcse.encoders.vectors import SentenceCache
from negcse.errors import UserError
from negcse.evaluation.registry import Evaluation, command_options, evaluations, select
from negcse.io_utils import check_writable, write_json
from negcse.model_cli import UNAVAILABLE, add_model_arguments, header, load_embedder, tags

NAME = "evaluate"
HELP = "run evaluations of one model (--only sts,transfer,...): one model load, one sentence cache"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    # every evaluation's options would make a page-long usage line: --help lists them
    p.usage = "%(prog)s --model MODEL --only NAME[,NAME...] --NAME-out JSON [--NAME-OPTION ...]"
    add_model_arguments(p)
    known = evaluations()
    p.add_argument(
        "--only",
        required=True,
        metavar="NAME,...",
        help=f"evaluations to run, in this order; known: {', '.join(sorted(known))}",
    )
    p.add_argument(
        "--unavailable-ok",
        action="store_true",
        help="a model found nowhere (offline, hub unreachable, no pinned revision): write each "
        f"result as '{UNAVAILABLE}' with the reason and exit 0 (released checkpoints)",
    )
    for name, cls in sorted(known.items()):
        group = p.add_argument_group(f"{name}: {cls.help}")
        group.add_argument(
            _flag(name, "out"),
            dest=_dest(name, "out"),
            metavar="JSON",
            help=f"its result (required with --only {name})",
        )
        for option, keywords in command_options(cls).items():
            kwargs = {k: v for k, v in keywords.items() if k != "required"}
            if "choices" not in kwargs and "action" not in kwargs:
                kwargs.setdefault("metavar", option.upper())
            group.add_argument(_flag(name, option), dest=_dest(name, option), **kwargs)


def _flag(name: str, option: str) -> str:
    return f"--{name}-{option.replace('_', '-')}"


def _dest(name: str, option: str) -> str:
    return f"{name}__{option}"


def settings_of(args: argparse.Namespace, cls: type[Evaluation]) -> dict[str, Any]:
    """The evaluation's own options by name, and the settings common to all."""
    own = {o: getattr(args, _dest(cls.name, o)) for o in ["out", *cls.options]}
    for option in ["out", *(o for o, kw in cls.options.items() if kw.get("required"))]:
        if own[option] is None:
            raise UserError(f"{_flag(cls.name, option)} is required with --only {cls.name}")
    common = {"model": args.model, "pooler": args.pooler, "mirror": args.mirror}
    return {**own, **common, "batch_size": args.batch_size, "tags": tags(args)}


def run(args: argparse.Namespace) -> int:
    try:
        chosen = select(args.only)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    plan = [(cls(), settings_of(args, cls)) for cls in chosen]
    for evaluation, settings in plan:  # all of them before the model loads
        check_writable(settings["out"], *(settings[o] for o in evaluation.outputs))
        evaluation.check(settings)
    try:
        embedder = load_embedder(args)  # resolves --pooler auto
    except ResolveError as err:
        if not args.unavailable_ok:
            raise
        reason = " ".join(str(err).split())
        logger.warning("model %s unavailable, written as such: %s", args.model, reason)
        for evaluation, settings in plan:
            write_json(settings["out"], {**header(args), UNAVAILABLE: reason})
            for option in evaluation.outputs:
                if settings.get(option):
                    with open(settings[option], "w", encoding="utf-8") as fh:
                        fh.write(f"{UNAVAILABLE}: {reason}\n")
        return 0
    logger.info("encoding on device %s", embedder.device.type)
    cache = SentenceCache(
        lambda s: embedder.encode(s, args.batch_size, progress=True), embedder, f"model {args.model}"
    )
    results = []
    for evaluation, settings in plan:
        settings["pooler"] = args.pooler
        logger.info("evaluation %s", evaluation.name)
        result = evaluation.run(cache, settings)
        summary = evaluation.summary(result)
        if summary:
            logger.info("%s: %s", evaluation.name, summary)
            print(f"{evaluation.name}: {summary}")
        clash = sorted(settings["tags"].keys() & result.keys())
        if clash:  # before any file is written
            raise UserError(
                f"--tag {clash[0]}: the {evaluation.name} evaluation writes '{clash[0]}' itself; "
                "choose another key"
            )
        results.append((settings["out"], {**header(args), **result}))
    for out, result in results:
        write_json(out, result)
    return 0
