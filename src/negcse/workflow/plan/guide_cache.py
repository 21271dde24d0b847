"""The guide-cache jobs of a grid: each frozen guide encoded once per model and corpus.

Every student of the grid that reads a frozen guide (RankCSE's and RLRD's teachers, GCSE's
stage-1 model) is mapped to a folder ``results/guides/<key>`` (rule ``encode_guide``:
``negcse encode-guide``) and reads it with ``negcse train --guide-cache``. Students share a
folder when they share the guide (its name and model), the corpus file, the files of the other
columns it encodes, the sequence length and the precision: RankCSE, RankCSE+SAN and its lambda
grid at one seed share their teachers', every seed shares a released teacher's. The folder holds
the union of their texts. Off with ``guide_cache: false`` (each step then runs the guides); a
guide reading a column its method rewrites every epoch (``Method.augmentations``) is never
cached.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from negcse.methods.registry import build_method
from negcse.workflow.config import grid_runs, resolve_method
from negcse.workflow.guide_config import guide_models, guide_outputs

CACHE_DIR = "results/guides/{key}"


@dataclass
class CacheJob:
    """One ``encode_guide`` job: the guide model, the files it reads, its students."""

    key: str
    model: str
    #: the guide's run folder where the workflow trains it (an input), else None
    model_run: str | None
    corpus: str
    columns: dict[str, str]
    #: its first student (method, backbone, guide name): the rows and the model's size
    student: tuple[str, str, str]
    #: every text it encodes: (pooler, column, prompt, token type)
    texts: set[tuple[str, str, str | None, int]] = field(default_factory=set)
    #: one student's (guide name, run spec JSON) per distinct set of texts
    runs: dict[tuple[str, ...], tuple[str, str]] = field(default_factory=dict)


def _slug(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", model.removeprefix("results/models/"))[-60:].strip(
        "_.-"
    )


#: what ``negcse encode-guide --student`` reads of a student's run (its guides' texts, length
#: and precision): the rest (its guide runs, generators) would rerun the cache for nothing
STUDENT_KEYS = ("method", "implementation", "backbone", "params", "train")


def student_spec(spec: Mapping[str, Any]) -> str:
    return json.dumps({k: spec[k] for k in STUDENT_KEYS}, sort_keys=True)


def guide_cache_jobs(
    config: Mapping[str, Any],
    train_inputs: Callable[[str, str, str], dict[str, str]],
) -> tuple[dict[str, CacheJob], dict[tuple[str, str, str], dict[str, str]]]:
    """The cache jobs by key, and each student's (method, backbone, seed) guide -> key."""
    jobs: dict[str, CacheJob] = {}
    students: dict[tuple[str, str, str], dict[str, str]] = {}
    if not config.get("guide_cache", True):
        return jobs, students
    cfg = dict(config)
    for method, backbone, seed_no in grid_runs(cfg):
        seed = str(seed_no)
        spec = resolve_method(cfg, method, backbone)
        built = build_method(spec["implementation"], spec["params"], backbone)
        rewritten = set(built.augmentations())  # rewritten every epoch: no cache can hold them
        guides = [g for g in built.guides() if not rewritten & set(g.columns)]
        if not guides:
            continue
        models = guide_models(cfg, method, backbone, seed)
        runs = guide_outputs(cfg, method, backbone, seed)
        inputs = train_inputs(method, backbone, seed)
        train = spec["train"]
        for guide in guides:
            model = models.get(guide.name, guide.default)
            if model is None:
                continue  # the student's train job names the missing guide
            columns = {c: inputs[c] for c in guide.columns if c != "sentence"}
            ident = [model, inputs["corpus"], train["max_seq_len"], train["precision"]]
            base = hashlib.sha1(json.dumps(ident).encode()).hexdigest()[:10]
            key = f"{_slug(model)}-{base}"
            job = jobs.get(key)
            if job is not None and any(job.columns.get(c, f) != f for c, f in columns.items()):
                ident.append(sorted(columns.items()))  # another file of a column: its own cache
                key = f"{key}-{hashlib.sha1(json.dumps(ident).encode()).hexdigest()[:6]}"
                job = jobs.get(key)
            if job is None:
                job = jobs[key] = CacheJob(
                    key,
                    model,
                    runs.get(guide.name),
                    inputs["corpus"],
                    {},
                    (method, backbone, guide.name),
                )
            job.columns.update(columns)
            types = dict(guide.token_types)
            job.texts.update((guide.pooler, c, p, types.get(k, 0)) for k, c, p in guide.encoded())
            texts = (*sorted(k for k, _, _ in guide.encoded()), guide.pooler)
            job.runs.setdefault(texts, (guide.name, student_spec(spec)))
            students.setdefault((method, backbone, seed), {})[guide.name] = key
    return jobs, students


def cache_inputs(job: CacheJob) -> dict[str, str]:
    """The job's input files: the corpus, the columns, the guide's run folder."""
    out = {"corpus": job.corpus, **job.columns}
    if job.model_run:
        out["guide_model"] = job.model_run
    return out


def cache_args(job: CacheJob) -> str:
    """``negcse encode-guide``'s arguments but ``--out`` (shell words)."""
    words = ["--model", job.model, "--corpus", job.corpus]
    for column, path in sorted(job.columns.items()):
        words += ["--column", f"{column}={path}"]
    for guide, spec in job.runs.values():
        words += ["--student", guide, spec]
    return " ".join(shlex.quote(w) for w in words)
