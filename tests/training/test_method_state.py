"""Method-owned trainable state (``Method.state_dict``) in the training checkpoint: a tiny rlrd
run with its agent (PPO every 2 steps, a checkpoint every 3) killed after step 4 and resumed
ends exactly as the uninterrupted run (the killed run's first 3 steps are a second run from the
same seed, so this also shows that the seed alone fixes the agent's weights and draws)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from test_trainer import SETTINGS as TRAINER_SETTINGS
from test_trainer import _dev

from negcse.methods.registry import build_method
from negcse.training.model import SentenceEncoder
from negcse.training.settings import TrainSettings
from negcse.training.trainer import TrainData, Trainer, load_checkpoint

pytestmark = pytest.mark.mirror

#: the trainer tests' settings, cut to 6 steps of 4 sentences
SETTINGS = TrainSettings(
    **{
        **TRAINER_SETTINGS,
        "batch_size": 4,
        "max_seq_len": 24,
        "max_steps": 6,
        "eval_steps": 2,
        "checkpoint_steps": 3,
    }
)


class Killed(Exception):
    pass


@pytest.fixture(scope="module")
def columns(mirror: Path) -> dict[str, list[str]]:
    path = mirror / "data/unlabeled/wiki1m/wiki1m_random10k.txt"
    sentences = path.read_text(encoding="utf-8").splitlines()[:24]
    return {"sentence": sentences, "negation_sncse": [f"Not {s}" for s in sentences]}


def _trainer(splade: Path, columns: dict, ckpt: Path) -> Trainer:
    torch.manual_seed(0)
    method = build_method("rlrd", {"agent_update_steps": 2}, "splade-tiny")
    return Trainer(
        method,
        SentenceEncoder.from_pretrained(str(splade), SETTINGS.dropout),
        TrainData(columns),
        SETTINGS,
        seed=11,
        dev_scorer=_dev,
        checkpoint_dir=ckpt,
        device=torch.device("cpu"),
        progress=False,
        guides={"teacher1": str(splade), "teacher2": str(splade)},
    )


def _agent_tensors(trainer: Trainer) -> list[torch.Tensor]:
    agent = trainer.method.agent  # type: ignore[attr-defined]
    return [p for m in (*agent.policies, *agent.critics) for p in m.parameters()]


def test_killed_rlrd_run_with_agent_resumes_exactly(
    splade_tiny: Path, columns: dict, tmp_path: Path
) -> None:
    full = _trainer(splade_tiny, columns, tmp_path / "full")
    full_state = full.train()
    assert full.method.agent.updates == 3  # type: ignore[attr-defined]

    killed = _trainer(splade_tiny, columns, tmp_path / "ck")

    def kill(step: int) -> None:
        if step == 4:
            raise Killed

    killed.on_step = kill
    with pytest.raises(Killed):
        killed.train()
    payload = load_checkpoint(tmp_path / "ck" / "last.pt")
    assert payload is not None
    agent = payload["method"]["agent"]  # saved at step 3: one update, one stored step
    assert agent["updates"] == 1 and agent["steps"] == 1
    assert [len(m) for m in agent["memory"]] == [1, 1]

    resumed = _trainer(splade_tiny, columns, tmp_path / "ck")
    state = resumed.train()
    assert state.curve[:-1] == full_state.curve[:-1]
    for p, q in zip(full.model.parameters(), resumed.model.parameters(), strict=True):
        assert torch.equal(p, q)
    for p, q in zip(_agent_tensors(full), _agent_tensors(resumed), strict=True):
        assert torch.equal(p, q)
