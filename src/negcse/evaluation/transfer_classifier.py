"""Logistic-regression probes for the transfer tasks, many fits at once.

``fit_logreg_batch`` trains M independent softmax regressions the way SentEval's PyTorch
``MLP(nhid=0)`` trains one (SimCSE's "test" mode: adam, batch 64, tenacity 5, epoch_size 4,
max_epoch 200), as one batched computation. A job is one data split fitted for several L2
penalties; since SentEval seeds every classifier alike, those fits see the very same batches, so
a step gathers each job's mini-batch once and updates all its penalties' weights, an (A, R*C, d)
tensor, with Adam (L2 added to the gradient, as torch's Adam ``weight_decay`` does). Jobs leave
the batch once all their models stopped. Per model, everything follows SentEval's fit:

- init: ``nn.Linear(d, C)`` right after ``torch.manual_seed(seed)`` (all models start equal);
- data order: a numpy ``RandomState(seed)`` (SentEval re-seeds the global numpy generator for
  every classifier); its first permutation makes the 5% validation split when no early-stopping
  set is given, then one permutation per pass orders the mini-batches;
- loss: mean cross-entropy over the mini-batch (SentEval's ``size_average = False``, set after
  the loss is built, has no effect since PyTorch 0.4); the last mini-batch may be short;
- early stopping: after every ``epoch_size`` passes the early-stopping accuracy is measured;
  the best weights are kept; training stops at the (tenacity+1)-th time it does not improve
  (SentEval never resets the counter) or once ``nepoch > max_epoch``.

The legacy ``RandomState`` and the torch global generator (inside ``fork_rng``) are used on
purpose: they are the streams SentEval draws from, so the batches and the init match it exactly.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
from tqdm.auto import tqdm

from negcse.runtime.lazy import LazyModule, torch

if TYPE_CHECKING:
    import sklearn.exceptions as sk_exceptions
    import sklearn.linear_model as linear_model
    from sklearn.linear_model import LogisticRegression
else:
    # imported on first use (the workflow's parse reads this module)
    sk_exceptions = LazyModule("sklearn.exceptions")
    linear_model = LazyModule("sklearn.linear_model")

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LogRegConfig:
    """SentEval's classifier settings; the defaults are SimCSE's "test" mode."""

    batch_size: int = 64
    tenacity: int = 5
    epoch_size: int = 4
    max_epoch: int = 200
    lr: float = 1e-3  # torch.optim.Adam defaults (SentEval passes only "adam")
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    validation_split: float = 0.05
    seed: int = 1111


@dataclass(frozen=True)
class FitJob:
    """One data split, fitted once per L2 penalty in ``penalties`` (the models share every batch).

    ``train_rows`` are rows of the feature matrix in SentEval's ``trainX`` order; ``dev_rows``
    are the early-stopping rows, or ``None`` for SentEval's ``validation_split``: 5% of
    ``train_rows`` picked by the first permutation of the model's generator.
    """

    train_rows: np.ndarray
    dev_rows: np.ndarray | None
    penalties: tuple[float, ...]


class Fitted(Protocol):
    """Fitted models indexed [job, penalty]: early-stopping accuracy and predictions."""

    dev_accuracy: np.ndarray

    def predict(self, x: np.ndarray, job: int, penalty: int) -> np.ndarray: ...


@dataclass
class FitResult:
    """Best (early-stopped) models, indexed [job, penalty]."""

    weight: np.ndarray  # (J, R, C, d)
    bias: np.ndarray  # (J, R, C)
    dev_accuracy: np.ndarray  # (J, R) best early-stopping accuracy in [0, 1]
    passes: np.ndarray  # (J, R) passes over the training rows before stopping

    def predict(self, x: np.ndarray, job: int, penalty: int) -> np.ndarray:
        """Class predictions of one model for rows ``x`` (n, d)."""
        logits = x.astype(np.float32) @ self.weight[job, penalty].T + self.bias[job, penalty]
        return logits.argmax(-1)


def senteval_linear_init(dim: int, nclasses: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The weights of ``nn.Linear(dim, nclasses)`` created right after ``torch.manual_seed``."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        layer = torch.nn.Linear(dim, nclasses)
    return layer.weight.detach().clone(), layer.bias.detach().clone()


class _PermutationStreams:
    """SentEval's per-classifier numpy streams, one generator per distinct stream.

    A classifier's draws depend only on its sizes: (rows split off by ``validation_split`` or
    None, training rows). Jobs with equal sizes share one generator and its permutations.
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._rs: dict[tuple[int | None, int], np.random.RandomState] = {}
        self._cache: dict[tuple[int | None, int], tuple[int, np.ndarray]] = {}

    def split(self, n: int, fraction: float) -> tuple[np.ndarray, np.ndarray]:
        rs = np.random.RandomState(self.seed)
        perm = rs.permutation(n)
        cut = int(fraction * n)
        self._rs.setdefault((n, n - cut), rs)
        return perm[cut:], perm[:cut]

    def register(self, key: tuple[int | None, int]) -> None:
        self._rs.setdefault(key, np.random.RandomState(self.seed))

    def permutation(self, key: tuple[int | None, int], pass_no: int) -> np.ndarray:
        cached = self._cache.get(key)
        if cached is not None and cached[0] == pass_no:
            return cached[1]
        if (cached[0] if cached else -1) != pass_no - 1:
            raise RuntimeError("permutation streams must advance one pass at a time")
        perm = self._rs[key].permutation(key[1])
        self._cache[key] = (pass_no, perm)
        return perm


@contextlib.contextmanager
def _torch_threads(n: int | None) -> Iterator[None]:
    """Run with ``n`` intra-op threads (None: unchanged), then restore the previous setting."""
    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def fit_logreg_batch(
    x: np.ndarray,
    y: np.ndarray,
    jobs: list[FitJob],
    nclasses: int,
    config: LogRegConfig = LogRegConfig(),
    desc: str = "logreg",
    threads: int | None = 1,
) -> FitResult:
    """Train SentEval-style logistic regressions, one per (job, penalty); see the module doc.

    The steps are many small tensor ops, for which one thread is as fast as two on an idle
    machine and much faster on a busy one, hence ``threads=1`` by default.
    """
    if not jobs:
        raise ValueError("no fits requested")
    n_pen = len(jobs[0].penalties)
    if n_pen == 0 or any(len(j.penalties) != n_pen for j in jobs):
        raise ValueError("every job needs the same, non-zero number of penalties")
    with _torch_threads(threads):
        return _fit(x, y, jobs, nclasses, n_pen, config, desc)


def _fit(
    x: np.ndarray,
    y: np.ndarray,
    jobs: list[FitJob],
    nclasses: int,
    n_pen: int,
    cfg: LogRegConfig,
    desc: str,
) -> FitResult:
    n_jobs = len(jobs)
    # A ones column carries the bias: the weight is [W | b] and gets the same Adam and L2.
    feats = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    feats = torch.cat([feats, torch.ones(len(feats), 1)], dim=1)
    labels_np = np.asarray(y, dtype=np.int64)
    labels = torch.from_numpy(labels_np)
    dim = feats.shape[1]

    # Each job's train order, early-stopping rows and permutation stream.
    streams = _PermutationStreams(cfg.seed)
    train_rows: list[np.ndarray] = []
    dev_rows: list[np.ndarray] = []
    keys: list[tuple[int | None, int]] = []
    for job in jobs:
        rows = np.asarray(job.train_rows, dtype=np.int64)
        if job.dev_rows is None:
            keep, held = streams.split(len(rows), cfg.validation_split)
            train_rows.append(rows[keep])
            dev_rows.append(rows[held])
            keys.append((len(rows), len(keep)))
        else:
            train_rows.append(rows)
            dev_rows.append(np.asarray(job.dev_rows, dtype=np.int64))
            keys.append((None, len(rows)))
            streams.register(keys[-1])
        if len(dev_rows[-1]) == 0 or len(train_rows[-1]) == 0:
            raise ValueError(f"{desc}: a fit has an empty training or early-stopping set")
    dev_union = np.unique(np.concatenate(dev_rows))
    dev_pos = [np.searchsorted(dev_union, r) for r in dev_rows]
    dev_feats = feats[torch.from_numpy(dev_union)]
    dev_labels = labels_np[dev_union]

    # Parameters of the active jobs, (A, R*C, d+1), Adam moments alike.
    w0, b0 = senteval_linear_init(dim - 1, nclasses, cfg.seed)
    weight = torch.cat([w0, b0[:, None]], dim=1).repeat(n_jobs, n_pen, 1)
    moments = (torch.zeros_like(weight), torch.zeros_like(weight))
    steps = torch.zeros(n_jobs, dtype=torch.float64)
    l2 = torch.tensor([j.penalties for j in jobs], dtype=torch.float32)
    l2 = l2.repeat_interleave(nclasses, 1).unsqueeze(-1)

    best = weight.view(n_jobs, n_pen, nclasses, dim).clone()
    best_acc = np.full((n_jobs, n_pen), -1.0)
    misses = np.zeros((n_jobs, n_pen), dtype=np.int64)
    alive = np.ones((n_jobs, n_pen), dtype=bool)
    passes = np.zeros((n_jobs, n_pen), dtype=np.int64)

    active = np.arange(n_jobs)  # jobs with a model still training, in tensor row order
    nepoch = 0
    pass_no = 0
    rounds = tqdm(desc=desc, total=cfg.max_epoch // cfg.epoch_size + 1, leave=False)
    while active.size and nepoch <= cfg.max_epoch:
        for _ in range(cfg.epoch_size):
            order = _pass_rows(active, train_rows, keys, streams, pass_no, cfg.batch_size)
            for start in range(0, order.shape[1], cfg.batch_size):
                rows = order[:, start : start + cfg.batch_size]
                _adam_step(feats, labels, rows, weight, moments, steps, l2, nclasses, cfg)
            pass_no += 1
        nepoch += cfg.epoch_size
        passes[active] += cfg.epoch_size * alive[active]

        acc = _accuracies(dev_feats, dev_labels, dev_pos, active, weight, n_pen)
        live = alive[active]
        better = live & (acc > best_acc[active])
        jj, rr = np.nonzero(better)
        best_acc[active[jj], rr] = acc[jj, rr]
        best[active[jj], rr] = weight.view(len(active), n_pen, nclasses, dim)[jj, rr]
        worse = live & ~better
        alive[active] &= ~(worse & (misses[active] >= cfg.tenacity))
        misses[active] += worse
        done = ~alive[active].any(1)
        if done.any():
            keep = torch.from_numpy(np.flatnonzero(~done))
            active = active[~done]
            weight, steps, l2 = weight[keep], steps[keep], l2[keep]
            moments = (moments[0][keep], moments[1][keep])
        rounds.update(1)
        rounds.set_postfix(training=int(alive.sum()))
    rounds.close()
    best_np = best.numpy()
    return FitResult(best_np[..., :-1].copy(), best_np[..., -1].copy(), best_acc, passes)


def _pass_rows(
    active: np.ndarray,
    train_rows: list[np.ndarray],
    keys: list[tuple[int | None, int]],
    streams: _PermutationStreams,
    pass_no: int,
    bsz: int,
) -> torch.Tensor:
    """(A, L) row ids of one pass, each job in its own shuffled order; -1 pads to whole batches."""
    longest = max(len(train_rows[j]) for j in active)
    width = -(-longest // bsz) * bsz
    out = np.full((active.size, width), -1, dtype=np.int64)
    for i, j in enumerate(active):
        perm = streams.permutation(keys[j], pass_no)
        out[i, : len(perm)] = train_rows[j][perm]
    return torch.from_numpy(out)


def _adam_step(
    feats: torch.Tensor,
    labels: torch.Tensor,
    rows: torch.Tensor,
    weight: torch.Tensor,
    moments: tuple[torch.Tensor, torch.Tensor],
    steps: torch.Tensor,
    l2: torch.Tensor,
    nclasses: int,
    cfg: LogRegConfig,
) -> None:
    """One mini-batch step of every model, in place; jobs whose batch is empty are skipped."""
    valid = rows >= 0
    counts = valid.sum(1)
    full = bool((counts == rows.shape[1]).all())
    sel: torch.Tensor | None = None
    if not full:
        sel = torch.nonzero(counts > 0).squeeze(1)
        rows, valid, counts = rows[sel], valid[sel], counts[sel]
    w = weight if sel is None else weight[sel]
    n_act, bsz = rows.shape
    safe = rows.clamp_min(0).view(-1)
    xb = feats.index_select(0, safe).view(n_act, bsz, -1)  # (A, B, d+1)
    yb = labels.index_select(0, safe).view(n_act, bsz, 1, 1)
    logits = torch.bmm(xb, w.transpose(1, 2))  # (A, B, R*C)
    probs = torch.softmax(logits.view(n_act, bsz, -1, nclasses), dim=-1)
    probs.scatter_add_(
        -1, yb.expand(-1, -1, probs.shape[2], 1), torch.full_like(probs[..., :1], -1)
    )
    grad_logits = probs.view(n_act, bsz, -1)  # d(mean cross-entropy)/d(logits)
    if full:
        grad_logits /= bsz
    else:
        grad_logits *= (valid.float() / counts.unsqueeze(1).float()).unsqueeze(-1)
    grad = torch.bmm(grad_logits.transpose(1, 2), xb)
    grad.add_(w * (l2 if sel is None else l2[sel]))  # Adam's weight_decay: L2 in the gradient

    if sel is None:
        steps += 1
        _adam_update(weight, grad, moments[0], moments[1], steps, cfg)
        return
    t = steps[sel] + 1
    steps[sel] = t
    m, v = moments[0][sel], moments[1][sel]
    _adam_update(w, grad, m, v, t, cfg)
    weight[sel] = w
    moments[0][sel] = m
    moments[1][sel] = v


def _adam_update(
    param: torch.Tensor,
    grad: torch.Tensor,
    m: torch.Tensor,
    v: torch.Tensor,
    t: torch.Tensor,
    cfg: LogRegConfig,
) -> None:
    """torch.optim.Adam's update (single-tensor form), in place, with a step count per job."""
    step_size = (cfg.lr / (1.0 - cfg.beta1**t)).float().view(-1, 1, 1)
    bc2_sqrt = (1.0 - cfg.beta2**t).sqrt().float().view(-1, 1, 1)
    m.lerp_(grad, 1.0 - cfg.beta1)
    v.mul_(cfg.beta2).addcmul_(grad, grad, value=1.0 - cfg.beta2)
    denom = (v.sqrt() / bc2_sqrt).add_(cfg.eps)
    param.sub_((m / denom) * step_size)


def _accuracies(
    dev_feats: torch.Tensor,
    dev_labels: np.ndarray,
    dev_pos: list[np.ndarray],
    active: np.ndarray,
    weight: torch.Tensor,
    n_pen: int,
) -> np.ndarray:
    """(A, R) accuracy of each active model on its job's early-stopping rows."""
    n_act, rc, dim = weight.shape
    logits = dev_feats @ weight.reshape(n_act * rc, dim).T
    pred = logits.view(len(dev_feats), n_act, n_pen, rc // n_pen).argmax(-1).numpy()
    correct = pred == dev_labels[:, None, None]
    return np.stack([correct[dev_pos[j], i].mean(0) for i, j in enumerate(active)])


@dataclass
class SklearnFitResult:
    """scikit-learn models indexed [job, penalty]; ``dev_accuracy`` is NaN where no dev rows."""

    models: list[list[LogisticRegression]]
    dev_accuracy: np.ndarray

    def predict(self, x: np.ndarray, job: int, penalty: int) -> np.ndarray:
        return self.models[job][penalty].predict(x)


def fit_sklearn_batch(
    x: np.ndarray, y: np.ndarray, jobs: list[FitJob], seed: int = 1111, desc: str = "sklearn"
) -> SklearnFitResult:
    """SentEval's ``usepytorch=False`` branch: ``LogisticRegression(C=penalty)`` on all train rows.

    ``penalties`` are inverse strengths C here; there is no early stopping, so ``dev_rows`` are
    only scored (SentEval picks C with them).
    """
    models: list[list[LogisticRegression]] = []
    dev_acc = np.full((len(jobs), len(jobs[0].penalties)), np.nan)
    unconverged = 0
    total = sum(len(j.penalties) for j in jobs)
    with (
        tqdm(total=total, desc=desc, leave=False) as bar,
        warnings.catch_warnings(record=True) as w,
    ):
        warnings.simplefilter("always", sk_exceptions.ConvergenceWarning)
        for j, job in enumerate(jobs):
            row: list[LogisticRegression] = []
            for r, c in enumerate(job.penalties):
                clf = linear_model.LogisticRegression(C=c, random_state=seed)
                clf.fit(x[job.train_rows], y[job.train_rows])
                if job.dev_rows is not None:
                    dev_acc[j, r] = clf.score(x[job.dev_rows], y[job.dev_rows])
                row.append(clf)
                bar.update(1)
            models.append(row)
        unconverged = sum(issubclass(item.category, sk_exceptions.ConvergenceWarning) for item in w)
    if unconverged:
        logger.warning(
            "%s: %d of %d fits did not converge (lbfgs, 100 iterations)", desc, unconverged, total
        )
    return SklearnFitResult(models, dev_acc)
