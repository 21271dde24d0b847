"""``negcse evaluate-splits``: OssCSE's Cont./Oppn. split Spearman for any model and pooler."""

from __future__ import annotations

import argparse
import logging
import time

from negcse.io_utils import write_json
from negcse.mer import ALIGNMENTS
from negcse.model_cli import add_model_arguments, header, load_encoder
from negcse.probe import load_probe, run_probe
from negcse.splits import MEDIAN_RANGE, build_splits, evaluate_splits
from negcse.sts_data import PROTOCOLS

NAME = "evaluate-splits"
HELP = "Spearman x100 on OssCSE's Cont./Oppn. splits of the STS datasets (Tables 2, 3, 6)"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p)
    p.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="senteval",
        help="text for MER and encoding: senteval (processed files; matches Table 2) or mteb",
    )
    p.add_argument(
        "--alignment",
        choices=ALIGNMENTS,
        default="backtrace",
        help="MER word alignment: backtrace (jiwer's; default) or max_hits",
    )
    p.add_argument("--min-median", type=float, default=MEDIAN_RANGE[0])
    p.add_argument("--max-median", type=float, default=MEDIAN_RANGE[1])
    p.add_argument(
        "--datasets",
        nargs="+",
        default=None,
        metavar="NAME",
        help="only these candidate datasets (e.g. STS12-MSRvid STSB-test): a reduced "
        "protocol; default: all (STS12-16 test subsets, STS-B train and test)",
    )
    p.add_argument(
        "--probe-out",
        default=None,
        help="also write the Appendix B probe (as `negcse probe`) to this JSON file",
    )


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    encoder = load_encoder(args)
    datasets = build_splits(
        args.protocol,
        args.alignment,
        (args.min_median, args.max_median),
        args.mirror,
        only=args.datasets,
    )
    result = evaluate_splits(datasets, lambda s: encoder.encode(s, args.batch_size, progress=True))
    settings = {
        "protocol": args.protocol,
        "alignment": args.alignment,
        "median_range": [args.min_median, args.max_median],
        "reduced": args.datasets is not None,
    }
    result = {
        **header(args),
        **result,
        "settings": settings,
        "seconds": time.perf_counter() - start,
    }
    write_json(args.out, result)
    if args.probe_out:
        probe = run_probe(load_probe(), lambda s: encoder.encode(s, args.batch_size))
        write_json(args.probe_out, {**header(args), **probe})
    summary = (
        f"Cont.={result['cont']:.2f} Oppn.={result['oppn']:.2f} (Table 2's datasets)  "
        f"Cont.={result['cont_rule']:.2f} Oppn.={result['oppn_rule']:.2f} (median rule)"
    )
    logger.info("%s", summary)
    print(summary)
    return 0
