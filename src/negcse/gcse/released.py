"""The released pipeline's bugs that change GCSE's data, each fixed by default and reproduced
on request (the generator's ``released_bugs`` list; ``gcse_released`` names them all).
Numbers are GCSE_REFERENCE.md §6's; docs/fidelity-gcse.md gives each one's effect."""

from __future__ import annotations

import random
from collections.abc import Iterable

#: name -> what reproducing it does
RELEASED_BUGS: dict[str, str] = {
    "subject_key": "bug 1: the main-part prompt spells its key 'suject' and step 4 reads only "
    "'subject', so a completion that copies the prompt has no subjects ('A man' fallbacks)",
    "identity_revision": "bug 2: a positive entity or main-part revision replaces the phrase "
    "by itself (no KG neighbour, as the released KG gives every pool under 1,024 nodes)",
    "related_lookup": "step 7's get_related: a positive entity revision looks the entity up "
    "as the LLM wrote it (unstripped; the KG's texts are stripped) and under the first type "
    "holding it, so it keeps the entity where that type has no neighbours although another "
    "type gives one",
    "sampled_extraction": "bug 8: the extraction prompts are sampled (temperature 0.6, top_p "
    "0.95), as vLLM ignores the released steps 1-2's do_sample 0",
    "extension_quirks": "bug 9: the extension template (step 5) leaves a main part unreplaced "
    "when its text is a substring of 'replace_subject' / 'replace_action' / 'replace_state' "
    "(such as 'a' or 'state'), and glues the extra [] to the sentence without a space",
    "keep_unparsed": "bug 10: an unparseable or empty completion stays a candidate "
    "(str of what json_repair made of it, often ''), instead of being dropped",
    "listed_order": "denoising checks the candidates in listed order [positive, negative] for "
    "both roles, so a positive-prompt candidate can become the hard negative by order alone",
    "anchor_augmentation": "bug 12: every anchor repeats k = randrange(min(10, L, max(2, "
    "floor(0.05 L)))) of its first L - 1 words (cl_loader, is_enhance_feature ignored)",
}


def check_bugs(names: Iterable[str]) -> frozenset[str]:
    """The names as a set; an unknown one raises ValueError naming it and the known ones."""
    out = frozenset(names)
    unknown = sorted(out - RELEASED_BUGS.keys())
    if unknown:
        raise ValueError(f"unknown released bug(s) {unknown}; known: {sorted(RELEASED_BUGS)}")
    return out


def augment_anchor(text: str, rng: random.Random, ratio: float = 0.05) -> str:
    """The released ``get_enhance_feature`` (English, no stop words): k of the first L - 1
    space-separated words, drawn without replacement, are each written twice."""
    words = text.split(" ")
    n = len(words)
    k = rng.randrange(min(10, n, max(2, int(ratio * n))))
    for i in sorted(rng.sample(range(n - 1), k)):
        words[i] = f"{words[i]} {words[i]}"
    return " ".join(words)
