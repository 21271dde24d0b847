"""RLRD's reinforcement-learned teacher weighting: the agent of the released ``models/rlrd``.

Each of the two teachers has a policy network and a critic. A teacher's state is

- ``views`` (2, b, dim): the student's two views of the batch (detached);
- ``teachers`` (2, b, b): the teachers' similarity lists cos / tau, its own teacher's first;
- ``losses`` (1, 2): teacher 1's and teacher 2's ranking loss against the student's list.

A shared input layer ``h = views W1 + teachers W2 + losses W3 + b`` (hidden 128, broadcast to
(2 b, 128)) feeds the policy (ReLU, then alpha = softplus(h w_alpha).mean() + 50 and beta
likewise: the parameters of a Beta distribution) and the critic (sigmoid clamped to
[1e-5, 1 - 1e-5], an MLP 128-256-128-1 with LayerNorm, mean over the rows). Each step each
policy samples an action a_k ~ Beta(alpha_k, beta_k); teacher k's weight is a_k / (a_1 + a_2).
The reward of both is -loss / 2 (the step's total loss). Every ``update_steps`` steps each policy
and its critic take ``PPO_EPOCHS`` steps of PPO (clipped ratio, GAE advantages, value loss
weight 0.5) on the transitions since the last update; the policy's Adam is new at every update
(as released), the critic's is kept.

``released=True`` reproduces the released bugs that the default fixes (docs/fidelity-san.md):
the advantage ``0.99 * sum_k (r_k + gamma * v_{k+1} * -v_k)`` (sign and missing discount), both
teachers' values from the first critic, a transition pairing the previous step's state with this
step's action, and W2 of (128, 128), so the batch must be 128 and a smaller (last) batch reuses
the previous step's actions. Fixed: W2 has one row per batch position of the first batch and a
smaller batch uses its first rows (its lists padded with zeros).

Randomness: the initial weights (drawn once, shared by both teachers, as released) and the Beta
draws come from torch's global RNG, which the trainer seeds (``negcse.runtime.seed``) and saves in every
checkpoint. The agent computes in fp32 outside autocast.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.distributions import Beta

from negcse.losses import cosine_matrix
from negcse.losses.rank_distillation import RankLoss, rank_loss
from negcse.losses.ranking import LISTMLE_EPSILON

HIDDEN = 128
BETA_OFFSET = 50.0  # softplus(...) + 50: both Beta parameters >= 50
RELEASED_BATCH = 128  # the released W2 is (128, 128)
PPO_CLIP = 0.2
PPO_EPOCHS = 3
GAMMA = 0.99
GAE_LAMBDA = 0.95
VALUE_WEIGHT = 0.5
CRITIC_LAYERS = (256, 128)
SIGMOID_CLAMP = 1e-5


@dataclass(frozen=True)
class AgentSettings:
    update_steps: int = 125  # released PSEUDO_EPISODE_LENGTH
    policy_lr: float = 1e-4
    critic_lr: float = 3e-4
    released: bool = False  # reproduce the released bugs (module docstring)


class State(NamedTuple):
    """One teacher's view of a step (module docstring)."""

    views: Tensor
    teachers: Tensor
    losses: Tensor


class Transition(NamedTuple):
    state: State
    action: Tensor  # 0-d
    params: Tensor  # (2,): the Beta parameters the action was drawn from
    reward: Tensor  # 0-d
    value: Tensor  # 0-d: the critic's value of the step's state


def agent_states(
    anchor: Tensor,
    positive: Tensor,
    teacher_sims: list[Tensor],
    temperature: float,
    kind: RankLoss,
    epsilon: float = LISTMLE_EPSILON,
) -> tuple[State, State]:
    """Both teachers' states from the student's two views and the teachers' (batch, batch)
    cosine lists of the sentences (ListMLE with ``epsilon``), in fp32 outside autocast."""
    with torch.no_grad(), torch.autocast(anchor.device.type, enabled=False):
        views = torch.stack([anchor, positive]).float()
        student = cosine_matrix(views[0], views[1])
        sims = [s.float() for s in teacher_sims]
        losses = torch.stack(
            [rank_loss(kind, student, s, temperature, epsilon=epsilon) for s in sims]
        )
        t1, t2 = (s / temperature for s in sims)
        losses = losses.reshape(1, 2)
        return State(views, torch.stack([t1, t2]), losses), State(
            views, torch.stack([t2, t1]), losses
        )


def _uniform(*shape: int) -> nn.Parameter:
    return nn.Parameter(torch.empty(*shape).uniform_(-0.5, 0.5))


class StateLayer(nn.Module):
    """h = views W1 + teachers W2[:b] + losses W3 + bias, as (2 b, HIDDEN)."""

    def __init__(self, dim: int, width: int) -> None:
        super().__init__()
        self.W1 = _uniform(dim, HIDDEN)
        self.W2 = _uniform(width, HIDDEN)
        self.W3 = _uniform(2, HIDDEN)
        self.b = _uniform(1, HIDDEN)

    def forward(self, state: State) -> Tensor:
        b = state.teachers.size(-1)
        if b > self.W2.size(0):
            raise ValueError(f"agent built for batches of {self.W2.size(0)} got a batch of {b}")
        h = state.views @ self.W1 + state.teachers @ self.W2[:b] + state.losses @ self.W3
        return (h + self.b).reshape(-1, HIDDEN)


class BetaPolicy(nn.Module):
    """The Beta distribution's two parameters, each softplus(mean of a linear head) + 50."""

    def __init__(self, dim: int, width: int) -> None:
        super().__init__()
        self.inputs = StateLayer(dim, width)
        self.alpha = _uniform(HIDDEN, 1)
        self.beta = _uniform(HIDDEN, 1)

    def forward(self, state: State) -> Tensor:
        h = torch.relu(self.inputs(state))
        heads = (F.softplus(h @ self.alpha).mean(), F.softplus(h @ self.beta).mean())
        return torch.stack(heads) + BETA_OFFSET


class Critic(nn.Module):
    def __init__(self, dim: int, width: int) -> None:
        super().__init__()
        self.inputs = StateLayer(dim, width)
        layers: list[nn.Module] = []
        size = HIDDEN
        for out in CRITIC_LAYERS:
            layers += [nn.Linear(size, out), nn.LayerNorm(out), nn.ReLU()]
            size = out
        self.mlp = nn.Sequential(*layers, nn.Linear(size, 1))

    def forward(self, state: State) -> Tensor:
        h = torch.sigmoid(self.inputs(state)).clamp(SIGMOID_CLAMP, 1 - SIGMOID_CLAMP)
        return self.mlp(h).mean()


def _beta(params: Tensor) -> Beta:
    """Beta(params[..., 0], params[..., 1]), unvalidated (validation would wait for the GPU)."""
    return Beta(params[..., 0], params[..., 1], validate_args=False)


def teacher_weights(actions: Tensor) -> Tensor:
    """Each teacher's weight: its action over the sum of both."""
    return actions / actions.sum()


def advantages(rewards: list[float], values: list[float], released: bool = False) -> list[float]:
    """GAE over one window: A_t = sum_{k=t}^{n-2} (gamma lambda)^(k-t) delta_k with
    delta_k = r_k + gamma v_{k+1} - v_k; the last transition (no next value) gets 0.

    ``released``: A_t = sum_{k=t}^{n-2} 0.99 (r_k + gamma v_{k+1} * -v_k) (no discount, a
    product where the difference belongs)."""
    n = len(rewards)
    out = [0.0] * n
    acc = 0.0
    for k in range(n - 2, -1, -1):
        if released:
            acc += GAMMA * (rewards[k] + GAMMA * values[k + 1] * -values[k])
        else:
            acc = rewards[k] + GAMMA * values[k + 1] - values[k] + GAMMA * GAE_LAMBDA * acc
        out[k] = acc
    return out


def ppo_objective(
    params: Tensor,
    old_log_prob: Tensor,
    actions: Tensor,
    adv: Tensor,
    predicted: Tensor,
    returns: Tensor,
) -> Tensor:
    """-mean(min(ratio A, clip(ratio, 1 - 0.2, 1 + 0.2) A)) + 0.5 mean((returns - V)^2), with
    ratio = Beta(params).pdf(action) / the old policy's pdf of it (per transition)."""
    ratio = (_beta(params).log_prob(actions) - old_log_prob).exp()
    clipped = ratio.clamp(1 - PPO_CLIP, 1 + PPO_CLIP)
    surrogate = -torch.min(ratio * adv, clipped * adv).mean()
    return surrogate + VALUE_WEIGHT * ((returns - predicted) ** 2).mean()


def ppo_update(
    policy: BetaPolicy,
    critic: Critic,
    critic_opt: torch.optim.Optimizer,
    memory: list[Transition],
    policy_lr: float,
    released: bool = False,
) -> None:
    """PPO_EPOCHS full-batch steps of -min(ratio A, clip(ratio) A).mean() + 0.5 (A + v - V)^2,
    A from :func:`advantages` over the stored values v; a new Adam for the policy."""
    if not memory:
        return
    actions = torch.stack([t.action for t in memory])
    old = torch.stack([t.params for t in memory])
    values = torch.stack([t.value for t in memory])
    rewards = torch.stack([t.reward for t in memory]).tolist()
    adv = torch.tensor(advantages(rewards, values.tolist(), released), device=values.device)
    returns = adv + values
    old_log_prob = _beta(old).log_prob(actions).detach()
    policy_opt = torch.optim.Adam(policy.parameters(), lr=policy_lr)
    for _ in range(PPO_EPOCHS):
        params = torch.stack([policy(t.state) for t in memory])
        predicted = torch.stack([critic(t.state) for t in memory])
        loss = ppo_objective(params, old_log_prob, actions, adv, predicted, returns)
        policy_opt.zero_grad()
        critic_opt.zero_grad()
        loss.backward()
        policy_opt.step()
        critic_opt.step()


class _Step(NamedTuple):
    states: tuple[State, State]
    actions: Tensor  # (2,)
    params: Tensor  # (2, 2)


def _state_dict(state: State) -> dict[str, Tensor]:
    return state._asdict()


def _transition_dict(t: Transition) -> dict[str, Any]:
    return {**t._asdict(), "state": _state_dict(t.state)}


def _transition(d: dict[str, Any]) -> Transition:
    return Transition(**{**d, "state": State(**d["state"])})


class TeacherAgent:
    """Two policies and two critics (one per teacher) and the transitions since the last update.

    Per step: :meth:`act` (in the loss) draws the teachers' weights; :meth:`learn` (after the
    optimizer step) stores the step with its reward and runs PPO every ``update_steps`` steps."""

    def __init__(self, settings: AgentSettings) -> None:
        self.s = settings
        self.policies: list[BetaPolicy] = []
        self.critics: list[Critic] = []
        self.critic_opts: list[torch.optim.Optimizer] = []
        self.memory: list[list[Transition]] = [[], []]
        self.steps = 0  # steps since the last update
        self.updates = 0
        self.current: _Step | None = None  # this step's (or, released, the last acting step's)
        self.last_states: tuple[State, State] | None = None  # released pairing
        self.device: torch.device | None = None

    # -- building and placing ------------------------------------------------------------------
    def _build(self, dim: int, width: int) -> None:
        policy, critic = BetaPolicy(dim, width), Critic(dim, width)
        self.policies = [copy.deepcopy(policy), policy]  # both start from the same weights
        self.critics = [copy.deepcopy(critic), critic]
        self.critic_opts = [
            torch.optim.Adam(c.parameters(), lr=self.s.critic_lr) for c in self.critics
        ]
        self.device = torch.device("cpu")

    def _place(self, device: torch.device) -> None:
        if self.device == device:
            return
        saved = [o.state_dict() for o in self.critic_opts]
        for module in (*self.policies, *self.critics):
            module.to(device)
        self.critic_opts = [
            torch.optim.Adam(c.parameters(), lr=self.s.critic_lr) for c in self.critics
        ]
        for opt, state in zip(self.critic_opts, saved, strict=True):
            opt.load_state_dict(state)
        self.memory = [[_move(t, device) for t in m] for m in self.memory]
        if self.current is not None:
            cur = self.current
            states = (_move_state(cur.states[0], device), _move_state(cur.states[1], device))
            self.current = _Step(states, cur.actions.to(device), cur.params.to(device))
        if self.last_states is not None:
            last = self.last_states
            self.last_states = (_move_state(last[0], device), _move_state(last[1], device))
        self.device = device

    # -- a step --------------------------------------------------------------------------------
    def act(self, states: tuple[State, State]) -> Tensor:
        """The teachers' weights (2,) for this step, drawn from the policies."""
        b, device = states[0].teachers.size(-1), states[0].views.device
        released = self.s.released
        if self.policies:
            self._place(device)
        if released and b != RELEASED_BATCH:
            if self.current is None:
                raise ValueError(
                    f"agent_quirks: the released agent multiplies the (batch, batch) lists by a "
                    f"(128, 128) matrix and needs batch_size {RELEASED_BATCH}; got a batch of {b}"
                )
            return teacher_weights(self.current.actions)  # released: the last actions again
        if not self.policies:
            self._build(states[0].views.size(-1), RELEASED_BATCH if released else b)
            self._place(device)
        with torch.no_grad(), torch.autocast(device.type, enabled=False):
            params = torch.stack([pi(s) for pi, s in zip(self.policies, states, strict=True)])
            actions = _beta(params).sample()
        self.current = _Step(states, actions, params)
        return teacher_weights(actions)

    def learn(self, reward: Tensor) -> None:
        """Store this step's transitions (reward = -loss / 2) and update every update_steps."""
        step = self.current
        if step is None:
            return
        released = self.s.released
        with torch.no_grad(), torch.autocast(reward.device.type, enabled=False):
            critics = [self.critics[0]] * 2 if released else self.critics
            values = [c(s) for c, s in zip(critics, step.states, strict=True)]
        if released:  # the previous step's state with this step's action
            pairs = self.last_states
            self.last_states = step.states
        else:
            pairs = step.states
        if pairs is not None:
            for k in range(2):
                t = Transition(pairs[k], step.actions[k], step.params[k], reward.float(), values[k])
                self.memory[k].append(t)
        self.steps += 1
        if self.steps >= self.s.update_steps:
            for k in range(2):
                ppo_update(
                    self.policies[k],
                    self.critics[k],
                    self.critic_opts[k],
                    self.memory[k],
                    self.s.policy_lr,
                    released,
                )
            self.memory = [[], []]
            self.steps = 0
            self.updates += 1
        if not released:
            self.current = None

    # -- checkpoints ---------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Tensors and plain data only (a checkpoint loads with ``weights_only=True``)."""
        if not self.policies:
            return {}
        cur = self.current
        return {
            "shape": [
                int(self.policies[0].inputs.W1.size(0)),
                int(self.policies[0].inputs.W2.size(0)),
            ],
            "policies": [p.state_dict() for p in self.policies],
            "critics": [c.state_dict() for c in self.critics],
            "critic_opts": [o.state_dict() for o in self.critic_opts],
            "memory": [[_transition_dict(t) for t in m] for m in self.memory],
            "steps": self.steps,
            "updates": self.updates,
            "current": None
            if cur is None
            else {
                "states": [_state_dict(s) for s in cur.states],
                "actions": cur.actions,
                "params": cur.params,
            },
            "last_states": None
            if self.last_states is None
            else [_state_dict(s) for s in self.last_states],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if not state:
            return
        self._build(*state["shape"])
        for module, saved in zip(
            (*self.policies, *self.critics), (*state["policies"], *state["critics"]), strict=True
        ):
            module.load_state_dict(saved)
        for opt, saved in zip(self.critic_opts, state["critic_opts"], strict=True):
            opt.load_state_dict(saved)
        self.memory = [[_transition(t) for t in m] for m in state["memory"]]
        self.steps, self.updates = int(state["steps"]), int(state["updates"])
        cur = state["current"]
        self.current = (
            None
            if cur is None
            else _Step(
                (State(**cur["states"][0]), State(**cur["states"][1])),
                cur["actions"],
                cur["params"],
            )
        )
        last = state["last_states"]
        self.last_states = None if last is None else (State(**last[0]), State(**last[1]))


def _move_state(state: State, device: torch.device) -> State:
    return State(*(x.to(device) for x in state))


def _move(t: Transition, device: torch.device) -> Transition:
    return Transition(_move_state(t.state, device), *(x.to(device) for x in t[1:]))
