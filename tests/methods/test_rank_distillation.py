"""SAN paper eq. 6 (RankCSE+SAN) and eq. 7 (RLRD+SAN), and the two baselines without SAN,
assembled with their weights and checked against hand computations of every term."""

from __future__ import annotations

import pytest
import torch

import rank_by_hand as hand
from negcse.losses.rank_distillation import (
    DistillationWeights,
    distillation_loss,
    teacher_similarities,
)
from negcse.methods.base import StepContext
from negcse.methods.registry import build_method
from rank_by_hand import T1, T2, A, N, P, S


def _t(x: list[list[float]]) -> torch.Tensor:
    return torch.tensor(x)


def _teachers(alpha: float) -> tuple[list[list[float]], list[list[float]]]:
    pairs = [(T1["sentence"], T1["sentence"]), (T2["sentence"], T2["sentence"])]
    main = hand.mixed_similarities(pairs, [alpha, 1 - alpha])
    san_pairs = [(T1["sentence"], T1["san"]), (T2["sentence"], T2["san"])]
    return main, hand.mixed_similarities(san_pairs, [alpha, 1 - alpha])


def _student_lists() -> tuple[list[list[float]], list[list[float]]]:
    main = [[hand.cos(a, p) for p in P] for a in A]
    san = [[hand.cos(a, s) for s in S] for a in A]
    return main, san


def _torch_teachers(alpha: float) -> tuple[torch.Tensor, torch.Tensor]:
    teachers = [{k: _t(v) for k, v in t.items()} for t in (T1, T2)]
    weights = [alpha, 1 - alpha]
    return (
        teacher_similarities(teachers, weights, "sentence", "sentence"),
        teacher_similarities(teachers, weights, "sentence", "san"),
    )


def _loss(alpha: float, weights: DistillationWeights, with_san: bool, **kw):
    """distillation_loss on the batch above with teachers mixed at (alpha, 1 - alpha)."""
    g_main, g_san = _torch_teachers(alpha)
    san = {"san": _t(S), "teacher_san": g_san} if with_san else {}
    return distillation_loss(_t(A), _t(P), g_main, weights=weights, **san, **kw)


def test_teacher_similarities_mix_cosines() -> None:
    main, san = _teachers(0.33)
    got_main, got_san = _torch_teachers(0.33)
    assert got_main.flatten().tolist() == pytest.approx([x for row in main for x in row], rel=1e-6)
    assert got_san.flatten().tolist() == pytest.approx([x for row in san for x in row], rel=1e-6)
    # each teacher ranks every sentence first in its own list (cos = 1 on the diagonal)
    assert [max(range(3), key=lambda j, r=r: main[r][j]) for r in range(3)] == [0, 1, 2]


@pytest.mark.parametrize(
    ("beta", "gamma", "lam", "tau1", "tau2", "tau_rank"),
    [
        (1.0, 1.0, 0.4, 0.05, 0.05, 0.05),  # Table 6 / released BERT-base script 4184
        (0.5, 2.0, 0.15, 0.05, 0.08, 0.1),  # other weights: each must move the sum
    ],
)
def test_eq6_rankcse_san(beta, gamma, lam, tau1, tau2, tau_rank) -> None:
    t_main, t_san = _teachers(0.33)
    s_main, s_san = _student_lists()
    expected = (
        hand.hince(A, P, S, tau1, tau2)
        + beta * hand.js_consistency(A, P, tau1)
        + gamma * hand.list_mle(s_main, t_main, tau_rank)
        + gamma * lam * hand.list_mle(s_san, t_san, tau2)  # tau3 = tau2, as released
    )
    weights = DistillationWeights(consistency=beta, rank=gamma, san_rank=lam)
    loss, parts = _loss(0.33, weights, True, temperature=tau1, rank_temperature=tau_rank, tau2=tau2)
    assert float(loss) == pytest.approx(expected, rel=1e-5)
    assert set(parts) == {"hince", "consistency", "rank", "rank_san"}
    assert float(parts["rank_san"]) == pytest.approx(hand.list_mle(s_san, t_san, tau2), rel=1e-5)


def test_rankcse_without_san_is_infonce_consistency_listmle() -> None:
    t_main, _ = _teachers(0.33)
    s_main, _ = _student_lists()
    expected = (
        hand.hince(A, P, None, 0.05, 1.0)
        + hand.js_consistency(A, P, 0.05)
        + hand.list_mle(s_main, t_main, 0.05)
    )
    weights = DistillationWeights(consistency=1.0, rank=1.0)
    loss, parts = _loss(0.33, weights, False, temperature=0.05, rank_temperature=0.05)
    assert float(loss) == pytest.approx(expected, rel=1e-5)
    assert set(parts) == {"infonce", "consistency", "rank"}


def test_rankcse_listnet_variant() -> None:
    t_main, _ = _teachers(0.33)
    s_main, _ = _student_lists()
    expected = hand.hince(A, P, None, 0.05, 1.0) + hand.list_net(s_main, t_main, 0.05, 0.05, True)
    weights = DistillationWeights(rank=1.0)
    loss, _ = _loss(0.33, weights, False, temperature=0.05, rank_temperature=0.05, kind="listnet")
    assert float(loss) == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize(
    ("mu", "gamma", "lam"),
    [
        (1e-3, 1e-3, 0.2),  # released 20101 (BERT-base): lambda_ 1e-3, t_lmb 1e-3, ps weight 0.2
        (0.7, 0.3, 0.2),  # weights large enough that each term shows in the sum
    ],
)
def test_eq7_rlrd_san(mu, gamma, lam) -> None:
    tau1, tau2 = 0.05, 0.1
    t_main, t_san = _teachers(0.5)
    s_main, s_san = _student_lists()
    expected = (
        mu * hand.bml(A, P, N, 0.1, 0.3)
        + gamma * hand.list_mle(s_main, t_main, tau1)
        + hand.hince(A, P, S, tau1, tau2)  # zeta = 1
        + gamma * lam * hand.list_mle(s_san, t_san, tau2)
    )
    weights = DistillationWeights(bml=mu, rank=gamma, san_rank=lam)
    loss, parts = _loss(
        0.5, weights, True, temperature=tau1, rank_temperature=tau1, tau2=tau2, negation=_t(N)
    )
    assert float(loss) == pytest.approx(expected, rel=1e-5)
    assert set(parts) == {"hince", "bml", "rank", "rank_san"}
    assert float(parts["bml"]) > 0  # the margin band is active on this batch


def test_rlrd_without_san() -> None:
    t_main, _ = _teachers(0.5)
    s_main, _ = _student_lists()
    expected = (
        hand.hince(A, P, None, 0.05, 1.0)
        + 0.5 * hand.bml(A, P, N, 0.1, 0.3)
        + 0.25 * hand.list_mle(s_main, t_main, 0.05)
    )
    weights = DistillationWeights(bml=0.5, rank=0.25)
    loss, _ = _loss(0.5, weights, False, temperature=0.05, rank_temperature=0.05, negation=_t(N))
    assert float(loss) == pytest.approx(expected, rel=1e-5)


def test_missing_inputs_are_named() -> None:
    g_main, _ = _torch_teachers(0.5)
    common = {"temperature": 0.05, "rank_temperature": 0.05}
    with pytest.raises(ValueError, match="negation view"):
        distillation_loss(_t(A), _t(P), g_main, weights=DistillationWeights(bml=1.0), **common)
    with pytest.raises(ValueError, match="SAN view"):
        distillation_loss(_t(A), _t(P), g_main, weights=DistillationWeights(san_rank=0.4), **common)
    with pytest.raises(ValueError, match="tau2"):
        distillation_loss(_t(A), _t(P), g_main, weights=DistillationWeights(), san=_t(S), **common)
    with pytest.raises(KeyError, match="teacher 2 has no embeddings of column"):
        teacher_similarities(
            [{"sentence": _t(A)}, {"other": _t(A)}], [0.5, 0.5], "sentence", "sentence"
        )
    with pytest.raises(ValueError, match="weight bml must be >= 0"):
        DistillationWeights(bml=-1.0)


@pytest.mark.parametrize(("teacher_tau", "student_tau_for_teachers"), [(0.05, False), (0.1, True)])
def test_rlrd_san_listnet_temperatures(teacher_tau: float, student_tau_for_teachers: bool) -> None:
    """Released RLRD+SAN (20101): the student's SAN list cos(z1, z4) / scd_temp (tau2 0.1), the
    teachers' SAN list cos / z1_z4_tau2 (0.05); the main lists both at 0.05 (temp, tau2).
    ``san_teacher_temperature: null`` puts the teachers' SAN list at the student's 0.1."""
    settings = {"distillation": "listnet", "weighting": "fixed", "teacher_weight": 0.5}
    if student_tau_for_teachers:
        settings["san_teacher_temperature"] = None
    method = build_method("rlrd_san", settings, "bert-base-uncased")
    emb = {"anchor": _t(A), "positive": _t(P), "negation": _t(N), "san": _t(S)}
    # the teachers' prompt-wrapped encodings: anchor and positive prompt as T*["sentence"]
    guides = {
        name: {"anchor": _t(t["sentence"]), "positive": _t(t["sentence"]), "san": _t(t["san"])}
        for name, t in (("teacher1", T1), ("teacher2", T2))
    }
    out = method.loss(emb, StepContext(0, None, "b", guides=guides))
    t_main, t_san = _teachers(0.5)
    s_main, s_san = _student_lists()
    assert float(out.logs["rank"]) == pytest.approx(
        hand.list_net(s_main, t_main, 0.05, 0.05, True), rel=1e-5
    )
    assert float(out.logs["rank_san"]) == pytest.approx(
        hand.list_net(s_san, t_san, 0.1, teacher_tau, True), rel=1e-5
    )
    other = 0.1 if teacher_tau == 0.05 else 0.05
    assert float(out.logs["rank_san"]) != pytest.approx(
        hand.list_net(s_san, t_san, 0.1, other, True), rel=1e-3
    )
