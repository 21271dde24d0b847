"""GCSE's Gaussian-decayed InfoNCE (paper eq. 12-13), in the released form and the paper's.

For anchor i of a batch of N triplets (x_i, x_i+, x_i-) the denominator holds every positive
(logits a_ij = cos(h_i, h_j+)/tau), every other row's hard negative (b_ij, j != i) and, in place
of the anchor's own hard-negative logit s_i = b_ii, the decayed value G(s_i, s'_i), where s'_i
is the frozen evaluation model's cos(h'_i, h'_i-)/tau.

Both forms read s and s' as logits (cos/tau): that is the reading under which eq. 13 is
consistent, because its tau^2 turns the logit difference back into a cosine difference, so
sigma is in cosine units (paper: 0.01; released: alpha 0.17 logits, sigma = 0.17 x 0.05 =
0.0085). G(s, s') = s * (1 - exp(-(s - s')^2 tau^2 / (2 sigma^2))) if s <= s', else s. The forms
differ in how G enters the graph:

- ``released`` (the default; aleversn/GCSE ``models/gcse.py``): G applied as a detached additive
  change (b_ii + (G - b_ii).detach()), so the gradient on s is the ordinary softmax weight of the
  decayed logit, always pushing the hard negative away from its anchor.
- ``paper`` (eq. 12-13 read literally): the gradient flows through G. At s = s' both G and dG/ds
  are 0, but just below s' dG/ds is large and negative (about -36 at cos 0.6, sigma 0.01), so
  the hard negative is pulled *towards* its anchor there (docs/fidelity-gcse.md, worked example).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from negcse.losses import cosine_matrix, weighted_mean
from negcse.runtime.lazy import F, torch

if TYPE_CHECKING:
    from torch import Tensor

DecayForm = Literal["paper", "released"]
FORMS: tuple[DecayForm, ...] = ("released", "paper")
#: the released Gaussian width in logit units, and in cosine units at the released tau 0.05
RELEASED_ALPHA = 0.17
RELEASED_SIGMA = 0.0085  # RELEASED_ALPHA x tau 0.05


def gaussian_decay(s: Tensor, s_frozen: Tensor, temperature: float, sigma: float) -> Tensor:
    """G(s, s', tau, sigma) of eq. 13 on logits s = cos/tau (differentiable in s)."""
    if sigma <= 0:
        raise ValueError(f"sigma must be > 0, got {sigma}")
    diff = s - s_frozen
    decay = 1.0 - torch.exp(-(diff**2) * temperature**2 / (2.0 * sigma**2))
    return torch.where(s <= s_frozen, s * decay, s)


def gaussian_decayed_info_nce(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    frozen_negative_cos: Tensor,
    temperature: float = 0.05,
    sigma: float = RELEASED_SIGMA,
    form: DecayForm = "released",
    weights: Tensor | None = None,
) -> Tensor:
    """Eq. 12 over a batch: rows of ``anchor``, ``positive``, ``negative`` are (h_i, h_i+, h_i-).

    ``frozen_negative_cos`` is s'_i as a cosine, cos(h'_i, h'_i-) from the frozen evaluation
    model, shape (N,); it is treated as a constant. ``weights`` (N,), if given, makes the loss
    sum_i w_i l_i / sum_i w_i instead of the plain mean.
    """
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    n = anchor.size(0)
    if positive.shape != anchor.shape or negative.shape != anchor.shape:
        raise ValueError(
            f"anchor {tuple(anchor.shape)}, positive {tuple(positive.shape)} and negative "
            f"{tuple(negative.shape)} must have the same shape"
        )
    if frozen_negative_cos.shape != (n,):
        raise ValueError(
            f"frozen_negative_cos must have shape ({n},), got {tuple(frozen_negative_cos.shape)}"
        )
    pos_logits = (cosine_matrix(anchor, positive) / temperature).float()
    neg_logits = (cosine_matrix(anchor, negative) / temperature).float()
    s = neg_logits.diagonal()
    s_frozen = frozen_negative_cos.detach().float().to(s.device) / temperature
    if form == "paper":
        own = gaussian_decay(s, s_frozen, temperature, sigma)
    else:
        target = gaussian_decay(s.detach(), s_frozen, temperature, sigma)
        own = s + (target - s.detach())
    eye = torch.eye(n, dtype=torch.bool, device=neg_logits.device)
    neg_logits = torch.where(eye, torch.diag_embed(own), neg_logits)
    logits = torch.cat([pos_logits, neg_logits], dim=1)
    labels = torch.arange(n, device=logits.device)
    return weighted_mean(F.cross_entropy(logits, labels, reduction="none"), weights)
