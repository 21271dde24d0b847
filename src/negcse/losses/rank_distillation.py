"""The losses of RankCSE, RLRD and their SAN combinations (SAN paper eq. 6 and 7), assembled.

Both released trainers (``bcai01/SAN``: ``models/rankcse``, ``models/rlrd``) compute one sum,

    L = contrastive + beta * L_consistency + mu * L_BML
        + gamma * (L_rank(teacher, student) + lambda * L_rank(teacher_SAN, student_SAN))

- contrastive: InfoNCE, or HiNCE (eq. 2) when SAN samples are given;
- L_consistency: RankCSE's JS consistency between the two dropout views (RankCSE only);
- L_BML: SNCSE's bidirectional margin loss over the negation (RLRD only);
- L_rank: ListMLE (or ListNet) of each anchor's in-batch list cos(h_i, h_j+) at
  ``rank_temperature`` against the mixed teachers' order of cos(t_i, t_j);
- L_rank over SAN (eq. 5): the list cos(h_i, h_j-) at ``san_rank_temperature`` against the
  teachers' order of cos(t_i, t_j-) (ListNet: the teachers' list at
  ``san_teacher_temperature``, the released ``z1_z3_tau2`` / ``z1_z4_tau2`` 0.05). The released
  code scales it by lambda *inside* the distillation term (``kd = lambda * kd_san + kd``, then
  ``gamma * kd``), so eq. 6's lambda and eq. 7's beta are ``gamma * lambda`` here; the paper's
  Table 6 value is ``lambda``.

RankCSE (eq. 6): beta 1, mu 0, gamma 1, lambda 0.4. RLRD (eq. 7): beta 0, mu 1e-3, gamma 1e-3
(``t_lmb``), lambda 0.2.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from negcse.losses import bidirectional_margin_loss, cosine_matrix, hierarchical_info_nce
from negcse.losses.ranking import (
    LISTMLE_EPSILON,
    list_mle,
    list_net,
    rank_consistency,
    teacher_mixture,
)

if TYPE_CHECKING:
    from torch import Tensor

RankLoss = Literal["listmle", "listnet"]


@dataclass(frozen=True)
class DistillationWeights:
    """The weights of the sum above (names as in the module docstring)."""

    consistency: float = 0.0  # beta
    bml: float = 0.0  # mu
    rank: float = 1.0  # gamma
    san_rank: float = 0.0  # lambda, relative to gamma

    def __post_init__(self) -> None:
        for name in ("consistency", "bml", "rank", "san_rank"):
            if getattr(self, name) < 0:
                raise ValueError(f"weight {name} must be >= 0, got {getattr(self, name)}")


def teacher_similarities(
    teachers: Sequence[Mapping[str, Tensor]],
    weights: Sequence[float | Tensor],
    rows: str,
    cols: str,
) -> Tensor:
    """sum_k w_k cos(T_k[rows], T_k[cols]): the teachers' similarity lists, mixed.

    ``teachers[k]`` maps a column name to teacher k's (batch, dim) embeddings of it.
    """
    sims = []
    for k, teacher in enumerate(teachers):
        missing = [c for c in (rows, cols) if c not in teacher]
        if missing:
            raise KeyError(f"teacher {k + 1} has no embeddings of column(s) {missing}")
        sims.append(cosine_matrix(teacher[rows].float(), teacher[cols].float()))
    return teacher_mixture(sims, weights)


def rank_loss(
    kind: RankLoss,
    student: Tensor,
    teacher: Tensor,
    temperature: float,
    *,
    teacher_temperature: float | None = None,
    epsilon: float = LISTMLE_EPSILON,
) -> Tensor:
    """ListMLE (with ``epsilon``) or ListNet of ``student`` cosines at ``temperature`` against
    ``teacher`` (ListNet: at ``teacher_temperature``, default ``temperature``; ListMLE reads
    the teacher's order only)."""
    if kind == "listmle":
        return list_mle(student, teacher, temperature, epsilon=epsilon)
    if kind == "listnet":
        return list_net(student, teacher, temperature, teacher_temperature)
    raise ValueError(f"unknown ranking loss {kind!r}; known: listmle, listnet")


def distillation_loss(
    anchor: Tensor,
    positive: Tensor,
    teacher: Tensor,
    *,
    weights: DistillationWeights,
    temperature: float,
    rank_temperature: float,
    kind: RankLoss = "listmle",
    san: Tensor | None = None,
    tau2: float | None = None,
    teacher_san: Tensor | None = None,
    san_rank_temperature: float | None = None,
    san_teacher_temperature: float | None = None,
    listmle_epsilon: float = LISTMLE_EPSILON,
    negation: Tensor | None = None,
    bml_margins: tuple[float, float] = (0.1, 0.3),
    reference_quirks: bool = False,
) -> tuple[Tensor, dict[str, Tensor]]:
    """The sum in the module docstring and its detached parts (for the logs).

    ``teacher``: the mixed teachers' (batch, batch) similarities of the sentences; with ``san``
    (the SAN view) HiNCE at ``tau2`` replaces InfoNCE and, when ``weights.san_rank`` > 0,
    ``teacher_san`` (sentences x SAN samples) is required. ``negation`` is required when
    ``weights.bml`` > 0. ``reference_quirks`` turns the consistency term into the released
    entropy term (see :func:`negcse.losses.ranking.rank_consistency`). ``listmle_epsilon``:
    ListMLE's released 1e-7 (0: exact Plackett-Luce); ``san_teacher_temperature``: ListNet's
    temperature of the teachers' SAN list (None: the student's SAN temperature).
    """
    parts: dict[str, Tensor] = {}
    if san is not None and tau2 is None:
        raise ValueError("tau2 (HiNCE's SAN temperature) is required with SAN samples")
    contrastive = hierarchical_info_nce(anchor, positive, temperature, san, tau2)
    parts["hince" if san is not None else "infonce"] = contrastive
    loss = contrastive
    if weights.consistency > 0:
        cons = rank_consistency(anchor, positive, temperature, reference_quirks)
        parts["consistency"] = cons
        loss = loss + weights.consistency * cons
    if weights.bml > 0:
        if negation is None:
            raise ValueError("the BML term needs the negation view")
        bml = bidirectional_margin_loss(anchor, positive, negation, *bml_margins)
        parts["bml"] = bml
        loss = loss + weights.bml * bml
    rank = rank_loss(
        kind, cosine_matrix(anchor, positive), teacher, rank_temperature, epsilon=listmle_epsilon
    )
    parts["rank"] = rank
    if weights.san_rank > 0:
        if san is None or teacher_san is None:
            raise ValueError("the SAN ranking term needs the SAN view and the teachers' SAN lists")
        san_tau = tau2 if san_rank_temperature is None else san_rank_temperature
        assert san_tau is not None
        rank_san = rank_loss(
            kind,
            cosine_matrix(anchor, san),
            teacher_san,
            san_tau,
            teacher_temperature=san_teacher_temperature,
            epsilon=listmle_epsilon,
        )
        parts["rank_san"] = rank_san
        rank = rank + weights.san_rank * rank_san
    loss = loss + weights.rank * rank
    return loss, {k: v.detach() for k, v in parts.items()}
