"""The one pattern of the names that reach a file name or a table: methods, corpora, guides and
grids (:data:`NAME`), backbones (:data:`BACKBONE`: a name or ``org/name``).

The config schema's ``$defs.name`` and ``$defs.backbone`` are these patterns (a test holds them
equal); a name read from a file (an evaluation's tags, a model's ``negcse.json``, ``negcse
evaluate --tag``) is checked here, so no tag holding ``|``, a quote or a line break reaches a
table, a card or a path; a seed tag is a seed (:func:`check_seed`)."""

from __future__ import annotations

import re

from negcse.errors import UserError
from negcse.finite import SEED_MAX
from negcse.text.markup import one_line

_PART = r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}"
#: letters, digits and ``_ . + -``, a letter or digit first
NAME = re.compile(_PART)
#: a name or ``org/name`` (a Hub id)
BACKBONE = re.compile(rf"{_PART}(/{_PART})?")
#: the longest name (each part of an org/name, in :data:`NAME` and :data:`BACKBONE`): a file
#: name of the results holds several names and stays well under the file systems' 255 bytes
MAX_LENGTH = 100
NAME_RULE = "letters, digits and _ . + -, a letter or digit first, at most 100 characters"
#: the tags whose values are names (an evaluation's, a model record's), by their pattern
TAG_PATTERNS = {"method": NAME, "implementation": NAME, "backbone": BACKBONE}


def is_name(value: object, pattern: re.Pattern[str] = NAME) -> bool:
    return isinstance(value, str) and pattern.fullmatch(value) is not None


def check_name(value: object, where: str, pattern: re.Pattern[str] = NAME) -> str:
    """``value`` if it is a name of ``pattern``, else a one-line :class:`UserError` that starts
    with ``where`` (the file and key, or the argument)."""
    if is_name(value, pattern):
        return str(value)
    rule = NAME_RULE + (" (or org/name)" if pattern is BACKBONE else "")
    raise UserError(f"{where}: {value!r} is not a name ({rule})")


#: a seed as a tag writes it: a whole number without leading zeros ("01" is not "1")
SEED = re.compile(r"0|[1-9][0-9]*")


def check_seed(value: object, where: str) -> str:
    """``value`` (text or an integer) as a seed's text, from 0 to :data:`SEED_MAX`; else a
    one-line :class:`UserError` that starts with ``where``."""
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if isinstance(text, str) and SEED.fullmatch(text) and int(text) <= SEED_MAX:
        return text
    raise UserError(
        f"{where}: {value!r} is not a seed (a whole number from 0 to 2^64 - 1, no leading zeros)"
    )


def check_tag(key: str, value: object, where: str) -> object:
    """A tag's value: checked as a name when ``key`` is one of :data:`TAG_PATTERNS`, as a seed
    when it is ``seed``; any other text tag is one line without control characters."""
    if key == "seed":
        return check_seed(value, where)
    pattern = TAG_PATTERNS.get(key)
    if pattern is not None:
        return check_name(value, where, pattern)
    if isinstance(value, str) and one_line(value) != value:  # markup's one rule of a line
        raise UserError(f"{where}: {value!r} holds a line break or control character")
    return value
