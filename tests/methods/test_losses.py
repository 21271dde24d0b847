"""InfoNCE against a hand computation of SimCSE's eq. (1)."""

from __future__ import annotations

import math

import torch

from negcse.losses import cosine_matrix, info_nce


def _cos(u: list[float], v: list[float]) -> float:
    dot = sum(a * b for a, b in zip(u, v, strict=True))
    return dot / (math.sqrt(sum(a * a for a in u)) * math.sqrt(sum(b * b for b in v)))


def _hand_infonce(
    h: list[list[float]], hp: list[list[float]], tau: float, hn: list[list[float]] | None = None
) -> float:
    total = 0.0
    for i in range(len(h)):
        logits = [_cos(h[i], hp[j]) / tau for j in range(len(hp))]
        if hn is not None:
            logits += [_cos(h[i], hn[j]) / tau for j in range(len(hn))]
        total += -logits[i] + math.log(sum(math.exp(x) for x in logits))
    return total / len(h)


def test_info_nce_equals_hand_computation() -> None:
    h = [[1.0, 0.0, 0.5], [0.2, 1.0, -0.3], [-0.5, 0.4, 1.0]]
    hp = [[0.9, 0.1, 0.4], [0.1, 0.8, -0.2], [0.3, -0.6, 0.7]]
    got = info_nce(torch.tensor(h), torch.tensor(hp), temperature=0.05).item()
    assert math.isclose(got, _hand_infonce(h, hp, 0.05), rel_tol=1e-5)


def test_info_nce_with_hard_negatives_adds_columns() -> None:
    h = [[1.0, 0.0], [0.0, 1.0]]
    hp = [[0.8, 0.2], [0.1, 0.9]]
    hn = [[-1.0, 0.3], [0.5, -0.5]]
    got = info_nce(torch.tensor(h), torch.tensor(hp), 0.1, torch.tensor(hn)).item()
    assert math.isclose(got, _hand_infonce(h, hp, 0.1, hn), rel_tol=1e-5)


def test_perfect_alignment_gives_small_loss_and_gradients_flow() -> None:
    torch.manual_seed(0)
    z = torch.nn.functional.normalize(torch.randn(8, 16), dim=-1).requires_grad_()
    loss_aligned = info_nce(z, z.detach().clone(), 0.05)
    loss_shuffled = info_nce(z, z.detach().roll(1, dims=0), 0.05)
    assert loss_aligned.item() < loss_shuffled.item()
    loss_shuffled.backward()
    assert z.grad is not None and z.grad.abs().sum() > 0


def test_cosine_matrix_matches_pairwise() -> None:
    a, b = torch.randn(3, 5), torch.randn(4, 5)
    m = cosine_matrix(a, b)
    for i in range(3):
        for j in range(4):
            assert math.isclose(m[i, j].item(), _cos(a[i].tolist(), b[j].tolist()), abs_tol=1e-6)
