"""Benchmark the transfer evaluator: one encoding of every task's sentences, then each classifier.

    python benchmarks/transfer.py --model sentence-transformers/all-MiniLM-L6-v2 --pooler mean \
        --out benchmarks/transfer_minilm.json [--embeddings /tmp/minilm_mean.npz]

Encodes each task's distinct sentences once (timed), then runs ``evaluate_transfer`` on the
cached vectors with the ``sentevalish`` and ``sklearn`` classifiers (each timed), so the two
classifiers are compared on identical features. ``--embeddings`` keeps the vectors (sentence ->
vector) for a comparison with SentEval itself run outside the project.
"""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from negcse.data.transfer import TRANSFER_TASKS, load_transfer
from negcse.evaluation.embedder import Embedder
from negcse.evaluation.transfer import CLASSIFIERS, evaluate_transfer
from negcse.io_utils import write_json

logger = logging.getLogger("benchmarks.transfer")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="sentence-transformers/all-MiniLM-L6-v2")
    p.add_argument("--pooler", default="mean")
    p.add_argument("--tasks", nargs="+", default=list(TRANSFER_TASKS))
    p.add_argument("--classifiers", nargs="+", default=list(CLASSIFIERS), choices=CLASSIFIERS)
    p.add_argument(
        "--sklearn-tasks",
        nargs="+",
        default=None,
        help="tasks for the sklearn classifier (default: --tasks); its CV tasks take ~600 lbfgs fits",
    )
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--mirror", default=None)
    p.add_argument("--embeddings", default=None, help="npz cache of the vectors (read/write)")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")

    cache = Path(args.embeddings) if args.embeddings else None
    encode_seconds = None
    if cache is not None and cache.is_file():
        with np.load(cache, allow_pickle=False) as npz:
            sentences, vectors = list(npz["sentences"]), npz["vectors"]
    else:
        sentences = list(
            dict.fromkeys(
                s
                for task in args.tasks
                for split in load_transfer(task, args.mirror).splits.values()
                for s in split.sentences()
            )
        )
        encoder = Embedder.load(args.model, args.pooler, mirror=args.mirror)
        start = time.perf_counter()
        vectors = encoder.encode(sentences, args.batch_size, progress=True)
        encode_seconds = round(time.perf_counter() - start, 1)
        logger.info("encoded %d sentences in %.0fs", len(sentences), encode_seconds)
        if cache is not None:
            np.savez(cache, sentences=np.array(sentences), vectors=vectors)
    index = {s: i for i, s in enumerate(sentences)}

    def lookup(batch: Sequence[str]) -> np.ndarray:
        return vectors[[index[s] for s in batch]]

    report: dict[str, object] = {
        "model": args.model,
        "pooler": args.pooler,
        "n_sentences": len(sentences),
        "encode_seconds": encode_seconds,
    }
    for classifier in args.classifiers:
        tasks = args.sklearn_tasks if classifier == "sklearn" and args.sklearn_tasks else args.tasks
        result = evaluate_transfer(lookup, tasks, args.mirror, classifier=classifier)
        report[classifier] = result
        row = "  ".join(f"{t}={result[t]:.2f}" for t in [*tasks, "avg"])
        logger.info("%s (%.0fs): %s", classifier, result["seconds"], row)
        write_json(args.out, report)  # after each classifier, so a long run keeps what it has


if __name__ == "__main__":
    main()
