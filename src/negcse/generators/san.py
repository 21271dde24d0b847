"""SAN: syntactically aligned negatives by iterated, POS-weighted mask-predict with an MLM.

Per sentence, ``iterations`` (4) times: mask each token with probability score(token) / scale
(:mod:`negcse.generators.pos_lexicon`, Table 2 scores, scale 20), let the MLM predict, keep the
prediction (argmax) and re-mask that output in the next iteration. A degenerate result (empty,
or at most 50 characters with punctuation / (punctuation + spaces) >= 0.3) is replaced by the
sentence's SNCSE negation as a post-processing step (:func:`apply_fallback`).

Two modes:

- default: the sentence is tokenized once and the four iterations run on token ids. Only masked
  positions take the MLM's prediction, restricted to ordinary tokens of the same kind (a word
  start for a word start, a ``##`` piece for a ``##`` piece; never a special or unused token), so
  the token count is kept. The MLM head runs on the masked positions only. The output is the
  original text with each changed token's character span replaced by the new token, so unchanged
  text keeps its case and spacing. Tokens beyond ``max_tokens`` are kept as they are.
- ``reference_quirks=True``: the released ``corpus-handle/handle.py`` loop. Lines are cut to 300
  characters; every iteration appends ``.`` to a text without final ASCII punctuation, tokenizes
  it, masks, and replaces *every* position by the MLM's argmax (special predictions vanish in
  decoding, ``##`` pieces merge with their neighbours); the lowercased decoded text feeds the next
  iteration.

Randomness: the masks are drawn with :func:`negcse.runtime.seed.numpy_rng` per chunk of ``chunk_size``
corpus lines and per iteration, so the output depends on the seed and the chunk size, not on the
batch size, the length sorting or the device (up to floating-point ties of the MLM's argmax).
"""

from __future__ import annotations

import logging
import string
from collections.abc import Iterable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from tqdm.auto import tqdm

from negcse.data.sources import resolve_model
from negcse.generators.pos_lexicon import PIECE, WORD, PosLexicon, token_kinds
from negcse.generators.specs.san import DEFAULT_CHUNK
from negcse.runtime.device import resolve_device
from negcse.runtime.lazy import LazyModule
from negcse.runtime.seed import numpy_rng

if TYPE_CHECKING:
    import negcse.generators.negation as negation
else:  # spaCy: imported when a fallback negates, not with this module (negcse.runtime.lazy)
    negation = LazyModule("negcse.generators.negation")

logger = logging.getLogger(__name__)

PUNCTUATION = frozenset(string.punctuation)
SAN_STREAM = 7  # numpy_rng sub-stream of SAN masks
REFERENCE_MAX_CHARS = 300  # handle.py: sentence[:300]
FALLBACK_MAX_CHARS = 50
FALLBACK_MIN_RATIO = 0.3
HEAD_ROWS = 256  # reference mode: token positions per call of the vocabulary head


@dataclass(frozen=True)
class SanParams:
    iterations: int = 4
    scale: float = 20.0
    reference_quirks: bool = False
    #: default mode: tokens (specials included) the MLM sees; the rest is kept unchanged
    max_tokens: int = 128
    batch_size: int = 64

    def __post_init__(self) -> None:
        if self.iterations < 1 or self.batch_size < 1 or self.max_tokens < 3:
            raise ValueError("iterations, batch_size >= 1 and max_tokens >= 3 required")
        if self.scale <= 0:
            raise ValueError(f"scale must be > 0, got {self.scale}")


@dataclass
class SanStats:
    sentences: int = 0
    tokens: int = 0  # maskable tokens seen in the first iteration (default mode)
    masked: int = 0  # mask draws over all iterations
    changed_tokens: int = 0  # positions whose final token differs from the original
    unchanged_sentences: int = 0  # default mode
    truncated: int = 0  # sentences longer than max_tokens (tail kept) / 300 chars (quirks)
    degenerate: int = 0  # samples failing the released check_puncts
    fallbacks: int = 0  # of those, replaced by the SNCSE negation
    changed_by_score: dict[int, list[int]] = field(default_factory=dict)  # score -> [n, changed]

    def add_scores(self, scores: np.ndarray, changed: np.ndarray) -> None:
        for s in np.unique(scores):
            sel = scores == s
            row = self.changed_by_score.setdefault(int(s), [0, 0])
            row[0] += int(sel.sum())
            row[1] += int(changed[sel].sum())


# -- the degenerate-output fallback ---------------------------------------------------------------


def is_degenerate(text: str) -> bool:
    """The released ``check_puncts`` failing: empty, or <= 50 chars and mostly punctuation.

    Ratio = ASCII punctuation characters / (punctuation + spaces); a text without either passes.
    """
    if not text.strip():
        return True
    if len(text) > FALLBACK_MAX_CHARS:
        return False
    puncts = sum(ch in PUNCTUATION for ch in text)
    spaces = text.count(" ")
    return puncts + spaces > 0 and puncts / (puncts + spaces) >= FALLBACK_MIN_RATIO


def apply_fallback(
    samples: Sequence[str], sentences: Sequence[str], progress: bool = False
) -> tuple[list[str], int]:
    """Replace each degenerate sample by the SNCSE negation of its sentence; returns the count.

    The negation is the rule output for the stripped sentence (tabs as spaces), i.e. the
    released ``neg_soft`` column that the released trainers substitute.
    """
    bad = [i for i, s in enumerate(samples) if is_degenerate(s)]
    out = list(samples)
    if bad:
        texts = [sentences[i].strip().replace("\t", " ") for i in bad]
        negations = negation.negate_raw(texts, style="sncse", progress=progress)
        for i, neg in zip(bad, negations, strict=True):
            out[i] = neg
    return out, len(bad)


# -- the MLM --------------------------------------------------------------------------------------


class MaskPredictor:
    """An MLM, its tokenizer and the lexicon's mask probabilities, ready for batched filling.

    Default-mode filling runs the encoder on the batch and the MLM head only on the masked rows;
    the head's vocabulary projection is split by token kind, so a masked word start is scored
    against the ordinary word starts only and a masked continuation against the continuations.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        lexicon: PosLexicon,
        scale: float,
        device: torch.device | None = None,
    ) -> None:
        if len(lexicon) != len(tokenizer):
            raise ValueError(
                f"lexicon has {len(lexicon)} entries but the tokenizer {len(tokenizer)}; "
                "build the lexicon from this MLM's tokenizer"
            )
        self.device = device or resolve_device()
        self.model = model.to(self.device).eval()
        self.tokenizer = tokenizer
        self.lexicon = lexicon
        self.probs = torch.from_numpy(lexicon.mask_probabilities(scale)).to(self.device)
        _, kinds = token_kinds(tokenizer)
        self.piece_kind = kinds == PIECE
        self.is_piece = torch.from_numpy(self.piece_kind).to(self.device)
        # candidates per kind of the masked token (0: word start, 1: continuation)
        self.candidates = [
            torch.from_numpy(np.flatnonzero(kinds == k)).to(self.device) for k in (WORD, PIECE)
        ]
        self.base = getattr(model, getattr(model, "base_model_prefix", ""), None)
        self.head = next((getattr(model, n) for n in ("cls", "lm_head") if hasattr(model, n)), None)
        decoder = model.get_output_embeddings()
        self._slot = next(
            (
                (parent, name)
                for parent in (self.head.modules() if self.head is not None else ())
                for name, child in parent.named_children()
                if child is decoder
            ),
            None,
        )
        if self.base is None or self._slot is None:
            logger.info("%s: no separable MLM head; the head runs on every position", type(model))
            self._slot = None
            self.weights: list[tuple[torch.Tensor, torch.Tensor | None]] = []
        else:
            bias = decoder.bias
            self.weights = [
                (
                    decoder.weight.detach()[c].contiguous(),
                    None if bias is None else bias.detach()[c].contiguous(),
                )
                for c in self.candidates
            ]

    @classmethod
    def load(
        cls,
        name_or_path: str,
        lexicon: PosLexicon,
        scale: float,
        mirror: str | None = None,
        device: torch.device | None = None,
    ) -> MaskPredictor:
        from transformers import AutoModelForMaskedLM, AutoTokenizer

        path = resolve_model(name_or_path, mirror)
        return cls(
            AutoModelForMaskedLM.from_pretrained(path),
            AutoTokenizer.from_pretrained(path),
            lexicon,
            scale,
            device,
        )

    def _amp(self) -> Any:
        if self.device.type == "cuda":
            return torch.autocast("cuda", dtype=torch.float16)
        return nullcontext()

    def _features(self, hidden: torch.Tensor) -> torch.Tensor:
        """The MLM head up to (not including) the vocabulary projection."""
        assert self._slot is not None and self.head is not None
        parent, name = self._slot
        decoder = getattr(parent, name)
        setattr(parent, name, torch.nn.Identity())
        try:
            return self.head(hidden)
        finally:
            setattr(parent, name, decoder)

    @torch.inference_mode()
    def fill_masked(
        self, ids: torch.Tensor, attn: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        """Default mode: argmax of the same token kind at masked positions; others unchanged."""
        rows, cols = mask.nonzero(as_tuple=True)
        if rows.numel() == 0:
            return ids
        masked_ids = ids.masked_fill(mask, self.tokenizer.mask_token_id)
        kind = self.is_piece[ids[rows, cols]]
        out = ids.clone()
        with self._amp():
            if self._slot is not None:
                hidden = self.base(input_ids=masked_ids, attention_mask=attn).last_hidden_state
                feats = self._features(hidden[rows, cols]).float()
            else:
                logits = self.model(input_ids=masked_ids, attention_mask=attn).logits[rows, cols]
            for k, cand in enumerate(self.candidates):
                sel = kind if k else ~kind
                if not bool(sel.any()):
                    continue
                if self._slot is not None:
                    weight, bias = self.weights[k]
                    if bias is None:
                        scores = feats[sel] @ weight.float().T
                    else:
                        scores = torch.addmm(bias.float(), feats[sel], weight.float().T)
                else:
                    scores = logits[sel][:, cand]
                out[rows[sel], cols[sel]] = cand[scores.argmax(dim=-1)]
        return out

    @torch.inference_mode()
    def fill_all(self, ids: torch.Tensor, attn: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Reference mode: greedy argmax at every position (handle.py's ``replace_with_mask``).

        The vocabulary head (most of the cost) runs on the positions whose prediction is kept
        only, not on padding, [CLS] or [SEP], in blocks of ``HEAD_ROWS`` rows, so no
        batch x length x vocabulary logits tensor is ever allocated."""
        cls_id, sep_id = self.tokenizer.cls_token_id, self.tokenizer.sep_token_id
        masked_ids = ids.masked_fill(mask, self.tokenizer.mask_token_id)
        special = (masked_ids == cls_id) | (masked_ids == sep_id)
        with self._amp():
            if self.base is None or self.head is None:
                pred = self.model(input_ids=masked_ids, attention_mask=attn).logits.argmax(-1)
                pred = pred * attn
            else:
                hidden = self.base(input_ids=masked_ids, attention_mask=attn).last_hidden_state
                rows, cols = (attn.bool() & ~special).nonzero(as_tuple=True)
                pred = torch.zeros_like(ids)
                for start in range(0, rows.numel(), HEAD_ROWS):
                    r, c = rows[start : start + HEAD_ROWS], cols[start : start + HEAD_ROWS]
                    pred[r, c] = self.head(hidden[r, c]).argmax(dim=-1)
        pred[masked_ids == cls_id] = cls_id
        pred[masked_ids == sep_id] = sep_id
        return pred


# -- generation -----------------------------------------------------------------------------------


def _pad(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    attn = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.as_tensor(r, dtype=torch.long)
        attn[i, : len(r)] = 1
    return ids, attn


def _batches(lengths: Sequence[int], batch_size: int) -> Iterator[np.ndarray]:
    """Row indices in length-sorted batches (longest first: less padding)."""
    order = np.argsort(-np.asarray(lengths), kind="stable")
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


def _splice(
    text: str,
    offsets: Sequence[tuple[int, int]],
    new: Sequence[str | None],
    word_start: Sequence[bool],
) -> str:
    """``text`` with the span of each token whose ``new`` is not None replaced by it.

    Two tokens with no gap between them are a word and punctuation (or a word and its ``##``
    piece); when a replacement makes both sides alphanumeric at a word start, a space keeps them
    two words (``School.`` -> ``School brothers``, not ``Schoolbrothers``).
    """
    parts: list[str] = []
    pos = 0
    prev_changed = False
    for (start, end), piece, word in zip(offsets, new, word_start, strict=True):
        if start < pos:  # overlapping spans (normalization): keep the first
            continue
        gap = text[pos:start]
        segment = text[start:end] if piece is None else piece
        if (
            not gap
            and word
            and (piece is not None or prev_changed)
            and parts
            and parts[-1][-1:].isalnum()
            and segment[:1].isalnum()
        ):
            parts.append(" ")
        parts.append(gap)
        parts.append(segment)
        pos = end
        prev_changed = piece is not None
    parts.append(text[pos:])
    return "".join(parts)


class SanGenerator:
    def __init__(self, predictor: MaskPredictor, params: SanParams) -> None:
        self.p = predictor
        self.params = params
        self.tok = predictor.tokenizer

    def _piece_text(self, token_id: int) -> str:
        token = self.tok.convert_ids_to_tokens(token_id)
        if token.startswith("##") and len(token) > 2:
            return token[2:]
        return str(self.tok.convert_tokens_to_string([token])).strip()

    # default mode ---------------------------------------------------------------------------
    def mask_predict_ids(
        self, seqs: list[list[int]], rng: np.random.Generator, stats: SanStats | None = None
    ) -> list[list[int]]:
        """The iterations on token id sequences ([CLS] ... [SEP]); same lengths out."""
        it = self.params.iterations
        width = max(len(s) for s in seqs)
        draws = rng.random((it, len(seqs), width))
        out: list[list[int]] = [list(s) for s in seqs]
        pad = self.tok.pad_token_id
        for rows in _batches([len(s) for s in seqs], self.params.batch_size):
            ids, attn = _pad([seqs[r] for r in rows], pad)
            ids, attn = ids.to(self.p.device), attn.to(self.p.device)
            u = torch.from_numpy(draws[:, rows, : ids.shape[1]]).to(self.p.device)
            for k in range(it):
                mask = (u[k] < self.p.probs[ids]) & attn.bool()
                if stats is not None:
                    stats.masked += int(mask.sum())
                ids = self.p.fill_masked(ids, attn, mask)
            ids = ids.cpu()
            for j, r in enumerate(rows):
                out[r] = ids[j, : len(seqs[r])].tolist()
        return out

    def _generate_default(
        self, sentences: Sequence[str], rng: np.random.Generator, stats: SanStats
    ) -> list[str]:
        enc = self.tok(
            list(sentences),
            add_special_tokens=False,
            return_offsets_mapping=True,
            return_attention_mask=False,
            return_token_type_ids=False,
        )
        window = self.params.max_tokens - 2
        cls_id, sep_id = self.tok.cls_token_id, self.tok.sep_token_id
        seqs = [[cls_id, *ids[:window], sep_id] for ids in enc["input_ids"]]
        stats.truncated += sum(len(ids) > window for ids in enc["input_ids"])
        new_seqs = self.mask_predict_ids(seqs, rng, stats)
        out = []
        for text, old, new, offsets in zip(
            sentences, seqs, new_seqs, enc["offset_mapping"], strict=True
        ):
            old_a = np.asarray(old[1:-1], dtype=np.int64)
            new_a = np.asarray(new[1:-1], dtype=np.int64)
            changed = old_a != new_a
            stats.tokens += len(old_a)
            stats.changed_tokens += int(changed.sum())
            stats.unchanged_sentences += int(not changed.any())
            stats.add_scores(self.p.lexicon.scores[old_a], changed)
            pieces = [
                self._piece_text(int(t)) if c else None for t, c in zip(new_a, changed, strict=True)
            ]
            words = (~self.p.piece_kind[old_a]).tolist()
            out.append(_splice(text, offsets[: len(pieces)], pieces, words))
        return out

    # reference mode -------------------------------------------------------------------------
    def _generate_reference(
        self, sentences: Sequence[str], rng: np.random.Generator, stats: SanStats
    ) -> list[str]:
        texts = [s.strip().replace("\t", " ") for s in sentences]
        stats.truncated += sum(len(t) > REFERENCE_MAX_CHARS for t in texts)
        texts = [t[:REFERENCE_MAX_CHARS] for t in texts]
        max_len = min(int(self.tok.model_max_length), 512)
        for _ in range(self.params.iterations):
            # handle.py appends "." to a text whose last character is not ASCII punctuation
            # (and crashes on an empty one; here it becomes ".")
            texts = [t + "." if not t or t[-1] not in PUNCTUATION else t for t in texts]
            ids_list = self.tok(texts, truncation=True, max_length=max_len)["input_ids"]
            draws = rng.random((len(texts), max(len(x) for x in ids_list)))
            new_texts = list(texts)
            for rows in _batches([len(x) for x in ids_list], self.params.batch_size):
                ids, attn = _pad([ids_list[r] for r in rows], self.tok.pad_token_id)
                ids, attn = ids.to(self.p.device), attn.to(self.p.device)
                u = torch.from_numpy(draws[rows, : ids.shape[1]]).to(self.p.device)
                mask = (u < self.p.probs[ids]) & attn.bool()
                stats.masked += int(mask.sum())
                pred = self.p.fill_all(ids, attn, mask).cpu()
                decoded = self.tok.batch_decode(
                    pred, skip_special_tokens=True, clean_up_tokenization_spaces=True
                )
                for r, d in zip(rows, decoded, strict=True):
                    new_texts[r] = d.strip().replace("\t", " ")
            texts = new_texts
        return texts

    # public ---------------------------------------------------------------------------------
    def generate_chunk(
        self, sentences: Sequence[str], rng: np.random.Generator, stats: SanStats
    ) -> list[str]:
        """SAN samples of one chunk (no fallback)."""
        stats.sentences += len(sentences)
        if not sentences:
            return []
        if self.params.reference_quirks:
            return self._generate_reference(sentences, rng, stats)
        return self._generate_default(sentences, rng, stats)

    def iter_generate(
        self,
        sentences: Iterable[str],
        seed: int,
        *,
        chunk_size: int = DEFAULT_CHUNK,
        fallback: bool = True,
        stats: SanStats | None = None,
        progress: bool = False,
        total: int | None = None,
    ) -> Iterator[str]:
        """One SAN sample per sentence, in order; chunk ``c`` draws from numpy_rng(seed, 7, c)."""
        stats = stats if stats is not None else SanStats()
        bar = tqdm(
            total=total, desc="SAN mask-predict", unit="sent", disable=not progress, mininterval=2
        )
        chunk: list[str] = []
        index = 0

        def flush() -> list[str]:
            nonlocal index
            rng = numpy_rng(seed, SAN_STREAM, index)
            out = self.generate_chunk(chunk, rng, stats)
            if fallback:
                out, n = apply_fallback(out, chunk)
                stats.degenerate += n
                stats.fallbacks += n
            else:
                stats.degenerate += sum(map(is_degenerate, out))
            index += 1
            bar.update(len(chunk))
            return out

        for sentence in sentences:
            chunk.append(sentence)
            if len(chunk) == chunk_size:
                yield from flush()
                chunk = []
        if chunk:
            yield from flush()
        bar.close()

    def generate(self, sentences: Sequence[str], seed: int, **kwargs: Any) -> list[str]:
        return list(self.iter_generate(sentences, seed, **kwargs))
