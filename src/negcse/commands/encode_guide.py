"""``negcse encode-guide``: a frozen guide's encodings of the corpus, once, for its students."""

from __future__ import annotations

import argparse
import logging
from typing import TYPE_CHECKING

from negcse.commands.train import _pairs, read_spec
from negcse.errors import UserError
from negcse.io_utils import check_writable, read_lines
from negcse.methods.base import Column, Guide
from negcse.methods.registry import build_method
from negcse.runtime.lazy import LazyModule
from negcse.training.columns import read_column
from negcse.training.settings import TrainSettings

if TYPE_CHECKING:
    import negcse.runtime.device as device_policy
    import negcse.training.guide_cache as guide_cache
    import negcse.training.guides as guides_lib
    import negcse.training.model as model_lib
    import negcse.training.trainer as trainer_lib
else:  # torch and transformers load when run() uses them (lazy.py)
    device_policy = LazyModule("negcse.runtime.device")
    guide_cache = LazyModule("negcse.training.guide_cache")
    guides_lib = LazyModule("negcse.training.guides")
    model_lib = LazyModule("negcse.training.model")
    trainer_lib = LazyModule("negcse.training.trainer")

NAME = "encode-guide"
HELP = (
    "encode the texts a frozen guide reads (RankCSE/RLRD teachers, GCSE's stage-1 model) over "
    "the whole corpus once; students read the folder with negcse train --guide-cache"
)
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--student",
        nargs=2,
        action="append",
        required=True,
        metavar=("GUIDE", "RUN"),
        help="a student's guide name and its resolved run (JSON or a path, as negcse train "
        "--run); repeatable: the union of the students' texts of the model is encoded",
    )
    p.add_argument("--model", required=True, help="the guide's model (a folder or a name)")
    p.add_argument("--corpus", required=True, help="the students' corpus, one sentence per line")
    p.add_argument(
        "--column", action="append", default=[], metavar="NAME=FILE", help="a text column"
    )
    p.add_argument("--out", required=True, help="output folder (written atomically)")
    p.add_argument("--mirror", default=None)
    p.add_argument("--threads", type=int, default=None)


def _guides(students: list[list[str]]) -> tuple[list[Guide], TrainSettings]:
    """The named guide of each student run, and the first run's settings (all agree on the
    sequence length and precision)."""
    specs: list[Guide] = []
    first: TrainSettings | None = None
    for name, run in students:
        spec, where = read_spec(run)
        try:
            settings = TrainSettings.from_dict(spec["train"])
            method = build_method(spec["implementation"], spec["params"], spec["backbone"])
        except (KeyError, ValueError) as exc:
            raise UserError(f"{where}: {exc.args[0] if exc.args else exc}") from None
        guide = next((g for g in method.guides() if g.name == name), None)
        if guide is None:
            raise UserError(f"{where}: method '{spec['method']}' declares no guide '{name}'")
        first = first or settings
        for key in ("max_seq_len", "precision"):
            if getattr(settings, key) != getattr(first, key):
                raise UserError(f"{where}: train.{key} differs from the first --run's")
        specs.append(guide)
    assert first is not None
    return specs, first


def run(args: argparse.Namespace) -> int:
    specs, settings = _guides(args.student)
    check_writable(args.out, folder=True)
    device = device_policy.choose().device
    model_lib.torch_threads(args.threads)
    name = specs[0].name
    path = guides_lib.guide_paths(specs[:1], {name: args.model}, args.mirror)[name]
    columns: dict[str, Column] = {"sentence": read_lines(args.corpus, nonempty=True)}
    for column, file in _pairs(args.column, "--column", "NAME=FILE").items():
        columns[column] = read_column(file)
    needed = {c for g in specs for c in g.columns} - set(columns)
    if needed:
        raise UserError(
            f"guide '{name}' encodes column(s) {sorted(needed)}: pass --column for each"
        )
    dtype = trainer_lib.autocast_dtype(settings.precision, device)
    meta = guide_cache.write_guide_cache(
        specs, path, columns, args.out, settings.max_seq_len, device, dtype
    )
    logger.info("%s: %d texts of %d rows (%s)", args.out, len(meta["texts"]), meta["rows"], path)
    return 0
