"""`negcse batch`: several evaluations of one model in one process give what separate runs give,
with one model load and each sentence encoded once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from negcse.commands.batch import split_parts
from negcse.encoder import Encoder, shared_encoders

pytestmark = pytest.mark.mirror
SENTENCES = [
    "a man is playing a guitar .",
    "a woman is slicing an onion .",
    "the cat sleeps on the sofa .",
    "a man is playing a guitar .",
]


def test_split_parts() -> None:
    assert split_parts(["a", "--x", "1", "::", "b", "y"]) == [["a", "--x", "1"], ["b", "y"]]
    with pytest.raises(SystemExit, match="part 2 is empty"):
        split_parts(["a", "::", "::", "b"])
    with pytest.raises(SystemExit, match="another batch"):
        split_parts(["a", "::", "batch", "b"])


def test_shared_encoders_load_once_and_encode_each_sentence_once(splade_tiny: Path) -> None:
    plain = Encoder.load(str(splade_tiny), "cls_before_pooler", device=None)
    assert plain.memo is None
    expected = plain.encode(SENTENCES, batch_size=2)
    with shared_encoders():
        enc = Encoder.load(str(splade_tiny), "cls_before_pooler")
        assert Encoder.load(str(splade_tiny), "cls_before_pooler") is enc
        assert Encoder.load(str(splade_tiny), "mean") is not enc  # another pooler, another entry
        calls: list[int] = []
        inner = enc._encode
        enc._encode = lambda s, b, p=False: calls.append(len(s)) or inner(s, b, p)  # type: ignore[method-assign]
        first = enc.encode(SENTENCES, batch_size=2)
        again = enc.encode([*SENTENCES[1:], "a new sentence ."], batch_size=2)
        assert calls == [3, 1]  # 3 distinct sentences, then only the new one
        np.testing.assert_allclose(first, expected, atol=1e-5)
        np.testing.assert_array_equal(again[:3], first[1:])
    with shared_encoders():  # a new scope loads afresh
        assert Encoder.load(str(splade_tiny), "cls_before_pooler") is not enc
    assert Encoder.load(str(splade_tiny), "cls_before_pooler").memo is None


def _negcse(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "negcse", *args], capture_output=True, text=True, check=False
    )


@pytest.mark.slow
def test_batch_equals_separate_runs(splade_tiny: Path, tmp_path: Path) -> None:
    model = ["--model", str(splade_tiny), "--pooler", "cls_before_pooler", "--threads", "1"]
    sts = ["evaluate-sts", *model, "--tasks", "STS16", "STSBenchmark"]
    splits = ["evaluate-splits", *model, "--datasets", "STS16-headlines", "STSB-test"]
    separate = [
        _negcse(*sts, "--out", str(tmp_path / "sts.json")),
        _negcse(*splits, "--out", str(tmp_path / "splits.json")),
    ]
    assert all(p.returncode == 0 for p in separate), [p.stderr[-2000:] for p in separate]
    batch = _negcse(
        "batch", *sts, "--out", str(tmp_path / "b_sts.json"),
        "::", *splits, "--out", str(tmp_path / "b_splits.json"),
    )  # fmt: skip
    assert batch.returncode == 0, batch.stderr[-2000:]
    assert "batch part 2/2: evaluate-splits" in batch.stderr
    a, b = (json.loads((tmp_path / n).read_text()) for n in ("sts.json", "b_sts.json"))
    for key in ("STS16", "STSBenchmark", "avg", "stsb_dev"):
        assert b[key] == pytest.approx(a[key], abs=1e-6), key
    a, b = (json.loads((tmp_path / n).read_text()) for n in ("splits.json", "b_splits.json"))
    for key in ("cont", "oppn"):
        assert b[key] == pytest.approx(a[key], abs=1e-6), key


def test_batch_stops_at_the_first_failing_part(splade_tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "never.json"
    proc = _negcse(
        "batch", "evaluate-sts", "--model", str(tmp_path / "no-such-model"), "--out", "x.json",
        "::", "evaluate-sts", "--model", str(splade_tiny), "--out", str(out),
    )  # fmt: skip
    assert proc.returncode != 0
    assert "no-such-model" in proc.stderr
    assert not out.exists()
