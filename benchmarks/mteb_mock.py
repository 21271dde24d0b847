"""Our encoder through the pinned mteb on mteb's own mock tasks (offline): scores and wall time.

    NEGCSE_MIRROR=/work/shared/mirror python benchmarks/mteb_mock.py [--full-mock-run]

Runs MockRerankingTask and MockClassificationTask through ``negcse.evaluation.mteb_runner.run_mteb`` for the
mirror's all-MiniLM-L6-v2 (mean pooling) and splade-tiny ([CLS] before the pooler), and with
``--full-mock-run`` mteb's own ``mock_run`` (every text mock task) for MiniLM.
"""

from __future__ import annotations

import argparse
import logging
import time

import mteb
from mteb.mocks import MockClassificationTask, MockRerankingTask

from negcse.evaluation.mteb_runner import MTEB_VERSION, MtebModel, run_mteb

MODELS = (("sentence-transformers/all-MiniLM-L6-v2", "mean"), ("splade-tiny", "cls_before_pooler"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--full-mock-run", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    print(f"mteb {MTEB_VERSION}")
    for name, pooler in MODELS:
        model = MtebModel.load(name, pooler)
        for group, task in (
            ("reranking", MockRerankingTask()),
            ("classification", MockClassificationTask()),
        ):
            start = time.perf_counter()
            result = run_mteb(name, pooler, [task], None, group=group, model=model)
            wall = time.perf_counter() - start
            scores = result[task.metadata.name]
            print(f"{name} ({pooler}) {task.metadata.name}: {scores}  [{wall:.1f} s]")
        if args.full_mock_run and name.startswith("sentence-transformers"):
            start = time.perf_counter()
            res = mteb.mock_run(model)
            ran = [s for s in res.task_results.values() if s is not None]
            passed = sum(isinstance(s, mteb.TaskResult) for s in ran)
            wall = time.perf_counter() - start
            print(
                f"{name} mteb.mock_run: {passed}/{len(ran)} passed, all_passed={res.all_passed} "
                f"[{wall:.1f} s]"
            )


if __name__ == "__main__":
    main()
