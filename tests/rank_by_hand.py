"""Hand computations (plain Python floats) of the formulas the ranking tests check against, and
the small batch they check them on (student views, two teachers)."""

from __future__ import annotations

import math

Vec = list[float]


def cos(u: Vec, v: Vec) -> float:
    dot = sum(a * b for a, b in zip(u, v, strict=True))
    return dot / math.sqrt(sum(a * a for a in u) * sum(b * b for b in v))


def softmax(xs: list[float]) -> list[float]:
    m = max(xs)
    e = [math.exp(x - m) for x in xs]
    return [x / sum(e) for x in e]


def permutation_probability(scores: list[float], order: list[int], tau: float) -> float:
    """P(pi | s, tau) = prod_i e^{s_pi(i)/tau} / sum_{j>=i} e^{s_pi(j)/tau} (SAN eq. 5)."""
    prob = 1.0
    for i, item in enumerate(order):
        rest = order[i:]
        prob *= math.exp(scores[item] / tau) / sum(math.exp(scores[k] / tau) for k in rest)
    return prob


def list_mle(
    student: list[list[float]], teacher: list[list[float]], tau: float, eps: float = 1e-7
) -> float:
    """Mean over rows of the released ListMLE (no ties): with x the student row in the teacher's
    descending order, / tau, minus its maximum, sum_i log(sum_{j >= i} e^{x_j} + eps) - x_i;
    eps 0 is -log P(teacher's order | student row, tau)."""
    total = 0.0
    for s_row, t_row in zip(student, teacher, strict=True):
        order = sorted(range(len(t_row)), key=lambda j: -t_row[j])
        if eps == 0:
            total -= math.log(permutation_probability(s_row, order, tau))
            continue
        x = [s_row[j] / tau for j in order]
        x = [v - max(x) for v in x]
        total += sum(math.log(sum(math.exp(v) for v in x[i:]) + eps) - x[i] for i in range(len(x)))
    return total / len(student)


def list_net(student, teacher, tau: float, t_tau: float, skip_diag: bool) -> float:
    """Mean over rows of -sum_j softmax(t/t_tau)_j log softmax(s/tau)_j."""
    total = 0.0
    for i, (s_row, t_row) in enumerate(zip(student, teacher, strict=True)):
        cols = [j for j in range(len(s_row)) if not (skip_diag and j == i)]
        zs = sum(math.exp(s_row[j] / tau) for j in cols)
        zt = sum(math.exp(t_row[j] / t_tau) for j in cols)
        for j in cols:
            q = math.exp(t_row[j] / t_tau) / zt
            total -= q * math.log(math.exp(s_row[j] / tau) / zs)
    return total / len(student)


def js_consistency(a: list[Vec], p: list[Vec], tau: float) -> float:
    """Mean over rows of JSD(softmax(cos(a_i, p_.)/tau) || softmax(cos(p_i, a_.)/tau))."""
    total = 0.0
    n = len(a)
    for i in range(n):
        pi = softmax([cos(a[i], p[j]) / tau for j in range(n)])
        qi = softmax([cos(p[i], a[j]) / tau for j in range(n)])
        m = [(x + y) / 2 for x, y in zip(pi, qi, strict=True)]
        total += 0.5 * sum(x * math.log(x / z) for x, z in zip(pi, m, strict=True))
        total += 0.5 * sum(y * math.log(y / z) for y, z in zip(qi, m, strict=True))
    return total / n


def hince(a: list[Vec], p: list[Vec], s: list[Vec] | None, tau1: float, tau2: float) -> float:
    """-1/N sum_i log e^{cos(a_i,p_i)/t1} / sum_j (e^{cos(a_i,p_j)/t1} + e^{cos(a_i,s_j)/t2})."""
    total = 0.0
    for i, ai in enumerate(a):
        num = math.exp(cos(ai, p[i]) / tau1)
        den = sum(math.exp(cos(ai, pj) / tau1) for pj in p)
        den += sum(math.exp(cos(ai, sj) / tau2) for sj in (s or []))
        total -= math.log(num / den)
    return total / len(a)


def bml(a: list[Vec], p: list[Vec], neg: list[Vec], alpha: float, beta: float) -> float:
    """Mean of ReLU(d + alpha) + ReLU(-d - beta), d = cos(a, neg) - cos(a, p) (SNCSE)."""
    total = 0.0
    for ai, pi, ni in zip(a, p, neg, strict=True):
        d = cos(ai, ni) - cos(ai, pi)
        total += max(d + alpha, 0.0) + max(-d - beta, 0.0)
    return total / len(a)


def mixed_similarities(teachers: list[tuple[list[Vec], list[Vec]]], weights: list[float]):
    """sum_k w_k cos(rows_k[i], cols_k[j]) for teachers given as (rows, cols) embeddings."""
    n, m = len(teachers[0][0]), len(teachers[0][1])
    return [
        [
            sum(w * cos(r[i], c[j]) for (r, c), w in zip(teachers, weights, strict=True))
            for j in range(m)
        ]
        for i in range(n)
    ]


# a batch of 3 sentences, 3-d embeddings: student views and two teachers' embeddings
A = [[1.0, 0.2, -0.3], [0.1, 0.9, 0.4], [-0.5, 0.3, 0.8]]  # anchor
P = [[0.9, 0.1, -0.2], [0.2, 1.0, 0.1], [-0.4, 0.5, 0.7]]  # dropout positive
S = [[0.7, -0.4, 0.1], [0.3, 0.6, -0.5], [-0.2, -0.1, 0.9]]  # SAN samples
N = [[0.8, 0.5, -0.1], [0.4, 0.7, 0.6], [-0.6, 0.1, 0.5]]  # negations (RLRD's soft negatives)
T1 = {
    "sentence": [[0.3, 0.9, 0.1], [0.5, 0.2, 0.8], [0.9, 0.1, 0.4]],
    "san": [[0.2, 0.8, 0.5], [0.6, 0.1, 0.3], [0.7, 0.4, 0.2]],
}
T2 = {
    "sentence": [[0.1, 0.4, 0.9], [0.8, 0.6, 0.1], [0.2, 0.9, 0.3]],
    "san": [[0.5, 0.5, 0.1], [0.1, 0.3, 0.9], [0.9, 0.2, 0.6]],
}
