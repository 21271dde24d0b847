"""Negation generator (SNCSE rules, OssCSE root insertion) on real wiki1m lines.

Every expected output below was derived by hand from the rules (module docstring of
``negcse.generators.negation``) and the en_core_web_sm 3.8 parse, which each case also asserts
(the token that decides the branch), so a changed parse fails loudly rather than silently.
The same outputs come out of the released SNCSE script (see benchmarks/negation.md).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from negcse.cli import main as cli_main
from negcse.data.sources import resolve_data
from negcse.generators.negation import (
    load_nlp,
    negate,
    negate_doc,
    negate_raw,
)

WIKI10K = "unlabeled/wiki1m/wiki1m_random10k.txt"


@pytest.fixture(scope="module")
def wiki() -> list[str]:
    here = Path(__file__).resolve().parents[2]
    for mirror in (os.environ.get("NEGCSE_MIRROR"), here.parent / "shared" / "mirror"):
        if mirror and Path(mirror).is_dir():
            path = resolve_data(WIKI10K, mirror=mirror)
            return path.read_text(encoding="utf-8").split("\n")[:-1]
    pytest.skip("no mirror (set NEGCSE_MIRROR)")


def line(wiki: list[str], number: int, text: str) -> str:
    """Line ``number`` (1-based) of the sample, checked against the text the case was built on."""
    assert wiki[number - 1] == text
    return text


def deciding_token(sentence: str, text: str) -> tuple[str, str]:
    """(dep, tag) of the first token ``text`` in the full-pipeline parse of ``sentence``."""
    doc = load_nlp()(sentence)
    token = next(t for t in doc if t.text == text)
    return token.dep_, token.tag_


# (line number, sentence, deciding token, its (dep, tag), expected SNCSE rule output)
SNCSE_CASES = [
    pytest.param(
        963,
        "After finishing GCSEs, further education is not compulsory.",
        "not",
        ("neg", "RB"),
        "After finishing GCSEs , further education is compulsory .",
        id="1-delete-not",
    ),
    pytest.param(
        250,
        "Sadly, that's not what they wanted anymore.",
        "not",
        ("neg", "RB"),
        "Sadly , that 's what they wanted anymore .",
        id="1-delete-not-after-clitic",
    ),
    pytest.param(
        191,
        "It has also hosted state and national competitions.",
        "has",
        ("aux", "VBZ"),
        "It has not also hosted state and national competitions .",
        id="2-aux",
    ),
    pytest.param(
        28,
        "The first event was held in 2016.",
        "was",
        ("auxpass", "VBD"),
        "The first event was not held in 2016 .",
        id="2-auxpass",
    ),
    pytest.param(
        3352,
        "A fire, which had started in the clipping room, was extinguished.",
        "had",
        ("aux", "VBD"),
        "A fire , which had not started in the clipping room , was extinguished .",
        id="2-first-aux-is-in-relative-clause",
    ),
    pytest.param(
        5,
        "Tomasz Sciubak qualified to compete in the men's shot put F37 event.",
        "to",
        ("aux", "TO"),
        "Tomasz Sciubak qualified to not compete in the men 's shot put F37 event .",
        id="2-infinitival-to-before-root",
    ),
    pytest.param(
        53,
        "Majid Al-Khamis is a Kuwaiti handball player.",
        "is",
        ("ROOT", "VBZ"),
        "Majid Al - Khamis is not a Kuwaiti handball player .",
        id="2-root-special-word",
    ),
    pytest.param(
        226,
        "More than 150 trains cross the Vellore-Katpadi Junction daily.",
        "cross",
        ("ROOT", "VBP"),
        "More than 150 trains do not cross the Vellore - Katpadi Junction daily .",
        id="2-root-VBP",
    ),
    pytest.param(
        41,
        "This research supports the mere-exposure effect.",
        "supports",
        ("ROOT", "VBZ"),
        "This research does not support the mere - exposure effect .",
        id="2-root-VBZ",
    ),
    pytest.param(
        50,
        "Skinny Jack immediately collapsed into a pile of ashes.",
        "collapsed",
        ("ROOT", "VBD"),
        "Skinny Jack immediately did not collapse into a pile of ashes .",
        id="2-root-VBD",
    ),
    pytest.param(
        212,
        "Joseph Campbell Cronin in command.",
        "Cronin",
        ("ROOT", "NNP"),
        "Not Joseph Campbell Cronin in command .",
        id="2-root-noun-prefix",
    ),
    pytest.param(
        445,
        "Then subtract the difference from the other variable.",
        "subtract",
        ("ROOT", "VB"),
        "Not Then subtract the difference from the other variable .",
        id="2-root-VB-prefix",
    ),
]


@pytest.mark.parametrize(("number", "sentence", "token", "dep_tag", "expected"), SNCSE_CASES)
def test_sncse_rule_branches(wiki, number, sentence, token, dep_tag, expected):
    sentence = line(wiki, number, sentence)
    assert deciding_token(sentence, token) == dep_tag
    assert negate_raw([sentence]) == [expected]
    assert negate_doc(load_nlp()(sentence), "sncse") == expected
    # With final punctuation both lookup modes give the same training text.
    assert negate([sentence]) == negate([sentence], reference_quirks=True) == [expected]


OSSCSE_CASES = [
    pytest.param(
        3352,
        "A fire, which had started in the clipping room, was extinguished.",
        "A fire , which had started in the clipping room , was not extinguished .",
        id="root-auxpass-child-not-first-aux",
    ),
    pytest.param(
        963,
        "After finishing GCSEs, further education is not compulsory.",
        "After finishing GCSEs , further education is compulsory .",
        id="root-neg-child-deleted",
    ),
    pytest.param(
        53,
        "Majid Al-Khamis is a Kuwaiti handball player.",
        "Majid Al - Khamis is not a Kuwaiti handball player .",
        id="root-be",
    ),
    pytest.param(
        41,
        "This research supports the mere-exposure effect.",
        "This research does not support the mere - exposure effect .",
        id="root-VBZ",
    ),
    pytest.param(
        445,
        "Then subtract the difference from the other variable.",
        "Then do not subtract the difference from the other variable .",
        id="root-VB-imperative",
    ),
    pytest.param(
        297,
        "Harrison Commercial Historic District",
        "Not Harrison Commercial Historic District",
        id="root-noun-prefix",
    ),
]


@pytest.mark.parametrize(("number", "sentence", "expected"), OSSCSE_CASES)
def test_osscse_root_insertion(wiki, number, sentence, expected):
    sentence = line(wiki, number, sentence)
    assert negate([sentence], style="osscse") == [expected]


def test_osscse_paper_example():
    # OssCSE paper, Section 4 Step 1 and Figure 4: ROOT "likes" is VBZ.
    assert negate(["My dog likes eating sausage"], style="osscse") == [
        "My dog does not like eating sausage"
    ]


def test_quirk_vs_default_without_final_punctuation(wiki):
    vbd = line(wiki, 2667, "Peter Lundgren defeated Jim Pugh 6–1, 7–5")
    passive = line(wiki, 6941, "This function is represented by the matrix")
    assert deciding_token(vbd, "defeated") == ("ROOT", "VBD")
    # Released trainer: key "<s> ." misses the table -> "Not " + key; nothing parsed.
    assert negate([vbd, passive], reference_quirks=True) == [
        "Not Peter Lundgren defeated Jim Pugh 6–1, 7–5 .",
        "Not This function is represented by the matrix .",
    ]
    # Fixed: the sentence's own negation, then the trainer's " ." for a missing final mark.
    assert negate([vbd, passive]) == [
        "Peter Lundgren did not defeat Jim Pugh 6–1 , 7–5 .",
        "This function is not represented by the matrix .",
    ]


def test_quirk_lookup_is_exact(wiki):
    passive = line(wiki, 6941, "This function is represented by the matrix")
    held = line(wiki, 28, "The first event was held in 2016.")
    # A line equal to "<s> ." is in the released table, so the quirky key hits it.
    assert negate([passive, passive + " ."], reference_quirks=True) == [
        "This function is not represented by the matrix .",
        "This function is not represented by the matrix .",
    ]
    # The trainer looks up the unstripped line; the table holds stripped lines -> miss.
    assert negate([" " + held], reference_quirks=True) == ["Not  " + held]
    assert negate([" " + held]) == ["The first event was not held in 2016 ."]


def test_empty_line_and_unparseable_fallback(wiki, monkeypatch, caplog):
    held = line(wiki, 28, "The first event was held in 2016.")
    with caplog.at_level(logging.WARNING, logger="negcse.generators.negation"):
        assert negate(["", held, "   "]) == [
            "Not .",
            "The first event was not held in 2016 .",
            "Not .",
        ]
    assert "2 empty line(s)" in caplog.text and "first: line 1" in caplog.text
    caplog.clear()
    # A text over spaCy's max_length is refused by spaCy; it gets the prefix rule, logged.
    monkeypatch.setattr(load_nlp(), "max_length", 20)
    with caplog.at_level(logging.WARNING, logger="negcse.generators.negation"):
        out = negate_raw([held, "He ran."])
    assert out == ["Not The first event was held in 2016.", "He did not run ."]
    assert "1 of 2 texts were empty or unparseable" in caplog.text


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown negation style"):
        negate(["a"], style="una")
    with pytest.raises(ValueError, match="sncse"):
        negate(["a"], style="osscse", reference_quirks=True)


def test_deterministic_across_runs_processes_and_batches(wiki):
    sample = wiki[:300]
    first = negate(sample, n_process=1, batch_size=256)
    assert negate(sample, n_process=1, batch_size=256) == first
    assert negate(sample, n_process=2, batch_size=37) == first
    osscse = negate(sample, style="osscse")
    assert negate(sample, style="osscse", n_process=2, batch_size=64) == osscse


@pytest.mark.parametrize("style", ["sncse", "osscse"])
def test_fast_path_equals_full_pipeline(wiki, style):
    # negate_raw skips the parser for "not" sentences and runs attribute_ruler + lemmatizer on a
    # window around the one token whose lemma a rule needs; the full pipeline runs everything.
    sample = [s.strip() for s in wiki[:400]]
    full = [negate_doc(doc, style) for doc in load_nlp().pipe(sample)]
    assert negate_raw(sample, style=style, batch_size=64) == full
    assert sum(" not " in f or f.startswith("Not ") for f in full) > 300


def test_command_end_to_end(wiki, tmp_path, caplog):
    rows = [
        line(wiki, 41, "This research supports the mere-exposure effect."),
        "",
        line(wiki, 2667, "Peter Lundgren defeated Jim Pugh 6–1, 7–5"),
        line(wiki, 963, "After finishing GCSEs, further education is not compulsory."),
    ]
    src = tmp_path / "in.txt"
    src.write_bytes("\r\n".join(rows).encode("utf-8"))  # CRLF, no final newline
    out = tmp_path / "out" / "neg.txt"
    assert cli_main(["negate", "--input", str(src), "--output", str(out), "--no-progress"]) == 0
    assert out.read_text(encoding="utf-8").split("\n") == [
        "This research does not support the mere - exposure effect .",
        "Not .",
        "Peter Lundgren did not defeat Jim Pugh 6–1 , 7–5 .",
        "After finishing GCSEs , further education is compulsory .",
        "",
    ]
    quirky = tmp_path / "quirky.txt"
    args = ["negate", "--input", str(src), "--output", str(quirky), "--reference-quirks"]
    assert cli_main([*args, "--n-process", "2", "--batch-size", "2", "--no-progress"]) == 0
    assert quirky.read_text(encoding="utf-8").splitlines()[2] == (
        "Not Peter Lundgren defeated Jim Pugh 6–1, 7–5 ."
    )
    osscse = tmp_path / "osscse.txt"
    args = ["negate", "--input", str(src), "--output", str(osscse), "--style", "osscse"]
    assert cli_main([*args, "--no-progress"]) == 0
    assert len(osscse.read_text(encoding="utf-8").splitlines()) == len(rows)


def test_command_bad_input(tmp_path, caplog):
    out = tmp_path / "neg.txt"
    missing = tmp_path / "missing.txt"
    with caplog.at_level(logging.ERROR):
        assert cli_main(["negate", "--input", str(missing), "--output", str(out)]) != 0
    assert str(missing) in caplog.text
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"He ran.\nCaf\xe9 au lait.\n")
    caplog.clear()
    with caplog.at_level(logging.ERROR):
        assert cli_main(["negate", "--input", str(bad), "--output", str(out)]) != 0
    assert f"{bad}: not UTF-8 text (line 2, byte 11" in caplog.text
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [bad]
