"""Corpus screening: the mirror's cut-off last line and other bad lines."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from negcse.data.corpus import CorpusError, read_corpus

HEAD = "data/unlabeled/wiki1m/wiki1m_for_simcse.head_1280000_bytes.txt"


@pytest.mark.mirror
def test_mirror_prefix_drops_the_cut_off_line(mirror: Path) -> None:
    sentences, stats = read_corpus(mirror / HEAD)
    assert stats.lines_read == 11915  # 11,914 complete lines + the truncated one
    assert stats.skipped == {"cut off": 1}
    assert len(sentences) == 11914 - sum(
        1 for s in (mirror / HEAD).read_bytes().split(b"\n")[:-1] if not s.strip()
    )
    with pytest.raises(CorpusError, match=r"head_1280000_bytes.txt:11915: .*cut off"):
        read_corpus(mirror / HEAD, on_bad_line="fail")


def test_bad_lines_are_counted_or_named(tmp_path: Path) -> None:
    path = tmp_path / "c.txt"
    path.write_bytes(b"good one\n\n   \nbad \xff byte\n" + b"x" * 50 + b"\nlast good\n")
    sentences, stats = read_corpus(path, max_chars=40)
    assert sentences == ["good one", "last good"]
    assert stats.skipped == {"empty": 2, "not valid UTF-8": 1, "too long": 1}
    with pytest.raises(CorpusError, match=r"c.txt:2: bad corpus line: empty"):
        read_corpus(path, on_bad_line="fail")


def test_max_sentences_counts_kept_lines(tmp_path: Path) -> None:
    path = tmp_path / "c.txt"
    path.write_text("a\n\nb\nc\nd\n")
    sentences, _ = read_corpus(path, max_sentences=3)
    assert sentences == ["a", "b", "c"]


def test_empty_corpus_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "c.txt"
    path.write_text("\n\n")
    with pytest.raises(CorpusError, match="no usable sentence"):
        read_corpus(path)


def test_command_fails_without_partial_output(tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_bytes(b"fine\n\xfe\xfe\n")
    out = tmp_path / "out.txt"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "negcse",
            "prepare-corpus",
            "--input",
            str(src),
            "--out",
            str(out),
            "--on-bad-line",
            "fail",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0
    assert "in.txt:2" in proc.stderr and "not valid UTF-8" in proc.stderr
    assert not out.exists() and not list(tmp_path.glob(".out.txt*"))


def test_read_lines_keeps_unicode_line_breaks_inside_a_line(tmp_path: Path) -> None:
    from negcse.io_utils import read_lines, write_lines

    path = tmp_path / "x.txt"
    write_lines(path, ["a\u2028b", "c\x85d", "e"])
    assert read_lines(path) == ["a\u2028b", "c\x85d", "e"]
    path.write_bytes(b"one\r\ntwo\n")
    assert read_lines(path) == ["one", "two"]
