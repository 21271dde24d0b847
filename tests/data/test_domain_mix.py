"""GCSE's domain setting data: the mirror's STS12 train and SICK train pairs have the sizes the
paper prints (§4.1), and the 1:3 mix and its Table 4 ablations draw as stated."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from negcse.data.domain_mix import (
    DomainDataError,
    mix,
    sick_pairs,
    sts_pairs,
    unique_sentences,
)

PAPERS_DIR = Path(os.environ.get("NEGCSE_PAPERS", "/work/shared/papers"))


def _printed_sizes() -> dict[str, float]:
    """The "(<n>k samples)" the paper prints after each domain dataset, in thousands."""
    text = (PAPERS_DIR / "gcse.txt").read_text("utf-8")
    found = re.findall(r"(STS-12|PAWS|SICK) \([^)]*\) \((\d+\.\d)k samples\)", text)
    return {name: float(k) for name, k in found}


@pytest.mark.skipif(not PAPERS_DIR.is_dir(), reason="paper texts not available")
def test_mirror_train_sets_have_the_printed_sizes(mirror: Path) -> None:
    sizes = _printed_sizes()
    assert sizes == {"STS-12": 2.2, "PAWS": 3.5, "SICK": 4.5}
    raw = mirror / "data" / "raw"
    sts12 = [
        p
        for part in ("MSRpar", "MSRvid", "SMTeuroparl")
        for p in sts_pairs(raw / "STS12-en-train" / f"STS.input.{part}.txt")
    ]
    sick = sick_pairs(raw / "SICK" / "SICK_train.txt")
    assert len(sts12) == 750 + 750 + 734  # the gold files' line counts (MANIFEST.tsv)
    assert round(len(sts12) / 1000, 1) == sizes["STS-12"]
    assert round(len(sick) / 1000, 1) == sizes["SICK"]
    assert sick[0] == (
        "A group of kids is playing in a yard and an old man is standing in the background",
        "A group of boys in a yard is playing and a man is standing in the background",
    )
    # SICK repeats sentences across pairs: unlabeled, each is one line
    assert len(unique_sentences(sick)) < 2 * len(sick)


def test_mix_is_domain_then_three_general_per_domain_line() -> None:
    domain = ["d1", "d2"]
    general = [f"g{i}" for i in range(10)]
    full = mix(domain, general, seed=7)
    assert full[:2] == domain and len(full) == 2 + 3 * 2
    drawn = full[2:]
    assert len(set(drawn)) == 6 and set(drawn) <= set(general)
    assert drawn == sorted(drawn, key=general.index)  # pool order kept
    assert mix(domain, general, seed=7) == full  # seeded
    assert mix(domain, general, seed=8) != full
    assert mix(domain, general, seed=7, use_general=False) == domain  # w/o general
    assert mix(domain, general, seed=7, use_domain=False) == drawn  # w/o domain
    with pytest.raises(DomainDataError, match="6 general lines needed .* the general pool has 5"):
        mix(domain, general[:5], seed=7)


def test_bad_files_name_file_and_line(tmp_path: Path) -> None:
    sts = tmp_path / "STS.input.x.txt"
    sts.write_text("a\tb\nonly one field\n")
    with pytest.raises(DomainDataError, match=rf"{re.escape(str(sts))}:2: expected 2"):
        sts_pairs(sts)
    sick = tmp_path / "SICK_train.txt"
    sick.write_text("id\tA\tB\n1\ta\tb\n")
    with pytest.raises(DomainDataError, match=rf"{re.escape(str(sick))}:1: header"):
        sick_pairs(sick)
