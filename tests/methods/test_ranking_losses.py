"""ListMLE, ListNet and RankCSE's consistency term against hand computations of their formulas
(Plackett-Luce permutation probability, top-one cross entropy, Jensen-Shannon divergence)."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

import rank_by_hand as hand
from negcse.losses.ranking import (
    list_mle,
    list_net,
    rank_consistency,
    teacher_mixture,
    teacher_order,
)


def test_plackett_luce_probabilities_sum_to_one() -> None:
    # the hand formula itself: over all 3! orders of a list the probabilities sum to 1
    s = [0.3, -0.1, 0.7]
    total = sum(
        hand.permutation_probability(s, list(p), 0.5) for p in itertools.permutations(range(3))
    )
    assert total == pytest.approx(1.0)


@pytest.mark.parametrize("tau", [1.0, 0.5, 0.05])
def test_list_mle_equals_minus_log_permutation_probability(tau: float) -> None:
    student = [[0.9, 0.2, 0.5, -0.3], [0.1, 0.8, -0.2, 0.4]]
    teacher = [[0.1, 0.7, 0.3, 0.9], [0.6, 0.2, 0.4, -0.5]]
    # teacher orders by hand: row 0 -> 3, 1, 2, 0; row 1 -> 0, 2, 1, 3
    orders = [[3, 1, 2, 0], [0, 2, 1, 3]]
    expected = (
        -sum(
            math.log(hand.permutation_probability(s, o, tau))
            for s, o in zip(student, orders, strict=True)
        )
        / 2
    )
    got = list_mle(torch.tensor(student), torch.tensor(teacher), tau, ties="index", epsilon=0)
    assert float(got) == pytest.approx(expected, rel=1e-5)


def test_list_mle_is_small_when_student_agrees_and_large_when_reversed() -> None:
    teacher = torch.tensor([[0.9, 0.5, 0.1]])
    agree = list_mle(torch.tensor([[0.9, 0.5, 0.1]]), teacher, 0.05, ties="index", epsilon=0)
    reverse = list_mle(torch.tensor([[0.1, 0.5, 0.9]]), teacher, 0.05, ties="index", epsilon=0)
    # agreeing: -log P = log(1 + e^-8 + e^-16) + log(1 + e^-8) ~ 2 e^-8
    assert float(agree) == pytest.approx(
        math.log(1 + math.exp(-8) + math.exp(-16)) + math.log(1 + math.exp(-8)), abs=1e-6
    )
    assert float(reverse) > 20


def test_list_mle_with_the_released_epsilon_on_a_four_item_list() -> None:
    """The released ``log(cumsum + 1e-7)`` (the default): teacher order 1, 2, 3, 0; the
    student's scores in that order, / tau 0.05 minus their maximum 18: x = 0, -12, -6, -16.
    Released, by hand: sum_i log(sum_{j >= i} e^{x_j} + 1e-7) - x_i, tails
    1.0024850089, 0.0024850089, 0.0024788647, 1.1253517e-07:
      0.0024820261 + 6.0025612123 + 0.0000857392 + 0.6358416658 = 6.6409706434
    Exact ListMLE (epsilon 0): 0.0024819264 + 6.0025209718 + 0.0000453989 + 0 = 6.0050482971:
    the epsilon's phantom item, e^-16.1 below the maximum, costs the last item 0.636.
    dL/dx_3 (the lowest item, not the maximum): sum_i e^{x_3} / (tail_i + eps) - 1 = -0.4704196
    released (descent pushes it up), +0.0000908 exact; dL/dcos = that / tau."""
    student = torch.tensor([[0.1, 0.9, 0.3, 0.6]], dtype=torch.float64, requires_grad=True)
    teacher = torch.tensor([[0.2, 0.8, 0.5, 0.4]], dtype=torch.float64)
    got = list_mle(student, teacher, 0.05, ties="index")
    assert float(got.detach()) == pytest.approx(6.6409706434, rel=1e-6)
    assert float(got.detach()) == pytest.approx(
        hand.list_mle(student.tolist(), [[0.2, 0.8, 0.5, 0.4]], 0.05), rel=1e-6
    )
    got.backward()
    assert student.grad is not None
    assert float(student.grad[0, 0]) == pytest.approx(-0.4704196 / 0.05, rel=1e-5)
    exact = list_mle(student.detach(), teacher, 0.05, ties="index", epsilon=0)
    assert float(exact) == pytest.approx(6.0050482971, rel=1e-6)
    with pytest.raises(ValueError, match="epsilon"):
        list_mle(student, teacher, 0.05, epsilon=-1.0)


def test_list_mle_ties_index_and_random() -> None:
    # items 0 and 2 tie in the teacher: the order is 1, then {0, 2} in either order
    student = [0.2, 0.9, 0.6]
    teacher = torch.tensor([[0.4, 0.8, 0.4]])
    tau = 0.5
    first = -math.log(hand.permutation_probability(student, [1, 0, 2], tau))
    second = -math.log(hand.permutation_probability(student, [1, 2, 0], tau))
    assert first != pytest.approx(second)
    got = list_mle(torch.tensor([student]), teacher, tau, ties="index")
    assert float(got) == pytest.approx(first, rel=1e-6)
    gen = torch.Generator().manual_seed(0)
    draws = [
        float(list_mle(torch.tensor([student]), teacher, tau, generator=gen)) for _ in range(400)
    ]
    seen = {round(d, 5) for d in draws}
    assert seen == {round(first, 5), round(second, 5)}
    share = sum(abs(d - first) < 1e-5 for d in draws) / len(draws)
    assert 0.4 < share < 0.6  # each order of the tied pair about half the time


def test_teacher_order_breaks_ties_by_one_shared_permutation() -> None:
    teacher = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    for seed in range(5):
        order = teacher_order(teacher, "random", torch.Generator().manual_seed(seed))
        assert order[0].tolist() == order[1].tolist()
        assert order[0, 2] == 2


@pytest.mark.parametrize(
    ("tau", "t_tau", "skip"), [(0.05, 0.05, True), (0.5, 0.25, True), (1.0, 2.0, False)]
)
def test_list_net_equals_top_one_cross_entropy(tau: float, t_tau: float, skip: bool) -> None:
    student = [[0.9, 0.2, 0.5], [0.1, 0.8, -0.2], [0.3, -0.4, 0.7]]
    teacher = [[1.0, 0.6, 0.1], [0.2, 1.0, 0.5], [0.4, 0.3, 1.0]]
    got = list_net(torch.tensor(student), torch.tensor(teacher), tau, t_tau, exclude_diagonal=skip)
    assert float(got) == pytest.approx(hand.list_net(student, teacher, tau, t_tau, skip), rel=1e-5)


A = [[1.0, 0.2, -0.3], [0.1, 0.9, 0.4], [-0.5, 0.3, 0.8]]
P = [[0.9, 0.1, -0.2], [0.2, 1.0, 0.1], [-0.4, 0.5, 0.7]]


@pytest.mark.parametrize("tau", [0.05, 0.5])
def test_rank_consistency_is_jensen_shannon(tau: float) -> None:
    got = rank_consistency(torch.tensor(A), torch.tensor(P), tau)
    assert float(got) == pytest.approx(hand.js_consistency(A, P, tau), rel=1e-4, abs=1e-7)
    assert float(got) > 1e-4  # the two views differ
    # identical views: cos(a, a) is symmetric, so p_i = q_i and the divergence is 0
    same = torch.tensor(A)
    assert float(rank_consistency(same, same, tau)) == pytest.approx(0.0, abs=1e-6)


def test_rank_consistency_reference_quirk_is_negative_mean_entropy() -> None:
    tau = 0.5
    total = 0.0
    for i in range(3):
        p = hand.softmax([hand.cos(A[i], P[j]) / tau for j in range(3)])
        q = hand.softmax([hand.cos(P[i], A[j]) / tau for j in range(3)])
        h_p = -sum(x * math.log(x) for x in p)
        h_q = -sum(y * math.log(y) for y in q)
        total += -(h_p + h_q) / 2 - 1e-7
    got = rank_consistency(torch.tensor(A), torch.tensor(P), tau, reference_quirks=True)
    assert float(got) == pytest.approx(total / 3, rel=1e-5)
    assert float(got) < 0  # a "divergence" below zero: the quirk is not a divergence


def test_teacher_mixture_weights_and_errors() -> None:
    s1, s2 = torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 1.0]])
    mixed = teacher_mixture([s1, s2], [0.33, 0.67])
    assert mixed[0].tolist() == pytest.approx([0.33, 0.67])
    with pytest.raises(ValueError, match="sum to 1"):
        teacher_mixture([s1, s2], [0.5, 0.6])
    with pytest.raises(ValueError, match="2 teacher matrices but 1 weights"):
        teacher_mixture([s1, s2], [1.0])


def test_shape_and_temperature_errors() -> None:
    with pytest.raises(ValueError, match="one shape"):
        list_mle(torch.zeros(2, 3), torch.zeros(2, 2), 0.05)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        list_net(torch.zeros(2, 2), torch.zeros(2, 2), 0.0)
    with pytest.raises(ValueError, match="ties must be"):
        list_mle(torch.zeros(2, 2), torch.zeros(2, 2), 0.05, ties="first")  # type: ignore[arg-type]
