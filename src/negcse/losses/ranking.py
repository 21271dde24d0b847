"""Listwise ranking distillation losses (RankCSE, RLRD and their SAN combinations).

Each row of a (n, m) similarity matrix is a ranked list: the teacher's row gives the target
order, the student's row the scores. :func:`list_mle` is ListMLE (Xia et al. 2008; SAN paper
eq. 5): the negative log of the Plackett-Luce probability of the teacher's order under the
student's scores at temperature tau,

    P(pi | s, tau) = prod_i exp(s_pi(i) / tau) / sum_{j >= i} exp(s_pi(j) / tau),

mean over rows, computed as released (allRank's ``listMLE`` in both SAN trainers) with
x = s_pi / tau - max(s / tau): sum_i log(sum_{j >= i} exp(x_j) + epsilon) - x_i, epsilon 1e-7.
:func:`list_net` is ListNet's top-one cross entropy (Cao et al. 2007).
:func:`rank_consistency` is RankCSE's Jensen-Shannon consistency between the two dropout
views' similarity distributions. Scores are cosines; the temperatures are applied here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from negcse.runtime.lazy import F, torch

if TYPE_CHECKING:
    from torch import Tensor


TieBreak = Literal["random", "index"]
#: the released ListMLE's epsilon inside log(cumsum + epsilon)
LISTMLE_EPSILON = 1e-7


def _check_pair(student: Tensor, teacher: Tensor) -> None:
    if student.shape != teacher.shape or student.dim() != 2:
        raise ValueError(
            f"student and teacher must be (n, m) matrices of one shape, got "
            f"{tuple(student.shape)} and {tuple(teacher.shape)}"
        )


def _positive(name: str, value: float) -> None:
    if not value > 0:
        raise ValueError(f"{name} must be > 0, got {value}")


def teacher_order(
    teacher: Tensor, ties: TieBreak = "random", generator: torch.Generator | None = None
) -> Tensor:
    """Column indices of each row sorted by descending teacher score.

    Ties: ``"random"`` breaks them by one random column permutation shared by all rows (the
    released code's ``randperm`` before the sort; ``generator`` or torch's global RNG);
    ``"index"`` puts the lower column index first.
    """
    m = teacher.size(-1)
    if ties == "index":
        perm = torch.arange(m, device=teacher.device)
    elif ties == "random":
        perm = torch.randperm(m, generator=generator).to(teacher.device)
    else:
        raise ValueError(f"ties must be 'random' or 'index', got {ties!r}")
    order = teacher[:, perm].float().sort(dim=-1, descending=True, stable=True).indices
    return perm[order]


def list_mle(
    student: Tensor,
    teacher: Tensor,
    temperature: float,
    ties: TieBreak = "random",
    generator: torch.Generator | None = None,
    epsilon: float = LISTMLE_EPSILON,
) -> Tensor:
    """ListMLE: -log P(teacher's order | student / temperature), mean over rows.

    Row r contributes sum_i [log(sum_{j >= i} exp(x_j) + epsilon) - x_i], x = s_pi / tau minus
    the row's maximum, with pi the teacher's descending order of row r (ties as in
    :func:`teacher_order`). ``epsilon`` is the released 1e-7: a phantom item about 16 logits
    below the row's maximum that keeps pushing the lowest-ranked items up (the maximum is not
    detached, as released, since the epsilon breaks shift invariance). ``epsilon`` 0 is the exact
    Plackett-Luce likelihood. Only the teacher's order matters, so the teacher's temperature does
    not enter.
    """
    _check_pair(student, teacher)
    _positive("temperature", temperature)
    if epsilon < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    order = teacher_order(teacher, ties, generator)
    scores = student.float().gather(1, order) / temperature
    if epsilon == 0:
        scores = scores - scores.max(1, keepdim=True).values.detach()  # shift-invariant; stabler
        # log of sum_{j >= i} exp(s_pi(j)): a reversed cumulative logsumexp
        tail = scores.flip(1).logcumsumexp(1).flip(1)
        return (tail - scores).sum(1).mean()
    scores = scores - scores.max(1, keepdim=True).values
    tail = scores.exp().flip(1).cumsum(1).flip(1)
    return ((tail + epsilon).log() - scores).sum(1).mean()


def _off_diagonal(matrix: Tensor) -> Tensor:
    eye = torch.eye(matrix.size(0), matrix.size(1), dtype=torch.bool, device=matrix.device)
    return matrix.masked_fill(eye, float("-inf"))


def list_net(
    student: Tensor,
    teacher: Tensor,
    temperature: float,
    teacher_temperature: float | None = None,
    exclude_diagonal: bool = True,
) -> Tensor:
    """ListNet top-one cross entropy: -sum_j q_j log p_j per row, mean over rows, with
    q = softmax(teacher / teacher_temperature) and p = softmax(student / temperature).

    ``exclude_diagonal`` drops column i of row i from both lists (the released code sets the
    diagonal to -inf: each sentence's own positive is not ranked). ``teacher_temperature``
    defaults to ``temperature`` (the released trainer divides the teacher's cosines by the same
    ``tau2``).
    """
    _check_pair(student, teacher)
    _positive("temperature", temperature)
    t_tau = temperature if teacher_temperature is None else teacher_temperature
    _positive("teacher_temperature", t_tau)
    s = student.float() / temperature
    t = teacher.float() / t_tau
    if exclude_diagonal:
        s, t = _off_diagonal(s), _off_diagonal(t)
    log_p = F.log_softmax(s, dim=-1)
    q = F.softmax(t, dim=-1)
    terms = torch.where(q > 0, q * log_p, torch.zeros_like(q))
    return -terms.sum(1).mean()


def rank_consistency(
    anchor: Tensor, positive: Tensor, temperature: float, reference_quirks: bool = False
) -> Tensor:
    """RankCSE's ranking consistency: JSD(p_i || q_i), mean over rows, where p_i is the softmax
    of row i of cos(anchor, positive) / tau and q_i of row i of cos(positive, anchor) / tau.

    ``reference_quirks`` reproduces the released ``Divergence``: it clamps log m (not m) at
    1e-7, so every log m becomes 1e-7 and the "divergence" is -(H(p_i) + H(q_i)) / 2 - 1e-7,
    the mean entropy of the two distributions negated: minimising it flattens them and never
    compares them.
    """
    _positive("temperature", temperature)
    an, pn = F.normalize(anchor.float(), dim=-1), F.normalize(positive.float(), dim=-1)
    sim = an @ pn.T / temperature
    # the released code clamps the probabilities at 1e-7 before taking logs
    p = sim.softmax(-1).clamp(min=1e-7)
    q = sim.T.softmax(-1).clamp(min=1e-7)
    if reference_quirks:
        return (
            0.5 * ((p * p.log()).sum(1) + (q * q.log()).sum(1)).mean()
            - 1e-7 * 0.5 * (p.sum(1) + q.sum(1)).mean()
        )
    log_m = (0.5 * (p + q)).log()
    kl_p = (p * (p.log() - log_m)).sum(1)
    kl_q = (q * (q.log() - log_m)).sum(1)
    return (0.5 * (kl_p + kl_q)).mean()


def teacher_mixture(similarities: Sequence[Tensor], weights: Sequence[float | Tensor]) -> Tensor:
    """sum_k w_k * S_k: the teachers' similarity matrices mixed with weights summing to 1
    (RankCSE: alpha and 1 - alpha; RLRD: the agent's per-step weights, 0-d tensors that sum to
    1 by construction and are not read back, so the step never waits for the GPU)."""
    if len(similarities) != len(weights) or not similarities:
        raise ValueError(f"{len(similarities)} teacher matrices but {len(weights)} weights")
    numbers = [w for w in weights if not isinstance(w, torch.Tensor)]
    if len(numbers) == len(weights) and (
        any(w < 0 for w in numbers) or abs(sum(numbers) - 1.0) > 1e-6
    ):
        raise ValueError(f"teacher weights must be >= 0 and sum to 1, got {list(weights)}")
    mixed = torch.zeros_like(similarities[0], dtype=torch.float32)
    for sim, w in zip(similarities, weights, strict=True):
        mixed = mixed + w * sim.float()
    return mixed
