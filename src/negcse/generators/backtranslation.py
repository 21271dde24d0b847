"""OssCSE paraphrases: back-translation candidates, kept when their word MER is in a band.

Paper (Section 4, Step 2 and Appendix A): translate each sentence en -> de -> en and en -> ru ->
en with the ``facebook/wmt19-*`` models and keep a round trip whose word-level MER against the
sentence is within [0.15, 0.6] (lower: too close in surface form; higher: likely corrupted).

- :func:`back_translate`: one round trip per sentence through a pivot language, with the
  project's cached seq2seq generator (:mod:`negcse.generators.paraphrase`: length-sorted
  batches, beam search, every output stored in a SQLite cache keyed by the model and the
  generation settings, so a killed or repeated job only translates what it has not seen).
- :func:`surface_edits`: the offline fallback candidate source (the translation models are not
  in the offline mirror): EDA-style random deletions and swaps of words. It is not a
  paraphraser; it changes the surface form while keeping the words, so the MER band, the file
  layout and the margin loss run as in the paper's setting.
- :func:`select_paraphrases`: per sentence, the candidates within the MER band; one of them is
  drawn (seeded) when several qualify. A sentence with no qualifying candidate gets itself (MER
  0) and is counted: the trainer needs a line for every corpus line.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tqdm.auto import tqdm

from negcse.data.sources import resolve_model
from negcse.encoders.pretrained import default_device
from negcse.generators.paraphrase import (
    GenerationSettings,
    Paraphraser,
    open_cache,
    paraphrase_corpus,
)
from negcse.runtime.seed import numpy_rng
from negcse.text.mer import DEFAULT_ALIGNMENT, alignment_of, words

logger = logging.getLogger(__name__)

SURFACE_EDITS_STREAM = 7  # numpy_rng sub-stream of the fallback candidates
SELECTION_STREAM = 8  # numpy_rng sub-stream of the choice among kept candidates

Loader = Callable[[str, GenerationSettings], Paraphraser]


def load_translator(
    name: str, settings: GenerationSettings, mirror: str | None = None
) -> Paraphraser:
    """The translation model ``name`` (hub id or folder, found by :func:`resolve_model`)."""
    return Paraphraser.load(resolve_model(name, mirror), settings, default_device())


@dataclass
class BackTranslationStats:
    sentences: int = 0
    forward_generated: int = 0
    backward_generated: int = 0
    empty_outputs: int = 0


def back_translate(
    sentences: Sequence[str],
    forward: str,
    backward: str,
    cache_path: str | Path,
    *,
    num_beams: int = 5,
    max_length: int = 128,
    precision: str = "fp32",
    batch_size: int = 64,
    load: Loader = load_translator,
    progress: bool = True,
) -> tuple[list[str], BackTranslationStats]:
    """Round trips sentence -> pivot -> English, aligned with ``sentences``.

    ``forward`` and ``backward`` name the two translation models; a name keys the cache and
    goes to ``load`` only when something is not cached. Both directions share the SQLite file at
    ``cache_path`` under different keys.
    """
    stats = BackTranslationStats(sentences=len(sentences))
    texts: Sequence[str] = sentences
    for step, name in enumerate((forward, backward)):
        settings = GenerationSettings(
            model=name, num_beams=num_beams, max_length=max_length, precision=precision
        )
        with open_cache(cache_path, settings) as cache:
            texts, gen = paraphrase_corpus(
                list(texts),
                cache,
                lambda name=name, settings=settings: load(name, settings),
                batch_size,
                progress=progress,
            )
        if step == 0:
            stats.forward_generated = gen.generated
        else:
            stats.backward_generated = gen.generated
    stats.empty_outputs = sum(1 for s, t in zip(sentences, texts, strict=True) if s and not t)
    return list(texts), stats


def surface_edits(sentences: Sequence[str], rate: float, seed: int) -> list[str]:
    """Fallback candidates: each word deleted with probability ``rate``, then
    round(rate * n) random swaps of two word positions (EDA's RD and RS). Never empties a
    sentence; seeded by (seed, stream), so the output depends on the input order and seed only."""
    if not 0 <= rate < 1:
        raise ValueError(f"rate must be in [0, 1), got {rate}")
    rng = numpy_rng(seed, SURFACE_EDITS_STREAM)
    out = []
    for sentence in sentences:
        tokens = sentence.split()
        n = len(tokens)
        if n < 2:
            out.append(sentence.strip())
            continue
        keep = rng.random(n) >= rate
        if not keep.any():
            keep[rng.integers(n)] = True
        kept = [t for t, k in zip(tokens, keep, strict=True) if k]
        for _ in range(round(rate * n)):
            if len(kept) < 2:
                break
            i, j = rng.choice(len(kept), size=2, replace=False)
            kept[i], kept[j] = kept[j], kept[i]
        out.append(" ".join(kept))
    return out


@dataclass
class SelectionStats:
    sentences: int = 0
    kept: int = 0  # sentences with at least one candidate in the band
    fallback_to_sentence: int = 0
    below_band: dict[str, int] = field(default_factory=dict)  # per source: MER < low
    above_band: dict[str, int] = field(default_factory=dict)  # per source: MER > high
    chosen: dict[str, int] = field(default_factory=dict)  # per source: picked
    mean_mer_kept: float | None = None  # over the kept paraphrases

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def select_paraphrases(
    sentences: Sequence[str],
    candidates: Mapping[str, Sequence[str]],
    low: float = 0.15,
    high: float = 0.6,
    seed: int = 0,
    lowercase: bool = True,
    progress: bool = False,
    alignment: str = DEFAULT_ALIGNMENT,
) -> tuple[list[str], SelectionStats]:
    """One paraphrase per sentence: a candidate with low <= MER <= high (drawn uniformly, seeded,
    when several qualify), else the sentence itself."""
    if not 0 <= low <= high <= 1:
        raise ValueError(f"need 0 <= low <= high <= 1, got [{low}, {high}]")
    for source, values in candidates.items():
        if len(values) != len(sentences):
            raise ValueError(
                f"candidates '{source}' have {len(values)} lines, the corpus {len(sentences)}"
            )
    sources = list(candidates)
    stats = SelectionStats(
        sentences=len(sentences),
        below_band=dict.fromkeys(sources, 0),
        above_band=dict.fromkeys(sources, 0),
        chosen=dict.fromkeys(sources, 0),
    )
    draws = numpy_rng(seed, SELECTION_STREAM).random(len(sentences))
    out: list[str] = []
    mer_sum = 0.0
    for i, sentence in enumerate(tqdm(sentences, desc="MER", disable=not progress)):
        ref = words(sentence, lowercase)
        ok: list[tuple[str, str, float]] = []
        for source in sources:
            text = candidates[source][i]
            value = alignment_of(ref, words(text, lowercase), alignment).mer
            if value < low:
                stats.below_band[source] += 1
            elif value > high:
                stats.above_band[source] += 1
            else:
                ok.append((source, text, value))
        if ok:
            source, text, value = ok[int(draws[i] * len(ok))]
            stats.kept += 1
            stats.chosen[source] += 1
            mer_sum += value
            out.append(text)
        else:
            stats.fallback_to_sentence += 1
            out.append(sentence.strip())
    stats.mean_mer_kept = mer_sum / stats.kept if stats.kept else None
    logger.info(
        "paraphrases: %d of %d sentences have a candidate with MER in [%g, %g] (%s); "
        "%d fall back to the sentence itself",
        stats.kept,
        stats.sentences,
        low,
        high,
        ", ".join(f"{s}: {stats.chosen[s]} chosen" for s in sources),
        stats.fallback_to_sentence,
    )
    return out, stats
