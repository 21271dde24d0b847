"""GCSE's extension sentences (the paper's Rewriting Prompt 4, "the third form"; released steps
5-6): a masked template per source, filled in by the LLM, becomes a new anchor.

The template follows ``5_generation_ext.py``. With probability 0.7 (always when the sentence
has no entity) the sentence's first subject, action and state are each replaced by a random
part of the same kind from sentences of its first theme category (cls; "news" when it has
none); when that bucket has none, a subject keeps itself with each word masked with
probability 3/11, an action or state keeps itself. Otherwise up to 4 entities are each replaced
by a random entity of the same type ("man" when the type has none). Every other word becomes
``[]``, and with probability 6/101 up to 4 more ``[]`` are appended. The LLM's ``polish``
answer, brackets and newlines removed and spaces collapsed (step 6), is the new sentence.

Released quirks fixed here (GCSE_REFERENCE.md §6, bug 9): a part is rejected only when it is
empty (released: also when it is a substring of "replace_subject" etc., such as "a"), and the
appended ``[]`` are separated from the sentence by a space. ``quirks`` (the released bug
``extension_quirks``) reproduces both; the released crash on an entity without keys is not.
"""

from __future__ import annotations

import random
import re

from negcse.gcse.kg import MAIN_PART_KINDS, EntityKG, Knowledge, MainPartKG

MASK = "[]"
MAIN_PART_PROBABILITY = 0.7
MAX_ENTITIES = 4
_MARK = "\x00"  # placeholders: a word starting with it is kept, the rest masked
_SPACE = "\x01"  # a space inside a replacement, so the replacement stays one word


def _masked_words(text: str, rng: random.Random) -> str:
    """The released ``get_random_mask``: each word masked with probability 3/11."""
    return " ".join(MASK if rng.randint(0, 10) > 7 else w for w in text.split(" "))


def _mask_others(text: str) -> str:
    return " ".join(w if w.startswith(_MARK) else MASK for w in text.split(" "))


#: released ``valid_main_part``: a first part whose lower-cased text is a substring of one of
#: these placeholder names is not replaced (bug 9)
_PLACEHOLDERS = ("replace_subject", "replace_action", "replace_state")


def _usable(part: str, quirks: bool) -> bool:
    if not part.strip():
        return False
    return not (quirks and any(part.lower() in p for p in _PLACEHOLDERS))


def _main_part_template(
    sentence: str, knowledge: Knowledge, parts: MainPartKG, rng: random.Random, quirks: bool
) -> str:
    theme = knowledge.cls[0] if knowledge.cls else "news"
    if not parts.in_theme(theme):
        theme = "news"
    text, fills = sentence, {}
    for kind in MAIN_PART_KINDS:
        found = knowledge.parts(kind)
        if not found or not _usable(found[0], quirks):
            continue
        part = found[0]
        text = text.lower().replace(part.lower(), f"{_MARK}{kind}{_MARK}")
        pool = parts.in_theme(theme, kind)
        if pool:
            fills[kind] = rng.choice(pool)
        else:
            fills[kind] = _masked_words(part, rng) if kind == "subject" else part
    text = _mask_others(text)
    for kind, fill in fills.items():
        text = text.replace(f"{_MARK}{kind}{_MARK}", fill)
    return text


def _entity_template(sentence: str, knowledge: Knowledge, kg: EntityKG, rng: random.Random) -> str:
    text = sentence
    for node in knowledge.entities[:MAX_ENTITIES]:
        same_type = sorted(kg.t_r(node.text, node.type))
        repl = kg.surface[rng.choice(same_type)] if same_type else "man"
        text = text.lower().replace(node.text.lower(), _MARK + repl.replace(" ", _SPACE))
    return _mask_others(text).replace(_MARK, "").replace(_SPACE, " ")


def masked_template(
    sentence: str,
    knowledge: Knowledge,
    parts: MainPartKG,
    kg: EntityKG,
    rng: random.Random,
    quirks: bool = False,
) -> str:
    """One masked template for ``sentence`` (the released step 5's draws, with ``rng``);
    ``quirks``: the released bug 9 (short parts rejected, extra ``[]`` glued on)."""
    if rng.random() < MAIN_PART_PROBABILITY or not knowledge.entities:
        text = _main_part_template(sentence, knowledge, parts, rng, quirks)
    else:
        text = _entity_template(sentence, knowledge, kg, rng)
    extra = rng.randint(0, 100)
    if extra >= 95 and extra % 5:
        text = f"{text}{'' if quirks else ' '}{' '.join([MASK] * (extra % 5))}"
    return text.strip()


def extension_sentence(polish: str) -> str:
    """Step 6: brackets and newlines removed, runs of spaces collapsed."""
    text = polish.replace("[", "").replace("]", "").replace("\n", "")
    return re.sub(r" +", " ", text).strip()
