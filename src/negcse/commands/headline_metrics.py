"""``negcse headline-metrics``: the short DVC metrics file `dvc exp show` reads by default."""

from __future__ import annotations

import argparse
import logging

from negcse.errors import UserError
from negcse.io_utils import write_json
from negcse.tables.dvc_metrics import headline_files

NAME = "headline-metrics"
HELP = "each row's STS average and each claim's delta and verdict, from the tables' metrics"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sts", required=True, help="the sts table's metrics JSON")
    p.add_argument("--verdicts", required=True, help="the verdicts table's metrics JSON")
    p.add_argument("--out", required=True, help="the headline metrics JSON")


def _leaves(data: object) -> int:
    return sum(_leaves(v) for v in data.values()) if isinstance(data, dict) else 1


def run(args: argparse.Namespace) -> int:
    try:
        data = headline_files(args.sts, args.verdicts)
    except ValueError as exc:  # an unreadable file stays an OSError: "path: reason"
        raise UserError(str(exc)) from None
    write_json(args.out, data)
    values = _leaves(data)
    logger.info("headline metrics: %d values (dvc exp show's metric columns)", values)
    return 0
