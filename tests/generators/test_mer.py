"""Word-level MER against hand-worked alignments and the OssCSE paper's Example 1 values."""

from __future__ import annotations

import math

import pytest

from negcse.text.mer import Alignment, align, mer, words


def test_identical_and_disjoint() -> None:
    assert mer("the cat sat", "the cat sat") == 0.0
    # 3 substitutions, 0 hits -> 3 / 3
    assert align(words("a b c"), words("x y z")) == Alignment(0, 3, 0, 0)
    assert mer("a b c", "x y z") == 1.0
    assert mer("", "") == 0.0
    assert mer("a b", "") == 1.0  # two deletions


@pytest.mark.parametrize(
    ("reference", "hypothesis", "expected"),
    [
        # one insertion: E = 1, C = 3 -> 1/4
        ("the cat sat", "the black cat sat", Alignment(3, 0, 0, 1)),
        # one deletion: E = 1, C = 3 -> 1/4
        ("the black cat sat", "the cat sat", Alignment(3, 0, 1, 0)),
        # one substitution: E = 1, C = 2 -> 1/3
        ("the cat sat", "the dog sat", Alignment(2, 1, 0, 0)),
        # substitution + insertion: "return" -> "come back"
        ("he will return soon", "he will come back soon", Alignment(3, 1, 0, 1)),
        # swap of two words: two substitutions (or D + I around a hit: 2 edits, 2 hits)
        ("a b c", "a c b", Alignment(2, 0, 1, 1)),
    ],
)
def test_hand_worked_alignments(reference: str, hypothesis: str, expected: Alignment) -> None:
    got = align(words(reference), words(hypothesis))
    assert got == expected
    assert math.isclose(
        mer(reference, hypothesis), expected.errors / (expected.errors + expected.hits)
    )


def test_tie_between_minimum_alignments_takes_the_most_hits() -> None:
    # "a b" -> "b c": S(a->b) + S(b->c) and D(a) + hit(b) + I(c) both cost 2 edits;
    # MER = 2/2 = 1.0 for the first, 2/3 for the second (the one with a hit).
    got = align(["a", "b"], ["b", "c"])
    assert got == Alignment(hits=1, substitutions=0, deletions=1, insertions=1)
    assert math.isclose(got.mer, 2 / 3)


def test_counts_add_up_on_longer_pairs() -> None:
    ref = words("one two three four five six seven eight")
    hyp = words("two three 4 five seven eight nine ten")
    a = align(ref, hyp)
    assert a.hits + a.substitutions + a.deletions == len(ref)
    assert a.hits + a.substitutions + a.insertions == len(hyp)
    # by hand: D(one), hits two three, S(four->4), hit five, D(six), hits seven eight, I nine, I ten
    assert a == Alignment(hits=5, substitutions=1, deletions=2, insertions=2)


def test_case_is_ignored_by_default() -> None:
    assert mer("Breaking Bad", "breaking bad") == 0.0
    assert mer("Breaking Bad", "breaking bad", lowercase=False) == 1.0


ORIGINAL = "Bryan Cranston will return as Walter White for breaking bad spin off, report claims."


@pytest.mark.parametrize(
    ("transformed", "paper"),
    [
        (
            "Bryan Cranston will not return as Walter White for Breaking Bad spin off, report claims.",
            0.06,
        ),
        ("Bryan will return as Walter White for Breaking Bad spin off, report claims.", 0.07),
        (
            "Bryan Cranston will return as Walter White for breaking bad spin off, a latest report claims.",
            0.12,
        ),
        (
            "Bryan Cranston will come back as Walter White for Breaking Bad spin off, report claims.",
            0.13,
        ),
        ("Digital era threatens future of drive-ins.", 1.0),
    ],
)
def test_paper_example_1(transformed: str, paper: float) -> None:
    """OssCSE Example 1 (Section 2): the printed MERs are ours truncated to two decimals."""
    assert math.floor(mer(ORIGINAL, transformed) * 100) / 100 == paper


def test_paper_example_1_paraphrase_is_close() -> None:
    # The paper prints 0.73; a minimum alignment gives 15 errors and 6 hits = 0.714 (no word
    # split we tried gives 0.73; the fidelity document notes it).
    para = (
        "It has been reported that Bryan Cranston will reprise his role as Walter White in a "
        "spin-off of Breaking Bad."
    )
    a = align(words(ORIGINAL), words(para))
    assert (a.errors, a.hits) == (15, 6)
    assert abs(a.mer - 0.73) < 0.02
