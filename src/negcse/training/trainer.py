"""One trainer for every method.

Per step the method names the views to encode; views sharing a pooler and a dropout rate are
encoded in one forward pass; the method's loss gets the embeddings and a ``StepContext`` with
the batch rows of its declared columns (text or numeric) and the embeddings of its frozen guide
models (:mod:`negcse.training.guides`; the contract is in :mod:`negcse.methods.base`). STS-B dev is
scored every ``eval_steps`` and the best weights are kept. Every ``checkpoint_steps`` the full
state (weights, optimizer, scheduler, grad scaler, every RNG, the method's own state
(``Method.state_dict``), best score, curve) is written
atomically with the run's fingerprint (:mod:`negcse.training.fingerprint`), so a killed run
restarted with the same arguments resumes and ends with the same metrics, and one restarted under
anything else (params, settings, data, guides, lock) starts from scratch, logging what changed.

Speed (the numerics on CPU are those of the plain per-step loop): every (column, pooler) is
tokenized once (:mod:`negcse.training.batching`); nothing in a step waits for the GPU but every
``log_steps`` steps, when the loss and its parts reach the log, the curve and the progress bar
(:mod:`negcse.training.loss_log`); on CUDA the batches travel through pinned memory, AdamW is
the fused kernel and GradScaler hands its inf check to it without a host sync; the STS-B dev
sentences are tokenized once, length-sorted and encoded under the training autocast dtype;
on CUDA the backbone gets a (batch, query, key) attention mask, which skips transformers' per-forward
``torch.all(mask == 1)`` host sync (same additive mask). ``compile``: torch.compile of the encoding
of a view group (backbone, pooler and MLP head) and of the frozen guides' encoding; ``true`` or a
torch.compile mode such as ``reduce-overhead``, which replays CUDA graphs; ``auto`` (params.yaml's
default) is ``reduce-overhead`` with ``static_padding`` on CUDA and eager on CPU, so CPU runs keep
their numerics; ``false`` is eager everywhere. With ``static_padding`` each shape (a view group,
a guide's group, an epoch's last, shorter batch) gets a static graph of its own
(``dynamic=False``), not a second, dynamic-shape compilation once a second shape is seen. The
compiled step equals the eager one up to floating-point rounding given the same dropout masks
(``tests/training/test_compiled_methods.py``, every method family); inductor draws its dropout
masks from its own generator, and static padding changes the shape they are drawn for: other,
equally distributed draws.
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm
from transformers import get_constant_schedule_with_warmup, get_linear_schedule_with_warmup

from negcse.encoders.poolers import Pooler
from negcse.encoders.pretrained import default_device
from negcse.encoders.vectors import EncodeFn
from negcse.errors import ModelFilesError
from negcse.finite import check_tree
from negcse.io_utils import atomic_dir, atomic_path, write_json
from negcse.methods.base import BatchColumn, Column, Method, StepContext, View
from negcse.runtime.seed import rng_state, seed_everything, set_rng_state
from negcse.training.batching import TokenRows, collate, to_device, tokenize_rows
from negcse.training.checkpoint import (
    CurveSteps,
    Unloadable,
    best_weights_usable,
    load_checkpoint,
    load_plain,
    resume_problem,
    set_aside,
)
from negcse.training.columns import check_aligned, columns_read
from negcse.training.epoch_data import augment_columns, order_epoch, permutation
from negcse.training.fingerprint import differences, method_code
from negcse.training.guide_cache import CachedGuide, dtype_name
from negcse.training.guides import FrozenGuide, GuideError, load_guides
from negcse.training.loss_log import NonFiniteLoss, check_finite, log_loss, loss_record
from negcse.training.model import SentenceEncoder, dropout_rate
from negcse.training.settings import TrainSettings

logger = logging.getLogger(__name__)

DevScorer = Callable[[EncodeFn], float]


@dataclass
class TrainData:
    """The corpus and the columns aligned with it, line by line: text (``list[str]``) or
    numeric (an array whose first axis is the line; :mod:`negcse.training.columns`).
    ``sources``: column -> file, named in errors."""

    columns: dict[str, Column]
    sources: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_aligned(self.columns, self.sources)

    def __len__(self) -> int:
        return len(self.columns["sentence"])


@dataclass
class TrainState:
    step: int = 0
    best_score: float = -math.inf
    best_step: int = -1
    curve: list[dict[str, Any]] = field(default_factory=list)


def _is_text(data: TrainData, column: str) -> bool:
    return not isinstance(data.columns[column], np.ndarray)


def make_scheduler(
    optimizer: torch.optim.Optimizer, settings: TrainSettings, total_steps: int
) -> torch.optim.lr_scheduler.LambdaLR:
    """Warmup (``warmup_steps``, else ``warmup_ratio`` of the run), then linear decay to 0 at
    ``schedule_horizon`` (else the run's last step), or constant."""
    s = settings
    warmup = s.warmup_steps if s.warmup_steps is not None else int(s.warmup_ratio * total_steps)
    if s.scheduler == "linear":
        horizon = s.schedule_horizon if s.schedule_horizon is not None else total_steps
        return get_linear_schedule_with_warmup(optimizer, warmup, horizon)
    return get_constant_schedule_with_warmup(optimizer, warmup)


def autocast_dtype(name: str, device: torch.device) -> torch.dtype | None:
    """The autocast dtype of a precision setting on ``device`` (None: no autocast)."""
    if name == "auto":
        return torch.float16 if device.type == "cuda" else None
    return {"fp32": None, "tf32": None, "fp16": torch.float16, "bf16": torch.bfloat16}[name]


def _compile_mode(setting: bool | str, device: torch.device) -> str | None:
    """torch.compile's mode for the ``compile`` setting on ``device``; None: no compilation."""
    if setting == "auto":
        return "reduce-overhead" if device.type == "cuda" else None
    if setting is False:
        return None
    return "default" if setting is True else setting


def _optimizer(groups: list[dict[str, Any]], lr: float, device: torch.device) -> Any:
    """AdamW; the fused kernel on CUDA (one launch for all parameters, GradScaler-aware)."""
    if device.type == "cuda":
        return torch.optim.AdamW(groups, lr=lr, fused=True)
    return torch.optim.AdamW(groups, lr=lr)


class Trainer:
    def __init__(
        self,
        method: Method,
        model: SentenceEncoder,
        data: TrainData,
        settings: TrainSettings,
        seed: int,
        dev_scorer: DevScorer,
        checkpoint_dir: Path,
        device: torch.device | None = None,
        progress: bool = True,
        guides: dict[str, str] | None = None,
        fingerprint: Mapping[str, Any] | None = None,
        guide_caches: Mapping[str, str] | None = None,
    ) -> None:
        """``guides``: guide name -> local model folder, for each guide the method declares
        (:func:`negcse.training.guides.guide_paths` resolves ``--guide NAME=PATH`` and defaults).
        ``fingerprint``: what else changes the result (:func:`negcse.training.fingerprint.
        run_fingerprint`: the run spec, data and guide checksums, the lock), merged over the
        method, its params, the settings and the seed; a checkpoint resumes only under the same.
        ``guide_caches``: guide name -> its encodings' folder (:mod:`negcse.training.guide_cache`),
        read in place of that guide's forward pass (its model is then not loaded)."""
        guide_specs = method.guides()
        missing = [c for c in columns_read(method) if c not in data.columns]
        if missing:
            raise ValueError(
                f"method '{method.name}' needs column(s) {missing}; got {sorted(data.columns)}"
            )
        self.method = method
        self.model = model
        self.data = data
        self.s = settings
        self.seed = seed
        self.dev_scorer = dev_scorer
        self.ckpt_dir = Path(checkpoint_dir)
        self.device = device or default_device()
        self.progress = progress
        numeric_views = [c for g in guide_specs for c in g.columns if not _is_text(data, c)]
        if numeric_views:
            raise ValueError(f"guides encode text columns only; {numeric_views} are numeric")
        #: frozen guide models (never trained, never in a checkpoint); loaded after the trained
        #: model is built, so the MLP head's seeded initialisation does not depend on them
        caches = dict(guide_caches or {})
        unknown = sorted(set(caches) - {g.name for g in guide_specs})
        if unknown:
            raise GuideError(
                f"--guide-cache {', '.join(unknown)}: the method declares no such guide"
            )
        live = [g for g in guide_specs if g.name not in caches]
        self.guides: dict[str, FrozenGuide | CachedGuide] = {
            **load_guides(
                live, {k: v for k, v in (guides or {}).items() if k not in caches}, self.device
            ),
            **{
                g.name: CachedGuide.open(
                    g,
                    caches[g.name],
                    len(data),
                    settings.max_seq_len,
                    dtype_name(autocast_dtype(settings.precision, self.device)),
                )
                for g in guide_specs
                if g.name in caches
            },
        }
        #: numeric columns as CPU tensors, indexed per step
        self._numeric = {
            c: torch.from_numpy(v) for c, v in data.columns.items() if isinstance(v, np.ndarray)
        }
        self.poolers: dict[str, Pooler] = {}
        self.eval_pooler = method.pooler(method.eval_pooler, model.tokenizer)
        self.steps_per_epoch = math.ceil(len(data) / settings.batch_size)
        total = self.steps_per_epoch * settings.epochs
        self.total_steps = min(total, settings.max_steps) if settings.max_steps else total
        self.state = TrainState()
        self.token_rows: dict[tuple[str, str], TokenRows] = {}
        self._order: tuple[int, np.ndarray] | None = None  # (epoch drawn for, permutation)
        #: the method's per-epoch augmentations (negcse.training.epoch_data), of a copy of the data
        self._augment = method.augmentations()
        bad = [c for c in self._augment if c not in data.columns or not _is_text(data, c)]
        if bad:
            raise ValueError(f"method '{method.name}' augments {bad}: not text columns of the data")
        if self._augment:
            self.data = TrainData(dict(data.columns), dict(data.sources))
        self._originals = {c: data.columns[c] for c in self._augment}
        stale = [
            name
            for name, g in self.guides.items()
            if isinstance(g, CachedGuide) and set(g.spec.columns) & set(self._augment)
        ]
        if stale:
            raise GuideError(
                f"guide(s) {stale} read columns the method rewrites every epoch "
                f"({sorted(self._augment)}): they cannot be read from a cache"
            )
        self._augmented_epoch: int | None = None
        #: called with the step count after every optimizer step (benchmarks time with it)
        self.on_step: Callable[[int], None] | None = None
        self._eval_batches: dict[tuple[str, ...], list[tuple[np.ndarray, dict[str, Any]]]] = {}
        self.data_stats: dict[str, float] = {}
        self.dev_max_len = settings.dev_max_seq_len or 512
        own = {
            "implementation": method.name,
            "params": asdict(method.params),
            "train": settings.to_dict(),
            "seed": seed,
            "code": method_code(method),
        }
        #: recorded in the resumable state (plain JSON data), compared on resume
        self.fingerprint = json.loads(json.dumps({**own, **(fingerprint or {})}))
        #: one padded width per view group (static shapes for CUDA graphs); ``compile: auto``
        #: turns it on where it compiles (CUDA)
        self.static_padding = settings.static_padding or (
            settings.compile == "auto" and self.device.type == "cuda"
        )

    # -- data order ---------------------------------------------------------------------------
    def batch_indices(self, step: int) -> np.ndarray:
        """The examples of a global step: a seeded permutation per epoch, or epoch 0's every
        epoch (``data_order: fixed``), sliced; the epoch's augmented columns drawn first."""
        epoch, pos = divmod(step, self.steps_per_epoch)
        if self._augment and self._augmented_epoch != epoch:
            self._augment_epoch(epoch)
        drawn = order_epoch(epoch, self.s.data_order)
        if self._order is None or self._order[0] != drawn:
            self._order = (drawn, permutation(self.seed, drawn, len(self.data)))
        return self._order[1][pos * self.s.batch_size : (pos + 1) * self.s.batch_size]

    def _augment_epoch(self, epoch: int) -> None:
        """Rewrite the augmented columns for ``epoch``; their token rows are made again."""
        for column, texts in augment_columns(
            self._augment, self._originals, self.seed, epoch
        ).items():
            self.data.columns[column] = texts
            self.token_rows = {k: v for k, v in self.token_rows.items() if k[0] != column}
            for guide in self.guides.values():
                if not isinstance(guide, FrozenGuide):
                    continue
                for key, read, _ in guide.spec.encoded():
                    if read == column:
                        guide.rows.pop(key, None)
            changed = sum(a != b for a, b in zip(texts, self._originals[column], strict=True))
            logger.info(
                "epoch %d: %s augmented, %d of %d rows changed", epoch, column, changed, len(texts)
            )
        self._augmented_epoch = epoch

    # -- encoding -----------------------------------------------------------------------------
    def _pooler(self, key: str) -> Pooler:
        if key not in self.poolers:
            self.poolers[key] = self.method.pooler(key, self.model.tokenizer)
        return self.poolers[key]

    def _rows(self, column: str, pooler_key: str) -> TokenRows:
        """The token rows of a column under a pooler, tokenized on first use."""
        key = (column, pooler_key)
        if column in self._numeric:
            raise ValueError(f"view of numeric column '{column}': only text columns are encoded")
        if key not in self.token_rows:
            t0 = time.perf_counter()
            self.token_rows[key] = tokenize_rows(
                self._pooler(pooler_key),
                self.model.tokenizer,
                self.data.columns[column],
                self.s.max_seq_len,
            )
            logger.info(
                "tokenized column %s (%s): %d rows in %.1f s",
                column,
                pooler_key,
                len(self.data),
                time.perf_counter() - t0,
            )
        return self.token_rows[key]

    def encode_views(self, views: Sequence[View], idx: np.ndarray) -> dict[str, torch.Tensor]:
        groups: dict[tuple[str, float | None, int], list[View]] = defaultdict(list)
        for view in views:
            groups[(view.pooler, view.dropout, view.token_type)].append(view)
        out: dict[str, torch.Tensor] = {}
        embed = getattr(self, "_embed", None) or self.model.embed_batch
        square = self.device.type == "cuda"  # CPU keeps transformers' own mask path
        for (pooler_key, p, token_type), members in groups.items():
            parts = [self._rows(v.column, pooler_key) for v in members]
            # static padding: one width per group, the longest row of its columns
            pad_to = max(r.longest for r in parts) if self.static_padding else None
            host = collate(parts, idx, pad_to)
            if token_type and "token_type_ids" in host:  # models without them: no change
                host["token_type_ids"].fill_(token_type)
            batch = to_device(host, self.device)
            with dropout_rate(self.model.backbone, p):
                emb = embed(batch, self._pooler(pooler_key), self.method.use_mlp, square)
            for k, view in enumerate(members):
                out[view.name] = emb[k * len(idx) : (k + 1) * len(idx)]
        return out

    def batch_columns(self, idx: np.ndarray) -> dict[str, BatchColumn]:
        """The batch rows of each declared column: text as strings, numbers on the device."""
        out: dict[str, BatchColumn] = {}
        for column in self.method.columns:
            if column in self._numeric:
                rows = self._numeric[column][torch.from_numpy(idx)]
                out[column] = rows.to(self.device, non_blocking=True)
            else:
                text = self.data.columns[column]
                out[column] = [text[i] for i in idx]
        return out

    def encode_guides(self, idx: np.ndarray) -> dict[str, dict[str, torch.Tensor]]:
        """Each guide's embeddings of its columns for the batch rows (no gradient)."""
        columns, max_len = self.data.columns, self.s.max_seq_len
        return {
            name: guide.encode(columns, idx, max_len, self.device)
            for name, guide in self.guides.items()
        }

    def _eval_pooler(self) -> tuple[Pooler, bool]:
        use_mlp = self.eval_pooler.name == "cls"
        pooler = self.method.pooler("cls_before_pooler", None) if use_mlp else self.eval_pooler
        return pooler, use_mlp

    def _eval_plan(
        self, sentences: Sequence[str], batch_size: int
    ) -> list[tuple[np.ndarray, dict[str, Any]]]:
        """(rows, tokenized batch) pairs for ``sentences``, built once per sentence list.

        On CPU the batches are the sentences in order (as before); on CUDA they are
        length-sorted (less padding; the vectors go back to input order)."""
        key = tuple(sentences)
        if key not in self._eval_batches:
            pooler, _ = self._eval_pooler()
            n = len(sentences)
            if self.device.type == "cuda":
                order = np.argsort([-len(s) for s in sentences], kind="stable")
            else:
                order = np.arange(n)
            plan = []
            for start in range(0, n, batch_size):
                rows = order[start : start + batch_size]
                batch = pooler.tokenize(
                    self.model.tokenizer, [sentences[i] for i in rows], self.dev_max_len
                )
                if self.device.type == "cuda":
                    batch = {k: v.pin_memory() for k, v in batch.items()}
                plan.append((rows, dict(batch)))
            if len(self._eval_batches) >= 4:
                self._eval_batches.clear()
            self._eval_batches[key] = plan
        return self._eval_batches[key]

    @torch.no_grad()
    def encode_eval(self, sentences: Sequence[str], batch_size: int = 128) -> np.ndarray:
        """Evaluation embeddings (eval pooler; ``cls`` means [CLS] + the MLP head), under the
        training autocast dtype on CUDA."""
        was_training = self.model.training
        self.model.eval()
        pooler, use_mlp = self._eval_pooler()
        dtype = (
            autocast_dtype(self.s.precision, self.device) if self.device.type == "cuda" else None
        )
        ctx = torch.autocast("cuda", dtype=dtype) if dtype is not None else nullcontext()
        chunks, rows = [], []
        with ctx:
            for idx, batch in self._eval_plan(sentences, batch_size):
                emb = self.model.embed_batch(to_device(batch, self.device), pooler, use_mlp)
                chunks.append(emb.float())
                rows.append(idx)
        self.model.train(was_training)
        out = torch.cat(chunks).cpu().numpy()
        result = np.empty_like(out)
        result[np.concatenate(rows)] = out
        return result

    # -- checkpoints --------------------------------------------------------------------------
    def _save_state(self, optimizer: Any, scheduler: Any, scaler: Any) -> None:
        payload = {
            "model": self.model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "scaler": scaler.state_dict() if scaler is not None else None,
            "rng": rng_state(),
            "method": self.method.state_dict(),
            "state": self.state.__dict__,
            "settings": self.s.to_dict(),
            "seed": self.seed,
            "fingerprint": self.fingerprint,
        }
        with atomic_path(self.ckpt_dir / "last.pt") as tmp:
            torch.save(payload, tmp)

    def _save_best(self) -> None:
        with atomic_path(self.ckpt_dir / "best.pt") as tmp:
            torch.save(self.model.state_dict(), tmp)

    def _try_resume(self, optimizer: Any, scheduler: Any, scaler: Any) -> bool:
        path = self.ckpt_dir / "last.pt"
        if not path.is_file():
            if path.exists() or path.is_symlink():  # a folder, a dangling link: named, set aside
                kind = "a folder" if path.is_dir() else "not a regular file"
                set_aside(path, Unloadable("not-a-file", f"{kind}, not a training state"))
            return False
        payload = load_checkpoint(path)
        if payload is None:
            return False
        old = payload.get("fingerprint")
        changed = (
            ["it records no fingerprint (an older negcse)"]
            if not isinstance(old, dict)
            else differences(old, self.fingerprint)
        )
        if changed:
            logger.warning("not resuming %s: %s; starting from scratch", path, ", ".join(changed))
            return False
        why = resume_problem(
            payload, model=self.model.state_dict(), optimizer=optimizer, scheduler=scheduler,
            scaler=scaler, state_type=TrainState, total_steps=self.total_steps,
            every=CurveSteps(self.s.log_steps, self.s.eval_steps),
        )  # fmt: skip
        if why is not None:
            set_aside(path, Unloadable("invalid", why))
            return False
        if not self._best_usable(payload):
            return False
        try:  # the one part only the method can check: loaded first, undone on failure
            self.method.load_state_dict(payload["method"])
        except Exception as exc:  # any method's own error
            self.method.attach(self.model)  # its fresh state again
            why = f"the method's state does not load ({type(exc).__name__}: {exc})"
            set_aside(path, Unloadable("invalid", why))
            return False
        self.model.load_state_dict(payload["model"])
        optimizer.load_state_dict(payload["optimizer"])
        scheduler.load_state_dict(payload["scheduler"])
        if scaler is not None and payload["scaler"] is not None:
            scaler.load_state_dict(payload["scaler"])
        self.state = TrainState(**payload["state"])
        set_rng_state(payload["rng"])
        logger.info("resumed from %s at step %d/%d", path, self.state.step, self.total_steps)
        return True

    def _best_usable(self, payload: dict[str, Any]) -> bool:
        if payload.get("state", {}).get("best_step", -1) < 0:  # no best weights saved yet
            return True
        return best_weights_usable(self.ckpt_dir / "best.pt", self.model.state_dict())

    # -- loop ---------------------------------------------------------------------------------
    def evaluate(self) -> float:
        score = self.dev_scorer(self.encode_eval)
        self.state.curve.append({"step": self.state.step, "stsb_dev": score})
        if score > self.state.best_score:
            self.state.best_score, self.state.best_step = score, self.state.step
            self._save_best()
        logger.info(
            "step %d: STS-B dev %.2f (best %.2f at %d)",
            self.state.step,
            score,
            self.state.best_score,
            self.state.best_step,
        )
        return score

    def train(self) -> TrainState:
        seed_everything(self.seed)
        self.model.to(self.device)
        self.method.attach(self.model)
        self.data_stats = self.method.prepare(
            self.data.columns, self.model.tokenizer, self.s.max_seq_len
        )
        for key, value in self.data_stats.items():
            logger.info("data: %s = %g", key, value)
        no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight")
        named = [(n, p) for n, p in self.model.named_parameters() if p.requires_grad]
        groups = [
            {
                "params": [p for n, p in named if not n.endswith(no_decay)],
                "weight_decay": self.s.weight_decay,
            },
            {"params": [p for n, p in named if n.endswith(no_decay)], "weight_decay": 0.0},
        ]
        optimizer = _optimizer(groups, self.s.learning_rate, self.device)
        if self.device.type == "cuda":  # fp32 stays IEEE fp32 unless tf32 is asked for
            torch.backends.cuda.matmul.allow_tf32 = self.s.precision == "tf32"
        mode = _compile_mode(self.s.compile, self.device)
        #: the training encoder (evaluation stays eager: its shapes vary)
        self._embed = self.model.compiled_embed(mode, self.static_padding)
        for guide in self.guides.values():
            guide.compile(mode, self.static_padding)
        graphs = mode is not None and "reduce-overhead" in mode
        scheduler = make_scheduler(optimizer, self.s, self.total_steps)
        dtype = autocast_dtype(self.s.precision, self.device)
        scaler = torch.amp.GradScaler("cuda") if dtype == torch.float16 else None
        resumed = self._try_resume(optimizer, scheduler, scaler)
        if not resumed:
            shutil.rmtree(self.ckpt_dir, ignore_errors=True)
        self.model.train()
        ctx_factory = (
            (lambda: torch.autocast(self.device.type, dtype=dtype))
            if dtype is not None
            else nullcontext
        )
        bar = tqdm(
            total=self.total_steps,
            initial=self.state.step,
            desc=f"train {self.method.name}",
            disable=not self.progress,
            mininterval=2.0 if sys.stderr.isatty() else 30.0,
        )
        t0 = time.perf_counter()
        while self.state.step < self.total_steps:
            step = self.state.step
            idx = self.batch_indices(step)
            if graphs:  # a new iteration: the CUDA graphs may reuse the last step's outputs
                torch.compiler.cudagraph_mark_step_begin()
            # before the forward: no gradient of the last step outlives its CUDA-graph memory
            optimizer.zero_grad(set_to_none=True)
            with ctx_factory():
                emb = self.encode_views(self.method.views(step), idx)
                ctx = StepContext(
                    step,
                    self.model,
                    self.method.backbone,
                    rows=idx,
                    columns=self.batch_columns(idx),
                    guides=self.encode_guides(idx),
                )
                out = self.method.loss(emb, ctx)
            if scaler is not None:
                scaler.scale(out.loss).backward()
                scaler.unscale_(optimizer)
            else:
                out.loss.backward()
            if self.s.max_grad_norm:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.s.max_grad_norm)
            if scaler is not None:
                scaler.step(optimizer)
                scaler.update()
            else:
                optimizer.step()
            self.method.after_step(float(optimizer.param_groups[0]["lr"]))
            scheduler.step()
            self.state.step += 1
            bar.update(1)
            if self.on_step is not None:
                self.on_step(self.state.step)
            if self.state.step % self.s.log_steps == 0:  # the only host sync of a step
                record = loss_record(self.state.step, out)
                log_loss(record)
                try:  # said at the step it shows
                    check_finite(record, self.method.name)
                except NonFiniteLoss:
                    bar.close()  # the error on a line of its own
                    raise
                self.state.curve.append(record)
                bar.set_postfix(loss=f"{record['loss']:.4f}")
            done = self.state.step == self.total_steps
            if self.state.step % self.s.eval_steps == 0 or done:
                self.evaluate()
            if self.state.step % self.s.checkpoint_steps == 0 and not done:
                self._save_state(optimizer, scheduler, scaler)
        bar.close()
        elapsed = time.perf_counter() - t0
        self.state.curve.append({"step": self.state.step, "seconds": elapsed})
        best = self.ckpt_dir / "best.pt"
        try:
            self.model.load_state_dict(load_plain(best))
        except Unloadable as exc:  # changed under the running training
            raise ModelFilesError(f"{best}: the best weights do not load ({exc.why})") from None
        return self.state

    def save(self, out_dir: Path, meta: dict[str, Any]) -> None:
        """Write the best model atomically, then drop the resumable state."""
        log = {"curve": self.state.curve, "data_stats": self.data_stats, **meta}
        check_tree(
            log, str(Path(out_dir) / "train_log.json")
        )  # named as it would be, not the temporary
        with atomic_dir(out_dir) as tmp:
            self.model.cpu().save(tmp, self.eval_pooler, meta)
            write_json(tmp / "train_log.json", log)
        shutil.rmtree(self.ckpt_dir, ignore_errors=True)
