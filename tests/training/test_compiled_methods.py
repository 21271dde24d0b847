"""Every method family trains compiled: torch.compile of the encoder and of the frozen guides
(``compile: reduce-overhead`` + ``static_padding``, what ``compile: auto`` means on CUDA; on CPU
reduce-overhead has no CUDA graphs to replay and compiles with inductor) gives the eager losses of
two steps on the mirror's splade-tiny. Inductor's dropout draws from its own generator unless
``fallback_random`` is set: with it, compiled and eager use the same masks and may differ only in
floating-point rounding. Both runs pad statically: the padded width is the shape dropout draws
its masks for, so dynamic padding is another (equally distributed) draw. Step 0's loss checks the compiled forward, step 1's (after an AdamW step
on gradients that came through the compiled backward) the backward."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch._inductor.config as inductor_config
from test_trainer import SETTINGS as TRAINER_SETTINGS

from negcse.encoders.poolers import get_pooler
from negcse.methods.registry import build_method
from negcse.training.model import SentenceEncoder
from negcse.training.settings import TrainSettings
from negcse.training.trainer import TrainData, Trainer

pytestmark = [pytest.mark.mirror, pytest.mark.slow]

#: the trainer tests' settings, two steps of 8 sentences, no evaluation before the end
SETTINGS = {**TRAINER_SETTINGS, "batch_size": 8, "max_steps": 2}
SETTINGS.update(eval_steps=100, checkpoint_steps=100)

#: one implementation per family; rlrd learns its teachers' weights with the released agent
FAMILIES = [
    "simcse",
    "una",
    "sncse",
    "osscse",
    "simcse_san",
    "sncse_san",
    "rankcse",
    "rlrd",
    "gcse",
]


@pytest.fixture(scope="module")
def sentences(mirror: Path) -> list[str]:
    path = mirror / "data/unlabeled/wiki1m/wiki1m_random10k.txt"
    return path.read_text(encoding="utf-8").splitlines()[:32]


@pytest.fixture(scope="module")
def guide_model(splade_tiny: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """splade-tiny saved by the suite (its MLP head stored as the backbone's pooler), so a
    guide may pool with [CLS] + the head (GCSE's ``cls`` guide)."""
    out = tmp_path_factory.mktemp("guide")
    torch.manual_seed(0)
    model = SentenceEncoder.from_pretrained(str(splade_tiny), 0.1)
    model.save(out, get_pooler("cls"), {})
    return out


def _losses(
    implementation: str,
    compile_mode: bool | str,
    splade: Path,
    guide: Path,
    sentences: list[str],
    ckpt: Path,
) -> list[float]:
    torch.manual_seed(1)
    model = SentenceEncoder.from_pretrained(str(splade), 0.1)
    method = build_method(implementation, {}, "splade-tiny")
    # every extra text column: the corpus shifted by one line (a stand-in negative / positive)
    columns: dict = {"sentence": sentences}
    for column in method.columns:
        columns[column] = sentences[1:] + sentences[:1]
    losses: list[float] = []
    loss = method.loss

    def recorded(emb, ctx):  # type: ignore[no-untyped-def]
        out = loss(emb, ctx)
        losses.append(out.loss.item())
        return out

    method.loss = recorded  # type: ignore[method-assign]
    trainer = Trainer(
        method,
        model,
        TrainData(columns),
        TrainSettings(**SETTINGS, compile=compile_mode, static_padding=True),
        1,
        lambda encode: 0.0,
        ckpt,
        device=torch.device("cpu"),
        progress=False,
        guides={g.name: str(guide) for g in method.guides()},
    )
    trainer.train()
    return losses


@pytest.mark.parametrize("implementation", FAMILIES)
def test_compiled_step_gives_the_eager_losses(
    implementation: str,
    splade_tiny: Path,
    guide_model: Path,
    sentences: list[str],
    tmp_path: Path,
) -> None:
    eager = _losses(implementation, False, splade_tiny, guide_model, sentences, tmp_path / "e")
    torch._dynamo.reset()  # a fresh compilation per family (no cache of another's guards)
    with inductor_config.patch(fallback_random=True):
        compiled = _losses(
            implementation, "reduce-overhead", splade_tiny, guide_model, sentences, tmp_path / "c"
        )
    assert len(eager) == len(compiled) == 2
    assert compiled == pytest.approx(eager, rel=1e-4, abs=1e-5)
    assert eager[0] != eager[1]  # the step changed the weights: step 1 checks the backward


def test_auto_compiles_on_cuda_only(splade_tiny: Path, sentences: list[str], tmp_path: Path):
    """``compile: auto`` (params.yaml's default) is eager with dynamic padding on CPU, so CPU
    runs keep their numerics; on CUDA it is reduce-overhead with static padding."""
    from negcse.training.trainer import _compile_mode

    assert _compile_mode("auto", torch.device("cpu")) is None
    assert _compile_mode("auto", torch.device("cuda")) == "reduce-overhead"
    assert _compile_mode(False, torch.device("cuda")) is None
    assert _compile_mode(True, torch.device("cpu")) == "default"
    model = SentenceEncoder.from_pretrained(str(splade_tiny), 0.1)
    settings = TrainSettings(**SETTINGS, compile="auto")
    args = (build_method("simcse", {}, "b"), model, TrainData({"sentence": sentences}), settings)
    on_cpu = Trainer(*args, 1, lambda e: 0.0, tmp_path, device=torch.device("cpu"))
    assert not on_cpu.static_padding
    on_cuda = Trainer(*args, 1, lambda e: 0.0, tmp_path, device=torch.device("cuda"))
    assert on_cuda.static_padding
