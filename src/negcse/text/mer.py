"""Word-level match error rate (Morris et al. 2004), as OssCSE uses it to keep paraphrases.

MER = (S + D + I) / (S + D + I + C), with S, D, I, C the substitutions, deletions, insertions
and correct words (hits) of a word alignment of the hypothesis to the reference. The alignment
is a minimum edit (Levenshtein) alignment; two minimum alignments can trade a substitution pair
for a hit plus an insertion and a deletion, so the choice among them matters:
``backtrace`` (default) is the one jiwer / rapidfuzz report, the usual MER tool;
``max_hits`` keeps the most hits. This one module serves both the OssCSE paraphrase filter
(:mod:`negcse.generators.backtranslation`) and the Cont./Oppn. splits (:mod:`negcse.evaluation.splits`). Words are whitespace-separated, punctuation stays attached, and the
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


def backtrace_alignment(reference: Sequence[str], hypothesis: Sequence[str]) -> Alignment:
    """Counts of the minimum-edit alignment that jiwer/rapidfuzz report.

    The common prefix and suffix are hits; on the rest, D[i][j] (edit distance of the first i
    reference and j hypothesis words) is walked back from the end, preferring at each cell a
    deletion (D[i][j] = D[i-1][j] + 1), then an insertion (when j > 1 and
    D[i][j-1] = D[i-1][j-1] - 1), then the diagonal (a hit or a substitution); words left over
    at the start are deletions or insertions. This is Hyyrö's bit-parallel backtrace written
    on the full matrix.
    """
    n, m = len(reference), len(hypothesis)
    pre = 0
    while pre < min(n, m) and reference[pre] == hypothesis[pre]:
        pre += 1
    suf = 0
    while suf < min(n, m) - pre and reference[n - 1 - suf] == hypothesis[m - 1 - suf]:
        suf += 1
    a, b = reference[pre : n - suf], hypothesis[pre : m - suf]
    la, lb = len(a), len(b)
    dist = [list(range(lb + 1))]  # dist[i][j]
    for i in range(1, la + 1):
        prev, row = dist[-1], [i] + [0] * lb
        for j in range(1, lb + 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
        dist.append(row)
    hits, subs, dels, ins = pre + suf, 0, 0, 0
    i, j = la, lb
    while i and j:
        if dist[i][j] == dist[i - 1][j] + 1:
            dels += 1
            i -= 1
        elif j > 1 and dist[i][j - 1] == dist[i - 1][j - 1] - 1:
            ins += 1
            j -= 1
        else:
            i -= 1
            j -= 1
            if a[i] == b[j]:
                hits += 1
            else:
                subs += 1
    return Alignment(hits, subs, dels + i, ins + j)


ALIGNMENTS = ("backtrace", "max_hits")
DEFAULT_ALIGNMENT = "backtrace"


def alignment_of(
    reference: Sequence[str], hypothesis: Sequence[str], alignment: str = DEFAULT_ALIGNMENT
) -> Alignment:
    """Counts of the minimum-edit word alignment named ``alignment``."""
    if alignment == "backtrace":
        return backtrace_alignment(reference, hypothesis)
    if alignment == "max_hits":
        return align(reference, hypothesis)
    raise ValueError(f"unknown alignment '{alignment}'; known: {', '.join(ALIGNMENTS)}")


def mer(
    reference: str, hypothesis: str, lowercase: bool = True, alignment: str = DEFAULT_ALIGNMENT
) -> float:
    """Word-level match error rate of ``hypothesis`` against ``reference`` (0 = same words)."""
    return alignment_of(words(reference, lowercase), words(hypothesis, lowercase), alignment).mer
