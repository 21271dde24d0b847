"""RankCSE and RLRD (ranking distillation from frozen teachers), alone and with SAN.

The teachers are frozen guide models (``Method.guides``: ``teacher1`` and, unless
``teacher_weight`` is 1, ``teacher2``; ``negcse train --guide teacher1=PATH``). Each encodes the
sentences (and the SAN samples for the +SAN methods) every step; their similarity lists are
mixed with weights ``teacher_weight`` and ``1 - teacher_weight``. The loss is
:func:`negcse.losses.rank_distillation.distillation_loss` (SAN paper eq. 6 and 7):

- ``rankcse``: SimCSE's views; InfoNCE + beta * consistency + gamma * ListMLE (or ListNet).
- ``rankcse_san`` (eq. 6): + the SAN view at dropout p2; HiNCE at tau2 in place of InfoNCE and
  + gamma * lambda * ListMLE over the SAN similarities (eq. 5).
- ``rlrd``: SNCSE's prompt views and BML + gamma * ListMLE; the teachers' weights come from
  the released reinforcement-learned agent (:mod:`negcse.methods.teacher_agent`, method-owned
  state in the training checkpoint), or are fixed (``weighting: fixed``, ``teacher_weight``).
  As released, both teachers encode the student's prompt-wrapped inputs (``teacher_inputs:
  prompts``): their list is cos(T(anchor prompt of x_i), T(positive prompt of x_j)), the SAN
  list cos(T(anchor prompt of x_i), T(SAN prompt of x_j-)), each teacher pooled its own way;
  ``teacher_inputs: sentence`` has each teacher encode the bare sentence (through its pooler).
- ``rlrd_san`` (eq. 7): + the SAN view as in ``sncse_san``, HiNCE and the SAN ListMLE.

ListMLE keeps the released ``log(cumsum + 1e-7)`` (``listmle_epsilon``; 0: exact
Plackett-Luce); ListNet divides the teachers' SAN list by ``san_teacher_temperature`` (released
0.05, RLRD+SAN's student list uses tau2 0.1; None: the student's temperature).

Defaults are the released BERT-base scripts (RankCSE+SAN 4184, RLRD+SAN 20101) and Table 6.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from negcse.losses import cosine_matrix
from negcse.losses.rank_distillation import (
    DistillationWeights,
    distillation_loss,
    teacher_similarities,
)
from negcse.losses.ranking import LISTMLE_EPSILON
from negcse.methods.base import (
    Guide,
    GuideInput,
    LossOutput,
    Method,
    MethodParams,
    StepContext,
    View,
)
from negcse.methods.params import ParamError, bounded
from negcse.methods.registry import register
from negcse.methods.san import SAN_COLUMN, SAN_PROMPT
from negcse.methods.sncse import ANCHOR_PROMPT, POSITIVE_PROMPT, SNCSEParams, _SNCSEBase
from negcse.runtime.lazy import LazyModule

if TYPE_CHECKING:
    import torch
    from torch import Tensor

    from negcse.methods import teacher_agent
else:  # its torch networks would load with the method registry (the Snakefile's parse)
    teacher_agent = LazyModule("negcse.methods.teacher_agent")

TEACHERS = ("teacher1", "teacher2")
#: the released temperature of the teachers' SAN lists (``z1_z3_tau2`` / ``z1_z4_tau2``)
SAN_TEACHER_TEMPERATURE = 0.05


@dataclass(frozen=True)
class DistillParams(MethodParams):
    rank_temperature: float = bounded(0.05, gt=0)  # released --tau2: the student lists'
    distillation: Literal["listmle", "listnet"] = "listmle"
    consistency_weight: float = bounded(1.0, ge=0)  # beta (RankCSE's consistency)
    distillation_weight: float = bounded(1.0, ge=0)  # gamma
    teacher_weight: float = bounded(0.33, gt=0, le=1)  # alpha: teacher1's; teacher2: 1 - alpha
    teacher1_pooler: str = "cls_before_pooler"
    teacher2_pooler: str = "cls_before_pooler"
    reference_quirks: bool = False  # the released consistency term (an entropy; see docs)
    listmle_epsilon: float = bounded(LISTMLE_EPSILON, ge=0)  # released log(cumsum + 1e-7); 0: exact



@dataclass(frozen=True)
class SanDistillParams(DistillParams):
    tau2: float = bounded(0.05, gt=0)  # HiNCE's SAN temperature (Table 6: RankCSE 0.05, RLRD 0.1)
    p2: float | None = bounded(0.2, ge=0, lt=1)  # dropout of the SAN pass
    san_rank_weight: float = bounded(0.4, ge=0)  # lambda of ListMLE+SAN (Table 6: 0.4, RLRD 0.2)
    san_rank_temperature: float | None = bounded(None, gt=0)  # tau3 (eq. 5); None: tau2
    # ListNet's teacher SAN list (released 0.05 for every script); None: the student's tau3
    san_teacher_temperature: float | None = bounded(SAN_TEACHER_TEMPERATURE, gt=0)


@dataclass(frozen=True)
class RLRDParams(DistillParams, SNCSEParams):
    consistency_weight: float = 0.0
    distillation_weight: float = 1.0e-3  # released t_lmb
    teacher_weight: float = 0.5  # released --alpha_ 0.5: teacher1's weight with weighting fixed
    teacher1_pooler: str = ANCHOR_PROMPT  # the released SNCSE-prompt teacher, pooled at [MASK]
    #: the released RL agent's per-step weights, or "fixed"
    weighting: Literal["agent", "fixed"] = "agent"
    agent_quirks: bool = False  # true: the released agent's bugs (docs/fidelity-san.md)
    agent_update_steps: int = bounded(125, ge=1)  # PPO every N steps (PSEUDO_EPISODE_LENGTH)
    agent_lr: float = bounded(1.0e-4, gt=0)  # the policies' Adam (new at every update)
    critic_lr: float = bounded(3.0e-4, gt=0)  # the critics' Adam
    #: what the teachers encode: the student's prompt-wrapped inputs (released) or the sentence
    teacher_inputs: Literal["prompts", "sentence"] = "prompts"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.weighting == "agent" and self.teacher_weight == 1:
            raise ParamError("weighting", "agent weighs two teachers; teacher_weight 1 keeps one")


@dataclass(frozen=True)
class RLRDSanParams(RLRDParams, SanDistillParams):  # this order keeps RLRD's defaults
    tau2: float = 0.1
    san_rank_weight: float = 0.2


#: the params of one of the four methods
DP = TypeVar("DP", bound=DistillParams)


class _Distillation(Method[DP]):
    """Teachers, their similarity lists and the assembled loss shared by the four methods."""

    def teacher_names(self) -> tuple[str, ...]:
        return TEACHERS[:1] if self.params.teacher_weight == 1 else TEACHERS

    def teacher_inputs(self) -> tuple[GuideInput, ...]:
        """What each teacher encodes (key, column, prompt); empty: the columns as they are."""
        return ()

    def teacher_lists(self) -> tuple[tuple[str, str], tuple[str, str]]:
        """The teachers' (rows, columns) keys of the main list and of the SAN list."""
        return ("sentence", "sentence"), ("sentence", SAN_COLUMN)

    def guides(self) -> tuple[Guide, ...]:
        p = self.params
        san = isinstance(p, SanDistillParams)
        columns = ("sentence", SAN_COLUMN) if san else ("sentence",)
        poolers = (p.teacher1_pooler, p.teacher2_pooler)
        inputs = self.teacher_inputs()
        return tuple(
            Guide(name, columns, pooler, inputs=inputs)
            for name, pooler in zip(self.teacher_names(), poolers, strict=False)
        )

    def teacher_mix(
        self, emb: dict[str, Tensor], teachers: list[dict[str, Tensor]]
    ) -> list[float | Tensor]:
        """The teachers' weights this step (fixed: ``teacher_weight`` and the rest)."""
        p = self.params
        return [p.teacher_weight, 1 - p.teacher_weight][: len(teachers)]

    def loss(self, emb: dict[str, Tensor], ctx: StepContext) -> LossOutput:
        p = self.params
        teachers = [ctx.guides[name] for name in self.teacher_names()]
        mix = self.teacher_mix(emb, teachers)
        main, san_list = self.teacher_lists()
        san_kw: dict[str, object] = {}
        if isinstance(p, SanDistillParams):
            san_kw = {
                "san": emb["san"],
                "tau2": p.tau2,
                "teacher_san": teacher_similarities(teachers, mix, *san_list),
                "san_rank_temperature": p.san_rank_temperature,
                "san_teacher_temperature": p.san_teacher_temperature,
            }
        bml_kw: dict[str, object] = {}
        if isinstance(p, SNCSEParams):
            bml_kw = {"negation": emb["negation"], "bml_margins": (p.alpha, p.beta)}
        weights = DistillationWeights(
            consistency=p.consistency_weight,
            bml=p.bml_weight if isinstance(p, SNCSEParams) else 0.0,
            rank=p.distillation_weight,
            san_rank=p.san_rank_weight if isinstance(p, SanDistillParams) else 0.0,
        )
        loss, parts = distillation_loss(
            emb["anchor"],
            emb["positive"],
            teacher_similarities(teachers, mix, *main),
            weights=weights,
            temperature=p.temperature,
            rank_temperature=p.rank_temperature,
            kind=p.distillation,  # type: ignore[arg-type]
            reference_quirks=p.reference_quirks,
            listmle_epsilon=p.listmle_epsilon,
            **san_kw,  # type: ignore[arg-type]
            **bml_kw,  # type: ignore[arg-type]
        )
        return LossOutput(loss, dict(parts))


@register
class RankCSE(_Distillation[DistillParams]):
    name = "rankcse"
    papers = ("rankcse",)
    Params = DistillParams


@register
class RankCSESan(_Distillation[SanDistillParams]):
    name = "rankcse_san"
    papers = ("rankcse", "san-hince")
    Params = SanDistillParams
    columns = (SAN_COLUMN,)

    def views(self, step: int) -> list[View]:
        return [View("anchor"), View("positive"), View("san", SAN_COLUMN, dropout=self.params.p2)]


#: RLRD's params or a subclass of them (RLRD + SAN)
RP = TypeVar("RP", bound=RLRDParams)


class _RLRDBase(_Distillation[RP], _SNCSEBase[RP]):
    """SNCSE's views, poolers and negation count (``_SNCSEBase``), the distillation loss, and
    the teachers' weights from the released agent (``weighting: agent``): it acts in the loss,
    learns after the optimizer step from the reward -loss / 2, and is saved with the checkpoint."""

    def __init__(self, params: RP, backbone: str) -> None:
        super().__init__(params, backbone)
        self.agent: teacher_agent.TeacherAgent | None = None  # built by attach (weighting: agent)
        self._reward: Tensor | None = None

    def teacher_inputs(self) -> tuple[GuideInput, ...]:
        """As released, the student's prompt-wrapped inputs (``teacher_inputs: prompts``)."""
        if self.params.teacher_inputs == "sentence":
            return ()
        inputs = (
            GuideInput("anchor", "sentence", ANCHOR_PROMPT),
            GuideInput("positive", "sentence", POSITIVE_PROMPT),
        )
        if isinstance(self.params, SanDistillParams):
            inputs += (GuideInput("san", SAN_COLUMN, SAN_PROMPT),)
        return inputs

    def teacher_lists(self) -> tuple[tuple[str, str], tuple[str, str]]:
        if self.params.teacher_inputs == "sentence":
            return super().teacher_lists()
        return ("anchor", "positive"), ("anchor", "san")

    def attach(self, model: torch.nn.Module) -> None:
        super().attach(model)
        p = self.params
        if p.weighting == "agent":
            settings = teacher_agent.AgentSettings(
                p.agent_update_steps, p.agent_lr, p.critic_lr, p.agent_quirks
            )
            self.agent = teacher_agent.TeacherAgent(settings)

    def teacher_mix(
        self, emb: dict[str, Tensor], teachers: list[dict[str, Tensor]]
    ) -> list[float | Tensor]:
        if self.agent is None:
            return super().teacher_mix(emb, teachers)
        p = self.params
        rows, cols = self.teacher_lists()[0]
        states = teacher_agent.agent_states(
            emb["anchor"],
            emb["positive"],
            [cosine_matrix(t[rows].float(), t[cols].float()) for t in teachers],
            p.rank_temperature,
            p.distillation,  # type: ignore[arg-type]
            p.listmle_epsilon,
        )
        weights = self.agent.act(states)
        return [weights[0], weights[1]]

    def loss(self, emb: dict[str, Tensor], ctx: StepContext) -> LossOutput:
        out = super().loss(emb, ctx)
        if self.agent is not None:
            self._reward = -out.loss.detach().float() / 2
            assert self.agent.current is not None
            weights = teacher_agent.teacher_weights(self.agent.current.actions)
            out.logs["teacher1_weight"] = weights[0]
        return out

    def after_step(self, lr: float) -> None:
        if self.agent is not None and self._reward is not None:
            self.agent.learn(self._reward)
            self._reward = None

    def state_dict(self) -> dict[str, Any]:
        return {"agent": self.agent.state_dict()} if self.agent is not None else {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if self.agent is None or set(state) - {"agent"}:
            super().load_state_dict(state)
            return
        self.agent.load_state_dict(state.get("agent", {}))


@register
class RLRD(_RLRDBase[RLRDParams]):
    name = "rlrd"
    papers = ("rlrd",)
    Params = RLRDParams


@register
class RLRDSan(_RLRDBase[RLRDSanParams]):
    name = "rlrd_san"
    papers = ("rlrd", "san-hince")
    Params = RLRDSanParams
    columns = (*RLRD.columns, SAN_COLUMN)

    def views(self, step: int) -> list[View]:
        san = View("san", SAN_COLUMN, SAN_PROMPT, dropout=self.params.p2)
        return [*super().views(step), san]
