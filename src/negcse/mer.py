"""Word-level match error rate (Morris et al. 2004), as OssCSE uses it to keep paraphrases.

MER = (S + D + I) / (S + D + I + C), with S, D, I, C the substitutions, deletions, insertions
and correct words (hits) of a word alignment of the hypothesis to the reference. The alignment
is a minimum edit (Levenshtein) alignment; among the minimum ones, the one with the most hits
(two alignments with as many edits can trade a substitution pair for a hit plus an
insertion and a deletion). Words are whitespace-separated, punctuation stays attached, and the
comparison ignores case by default: the paper's Example 1 values (0.06 for an inserted "not" in
a 14-word sentence whose "breaking bad" became "Breaking Bad", 0.07, 0.12, 0.13, 1.0) come out
this way, truncated to two decimals.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Alignment:
    hits: int
    substitutions: int
    deletions: int
    insertions: int

    @property
    def errors(self) -> int:
        return self.substitutions + self.deletions + self.insertions

    @property
    def mer(self) -> float:
        total = self.errors + self.hits
        return self.errors / total if total else 0.0


def words(text: str, lowercase: bool = True) -> list[str]:
    return (text.lower() if lowercase else text).split()


def align(reference: Sequence[str], hypothesis: Sequence[str]) -> Alignment:
    """Counts of a minimum-edit word alignment with the most hits (dynamic programming)."""
    n, m = len(reference), len(hypothesis)
    vocab: dict[str, int] = {}
    ref = [vocab.setdefault(w, len(vocab)) for w in reference]
    hyp = [vocab.setdefault(w, len(vocab)) for w in hypothesis]
    # One integer per cell orders (edits ascending, hits descending): edits * k - hits.
    k = min(n, m) + 1
    prev = [j * k for j in range(m + 1)]
    for i in range(1, n + 1):
        a = ref[i - 1]
        cur = [i * k] + [0] * m
        for j in range(1, m + 1):
            diag = prev[j - 1] + (-1 if a == hyp[j - 1] else k)
            up = prev[j] + k
            left = cur[j - 1] + k
            cur[j] = min(diag, up, left)
        prev = cur
    cost = prev[m]
    edits = -(-cost // k)  # ceil: cost = edits * k - hits with 0 <= hits < k
    hits = edits * k - cost
    deletions = edits - (m - hits)  # from n = H + S + D, m = H + S + I, E = S + D + I
    insertions = edits - (n - hits)
    substitutions = n - hits - deletions
    return Alignment(hits, substitutions, deletions, insertions)


def mer(reference: str, hypothesis: str, lowercase: bool = True) -> float:
    """Word-level match error rate of ``hypothesis`` against ``reference`` (0 = same words)."""
    return align(words(reference, lowercase), words(hypothesis, lowercase)).mer
