"""Per-row weights in the shared losses: sum_i w_i l_i / sum_i w_i, checked against the rows'
losses written out by hand (numpy), and equal to the unweighted loss for all-ones weights."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from negcse.losses import (
    bidirectional_margin_loss,
    hierarchical_info_nce,
    info_nce,
    info_nce_paired_negative,
    symmetric_info_nce,
    two_way_margin_loss,
    weighted_mean,
)

TAU = 0.05
W = [0.5, 2.0, 0.0, 1.5]


def _cos(u: np.ndarray, v: np.ndarray) -> float:
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def _nll(logits: list[float], target: int) -> float:
    top = max(logits)
    return top + math.log(sum(math.exp(x - top) for x in logits)) - logits[target]


def _weighted(rows: list[float], w: list[float]) -> float:
    return sum(wi * li for wi, li in zip(w, rows, strict=True)) / sum(w)


@pytest.fixture
def batch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return tuple(torch.randn(4, 6, generator=g, dtype=torch.float64) for _ in range(3))


def test_info_nce_rows_by_hand(batch) -> None:
    a, p, n = (x.numpy() for x in batch)
    rows = [
        _nll(
            [_cos(a[i], p[j]) / TAU for j in range(4)] + [_cos(a[i], n[j]) / TAU for j in range(4)],
            i,
        )
        for i in range(4)
    ]
    w = torch.tensor(W)
    got = info_nce(*batch[:2], TAU, hard_negatives=batch[2], weights=w)
    assert float(got) == pytest.approx(_weighted(rows, W), rel=1e-6)
    ones = info_nce(*batch[:2], TAU, hard_negatives=batch[2], weights=torch.ones(4))
    assert float(ones) == pytest.approx(float(info_nce(*batch[:2], TAU, batch[2])), rel=1e-6)
    assert float(ones) == pytest.approx(sum(rows) / 4, rel=1e-6)


def test_paired_negative_and_hince_rows_by_hand(batch) -> None:
    a, p, n = (x.numpy() for x in batch)
    paired = [
        _nll([_cos(a[i], p[j]) / TAU for j in range(4)] + [_cos(a[i], n[i]) / TAU], i)
        for i in range(4)
    ]
    got = info_nce_paired_negative(*batch, TAU, weights=torch.tensor(W))
    assert float(got) == pytest.approx(_weighted(paired, W), rel=1e-6)
    tau2 = 0.1
    hince = [
        _nll(
            [_cos(a[i], p[j]) / TAU for j in range(4)]
            + [_cos(a[i], n[j]) / tau2 for j in range(4)],
            i,
        )
        for i in range(4)
    ]
    got = hierarchical_info_nce(batch[0], batch[1], TAU, batch[2], tau2, weights=torch.tensor(W))
    assert float(got) == pytest.approx(_weighted(hince, W), rel=1e-6)


def test_symmetric_info_nce_weighs_both_rows_of_a_pair(batch) -> None:
    first, second = (x.numpy() for x in batch[:2])
    rows = np.concatenate([first, second])
    per_row = []
    for i in range(8):
        others = [j for j in range(8) if j != i]
        logits = [_cos(rows[i], rows[j]) / TAU for j in others]
        per_row.append(_nll(logits, others.index((i + 4) % 8)))
    got = symmetric_info_nce(batch[0], batch[1], TAU, weights=torch.tensor(W))
    assert float(got) == pytest.approx(_weighted(per_row, W + W), rel=1e-6)


def test_margin_losses_rows_by_hand(batch) -> None:
    a, p, n = (x.numpy() for x in batch)
    alpha, beta = 0.1, 0.3
    rows = []
    for i in range(4):
        delta = _cos(a[i], n[i]) - _cos(a[i], p[i])
        rows.append(max(delta + alpha, 0.0) + max(-delta - beta, 0.0))
    for loss in (bidirectional_margin_loss, two_way_margin_loss):
        got = loss(*batch, alpha, beta, weights=torch.tensor(W))
        assert float(got) == pytest.approx(_weighted(rows, W), rel=1e-6)
        assert float(loss(*batch, alpha, beta, weights=torch.ones(4))) == pytest.approx(
            sum(rows) / 4, rel=1e-6
        )


def test_bad_weights_are_refused() -> None:
    rows = torch.ones(3)
    with pytest.raises(ValueError, match=r"weights must have shape \(3,\), got \(2,\)"):
        weighted_mean(rows, torch.ones(2))
    with pytest.raises(ValueError, match="sum to a positive number"):
        weighted_mean(rows, torch.zeros(3))
    with pytest.raises(ValueError, match=">= 0"):
        weighted_mean(rows, torch.tensor([1.0, -1.0, 1.0]))
