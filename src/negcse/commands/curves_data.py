"""``negcse curves-data``: the STS-B dev training curves of many runs as one CSV (`dvc plots`)."""

from __future__ import annotations

import argparse
import csv
import logging

from negcse.analysis.curves import CURVE_COLUMNS, curve_rows, read_curve
from negcse.io_utils import atomic_open

NAME = "curves-data"
HELP = "STS-B dev score per evaluation step of trained models, one CSV row per point"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--models", nargs="+", required=True, help="trained model folders")
    p.add_argument("--out", required=True, help="CSV: method,backbone,seed,step,stsb_dev")


def run(args: argparse.Namespace) -> int:
    rows = curve_rows([read_curve(folder) for folder in args.models])
    with atomic_open(args.out) as fh:
        writer = csv.DictWriter(fh, fieldnames=CURVE_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    logger.info("training curves: %d points of %d runs", len(rows), len(args.models))
    return 0
