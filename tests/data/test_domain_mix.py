"""GCSE's domain setting data: the mirror's STS12 train and SICK train pairs have the sizes the
paper prints (§4.1), and the 1:3 mix and its Table 4 ablations draw as stated."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from negcse.data.domain_mix import (
    DomainDataError,
    build,
    mix,
    nli_sentences,
    paws_pairs,
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


@pytest.mark.parametrize(
    ("reader", "name", "text", "where"),
    [
        (sts_pairs, "STS.input.x.txt", "a\tb\nonly one field\n", ":2: expected 2"),
        (sick_pairs, "SICK_train.txt", "id\tA\tB\n1\ta\tb\n", ":1: header"),
        (nli_sentences, "nli.csv", "sent0,sent1,hard_neg\na,b,c\na,,c\n", ":3: expected 3"),
        (paws_pairs, "train.tsv", "sentence1\tsentence2\n", ":1: header"),
    ],
)
def test_bad_files_name_file_and_line(
    tmp_path: Path, reader: object, name: str, text: str, where: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DomainDataError, match=re.escape(f"{path}{where}")):
        reader(path)  # type: ignore[operator]


# build(): one corpus of params.yaml's `corpora` from registered files


def _resolver(files: dict[str, Path]):
    from negcse.data.sources import ResolveError

    def resolve(name: str) -> Path:
        if name not in files:
            raise ResolveError(f"data file '{name}' not found. Tried:\n  mirror: (missing)")
        return files[name]

    return resolve


def _sources(tmp_path: Path) -> dict[str, Path]:
    sts = tmp_path / "STS.input.a.txt"
    sts.write_text("s1\ts2\ns3\ts1\n")  # s1 twice: one line
    sick = tmp_path / "SICK_train.txt"
    sick.write_text("pair_ID\tsentence_A\tsentence_B\tscore\n1\tk1\tk2\t4.5\n")
    paws = tmp_path / "train.tsv"
    paws.write_text("id\tsentence1\tsentence2\tlabel\n1\tp1\tp2\t0\n2\tp3\tp4\t1\n3\tp5\tp6\t1\n")
    nli = tmp_path / "nli_for_simcse.csv"
    nli.write_text(
        "sent0,sent1,hard_neg\n"
        + "".join(f'"n{i}, a",n{i}b,n{i}c\n' for i in range(20))  # a quoted comma
    )
    return {"sts": sts, "sick": sick, "paws": paws, "nli": nli}


SPEC = {
    "domain": [
        {"reader": "sts_pairs", "files": ["sts"]},
        {"reader": "paws_pairs", "files": ["paws"], "max_pairs": 2},
        {"reader": "sick_pairs", "files": ["sick"]},
    ],
    "general": {"reader": "nli_sentences", "files": ["nli"]},
    "seed": 3,
}


def test_build_reads_every_source_and_draws_three_general_lines_per_domain_line(
    tmp_path: Path,
) -> None:
    files = _sources(tmp_path)
    lines, stats = build(SPEC, _resolver(files))
    domain = lines[: stats["domain_lines"]]
    # STS (s1 once), two of PAWS's three pairs (seeded, file order), SICK; labels dropped
    assert domain[:3] == ["s1", "s2", "s3"] and domain[-2:] == ["k1", "k2"]
    paws = domain[3:-2]
    assert len(paws) == 4 and paws in (["p1", "p2", "p3", "p4"], ["p1", "p2", "p5", "p6"],
                                       ["p3", "p4", "p5", "p6"])
    assert stats["domain_lines"] == 9 and stats["general_lines"] == 27 and len(lines) == 36
    # every NLI sentence is a general candidate (the quoted comma kept); 27 distinct, pool order
    pool = [x for i in range(20) for x in (f"n{i}, a", f"n{i}b", f"n{i}c")]
    general = lines[9:]
    assert len(set(general)) == 27 and set(general) <= set(pool)
    assert general == sorted(general, key=pool.index)
    assert [s["rows"] for s in stats["domain"]] == [2, 3, 1]
    assert stats["domain"][1]["rows_used"] == 2 and stats["skipped"] == []
    assert build(SPEC, _resolver(files)) == (lines, stats)  # seeded


def test_build_skips_a_domain_source_found_nowhere_without_network(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from negcse.data.download import DownloadError
    from negcse.data.sources import ResolveError

    files = _sources(tmp_path)
    del files["paws"]
    with caplog.at_level("WARNING"):
        lines, stats = build(SPEC, _resolver(files))
    assert stats["skipped"][0]["files"] == ["paws"] and "not found" in stats["skipped"][0]["reason"]
    assert "skipped offline: domain source paws" in caplog.text
    assert stats["domain_lines"] == 5 and len(lines) == 20
    def failed_download(name: str) -> Path:
        raise DownloadError(f"data file '{name}' could not be downloaded from http://x: 404")

    with pytest.raises(DownloadError):  # a network that answers: an error, not a skip
        build(SPEC, failed_download)
    del files["nli"]  # the general part is never skipped: the mix would silently change
    with pytest.raises(ResolveError):
        build(SPEC, _resolver(files))


def test_build_without_general_or_domain_keeps_the_same_draw(tmp_path: Path) -> None:
    files = _sources(tmp_path)
    full, _ = build(SPEC, _resolver(files))
    wo_general, stats = build({**SPEC, "use_general": False}, _resolver(files))
    assert wo_general == full[:9] and stats["general"] is None
    del files["nli"]  # not read without general data
    build({**SPEC, "use_general": False}, _resolver(files))
    files = _sources(tmp_path)
    wo_domain, stats = build({**SPEC, "use_domain": False}, _resolver(files))
    assert wo_domain == full[9:] and stats["domain_lines"] == 0
    capped, stats = build({**SPEC, "max_domain_lines": 4}, _resolver(files))
    assert stats["domain_lines"] == 4 and len(capped) == 16
    assert all(line in full[:9] for line in capped[:4])
