"""What one epoch trains on: the order of the examples and the methods' augmented columns.

Data order (``TrainSettings.data_order``): ``epoch`` draws a seeded permutation of the corpus for
each epoch (the shared default, as the HF Trainer's RandomSampler reshuffles); ``fixed`` draws
one, epoch 0's, and repeats it every epoch, as GCSE's released loaders do (``cl_loader.py``
L21-23: one ``random.shuffle`` of the indices when the dataset is built, and a DataLoader
without shuffling). Epoch 0 is the same permutation under both.

Augmentation (``Method.augmentations``): each augmented text column is rewritten row by row at
the start of every epoch from a stream seeded by (seed, column, epoch), so the draws differ
between epochs (the released loader draws at every fetch, i.e. once per row and epoch) and a
resumed run draws the same texts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from negcse.methods.base import Augmentation
from negcse.runtime.seed import numpy_rng, python_rng

DATA_ORDERS = ("epoch", "fixed")


def order_epoch(epoch: int, data_order: str) -> int:
    """The epoch whose permutation ``epoch`` uses: its own, or epoch 0's (``fixed``)."""
    if data_order not in DATA_ORDERS:
        raise ValueError(f"data_order must be one of {DATA_ORDERS}, got {data_order!r}")
    return 0 if data_order == "fixed" else epoch


def permutation(seed: int, epoch: int, n: int) -> np.ndarray:
    """The seeded order of the ``n`` examples drawn for ``epoch`` (stream 1 of the seed)."""
    return numpy_rng(seed, 1, epoch).permutation(n)


def augment_columns(
    augmentations: Mapping[str, Augmentation],
    originals: Mapping[str, Sequence[str]],
    seed: int,
    epoch: int,
) -> dict[str, list[str]]:
    """Each augmented column's texts for ``epoch``: every row of the original column through
    the column's augmentation, in row order, from one stream per (seed, column, epoch)."""
    out = {}
    for column, augment in augmentations.items():
        rng = python_rng(seed, "augment", column, epoch)
        out[column] = [augment(text, rng) for text in originals[column]]
    return out
