"""``negcse curves-data``: the training curves of many runs as CSV (`dvc plots`): the STS-B dev
score at each evaluation and, with ``--loss-out``, the loss and its logged parts."""

from __future__ import annotations

import argparse
import csv
import logging
from collections.abc import Sequence

from negcse.analysis.curves import CURVE_COLUMNS, LOSS_COLUMNS, curve_rows, loss_rows, read_curve
from negcse.io_utils import atomic_open

NAME = "curves-data"
HELP = "STS-B dev score per evaluation step (and the training loss) of trained models, as CSV"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--models", nargs="+", required=True, help="trained model folders")
    p.add_argument("--out", required=True, help=f"CSV: {','.join(CURVE_COLUMNS)}")
    p.add_argument("--loss-out", help=f"CSV of the losses: {','.join(LOSS_COLUMNS)}")


def _write(path: str, columns: Sequence[str], rows: list[dict]) -> None:
    with atomic_open(path) as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def run(args: argparse.Namespace) -> int:
    curves = [read_curve(folder) for folder in args.models]
    rows = curve_rows(curves)
    _write(args.out, CURVE_COLUMNS, rows)
    logger.info("training curves: %d points of %d runs", len(rows), len(args.models))
    if args.loss_out:
        losses = loss_rows(curves)
        _write(args.loss_out, LOSS_COLUMNS, losses)
        logger.info("training losses: %d points", len(losses))
    return 0
