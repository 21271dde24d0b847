"""MTEB reranking and classification through the ``mteb`` library, our embedder as an mteb model.

The papers' MTEB numbers: reranking (GCSE Table 6, SAN Figure 2) on AskUbuntuDupQuestions,
SciDocsRR, StackOverflowDupQuestions and MindSmallReranking, MAP and MRR@10; classification
(SAN Table 4) on the ten English classification tasks of MTEB(eng, v1) other than AmazonPolarity
and IMDb, accuracy. Every number is read from mteb's score dictionary under an explicit metric
name (:data:`GROUP_METRICS`), never through ``main_score``:

- MAP is ``map_at_1000`` (every candidate list is shorter than 1000, so it is the full MAP of
  the v1 reranking evaluator), MRR@10 is ``mrr_at_10``. MindSmallReranking queries are a user's
  click history split into sub-queries; as in MTEB v1, a candidate's score is its maximum over
  the sub-queries, which mteb reports under ``max_over_subqueries_<metric>``.
- Classification is mteb's protocol: logistic regression (max_iter=100) on frozen embeddings
  of the training split undersampled to the task's ``samples_per_label`` examples per label
  (8 to 32), ``n_experiments`` = 10 draws, mean test accuracy; the English subset (``en``) of
  the multilingual tasks, the ``test`` split everywhere (the MTEB(eng, v1) selection).

With ``results_dir``, each task's result is also written in mteb's own layout, a ``ResultCache``
folder (``results/<model name>/<revision>/<task>.json`` beside ``model_meta.json``), which mteb's
results loader (``mteb.ResultCache(results_dir).load_results()``) and the leaderboard's tooling
read; the model is named after its run (``negcse/<method>-<backbone>-seed<n>``) and its revision
is the start of its weights' sha256.

The datasets are not in the offline mirror. Evaluation never touches the network: data are read
from the local Hugging Face cache with the hub in offline mode, and a missing dataset stops the
run before any encoding with :class:`MtebDataMissing`, naming the task and the prefetch command
(:func:`prefetch`, ``negcse fetch-mteb`` on a networked machine).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import mteb
import numpy as np
from mteb.abstasks import AbsTask
from mteb.models.abs_encoder import AbsEncoder
from mteb.models.model_meta import ModelMeta, ScoringFunction

from negcse.data.mteb_tasks import GROUP_METRICS, GROUPS, TASK_TYPES, TaskSpec
from negcse.errors import UserError
from negcse.io_utils import write_json
from negcse.runtime.lazy import LazyModule
from negcse.runtime.lock_record import lock_record

if TYPE_CHECKING:
    from mteb.abstasks.task_metadata import TaskMetadata
    from mteb.results import ModelResult
    from mteb.types import Array, BatchedInput, PromptType
    from torch.utils.data import DataLoader

    from negcse.evaluation import embedder as embedding
    from negcse.evaluation.embedder import Embedder
else:  # torch: loaded by MtebModel.load only (a wrapped embedder brings its own)
    embedding = LazyModule("negcse.evaluation.embedder")

logger = logging.getLogger(__name__)

MTEB_VERSION: str = mteb.__version__
SUBQUERY_PREFIX = "max_over_subqueries_"


class MtebDataMissing(UserError, RuntimeError):
    """An MTEB dataset is not in the local cache (the message names the task and the fix)."""


class BatchEmbedder(Protocol):
    """What :class:`MtebModel` wraps: :class:`~negcse.evaluation.embedder.Embedder` is one."""

    def encode(
        self, sentences: Sequence[str], batch_size: int = ..., progress: bool = ...
    ) -> np.ndarray: ...


def model_name(name_or_path: str | os.PathLike[str]) -> str:
    """An mteb model name (``organization/name``) for a hub id or a local folder."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "__", str(name_or_path).strip("/")) or "model"
    return f"negcse/{slug}"


class MtebModel(AbsEncoder):
    """Our frozen :class:`Embedder` as an mteb ``EncoderProtocol`` model.

    mteb calls ``encode(inputs, task_metadata=..., hf_split=..., hf_subset=...,
    prompt_type=..., batch_size=..., show_progress_bar=...)``. The wrapper reads the texts of
    every batch of the DataLoader (the ``text`` column: queries, ``title text`` documents,
    classification inputs) and encodes them in one call of the wrapped embedder, which batches
    and length-sorts them itself. ``batch_size`` and ``show_progress_bar`` are honoured.
    ``prompt_type`` (query/document) and the task's instruction are deliberately not used: the
    models are symmetric, instruction-free sentence encoders, as in the papers' MTEB v1 runs;
    ``task_metadata``, ``hf_split`` and ``hf_subset`` only label the debug log. A
    ``precision`` other than float32 is refused (no quantized embeddings). Similarity is cosine,
    declared in ``mteb_model_meta``.
    """

    def __init__(
        self,
        embedder: BatchEmbedder,
        name: str = "negcse/model",
        batch_size: int = 128,
        embed_dim: int | None = None,
        n_parameters: int | None = None,
        max_tokens: int | None = None,
        revision: str = "local",
    ) -> None:
        self.model = embedder
        self.batch_size = batch_size
        self.mteb_model_meta = ModelMeta.create_empty(
            overwrites={
                "name": name,
                "revision": revision,
                "similarity_fn_name": ScoringFunction.COSINE,
                "framework": ["PyTorch"],
                "embed_dim": embed_dim,
                "n_parameters": n_parameters,
                "max_tokens": max_tokens,
                "use_instructions": False,
                "languages": ["eng-Latn"],
            }
        )

    @classmethod
    def load(
        cls,
        name_or_path: str,
        pooler: str,
        mirror: str | os.PathLike[str] | None = None,
        batch_size: int = 128,
    ) -> MtebModel:
        """Load a trained folder, mirror name or hub id as an :class:`Embedder`."""
        embedder = embedding.Embedder.load(name_or_path, pooler, mirror=mirror)
        return cls.wrap(embedder, model_name(name_or_path), batch_size)

    @classmethod
    def wrap(
        cls, embedder: Embedder, name: str, batch_size: int = 128, revision: str = "local"
    ) -> MtebModel:
        """An already loaded :class:`Embedder` as an mteb model."""
        return cls(
            embedder,
            name=name,
            batch_size=batch_size,
            embed_dim=int(embedder.model.config.hidden_size),
            n_parameters=sum(p.numel() for p in embedder.model.parameters()),
            max_tokens=embedder.max_length,
            revision=revision,
        )

    def encode(
        self,
        inputs: DataLoader[BatchedInput],
        *,
        task_metadata: TaskMetadata,
        hf_split: str,
        hf_subset: str,
        prompt_type: PromptType | None = None,
        **kwargs: Any,
    ) -> Array:
        precision = kwargs.get("precision")
        if precision not in (None, "float32"):
            raise ValueError(f"precision {precision!r} is not supported (float32 embeddings only)")
        texts: list[str] = []
        for batch in inputs:
            if "text" not in batch:
                raise ValueError(
                    f"{task_metadata.name}: input batch has no 'text' column ({sorted(batch)}); "
                    "negcse embedders take text only"
                )
            texts.extend(str(t) for t in batch["text"])
        batch_size = int(kwargs.get("batch_size") or self.batch_size)
        logger.debug(
            "%s %s/%s %s: %d texts, batch %d (prompt not used)",
            task_metadata.name,
            hf_subset,
            hf_split,
            getattr(prompt_type, "value", "-"),
            len(texts),
            batch_size,
        )
        progress = bool(kwargs.get("show_progress_bar", False))
        emb = self.model.encode(texts, batch_size=batch_size, progress=progress)
        return np.asarray(emb, dtype=np.float32)


# -- tasks and their data ---------------------------------------------------------------------


def task_specs(group: str, names: Sequence[str] | None = None) -> list[TaskSpec]:
    """The group's tasks (all, or those named, in the order given)."""
    if group not in GROUPS:
        raise ValueError(f"unknown group {group!r}; known: {', '.join(GROUPS)}")
    by_name = {s.name: s for s in GROUPS[group]}
    if not names:
        return list(GROUPS[group])
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError(f"not {group} tasks: {', '.join(unknown)}; known: {', '.join(by_name)}")
    return [by_name[n] for n in names]


def get_task(spec: TaskSpec) -> AbsTask:
    """The mteb task object restricted to the spec's subset and split."""
    return mteb.get_task(spec.name, eval_splits=[spec.split], hf_subsets=[spec.subset])


def task_group(task: AbsTask) -> str:
    kind = task.metadata.type
    if kind not in TASK_TYPES:
        raise ValueError(
            f"{task.metadata.name}: task type {kind!r} is not one of {list(TASK_TYPES)}"
        )
    return TASK_TYPES[kind]


def mteb_key(task: AbsTask, metric: str) -> str:
    """mteb's score key for one of our metrics on this task (sub-query merge where it applies)."""
    base = GROUP_METRICS[task_group(task)][metric]
    if task.metadata.main_score.startswith(SUBQUERY_PREFIX):
        return SUBQUERY_PREFIX + base
    return base


@contextlib.contextmanager
def hub_offline() -> Iterator[None]:
    """Hugging Face hub and datasets in offline mode (cache only, no network) inside the block."""
    import datasets.config
    import huggingface_hub.constants

    saved_env = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")}
    saved = (
        huggingface_hub.constants.HF_HUB_OFFLINE,
        datasets.config.HF_HUB_OFFLINE,
        datasets.config.HF_DATASETS_OFFLINE,
    )
    os.environ.update({k: "1" for k in saved_env})
    huggingface_hub.constants.HF_HUB_OFFLINE = True
    datasets.config.HF_HUB_OFFLINE = datasets.config.HF_DATASETS_OFFLINE = True
    try:
        yield
    finally:
        huggingface_hub.constants.HF_HUB_OFFLINE = saved[0]
        datasets.config.HF_HUB_OFFLINE, datasets.config.HF_DATASETS_OFFLINE = saved[1:]
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def cache_location() -> str:
    import datasets.config
    import huggingface_hub.constants

    return f"hub cache {huggingface_hub.constants.HF_HUB_CACHE}, datasets cache {datasets.config.HF_DATASETS_CACHE}"


def load_offline(task: AbsTask, group: str | None = None) -> None:
    """Load the task's data from the local cache only; :class:`MtebDataMissing` if absent."""
    if task.data_loaded:
        return
    name = task.metadata.name
    try:
        with hub_offline():
            task.load_data()
    except OSError as exc:  # ConnectionError (offline hub) and FileNotFoundError (no cache)
        dataset = task.metadata.dataset
        group = group or task_group(task)
        raise MtebDataMissing(
            f"MTEB task {name}: dataset {dataset.get('path')} (revision "
            f"{str(dataset.get('revision'))[:12]}) is not in the local Hugging Face cache "
            f"({cache_location()}). MTEB data are not in the offline mirror: fetch them on a "
            f"networked machine with `python -m negcse fetch-mteb --group {group} "
            f"--out FILE.json` (rule mteb_data) and copy that cache ($HF_HOME) here. "
            f"Cause: {type(exc).__name__}: {exc}"
        ) from exc


def prefetch(group: str, names: Sequence[str] | None = None) -> list[dict[str, str]]:
    """Download the group's datasets into the Hugging Face cache (networked machine).

    A task already in the cache is not downloaded again. Returns one manifest row per task.
    """
    rows = []
    for spec in task_specs(group, names):
        task = get_task(spec)
        try:
            load_offline(task, group)
            source = "cache"
        except MtebDataMissing:
            logger.info("%s: downloading %s", spec.name, task.metadata.dataset["path"])
            try:
                task.load_data()
            except Exception as exc:
                raise MtebDataMissing(
                    f"MTEB task {spec.name}: download of {task.metadata.dataset['path']} "
                    f"failed ({type(exc).__name__}: {exc}); prefetch needs network access "
                    "to huggingface.co"
                ) from exc
            source = "downloaded"
        rows.append(
            {
                "task": spec.name,
                "dataset": str(task.metadata.dataset["path"]),
                "revision": str(task.metadata.dataset["revision"]),
                "subset": spec.subset,
                "split": spec.split,
                "source": source,
            }
        )
        logger.info("%s: %s", spec.name, source)
    return rows


# -- evaluation -------------------------------------------------------------------------------


def _only(values: Sequence[str], what: str, task: AbsTask) -> str:
    if len(values) != 1:
        raise ValueError(f"{task.metadata.name}: expected one {what}, got {list(values)}")
    return values[0]


def extract_scores(result: ModelResult, tasks: Sequence[AbsTask]) -> dict[str, dict[str, float]]:
    """``{task: {metric: value x100}}`` from mteb's results, by explicit metric name."""
    by_name = {r.task_name: r for r in result.task_results}
    out: dict[str, dict[str, float]] = {}
    for task in tasks:
        name = task.metadata.name
        if name not in by_name:
            raise KeyError(f"{name}: mteb returned no result")
        split = _only(task.eval_splits, "split", task)
        subset = _only(task.hf_subsets, "subset", task)
        entries = [e for e in by_name[name].scores.get(split, []) if e.get("hf_subset") == subset]
        if len(entries) != 1:
            raise KeyError(f"{name}: no scores for split {split!r}, subset {subset!r}")
        scores = {}
        for metric in GROUP_METRICS[task_group(task)]:
            key = mteb_key(task, metric)
            if key not in entries[0]:
                raise KeyError(f"{name}: mteb reported no {key!r} (has {sorted(entries[0])})")
            scores[metric] = 100.0 * float(entries[0][key])
        out[name] = scores
    return out


def evaluate_tasks(
    model: MtebModel,
    tasks: Sequence[AbsTask],
    batch_size: int = 128,
    progress: bool = False,
    results_dir: str | os.PathLike[str] | None = None,
) -> dict[str, dict[str, float]]:
    """Run loaded (or in-memory) tasks through ``mteb.evaluate``; ``{task: {metric: x100}}``.

    No result cache is read: every call encodes afresh (a retrained model at the same path must
    not pick up old scores). ``results_dir``: each task's result written there in mteb's layout.
    """
    encode_kwargs = {"batch_size": batch_size, "show_progress_bar": progress}
    result = mteb.evaluate(
        model,
        list(tasks),
        cache=None,
        raise_error=True,
        co2_tracker=False,
        encode_kwargs=encode_kwargs,
        show_progress_bar=progress,
    )
    if results_dir is not None:
        save_results(result, model.mteb_model_meta, results_dir, encode_kwargs)
    return extract_scores(result, tasks)


def save_results(
    result: ModelResult,
    meta: ModelMeta,
    results_dir: str | os.PathLike[str],
    encode_kwargs: Mapping[str, Any],
) -> list[Path]:
    """Every task result of ``result`` in mteb's layout under ``results_dir`` (its
    ``ResultCache``); the task files written."""
    cache = mteb.ResultCache(Path(results_dir))
    paths = []
    for task_result in result.task_results:
        cache.save_to_cache(task_result, meta, encode_kwargs=encode_kwargs)
        paths.append(cache.get_task_result_path(task_result.task_name, meta))
    return paths


def weights_revision(folder: str | os.PathLike[str]) -> str:
    """The first 12 hex digits of the sha256 of a model folder's weights ("local" without)."""
    weights = Path(folder) / "model.safetensors"
    if not weights.is_file():
        return "local"
    digest = hashlib.sha256()
    with weights.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:12]


def run_name(tags: Mapping[str, str] | None, name_or_path: str | os.PathLike[str]) -> str:
    """The mteb model name of a run (``negcse/<method>-<backbone>-seed<n>`` from its tags), else
    of its path (:func:`model_name`)."""
    tags = tags or {}
    if all(tags.get(k) for k in ("method", "backbone", "seed")):
        backbone = str(tags["backbone"]).replace("/", "-")
        return f"negcse/{tags['method']}-{backbone}-seed{tags['seed']}"
    return model_name(name_or_path)


def averages(scores: Mapping[str, Mapping[str, float]], group: str) -> dict[str, float]:
    """Unweighted mean over tasks of each metric of the group."""
    return {m: float(np.mean([scores[t][m] for t in scores])) for m in GROUP_METRICS[group]}


def run_mteb(
    model_path: str,
    pooler: str,
    tasks: Sequence[str | AbsTask] | None,
    out_json: str | os.PathLike[str] | None,
    *,
    group: str,
    batch_size: int = 128,
    mirror: str | os.PathLike[str] | None = None,
    tags: Mapping[str, str] | None = None,
    model: MtebModel | None = None,
    progress: bool = False,
    results_dir: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Evaluate one model on a group's tasks and write ``{task: {metric: x100}, avg: {...}}``.

    ``tasks``: names from :data:`GROUPS` (None: the whole group) or task objects (e.g. mteb's
    mock tasks). Every dataset is loaded from the local cache first, so a missing one fails
    before any encoding; ``model`` replaces loading ``model_path`` with ``pooler``;
    ``results_dir``: mteb's own result files too (:func:`save_results`).
    """
    items = list(tasks) if tasks else [s.name for s in task_specs(group)]
    specs = iter(task_specs(group, [t for t in items if isinstance(t, str)]))
    objects = [get_task(next(specs)) if isinstance(t, str) else t for t in items]
    for task in objects:
        if task_group(task) != group:
            raise ValueError(f"{task.metadata.name} is a {task_group(task)} task, not {group}")
    for task in objects:
        load_offline(task, group)
    model = model or MtebModel.load(model_path, pooler, mirror=mirror, batch_size=batch_size)
    scores = evaluate_tasks(model, objects, batch_size, progress, results_dir)
    result: dict[str, Any] = {
        **(tags or {}),
        "model": str(model_path),
        "pooler": pooler,
        "group": group,
        "mteb_version": MTEB_VERSION,
        **lock_record(),
        "metric_keys": {
            t.metadata.name: {m: mteb_key(t, m) for m in GROUP_METRICS[group]} for t in objects
        },
        **scores,
        "avg": averages(scores, group),
    }
    if out_json is not None:
        write_json(Path(out_json), result)
    return result
