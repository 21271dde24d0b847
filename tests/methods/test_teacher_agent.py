"""RLRD's teacher-weighting agent (negcse.methods.teacher_agent) against hand computations: the
Beta policy's parameters, the weights, the advantages (fixed and released), the clipped PPO
objective, the released quirks, and the rlrd loss at the agent's weights."""

from __future__ import annotations

import math

import pytest
import torch

import rank_by_hand as hand
from negcse.methods.base import StepContext
from negcse.methods.registry import build_method
from negcse.methods.teacher_agent import (
    BETA_OFFSET,
    GAE_LAMBDA,
    GAMMA,
    HIDDEN,
    AgentSettings,
    BetaPolicy,
    Critic,
    State,
    TeacherAgent,
    Transition,
    advantages,
    ppo_objective,
    ppo_update,
    teacher_weights,
)
from rank_by_hand import T1, T2, A, N, P


def _softplus(x: float) -> float:
    return math.log1p(math.exp(x))


def _state(b: int, dim: int, seed: int) -> State:
    g = torch.Generator().manual_seed(seed)
    return State(
        torch.randn(2, b, dim, generator=g),
        torch.randn(2, b, b, generator=g),
        torch.randn(1, 2, generator=g),
    )


def test_beta_parameters_equal_a_hand_computation() -> None:
    """alpha = mean over the 2 b rows of softplus(relu(x1 W1 + x2 W2[:b] + x3 W3 + bias) w_a)
    + 50; a batch of 3 uses the first 3 rows of a W2 built for 4."""
    torch.manual_seed(5)
    policy = BetaPolicy(dim=3, width=4)
    state = _state(b=3, dim=3, seed=1)
    x1, x2, x3 = (t.tolist() for t in state)
    w1, w2, w3 = (m.tolist() for m in (policy.inputs.W1, policy.inputs.W2, policy.inputs.W3))
    bias = policy.inputs.b.tolist()[0]
    heads = [policy.alpha.squeeze(1).tolist(), policy.beta.squeeze(1).tolist()]
    sums = [0.0, 0.0]
    for v in range(2):
        for i in range(3):
            h = [
                max(
                    0.0,
                    sum(x1[v][i][d] * w1[d][j] for d in range(3))
                    + sum(x2[v][i][c] * w2[c][j] for c in range(3))
                    + sum(x3[0][t] * w3[t][j] for t in range(2))
                    + bias[j],
                )
                for j in range(HIDDEN)
            ]
            for k in range(2):
                sums[k] += _softplus(sum(h[j] * heads[k][j] for j in range(HIDDEN)))
    expected = [s / 6 + BETA_OFFSET for s in sums]
    assert policy(state).tolist() == pytest.approx(expected, rel=1e-5)
    with pytest.raises(ValueError, match="batches of 4 got a batch of 5"):
        policy(_state(b=5, dim=3, seed=2))


def test_weights_are_each_action_over_their_sum() -> None:
    assert teacher_weights(torch.tensor([0.3, 0.6])).tolist() == pytest.approx([1 / 3, 2 / 3])


def test_advantages_fixed_and_released() -> None:
    r, v = [-1.0, -2.0, -0.5], [0.4, -0.3, 0.2]
    d0 = r[0] + GAMMA * v[1] - v[0]
    d1 = r[1] + GAMMA * v[2] - v[1]
    assert advantages(r, v) == pytest.approx([d0 + GAMMA * GAE_LAMBDA * d1, d1, 0.0])
    q0 = 0.99 * (r[0] + GAMMA * v[1] * -v[0])  # the released product and plain sum
    q1 = 0.99 * (r[1] + GAMMA * v[2] * -v[1])
    assert advantages(r, v, released=True) == pytest.approx([q0 + q1, q1, 0.0])


def _beta_log_pdf(x: float, a: float, b: float) -> float:
    norm = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    return (a - 1) * math.log(x) + (b - 1) * math.log(1 - x) - norm


def test_clipped_ppo_objective_equals_a_hand_computation() -> None:
    new = [[60.0, 50.0], [50.0, 58.0], [52.0, 51.0]]
    old = [[50.0, 50.0], [50.0, 50.0], [51.0, 51.0]]
    actions, adv = [0.6, 0.6, 0.48], [1.5, -2.0, 0.7]
    predicted, returns = [0.1, -0.4, 0.3], [0.5, -1.0, 0.0]
    terms, ratios = [], []
    for (a, b), (oa, ob), x, A_ in zip(new, old, actions, adv, strict=True):
        ratio = math.exp(_beta_log_pdf(x, a, b) - _beta_log_pdf(x, oa, ob))
        ratios.append(ratio)
        terms.append(min(ratio * A_, min(max(ratio, 0.8), 1.2) * A_))
    # the clip binds on the first two (ratio > 1.2 with A > 0, < 0.8 with A < 0), not the third
    assert ratios[0] > 1.2 and ratios[1] < 0.8 and 0.8 < ratios[2] < 1.2
    assert terms[:2] == pytest.approx([1.2 * adv[0], 0.8 * adv[1]])
    value = sum((r - p) ** 2 for r, p in zip(returns, predicted, strict=True)) / 3
    expected = -sum(terms) / 3 + 0.5 * value
    old_log = [_beta_log_pdf(x, *o) for x, o in zip(actions, old, strict=True)]
    args = (new, old_log, actions, adv, predicted, returns)  # float64: lgamma(110) is ~400
    got = ppo_objective(*(torch.tensor(x, dtype=torch.float64) for x in args))
    assert float(got) == pytest.approx(expected, rel=1e-5)


def test_ppo_update_raises_the_advantaged_action_and_fits_the_critic() -> None:
    torch.manual_seed(0)
    policy, critic = BetaPolicy(2, 3), Critic(2, 3)
    opt = torch.optim.Adam(critic.parameters(), lr=3e-4)
    states = [_state(3, 2, seed) for seed in range(3)]
    with torch.no_grad():
        params = [policy(s) for s in states]
        values = [critic(s) for s in states]
    rewards = [torch.tensor(5.0), torch.tensor(-5.0), torch.tensor(0.0)]
    actions = [torch.tensor(0.45), torch.tensor(0.55), torch.tensor(0.5)]
    memory = [
        Transition(s, a, p, r, v)
        for s, a, p, r, v in zip(states, actions, params, rewards, values, strict=True)
    ]
    adv = advantages([5.0, -5.0, 0.0], [float(v) for v in values])
    assert adv[0] > 0 > adv[1]

    @torch.no_grad()
    def log_prob(k: int) -> float:
        a, b = policy(states[k]).tolist()
        return _beta_log_pdf(float(actions[k]), a, b)

    returns = [a + float(v) for a, v in zip(adv, values, strict=True)]

    @torch.no_grad()
    def critic_error() -> float:
        return sum((r - float(critic(s))) ** 2 for r, s in zip(returns, states, strict=True))

    before, error = [log_prob(0), log_prob(1)], critic_error()
    ppo_update(policy, critic, opt, memory, policy_lr=1e-3)
    assert log_prob(0) > before[0] and log_prob(1) < before[1]
    assert critic_error() < error


def _agent(released: bool, update_steps: int = 100) -> TeacherAgent:
    return TeacherAgent(AgentSettings(update_steps=update_steps, released=released))


def _pair(b: int, seed: int) -> tuple[State, State]:
    s = _state(b, 4, seed)
    return s, State(s.views, s.teachers.flip(0), s.losses)


def test_fixed_agent_pairs_each_state_with_its_action_and_own_critic() -> None:
    torch.manual_seed(0)
    agent = _agent(released=False)
    agent.act(_pair(3, 0))
    agent.learn(torch.tensor(-1.0))
    agent.critics[1].mlp[-1].bias.data += 1.0  # the two critics now disagree
    states = _pair(2, 1)  # a smaller (last) batch: the agent acts on it
    agent.act(states)
    step = agent.current
    assert step is not None and step.states is states
    agent.learn(torch.tensor(-2.0))
    for k in range(2):
        t = agent.memory[k][-1]
        assert t.state is states[k] and torch.equal(t.action, step.actions[k])
        with torch.no_grad():
            assert float(t.value) == pytest.approx(float(agent.critics[k](states[k])))
    assert [len(m) for m in agent.memory] == [2, 2]


def test_released_agent_quirks() -> None:
    torch.manual_seed(0)
    agent = _agent(released=True)
    with pytest.raises(ValueError, match="needs batch_size 128; got a batch of 64"):
        agent.act(_pair(64, 0))
    first, second = _pair(128, 1), _pair(128, 2)
    agent.act(first)
    agent.learn(torch.tensor(-1.0))
    assert [len(m) for m in agent.memory] == [0, 0]  # no previous state yet
    agent.critics[1].mlp[-1].bias.data += 1.0
    w = agent.act(second)
    agent.learn(torch.tensor(-2.0))
    step = agent.current
    assert step is not None
    for k in range(2):
        t = agent.memory[k][-1]
        assert t.state is first[k]  # the previous step's state with this step's action
        assert torch.equal(t.action, step.actions[k])
        with torch.no_grad():  # both values from critic 1
            assert float(t.value) == pytest.approx(float(agent.critics[0](second[k])))
    assert torch.equal(agent.act(_pair(64, 3)), w)  # a smaller batch reuses the last actions


def _rlrd(weighting: str, teacher_inputs: str = "prompts"):
    params = {
        "bml_weight": 0.5,
        "distillation_weight": 0.25,
        "weighting": weighting,
        "teacher_inputs": teacher_inputs,
    }
    method = build_method("rlrd", params, "bert-base-uncased")
    method.attach(torch.nn.Module())  # as the trainer does before the first step (builds the agent)
    return method


def _rlrd_loss(method) -> float:
    """The teachers' encodings: of the anchor prompt (T*["sentence"]) and of the positive
    prompt (T*["san"], another vector), or of the bare sentence (T*["sentence"])."""
    emb = {"anchor": torch.tensor(A), "positive": torch.tensor(P), "negation": torch.tensor(N)}
    guides = {
        name: {
            "anchor": torch.tensor(t["sentence"]),
            "positive": torch.tensor(t["san"]),
            "sentence": torch.tensor(t["sentence"]),
        }
        for name, t in (("teacher1", T1), ("teacher2", T2))
    }
    return float(method.loss(emb, StepContext(0, None, "b", guides=guides)).loss)


def _expected(alpha: float, prompts: bool = True) -> float:
    """InfoNCE + 0.5 BML + 0.25 ListMLE against the teachers mixed at (alpha, 1 - alpha): each
    teacher's list cos(anchor prompt_i, positive prompt_j) (released) or cos(x_i, x_j)."""
    col = "san" if prompts else "sentence"
    pairs = [(T1["sentence"], T1[col]), (T2["sentence"], T2[col])]
    teacher = hand.mixed_similarities(pairs, [alpha, 1 - alpha])
    student = [[hand.cos(a, p) for p in P] for a in A]
    return (
        hand.hince(A, P, None, 0.05, 1.0)
        + 0.5 * hand.bml(A, P, N, 0.1, 0.3)
        + 0.25 * hand.list_mle(student, teacher, 0.05)
    )


def test_rlrd_loss_at_fixed_and_agent_weights() -> None:
    fixed = _rlrd("fixed")
    assert _rlrd_loss(fixed) == pytest.approx(_expected(0.5), rel=1e-5)
    assert fixed.state_dict() == {}
    bare = _rlrd_loss(_rlrd("fixed", "sentence"))
    assert bare == pytest.approx(_expected(0.5, prompts=False), rel=1e-5)
    assert bare != pytest.approx(_expected(0.5), rel=1e-3)
    torch.manual_seed(0)
    agent = _rlrd("agent")
    loss = _rlrd_loss(agent)
    actions = agent.agent.current.actions.tolist()
    assert loss == pytest.approx(_expected(actions[0] / sum(actions)), rel=1e-5)
    agent.after_step(3e-5)
    assert [len(m) for m in agent.agent.memory] == [1, 1]
    assert float(agent.agent.memory[0][0].reward) == pytest.approx(-loss / 2)


def test_bad_agent_params_are_named() -> None:
    with pytest.raises(ValueError, match="weighting: must be one of agent, fixed"):
        build_method("rlrd", {"weighting": "rl"}, "bert-base-uncased")
    with pytest.raises(ValueError, match="teacher_weight 1 keeps one"):
        build_method("rlrd_san", {"teacher_weight": 1.0}, "bert-base-uncased")
    with pytest.raises(ValueError, match="owns no state"):
        _rlrd("fixed").load_state_dict({"agent": {}})
