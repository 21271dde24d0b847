"""MTEB reranking (MAP, MRR@10) or classification (accuracy) x100 through the mteb library
(:mod:`negcse.evaluation.mteb_runner`), on the datasets of the local Hugging Face cache only;
``negcse fetch-mteb`` fills that cache on a networked machine. ``--mteb-results DIR`` writes
mteb's own result files too (its ``ResultCache`` layout, read by ``mteb.ResultCache(DIR)``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, ClassVar

from negcse.data.mteb_tasks import GROUPS
from negcse.encoders.vectors import SentenceCache
from negcse.evaluation.registry import Evaluation, Options, register
from negcse.io_utils import check_writable
from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    from negcse.evaluation import mteb_runner
else:  # mteb and datasets: imported when an MTEB evaluation runs
    mteb_runner = LazyModule("negcse.evaluation.mteb_runner")


@register
class Mteb(Evaluation):
    name = "mteb"
    help = "MTEB reranking (MAP, MRR@10) or classification (accuracy) x100 of one task group"
    options: ClassVar[Options] = {
        "group": {"required": True, "choices": tuple(GROUPS), "help": "the MTEB task group to run"},
        "tasks": {"nargs": "+", "default": None, "help": "a subset of the group's tasks"},
        "results": {
            "metavar": "DIR",
            "help": "also write mteb's own result files there (a mteb.ResultCache folder)",
        },
    }

    def check(self, settings: dict[str, Any]) -> None:
        # Evaluation never downloads data (set before `datasets` is imported).
        os.environ["HF_DATASETS_OFFLINE"] = "1"
        check_writable(settings.get("results"), folder=True)  # it may hold other models

    def run(self, encoder: SentenceCache, settings: dict[str, Any]) -> dict[str, Any]:
        # MTEB's corpora are read once: the model encodes them directly, not through the cache.
        model = mteb_runner.MtebModel.wrap(
            encoder.model,
            mteb_runner.run_name(settings["tags"], settings["model"]),
            settings["batch_size"],
            mteb_runner.weights_revision(settings["model"]),
        )
        result = mteb_runner.run_mteb(
            settings["model"],
            settings["pooler"],
            settings["tasks"],
            None,
            group=settings["group"],
            batch_size=settings["batch_size"],
            model=model,
            progress=True,
            results_dir=settings.get("results"),
        )
        return {k: v for k, v in result.items() if k not in ("model", "pooler")}

    def summary(self, result: dict[str, Any]) -> str:
        return "  ".join(
            f"{task}:" + ",".join(f"{m}={v:.2f}" for m, v in result[task].items())
            for task in [*result["metric_keys"], "avg"]
        )
