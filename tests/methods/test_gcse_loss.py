"""GCSE's Gaussian-decayed InfoNCE against a hand computation of eq. 12-13."""

from __future__ import annotations

import math

import pytest
import torch

from negcse.losses.gcse import gaussian_decay, gaussian_decayed_info_nce

TAU = 0.05
SIGMA = 0.01


def _cos(u: list[float], v: list[float]) -> float:
    dot = sum(a * b for a, b in zip(u, v, strict=True))
    return dot / math.sqrt(sum(a * a for a in u) * sum(b * b for b in v))


def _hand_loss(h, hp, hn, s_frozen_cos, sigma=SIGMA, tau=TAU):
    """Eq. 12-13 written out with plain floats, s and s' as logits cos/tau."""
    n = len(h)
    losses = []
    for i in range(n):
        num = math.exp(_cos(h[i], hp[i]) / tau)
        den = sum(math.exp(_cos(h[i], hp[j]) / tau) for j in range(n))
        den += sum(math.exp(_cos(h[i], hn[j]) / tau) for j in range(n) if j != i)
        s = _cos(h[i], hn[i]) / tau
        s1 = s_frozen_cos[i] / tau
        g = s * (1 - math.exp(-((s - s1) ** 2) * tau**2 / (2 * sigma**2))) if s <= s1 else s
        den += math.exp(g)
        losses.append(-math.log(num / den))
    return losses


H = [[1.0, 0.2, 0.0], [0.1, 1.0, 0.3], [0.0, 0.4, 1.0]]
HP = [[0.9, 0.3, 0.1], [0.2, 0.8, 0.5], [0.1, 0.2, 1.1]]
HN = [[0.8, 0.6, 0.0], [0.5, 0.9, 0.1], [0.3, 0.3, 0.9]]


def _tensors():
    return (torch.tensor(x, dtype=torch.float64) for x in (H, HP, HN))


def test_loss_matches_hand_computation_both_branches():
    own = [_cos(H[i], HN[i]) for i in range(3)]
    # row 0: s < s' (decayed), row 1: s > s' (left as is), row 2: s' 0.005 above s (strong decay)
    frozen = [own[0] + 0.02, own[1] - 0.05, own[2] + 0.005]
    assert own[0] < frozen[0] and own[1] > frozen[1]
    h, hp, hn = _tensors()
    got = gaussian_decayed_info_nce(h, hp, hn, torch.tensor(frozen), TAU, SIGMA, form="paper")
    want = sum(_hand_loss(H, HP, HN, frozen)) / 3
    assert got.item() == pytest.approx(want, rel=1e-5)
    # the released form has the same value (it changes only the gradient)
    rel = gaussian_decayed_info_nce(h, hp, hn, torch.tensor(frozen), TAU, SIGMA, form="released")
    assert rel.item() == pytest.approx(want, rel=1e-5)


def test_branch_s_above_frozen_is_plain_info_nce_with_hard_negatives():
    own = [_cos(H[i], HN[i]) for i in range(3)]
    frozen = [c - 0.3 for c in own]  # every s > s': G = s, eq. 12 is ordinary InfoNCE
    h, hp, hn = _tensors()
    got = gaussian_decayed_info_nce(h, hp, hn, torch.tensor(frozen))
    from negcse.losses import info_nce

    assert got.item() == pytest.approx(info_nce(h, hp, TAU, hard_negatives=hn).item(), rel=1e-6)


def test_weighted_mean():
    frozen = [0.5, 0.5, 0.5]
    per_row = _hand_loss(H, HP, HN, frozen)
    h, hp, hn = _tensors()
    w = torch.tensor([1.0, 0.0, 3.0])
    got = gaussian_decayed_info_nce(h, hp, hn, torch.tensor(frozen), sigma=SIGMA, weights=w)
    assert got.item() == pytest.approx((per_row[0] + 3 * per_row[2]) / 4, rel=1e-5)


def test_gradient_on_own_hard_negative_vanishes_when_s_equals_frozen():
    h, hp, _ = _tensors()
    hn = torch.tensor(HN, dtype=torch.float64, requires_grad=True)
    with torch.no_grad():
        frozen = torch.nn.functional.cosine_similarity(h, hn, dim=-1)  # s' = s exactly
    # row 1's loss alone: h_1- enters it only through G(s_1, s'_1)
    w = torch.tensor([0.0, 1.0, 0.0], dtype=torch.float64)
    gaussian_decayed_info_nce(h, hp, hn, frozen, weights=w, form="paper").backward()
    assert hn.grad is not None
    assert torch.allclose(hn.grad[1], torch.zeros(3, dtype=torch.float64), atol=1e-12)
    assert hn.grad[0].abs().sum() > 1e-3  # the other rows' negatives still get gradient
    # the released form's detached change leaves the ordinary softmax gradient on s (small here,
    # as the decayed logit is 0, but not zero)
    hn2 = torch.tensor(HN, dtype=torch.float64, requires_grad=True)
    gaussian_decayed_info_nce(h, hp, hn2, frozen, weights=w, form="released").backward()
    assert hn2.grad is not None and hn2.grad[1].abs().sum() > 1e-10


def test_gaussian_decay_values_and_errors():
    s = torch.tensor([10.0, 10.0, 12.0], dtype=torch.float64)
    s1 = torch.tensor(
        [10.0, 10.2, 11.0], dtype=torch.float64
    )  # equal; 0.2 logits = 0.01 cosine above; below
    g = gaussian_decay(s, s1, TAU, SIGMA)
    assert g[0].item() == 0.0
    assert g[1].item() == pytest.approx(10.0 * (1 - math.exp(-0.5)), rel=1e-6)
    assert g[2].item() == 12.0
    with pytest.raises(ValueError, match="sigma"):
        gaussian_decay(s, s1, TAU, 0.0)
    h, hp, hn = _tensors()
    with pytest.raises(ValueError, match="form"):
        gaussian_decayed_info_nce(h, hp, hn, torch.zeros(3), form="cosine")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="frozen_negative_cos"):
        gaussian_decayed_info_nce(h, hp, hn, torch.zeros(2))


def _one_row(cos_neg: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Anchor (1, 0), positive at cos 0.62, own hard negative at cos ``cos_neg`` (2-d, N = 1)."""
    h = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    hp = torch.tensor([[0.62, math.sqrt(1 - 0.62**2)]], dtype=torch.float64)
    hn = torch.stack([cos_neg, (1 - cos_neg**2).sqrt()]).unsqueeze(0)
    return h, hp, hn


@pytest.mark.parametrize(
    ("form", "sigma", "want"),
    [
        # Hand numbers (docs/fidelity-gcse.md's worked example): a = 0.62/tau = 12.4, s = 11.8,
        # s' = 12.0, tau 0.05. The loss is -log(e^a / (e^a + e^G)); G = s (1 - e),
        # e = exp(-(s - s')^2 tau^2 / (2 sigma^2)); p = e^G / (e^a + e^G).
        # released (G a detached change): dL/ds = p; dL/dcos = p / tau.
        #   sigma 0.0085 (alpha 0.17): e = 0.500553, G = 5.893473, p = 1.491431e-3 -> +0.0298286
        ("released", 0.0085, 0.0298286),
        #   sigma 0.01: e = 0.606531, G = 4.642938, p = 4.275286e-4 -> +0.00855057
        ("released", 0.01, 0.00855057),
        # paper (gradient through G): dL/ds = p dG/ds, dG/ds = (1 - e) + s e (s - s') tau^2 /
        # sigma^2 = 0.393469 + 11.8 x 0.606531 x (-5) = -35.391840 -> dL/dcos = -0.302620
        ("paper", 0.01, -0.302620),
    ],
)
def test_hard_negative_gradient_sign_just_below_frozen(form: str, sigma: float, want: float):
    """At s one sigma-ish below s' (cos 0.59 vs 0.60) the released form pushes the hard negative
    away from its anchor (dL/dcos > 0: descent lowers cos); the paper form read literally pulls
    it towards the anchor (dL/dcos < 0), with a gradient ~35x larger."""
    cos_neg = torch.tensor(0.59, dtype=torch.float64, requires_grad=True)
    h, hp, hn = _one_row(cos_neg)
    frozen = torch.tensor([0.60], dtype=torch.float64)
    loss = gaussian_decayed_info_nce(h, hp, hn, frozen, TAU, sigma, form)  # type: ignore[arg-type]
    loss.backward()
    assert cos_neg.grad is not None
    assert cos_neg.grad.item() == pytest.approx(want, rel=1e-5)


def test_defaults_are_the_released_form_and_width():
    cos_neg = torch.tensor(0.59, dtype=torch.float64, requires_grad=True)
    h, hp, hn = _one_row(cos_neg)
    gaussian_decayed_info_nce(h, hp, hn, torch.tensor([0.60], dtype=torch.float64)).backward()
    assert cos_neg.grad is not None
    assert cos_neg.grad.item() == pytest.approx(0.0298286, rel=1e-5)  # released, sigma 0.0085
