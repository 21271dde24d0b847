"""Paraphrase positives (UNA, Appendix C.1): beam search with a seq2seq paraphraser.

The paper and the released ``data/augment/paraphrase.py`` use ``tuner007/pegasus_paraphrase``
with 10 beams and one returned sequence, decoded without special tokens, one output line per
corpus line. Here sentences are batched by length (less padding, same outputs up to float
rounding) and every result goes into a SQLite cache keyed by the generation settings, so a
rerun, a killed job or a corpus that grew only paraphrases the sentences it has not seen.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import torch
from tqdm import tqdm

from negcse.io_utils import open_sqlite

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GenerationSettings:
    """What determines a paraphrase (the batch size does not, so it is not here)."""

    model: str
    num_beams: int = 10
    max_length: int = 60
    precision: str = "fp32"

    def key(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


class ParaphraseCache:
    """sentence -> paraphrase for one :class:`GenerationSettings`, in a SQLite file."""

    def __init__(self, path: str | os.PathLike[str], settings: GenerationSettings) -> None:
        self.key = settings.key()
        self.db = open_sqlite(
            path,
            "CREATE TABLE IF NOT EXISTS paraphrase ("
            "settings TEXT NOT NULL, sentence TEXT NOT NULL, paraphrase TEXT NOT NULL, "
            "PRIMARY KEY (settings, sentence))",
        )

    def get_many(self, sentences: Sequence[str], chunk: int = 500) -> dict[str, str]:
        found: dict[str, str] = {}
        unique = list(dict.fromkeys(sentences))
        for start in range(0, len(unique), chunk):
            part = unique[start : start + chunk]
            marks = ",".join("?" * len(part))
            rows = self.db.execute(
                f"SELECT sentence, paraphrase FROM paraphrase WHERE settings = ? "
                f"AND sentence IN ({marks})",
                [self.key, *part],
            )
            found.update(rows)
        return found

    def put_many(self, pairs: Sequence[tuple[str, str]]) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO paraphrase VALUES (?, ?, ?)",
            [(self.key, s, p) for s, p in pairs],
        )
        self.db.commit()

    def __len__(self) -> int:
        (n,) = self.db.execute(
            "SELECT COUNT(*) FROM paraphrase WHERE settings = ?", [self.key]
        ).fetchone()
        return int(n)

    def close(self) -> None:
        self.db.close()


class Paraphraser:
    """A seq2seq model and its tokenizer; :meth:`paraphrase` returns one output per input."""

    def __init__(
        self, model: Any, tokenizer: Any, settings: GenerationSettings, device: torch.device
    ) -> None:
        self.model = model.to(device).eval()
        self.tokenizer = tokenizer
        self.settings = settings
        self.device = device

    @classmethod
    def load(cls, path: str, settings: GenerationSettings, device: torch.device) -> Paraphraser:
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        dtype = torch.bfloat16 if settings.precision == "bf16" else torch.float32
        model = AutoModelForSeq2SeqLM.from_pretrained(path).to(dtype)
        return cls(model, AutoTokenizer.from_pretrained(path), settings, device)

    @torch.no_grad()
    def paraphrase(self, sentences: Sequence[str]) -> list[str]:
        """One batch: beam search, one returned sequence each, special tokens dropped."""
        if not sentences:
            return []
        inputs = self.tokenizer(
            list(sentences),
            truncation=True,
            max_length=self.settings.max_length,
            padding="longest",
            return_tensors="pt",
        ).to(self.device)
        outputs = self.model.generate(
            input_ids=inputs["input_ids"],
            attention_mask=inputs["attention_mask"],
            num_beams=self.settings.num_beams,
            num_return_sequences=1,
            max_length=self.settings.max_length,
        )
        texts = self.tokenizer.batch_decode(outputs, skip_special_tokens=True)
        return [" ".join(t.split()) for t in texts]  # one line each: no newlines or tabs


@dataclass
class ParaphraseStats:
    sentences: int = 0
    unique: int = 0
    cached: int = 0
    generated: int = 0
    empty_outputs: int = 0


def _length_batches(
    sentences: Sequence[str], tokenizer: Any, batch_size: int
) -> Iterator[list[str]]:
    """Batches of similar token length (longest first, so memory problems show up at once)."""
    lengths = [len(ids) for ids in tokenizer(list(sentences), truncation=False)["input_ids"]]
    order = sorted(range(len(sentences)), key=lambda i: -lengths[i])
    for start in range(0, len(order), batch_size):
        yield [sentences[i] for i in order[start : start + batch_size]]


def paraphrase_corpus(
    sentences: Sequence[str],
    cache: ParaphraseCache,
    load: Callable[[], Paraphraser],
    batch_size: int = 32,
    progress: bool = True,
) -> tuple[list[str], ParaphraseStats]:
    """One paraphrase per line, aligned; only sentences missing from ``cache`` are generated.

    ``load`` is called (once) only if something is missing. An empty line gives an empty
    paraphrase without calling the model."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    stats = ParaphraseStats(sentences=len(sentences))
    known = cache.get_many(sentences)
    known[""] = ""
    todo = [s for s in dict.fromkeys(sentences) if s not in known]
    stats.unique = len(set(sentences))
    stats.cached = len({s for s in known if s} & set(sentences))
    logger.info(
        "%d sentences, %d distinct: %d in the cache, %d to paraphrase",
        stats.sentences,
        stats.unique,
        stats.cached,
        len(todo),
    )
    if todo:
        paraphraser = load()
        with tqdm(total=len(todo), desc="paraphrase", unit="sent", disable=not progress) as bar:
            for batch in _length_batches(todo, paraphraser.tokenizer, batch_size):
                outputs = paraphraser.paraphrase(batch)
                cache.put_many(list(zip(batch, outputs, strict=True)))
                known.update(zip(batch, outputs, strict=True))
                stats.generated += len(batch)
                bar.update(len(batch))
    result = [known[s] for s in sentences]
    stats.empty_outputs = sum(1 for s, p in zip(sentences, result, strict=True) if s and not p)
    return result, stats


@contextlib.contextmanager
def open_cache(
    path: str | os.PathLike[str], settings: GenerationSettings
) -> Iterator[ParaphraseCache]:
    cache = ParaphraseCache(path, settings)
    try:
        yield cache
    finally:
        cache.close()
