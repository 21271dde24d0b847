"""GCSE's stage 1 and data order as released, checked against hand-built truths of the released
code's logic: the word doubling of ``cl_loader.py`` L81-104 (its output distribution under a
fixed seed) and ``cl_loader.py`` L21-23's order (the indices shuffled once, the same order every
epoch), through the shared trainer's generic hooks (``Method.augmentations``,
``train.data_order``). Stage 1's schedule: tests/training/test_schedule.py."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

from negcse.methods.registry import build_method
from negcse.training.batching import tokenize_rows
from negcse.training.epoch_data import augment_columns, order_epoch
from negcse.training.model import SentenceEncoder
from negcse.training.settings import TrainSettings
from negcse.training.trainer import TrainData, Trainer
from negcse.workflow.config import project_config, resolve_method

REPO = Path(__file__).resolve().parents[2]


def _released_k_range(n: int) -> int:
    """cl_loader.py L89 by hand: k = randrange(min(10, L, max(2, int(0.05 L))))."""
    return min(10, n, max(2, int(0.05 * n)))


@pytest.mark.parametrize("n_words", [1, 10, 39, 80, 300])
def test_word_doubling_distribution_under_a_fixed_seed(n_words: int) -> None:
    """The released rule's distribution: k uniform over range(min(10, L, max(2, int(0.05 L))))
    (so 0 or 1 with equal odds below 60 words, never for one word), the doubled words uniform
    among the first L - 1, each written twice in place. 4,000 draws from one seeded stream;
    bounds at 5 standard errors."""
    stage1 = build_method("gcse_stage1", {}, "bert-base-uncased")
    augment = stage1.augmentations()["sentence"]
    words = [f"w{i}" for i in range(n_words)]
    text = " ".join(words)
    rng = random.Random(1234)
    draws = 4000
    ks: Counter[int] = Counter()
    positions: Counter[int] = Counter()
    for _ in range(draws):
        out = augment(text, rng).split(" ")
        k = len(out) - n_words
        ks[k] += 1
        # the doubled words, read back from the output: a word followed by itself
        doubled = [int(w[1:]) for w, nxt in itertools.pairwise(out) if w == nxt]
        assert len(doubled) == k and sorted(set(doubled)) == doubled
        assert [w for i, w in enumerate(out) if i == 0 or out[i - 1] != w] == words
        positions.update(doubled)
    span = _released_k_range(n_words)
    assert set(ks) == set(range(span))
    se = math.sqrt((1 / span) * (1 - 1 / span) / draws)
    assert all(abs(ks[k] / draws - 1 / span) <= 5 * se for k in range(span)), ks
    if n_words > 1:
        assert n_words - 1 not in positions  # never the last word
        picks = sum(positions.values())
        share = 1 / (n_words - 1)
        se = math.sqrt(share * (1 - share) / picks)
        assert all(abs(positions[i] / picks - share) < 5 * se for i in range(n_words - 1))
    if 2 <= n_words < 60:  # "a word doubled in about half of the inputs"
        assert abs(ks[1] / draws - 0.5) < 5 * math.sqrt(0.25 / draws)


def test_augmentation_off_is_plain_simcse() -> None:
    assert build_method("gcse_stage1", {"augmentation": "none"}, "bert-base").augmentations() == {}
    assert build_method("simcse", {}, "bert-base").augmentations() == {}


@pytest.fixture(scope="module")
def sentences(mirror: Path) -> list[str]:
    path = mirror / "data/unlabeled/wiki1m/wiki1m_random10k.txt"
    return path.read_text(encoding="utf-8").splitlines()[:50]


def _trainer(splade: Path, lines: list[str], tmp: Path, method: str, order: str) -> Trainer:
    """gcse_stage1's resolved settings, shrunk: 2 epochs of batch 16, lr 1e-4, fp32."""
    spec = resolve_method(project_config(REPO), "gcse_stage1", "bert-base-uncased")
    small = {"epochs": 2, "batch_size": 16, "learning_rate": 1e-4, "eval_steps": 4}
    model = SentenceEncoder.from_pretrained(str(splade), 0.1)
    return Trainer(
        build_method(method, {}, "splade-tiny"),
        model,
        TrainData({"sentence": lines}),
        TrainSettings.from_dict({**spec["train"], **small, "data_order": order}),
        7,
        lambda encode: 0.0,
        tmp,
        device=torch.device("cpu"),
        progress=False,
    )


@pytest.mark.mirror
def test_fixed_order_repeats_epoch_zeros_permutation(
    splade_tiny: Path, sentences: list[str], tmp_path: Path
) -> None:
    """Released (cl_loader.py L21-23 + a DataLoader without shuffle): batch j of every epoch
    is slice j of one permutation. Shared default: a new permutation per epoch; its epoch 0 is
    the fixed order's."""
    fixed = _trainer(splade_tiny, sentences, tmp_path / "f", "simcse", "fixed")
    fresh = _trainer(splade_tiny, sentences, tmp_path / "e", "simcse", "epoch")
    assert fixed.steps_per_epoch == fresh.steps_per_epoch == 4  # ceil(50 / 16), last batch 2
    epochs = {
        name: [np.concatenate([t.batch_indices(e * 4 + j) for j in range(4)]) for e in (0, 1, 2)]
        for name, t in (("fixed", fixed), ("epoch", fresh))
    }
    once = np.random.default_rng([7, 1, 0]).permutation(50)  # the seed's stream 1, drawn once
    for order in epochs["fixed"]:
        assert order.tolist() == once.tolist()
    assert epochs["epoch"][0].tolist() == once.tolist()
    assert epochs["epoch"][1].tolist() != once.tolist()
    assert sorted(epochs["epoch"][1].tolist()) == list(range(50))
    assert [len(fixed.batch_indices(j)) for j in range(4)] == [16, 16, 16, 2]
    with pytest.raises(ValueError, match="data_order must be one of"):
        order_epoch(1, "sorted")


@pytest.mark.mirror
def test_stage1_augments_each_epoch_anew_and_resumes_the_same(
    splade_tiny: Path, sentences: list[str], tmp_path: Path
) -> None:
    """The trainer applies the method's augmentation to every row at the start of each epoch
    (stream (seed, column, epoch)), tokenizes that, and leaves the caller's data alone; a trainer
    that starts in epoch 1 (a resumed run) trains on the same texts; a short run trains."""
    tr = _trainer(splade_tiny, sentences, tmp_path / "a", "gcse_stage1", "fixed")
    augment = tr.method.augmentations()
    tr.batch_indices(0)
    epoch0 = list(tr.data.columns["sentence"])
    assert epoch0 == augment_columns(augment, {"sentence": sentences}, 7, 0)["sentence"]
    changed = sum(a != b for a, b in zip(epoch0, sentences, strict=True))
    assert 10 <= changed <= 40  # about half of 50 (binomial: 5 standard errors is +-17.7)
    rows = tr._rows("sentence", "train")
    again = tokenize_rows(tr._pooler("train"), tr.model.tokenizer, epoch0, 32)
    assert np.array_equal(rows.tokens, again.tokens)
    tr.batch_indices(5)  # epoch 1
    epoch1 = list(tr.data.columns["sentence"])
    assert epoch1 != epoch0
    assert not np.array_equal(tr._rows("sentence", "train").tokens, rows.tokens)
    resumed = _trainer(splade_tiny, sentences, tmp_path / "b", "gcse_stage1", "fixed")
    resumed.batch_indices(5)
    assert resumed.data.columns["sentence"] == epoch1
    assert TrainData({"sentence": sentences}).columns["sentence"] == sentences  # the caller's list
    run = _trainer(splade_tiny, sentences[:32], tmp_path / "c", "gcse_stage1", "fixed")
    assert run.train().step == 4
