"""Every command x every kind of broken input: missing, empty, truncated, not UTF-8, NaN or
infinity, wrong type, unreadable (no read permission). Each cell runs ``python -m negcse`` in this process on a valid set of
inputs with one of them broken, and must exit 2 with one error line naming the broken file (or
option), no traceback, and write nothing.

The cells are generated: each command lists its inputs (:data:`CASES`) and each input's format
(:data:`FORMATS`) says which kinds of damage it can carry and how to make them from the valid
file. A kind a format cannot carry is left out by the format, never by the command: a sentence
"nan" is text, so a corpus has no NaN kind, and a corpus cut at a line is a shorter corpus, so
only a file aligned with another (a column, negations) has a truncated kind. An input that
cannot show a kind of its format says so and what the command does instead (``Input.unseen``).
Every command is either in :data:`CASES` or in :data:`NO_FILE_INPUTS` with the reason; every
number option of every command is given "nan" and "inf"
(:func:`test_number_options_refuse_nan_and_infinity`).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import os
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from negcse import cli

pytestmark = pytest.mark.mirror
REPO = Path(__file__).resolve().parents[1]
KINDS = ("missing", "empty", "truncated", "non-utf8", "non-finite", "wrong-type", "unreadable")
SENTENCES = [
    "A man is playing a guitar on the stage.",
    "A woman is slicing an onion in the kitchen.",
    "Two dogs are running through a field of grass.",
    "The children are not playing football in the rain.",
    "A cat sleeps on the warm windowsill all afternoon.",
    "Three people are walking along the beach at sunset.",
]


# -- how each format breaks ----------------------------------------------------------------------


def _cut(data: bytes, at: float = 0.6) -> bytes:
    """``data`` cut inside a line (never right after a line break)."""
    end = max(1, int(len(data) * at))
    while end > 1 and data[end - 1 : end] == b"\n":
        end -= 1
    return data[:end]


def _not_utf8(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + b"\xff\xfe" + data[middle:]


def _drop_last_line(data: bytes) -> bytes:
    return b"".join(data.splitlines(keepends=True)[:-1])


def _at_key(value: Any, key: str, new: Any) -> Any:
    """``value`` with the leaf at the dotted ``key`` (``a.b[0]``) replaced by ``new``."""
    parts = [p for chunk in key.split(".") for p in chunk.replace("]", "").split("[")]
    node = value
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    last = parts[-1]
    node[int(last) if isinstance(node, list) else last] = new
    return value


@dataclass(frozen=True)
class Format:
    """How a file of one format is broken: ``kinds`` -> a function of (path, the input's key)
    that damages the valid file in place."""

    kinds: dict[str, Callable[[Path, str], None]]


def _bytes(change: Callable[[bytes], bytes]) -> Callable[[Path, str], None]:
    return lambda path, key: path.write_bytes(change(path.read_bytes()))


def _remove(path: Path, key: str) -> None:
    shutil.rmtree(path) if path.is_dir() else path.unlink()


def _folder(path: Path, key: str) -> None:
    _remove(path, key)
    path.mkdir()


def _json_leaf(new: Any) -> Callable[[Path, str], None]:
    def change(path: Path, key: str) -> None:
        text = path.read_text("utf-8")
        if path.suffix == ".jsonl":  # the key of the first row
            rows = [json.loads(line) for line in text.splitlines()]
            rows[0] = _at_key(rows[0], key, new)
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        else:
            path.write_text(json.dumps(_at_key(json.loads(text), key, new)))

    return change


def _yaml_leaf(new: Any) -> Callable[[Path, str], None]:
    return lambda path, key: path.write_text(
        yaml.safe_dump(_at_key(yaml.safe_load(path.read_text()), key, new))
    )


def _csv_cell(new: str) -> Callable[[Path, str], None]:
    def change(path: Path, key: str) -> None:
        lines = path.read_text("utf-8").splitlines()
        column = lines[0].split(",").index(key)
        cells = lines[1].split(",")
        cells[column] = new
        path.write_text("\n".join([lines[0], ",".join(cells), *lines[2:]]) + "\n")

    return change


def _first_line(new: str) -> Callable[[Path, str], None]:
    """A TSV's first data line (after a header when ``key`` is "header") made ``new``."""

    def change(path: Path, key: str) -> None:
        lines = path.read_text("utf-8").splitlines()
        row = 1 if key == "header" else 0
        cells = lines[row].split("\t")
        cells[-1 if key == "header" else 0] = new
        lines[row] = "\t".join(cells)
        path.write_text("\n".join(lines) + "\n")

    return change


def _npy(values: Any) -> Callable[[Path, str], None]:
    return lambda path, key: np.save(path, values)


def _weights_nan(path: Path, key: str) -> None:
    from safetensors.torch import load_file, save_file

    weights = load_file(path / "model.safetensors")
    name = next(n for n in weights if n.endswith("word_embeddings.weight"))  # read by any head
    weights[name][0] = float("nan")
    (path / "model.safetensors").unlink()
    save_file(weights, str(path / "model.safetensors"), metadata={"format": "pt"})


def _in_folder(file: str, change: Callable[[bytes], bytes]) -> Callable[[Path, str], None]:
    return lambda path, key: (path / file).write_bytes(change((path / file).read_bytes()))


def _empty_folder(path: Path, key: str) -> None:
    shutil.rmtree(path)
    path.mkdir()


def _file_not_folder(path: Path, key: str) -> None:
    shutil.rmtree(path)
    path.write_text("a file where a model folder belongs\n")


def _unreadable(path: Path, key: str) -> None:
    path.chmod(0)


COMMON = {"missing": _remove, "empty": _bytes(lambda d: b""), "non-utf8": _bytes(_not_utf8),
          "unreadable": _unreadable}
FORMATS: dict[str, Format] = {
    # one sentence per line: a cut corpus is a shorter corpus, "nan" is a sentence
    "text": Format({**COMMON, "wrong-type": _folder}),
    # lines aligned with another file: a cut one has a line fewer
    "aligned text": Format({**COMMON, "truncated": _bytes(_drop_last_line), "wrong-type": _folder}),
    "json": Format({**COMMON, "truncated": _bytes(_cut), "non-finite": _json_leaf(float("nan")),
                    "wrong-type": _json_leaf("x")}),
    # JSON lines without a number
    "jsonl": Format({**COMMON, "truncated": _bytes(_cut), "wrong-type": _json_leaf("x")}),
    "yaml": Format({**COMMON, "truncated": _bytes(_cut), "non-finite": _yaml_leaf(float("nan")),
                    "wrong-type": _yaml_leaf("x")}),
    "csv": Format({**COMMON, "truncated": _bytes(_cut), "non-finite": _csv_cell("inf"),
                   "wrong-type": _csv_cell("abc")}),
    # numbers one a line, aligned with the corpus
    "number lines": Format({**COMMON, "truncated": _bytes(_drop_last_line),
                            "non-finite": _first_line("inf"), "wrong-type": _first_line("abc")}),
    # a table with a header row (tab-separated)
    "tsv table": Format({**COMMON, "truncated": _bytes(_cut), "non-finite": _first_line("inf"),
                         "wrong-type": _first_line("abc")}),
    "npy": Format({"missing": _remove, "empty": _bytes(lambda d: b""), "truncated": _bytes(_cut),
                   "unreadable": _unreadable,
                   "non-finite": _npy(np.array([np.nan] * 6)),
                   "wrong-type": _npy(np.array(["a"] * 6))}),
    # a SQLite response cache: missing or empty is a new, empty cache
    "sqlite": Format({"truncated": _bytes(lambda d: d[: len(d) // 2]),
                      "non-utf8": _bytes(_not_utf8), "wrong-type": _folder,
                      "unreadable": _unreadable}),
    "model folder": Format({"missing": _remove, "empty": _empty_folder,
                            "truncated": _in_folder("model.safetensors", lambda d: d[: len(d) // 3]),
                            "non-utf8": _in_folder("config.json", _not_utf8),
                            "non-finite": _weights_nan, "wrong-type": _file_not_folder,
                            "unreadable": lambda path, key: _unreadable(path / "model.safetensors", key)}),
}


# -- valid inputs ----------------------------------------------------------------------------------


def _lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


def _params_copy(tmp: Path) -> Path:
    """params.yaml with an override of a default (train.learning_rate) as a user writes one."""
    path = tmp / "params.yaml"
    text = (REPO / "params.yaml").read_text(encoding="utf-8")
    path.write_text(text + "train:\n  learning_rate: 3.0e-5\n", encoding="utf-8")
    return path


def _json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value))
    return path


def _model(path: Path, mirror: Path, meta: dict[str, Any] | None = None) -> Path:
    shutil.copytree(mirror / "models" / "splade-tiny", path)
    for file in path.iterdir():
        file.chmod(0o644)
    if meta is not None:
        _json(path / "negcse.json", meta)
    return path


def _sts_file(path: Path, method: str, seed: int) -> Path:
    """An STS evaluation as ``negcse evaluate --sts-pairs`` writes it, consistent throughout."""
    from scipy.stats import spearmanr

    from negcse.data.sts import STS_TASKS

    rng = np.random.default_rng([seed, len(method)])
    result: dict[str, Any] = {"method": method, "backbone": "tiny", "seed": str(seed)}
    details = {}
    for i, task in enumerate(STS_TASKS):
        gold = np.random.default_rng(i).uniform(0, 5, 30)  # one test set for every model
        cosine = gold / 5 + rng.normal(0, 0.3, 30)
        result[task] = 100 * float(spearmanr(cosine, gold).statistic)
        pairs = {"cosine": cosine.tolist(), "gold": gold.tolist(), "subset_sizes": [20, 10]}
        details[task] = {"all": result[task], "pairs": pairs}
    result["avg"] = float(np.mean([result[t] for t in STS_TASKS]))
    return _json(path, {**result, "details": details, "protocol": "senteval"})


def _transfer_file(path: Path, method: str, seed: int) -> Path:
    from negcse.evaluation.transfer import record_tested

    rng = np.random.default_rng(seed)
    result: dict[str, Any] = {"method": method, "backbone": "tiny", "seed": str(seed)}
    details = {}
    for task in ("CR", "TREC"):
        correct = rng.random(50) < 0.7
        acc = round(100 * float(correct.mean()), 2)
        result[task] = acc
        details[task] = {"acc": acc, "kfold": None, "test": record_tested(correct)}
    result["avg"] = round(float(np.mean([result["CR"], result["TREC"]])), 2)
    return _json(path, {**result, "details": details, "classifier": "sentevalish",
                        "senteval_seed": 1111})


def _run_spec(path: Path) -> Path:
    train = {"epochs": 1, "batch_size": 4, "learning_rate": 1e-4, "max_seq_len": 16,
             "dropout": 0.1, "scheduler": "linear", "warmup_ratio": 0.0, "weight_decay": 0.0,
             "max_grad_norm": 1.0, "max_steps": 2, "eval_steps": 2, "checkpoint_steps": 1,
             "precision": "fp32"}
    return _json(path, {"method": "simcse", "implementation": "simcse", "backbone": "splade-tiny",
                        "params": {"temperature": 0.05}, "generators": {}, "train": train})


def _guide_run(path: Path) -> Path:
    """A student of a frozen guide (RankCSE: teacher1), as ``negcse encode-guide --student``
    reads it."""
    spec = json.loads(_run_spec(path).read_text())
    return _json(path, {**spec, "method": "rankcse", "implementation": "rankcse", "params": {}})


def _train_log(folder: Path) -> Path:
    folder.mkdir()
    _json(folder / "train_log.json", {"method": "simcse", "backbone": "tiny", "seed": 1,
          "best_step": 2, "curve": [{"step": 1, "stsb_dev": 50.0}, {"step": 2, "stsb_dev": 60.5},
          {"step": 2, "seconds": 3.0}]})
    return folder


def _tfidf(path: Path, corpus: Path) -> Path:
    from negcse.generators.tfidf import fit_tfidf_files, write_tfidf_table

    write_tfidf_table(fit_tfidf_files([corpus], progress=False), path)
    return path


def _cache(path: Path) -> Path:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT)")
        db.executemany("INSERT INTO t VALUES (?, ?)", [(str(i), "x" * 500) for i in range(50)])
    return path


def _candidates(path: Path) -> Path:
    rows = [
        {"anchor": s, "candidates": [{"text": s.replace("a ", "the ", 1), "role": "positive",
                                      "fallback": None}]}
        for s in SENTENCES
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@dataclass(frozen=True)
class Input:
    """One input of a command: its format, how its valid file is made (in a folder, with the
    mirror) and the key whose value a non-finite or wrong-type cell replaces."""

    format: str
    make: Callable[[Path, Path], Path]
    key: str = ""
    optional: bool = False  # its absence is valid (a model trained elsewhere has no negcse.json)
    #: kinds of its format this input cannot show, each with what the command does instead
    unseen: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    """A command line (``{name}``: an input's path, ``{name.parent}`` its folder, ``{out}``: the
    output folder) and its inputs."""

    args: tuple[str, ...]
    inputs: dict[str, Input] = field(default_factory=dict)


def corpus(name: str = "corpus.txt") -> Input:
    return Input("text", lambda tmp, mirror: _lines(tmp / name, SENTENCES))


def aligned(name: str) -> Input:
    return Input("aligned text", lambda tmp, mirror: _lines(tmp / name, [s.upper() for s in SENTENCES]))


def eval_files(kind: Callable[[Path, str, int], Path], key: str) -> Input:
    return Input("json", lambda tmp, mirror: kind(tmp / "a.json", "simcse", 1), key)


def _table(name: str, kind: Callable[[Path, str, int], Path], key: str) -> Case:
    others = {"simcse_2": (kind, "simcse", 2), "sncse_1": (kind, "sncse", 1)}
    inputs = {"evals": eval_files(kind, key)}
    inputs |= {n: Input("json", lambda tmp, mirror, k=k, m=m, s=s: k(tmp / f"{m}{s}.json", m, s),
                        key) for n, (k, m, s) in others.items()}  # fmt: skip
    args = ("table", name, "--evals", "{evals}", "{simcse_2}", "{sncse_1}", "--tex",
            "{out}/t.tex", "--csv", "{out}/t.csv", "--md", "{out}/t.md", "--baselines",
            "sncse=simcse")
    return Case(args, inputs)


_BUILT: list[Path] = []

#: a trained model's negcse.json (what `negcse train` records; export reads it)
META = {"method": "simcse", "implementation": "simcse", "backbone": "tiny", "seed": 1,
        "eval_pooler": "cls_before_pooler", "params": {"temperature": 0.05}, "steps": 2}  # fmt: skip


def _table_output(tmp: Path, name: str) -> Path:
    """A twin of a table (``sts.csv``, ``verdicts.json``: its CSV or DVC metrics) as `negcse
    table` builds it from STS files of simcse, sncse (two seeds each) and a released
    checkpoint; built once."""
    if not _BUILT:
        folder = Path(tempfile.mkdtemp(prefix="negcse-tables-"))
        runs = [("simcse", 1), ("simcse", 2), ("sncse", 1), ("sncse", 2), ("simcse_checkpoint", 0)]
        evals = [str(_sts_file(folder / f"{m}{s}.json", m, s)) for m, s in runs]
        for table in ("sts", "verdicts", "checkpoints"):
            args = ["table", table, "--evals", *evals, "--csv", str(folder / f"{table}.csv")]
            args += ["--metrics", str(folder / f"{table}.json"), "--baselines", "sncse=simcse"]
            assert cli.main([*args, "--min-seeds", "2"]) == 0
        _BUILT.append(folder)
    return Path(shutil.copy(_BUILT[0] / name, tmp / name))


def _table_csv(tmp: Path, name: str) -> Path:
    return _table_output(tmp, f"{name}.csv")

CASES: dict[str, Case] = {
    "train": Case(
        ("train", "--run", "{run}", "--seed", "1", "--corpus", "{corpus}", "--column",
         "w={weights}", "--column", "s={scores}", "--column", "n={negations}", "--out",
         "{out}/model", "--checkpoint-dir", "{out}/ckpt", "--no-progress", "--threads", "1"),
        {
            "run": Input("json", lambda tmp, mirror: _run_spec(tmp / "run.json"),
                         "train.learning_rate"),
            "corpus": corpus(),
            "weights": Input("npy", lambda tmp, mirror: (np.save(tmp / "w.npy", np.ones(6)),
                                                         tmp / "w.npy")[1]),
            "scores": Input("number lines", lambda tmp, mirror: _lines(tmp / "s.tsv", ["0.5"] * 6)),
            "negations": aligned("negations.txt"),
        },
    ),
    "evaluate": Case(
        ("evaluate", "--model", "{model}", "--only", "probe,analysis", "--probe-out",
         "{out}/p.json", "--probe-file", "{probe}", "--analysis-out", "{out}/a.json",
         "--analysis-sentences", "{sentences}", "--analysis-negations", "{negations}",
         "--threads", "1"),
        {
            "model": Input("model folder", lambda tmp, mirror: _model(
                tmp / "model", mirror, {"eval_pooler": "cls_before_pooler", "steps": 2})),
            "meta": Input("json", lambda tmp, mirror: tmp / "model" / "negcse.json",
                          "eval_pooler", optional=True),
            "probe": Input("json", lambda tmp, mirror: _json(tmp / "probe.json", {
                "anchor": SENTENCES[0], "paraphrases": SENTENCES[1:3],
                "negations": SENTENCES[3:5]}), "paraphrases"),
            "sentences": corpus("sentences.txt"),
            "negations": aligned("negations.txt"),
        },
    ),
    "table": _table("sts", _sts_file, "STS12"),
    "table verdicts": _table("verdicts", _sts_file, "details.STS13.pairs.cosine[0]"),
    "table transfer": _table("transfer", _transfer_file, "CR"),
    "table verdicts (transfer)": _table("verdicts", _transfer_file, "details.TREC.acc"),
    "paper-report": Case(
        ("paper-report", "--paper", "sncse", "--methods", "simcse", "sncse", "--baselines",
         "sncse=simcse", "--sts", "{sts}", "--verdicts", "{verdicts}", "--checkpoints",
         "{checkpoints}", "--out", "{out}/page.md", "--html", "{out}/page.html"),
        {
            "sts": Input("csv", lambda tmp, mirror: _table_csv(tmp, "sts"), "avg_mean"),
            "verdicts": Input("csv", lambda tmp, mirror: _table_csv(tmp, "verdicts"),
                              "vs_baseline"),
            "checkpoints": Input("csv", lambda tmp, mirror: _table_csv(tmp, "checkpoints"),
                                 "released"),
        },
    ),
    "curves-data": Case(
        ("curves-data", "--models", "{log.parent}", "--out", "{out}/curves.csv"),
        {"log": Input("json", lambda tmp, mirror: _train_log(tmp / "run") / "train_log.json",
                      "curve[1].stsb_dev")},
    ),
    "plot-analysis": Case(
        ("plot-analysis", "--kind", "soft_negatives", "--inputs", "{analysis}", "--png",
         "{out}/f.png", "--pdf", "{out}/f.pdf"),
        {"analysis": Input("json", lambda tmp, mirror: _json(tmp / "analysis.json", {
            "method": "simcse", "similarity": {"n_sentences": 6, "soft_negative": [0.5, 0.7],
                                               "random": [0.1, 0.2]}}),
            "similarity.soft_negative[0]")},
    ),
    "encode-guide": Case(
        ("encode-guide", "--student", "teacher1", "{run}", "--model", "{model}", "--corpus",
         "{corpus}", "--out", "{out}/guide", "--threads", "1"),
        {
            "run": Input("json", lambda tmp, mirror: _guide_run(tmp / "run.json"),
                         "train.max_seq_len"),
            "model": Input("model folder", lambda tmp, mirror: _model(tmp / "model", mirror)),
            "corpus": corpus(),
        },
    ),
    "plot-seeds": Case(
        ("plot-seeds", "--table", "{sts}", "--out", "{out}/seeds.png"),
        {"sts": Input("csv", lambda tmp, mirror: _table_csv(tmp, "sts"), "avg_seed1")},
    ),
    "plan-seeds": Case(
        ("plan-seeds", "--params", "{params}", "--results", "{params}.no-results",
         "--costs", str(REPO / "benchmarks/gpu_costs.csv")),
        {"params": Input("yaml", lambda tmp, mirror: _params_copy(tmp),
                         "train.learning_rate")},
    ),
    "estimate": Case(
        ("estimate", "--params", "{params}", "--configfile", str(REPO / "tests/smoke/config.yaml"),
         "--costs", str(REPO / "benchmarks/gpu_costs.csv")),
        {"params": Input("yaml", lambda tmp, mirror: _params_copy(tmp),
                         "train.learning_rate")},
    ),
    "export": Case(
        ("export", "{model}", "--to", "{out}/exported", "--sts", "{sts}"),
        {
            "model": Input("model folder", lambda tmp, mirror: _model(tmp / "model", mirror, META)),
            "meta": Input("json", lambda tmp, mirror: tmp / "model" / "negcse.json",
                          "eval_pooler"),
            "sts": Input("json", lambda tmp, mirror: _sts_file(tmp / "sts.json", "simcse", 1),
                         "STS12"),
        },
    ),
    "headline-metrics": Case(
        ("headline-metrics", "--sts", "{sts}", "--verdicts", "{verdicts}", "--out",
         "{out}/headline.json"),
        {
            "sts": Input("json", lambda tmp, mirror: _table_output(tmp, "sts.json"),
                         "sncse.tiny.avg"),
            "verdicts": Input("json", lambda tmp, mirror: _table_output(tmp, "verdicts.json"),
                              "sncse"),
        },
    ),
    "fidelity": Case(
        ("fidelity", "--params", "{params}", "--configfile", str(REPO / "tests/smoke/config.yaml"),
         "--reference", "{reference}", "--out", "{out}/fidelity.md"),
        {
            "params": Input("yaml", lambda tmp, mirror: _params_copy(tmp),
                            "train.learning_rate"),
            "reference": Input("yaml", lambda tmp, mirror: Path(shutil.copy(
                REPO / "src/negcse/resources/fidelity.yaml", tmp / "fidelity.yaml")),
                "methods._hf.released", unseen={"truncated": "a reference cut between "
                "entries is a shorter one: each setting it no longer explains is reported, "
                "exit 1"}),
        },
    ),
    "prepare-corpus": Case(
        ("prepare-corpus", "--input", "{corpus}", "--out", "{out}/c.txt", "--stats",
         "{out}/s.json", "--on-bad-line", "fail"),  # the default skips bad lines, counted
        {"corpus": corpus()},
    ),
    "negate": Case(("negate", "--input", "{corpus}", "--output", "{out}/n.txt", "--no-progress"),
                   {"corpus": corpus()}),
    "tfidf": Case(("tfidf", "--input", "{corpus}", "--output", "{out}/t.tsv"), {"corpus": corpus()}),
    "una-negatives": Case(
        ("una-negatives", "--corpus", "{corpus}", "--tfidf", "{table}", "--output", "{out}/u.txt",
         "--seed", "1"),
        {"corpus": corpus(), "table": Input("tsv table", lambda tmp, mirror: _tfidf(
            tmp / "tfidf.tsv", _lines(tmp / "fit.txt", SENTENCES)), "header")},
    ),
    "surface-edits": Case(("surface-edits", "--corpus", "{corpus}", "--output", "{out}/e.txt"),
                          {"corpus": corpus()}),
    "select-paraphrases": Case(
        ("select-paraphrases", "--corpus", "{corpus}", "--candidates", "de={candidates}",
         "--output", "{out}/p.txt", "--no-progress"),
        {"corpus": corpus(), "candidates": aligned("bt_de.txt")},
    ),
    "paraphrase": Case(
        ("paraphrase", "--corpus", "{corpus}", "--output", "{out}/p.txt", "--cache", "{cache}",
         "--model", "/no/paraphrase/model", "--no-progress"),
        {"corpus": corpus(), "cache": Input("sqlite", lambda tmp, mirror: _cache(tmp / "c.db"))},
    ),
    "back-translate": Case(
        ("back-translate", "--corpus", "{corpus}", "--output", "{out}/b.txt", "--cache",
         "{cache}", "--forward", "/no/forward", "--backward", "/no/backward", "--no-progress"),
        {"corpus": corpus(), "cache": Input("sqlite", lambda tmp, mirror: _cache(tmp / "c.db"))},
    ),
    "gcse-synthesize": Case(
        ("gcse-synthesize", "--input", "{corpus}", "--output", "{out}/c.jsonl", "--report",
         "{out}/r.json", "--positives", "0", "--negatives", "0"),
        {"corpus": corpus()},
    ),
    "gcse-denoise": Case(
        ("gcse-denoise", "--candidates", "{candidates}", "--model", "/no/model", "--no-filter",
         "--anchors", "{out}/a.txt", "--positives", "{out}/p.txt", "--negatives", "{out}/n.txt",
         "--report", "{out}/r.json"),
        {"candidates": Input("jsonl", lambda tmp, mirror: _candidates(tmp / "c.jsonl"),
                             "candidates")},
    ),
    "san-negatives": Case(
        ("san-negatives", "--corpus", "{corpus}", "--lexicon", "{lexicon}", "--output",
         "{out}/s.txt", "--seed", "1", "--mlm", "/no/mlm", "--no-progress"),
        {"corpus": corpus(), "lexicon": Input("tsv table", lambda tmp, mirror: _lines(
            tmp / "lex.tsv", ["token_id\ttoken\tpos\tscore", "0\t[CLS]\tSPECIAL\t0",
                              "1\tdog\tNOUN\t5"]), "header")},
    ),
    "mix-corpus": Case(
        ("mix-corpus", "--spec", "{spec}", "--out", "{out}/m.txt", "--stats", "{out}/m.json"),
        {"spec": Input("json", lambda tmp, mirror: _json(tmp / "spec.json", {
            "domain": [{"reader": "sts_pairs", "files": ["senteval/STS/STSBenchmark/sts-train.csv"],
                        "max_pairs": 10}], "general": None, "use_general": False,
            "max_domain_lines": 5, "seed": 0}), "domain[0].max_pairs",
            unseen={"unreadable": "the spec is JSON text on the command line, no file"})},
    ),
}

#: commands whose inputs are no file a user hands them (each with why)
NO_FILE_INPUTS = {
    "analysis-sentences": "reads registered STS files only (fetch-data's line count and sha256)",
    "dvc-lock": "runs dvc on the repository (dvc's own checks of dvc.yaml and the outputs)",
    "remote-check": "reads no file: it asks the DVC remote (and says in one line whether it "
    "answers)",
    "status": "reads the config through the loader estimate and fidelity are walked with, and "
    "Snakemake's own records of the run",
    "doctor": "a diagnostic: whatever it finds, a missing or damaged --lock included, is a "
    "'problem:' line and exit 1 (tests/test_input_integrity.py, tests/test_doctor.py)",
    "quickstart": "runs the workflow on the packaged config (the commands it runs are walked "
    "here)",
    "fetch-data": "reads registered files, each checked by its line count and sha256 "
    "(tests/test_reliability.py: a fake and a corrupted file)",
    "fetch-mteb": "reads Hugging Face datasets through the mteb library",
    "plots-template": "reads the installed snakemake's wheel only",
    "worker": "reads no file: it listens on --socket (a missing folder or a path too long for a "
    "Unix socket is one line, exit 2: tests/training/test_worker.py)",
    "pos-lexicon": "reads a model's tokenizer (evaluate's model-folder cells) and a registered "
    "lexicon (fetch-data's checks)",
}


def _cells() -> list[tuple[str, str, str]]:
    return [
        (case, name, kind)
        for case, spec in CASES.items()
        for name, item in spec.inputs.items()
        for kind in KINDS
        if kind in FORMATS[item.format].kinds and not (kind == "missing" and item.optional)
        and kind not in item.unseen
    ]


def test_every_command_is_walked() -> None:
    walked = {case.split()[0] for case in CASES}
    assert walked | set(NO_FILE_INPUTS) == set(cli.command_names())
    assert not walked & set(NO_FILE_INPUTS)


def _fresh_logging() -> None:
    """Logging to this test's stderr, not to an earlier test's closed capture: the CLI's
    ``basicConfig`` binds the stderr of its first call, transformers its own handler, and
    pytest's captures of earlier tests linger on loggers that do not propagate."""
    for handler in logging.root.handlers[:]:
        logging.root.removeHandler(handler)
    for logger in logging.Logger.manager.loggerDict.values():
        if not isinstance(logger, logging.Logger):
            continue
        logger.disabled = False  # a library's dictConfig disables the loggers it finds
        for handler in list(logger.handlers):
            if type(handler) is logging.StreamHandler:
                handler.stream = sys.stderr
                vars(handler).pop("flush", None)  # transformers binds the first stderr's flush
            elif getattr(getattr(handler, "stream", None), "closed", False):
                logger.removeHandler(handler)


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    _fresh_logging()
    try:
        code = cli.main(args)
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 1
    return code, capsys.readouterr().err


@pytest.mark.parametrize(("case", "name", "kind"), _cells(), ids=["-".join(c) for c in _cells()])
def test_broken_input_is_one_line_and_exit_2(
    case: str, name: str, kind: str, tmp_path: Path, mirror: Path,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    _run_cell(case, name, kind, tmp_path, mirror, capsys, monkeypatch)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


#: capget/capset's version 3 (64-bit sets, two words); CAP_DAC_OVERRIDE and
#: CAP_DAC_READ_SEARCH, the capabilities that let root read any file whatever its mode
_CAP_V3 = 0x20080522
_FILE_OVERRIDES = (1 << 1) | (1 << 2)


@contextlib.contextmanager
def _file_modes_bind_root() -> Iterator[None]:
    """As root, whom a file's mode does not stop, the calling thread runs without the two
    capabilities that override it (capabilities(7)), so a mode-0 file of root's is unreadable to
    it as to anyone; they are restored after. Otherwise nothing changes."""
    if os.geteuid() != 0:
        yield
        return
    libc = ctypes.CDLL(None, use_errno=True)
    header, saved = _CapHeader(_CAP_V3, 0), (_CapData * 2)()
    if libc.capget(ctypes.byref(header), saved) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    reduced = (_CapData * 2)(*saved)
    reduced[0].effective &= ~_FILE_OVERRIDES
    if libc.capset(ctypes.byref(header), reduced) != 0:
        raise OSError(ctypes.get_errno(), "capset")
    try:
        yield
    finally:
        libc.capset(ctypes.byref(header), saved)


def _run_cell(
    case: str, name: str, kind: str, tmp_path: Path, mirror: Path,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NEGCSE_CACHE", str(tmp_path / "cache"))
    _fresh_logging()  # making the inputs logs too
    spec = CASES[case]
    paths = {n: str(item.make(tmp_path, mirror)) for n, item in spec.inputs.items()}
    broken = Path(paths[name])
    item = spec.inputs[name]
    FORMATS[item.format].kinds[kind](broken, item.key)
    out = tmp_path / "out"
    args = [a.format(out=out, **{n: Path(p) for n, p in paths.items()}) for a in spec.args]
    if name == "spec":  # mix-corpus takes its spec as text
        args[args.index(paths[name])] = broken.read_text("utf-8", "replace") if broken.is_file() else ""
    with _file_modes_bind_root() if kind == "unreadable" else contextlib.nullcontext():
        code, err = run_cli(args, capsys)
    assert "Traceback" not in err, err[-3000:]
    errors = [line for line in err.splitlines() if "error" in line.lower()]
    assert code == 2, (code, err[-3000:])
    assert len(errors) == 1, err[-3000:]
    named = "--spec" if name == "spec" else broken.name
    assert named in errors[0], errors[0]
    if kind == "unreadable":  # said as such, not as a missing or damaged file
        assert "permission denied" in errors[0].lower(), errors[0]
    # no other input is blamed ("its path: ..."), but the folder holding the broken file
    before = errors[0][: errors[0].index(named)]
    others = [p for p in paths.values() if p != str(broken) and p not in map(str, broken.parents)]
    assert not [p for p in others if f"{p}: " in before], errors[0]
    left = sorted(p.name for p in out.rglob("*") if p.is_file()) if out.exists() else []
    assert left == [], left


def _number_options() -> list[tuple[str, str]]:
    found = []
    for command in cli.command_names():
        parser, _ = cli.build_parser([command])
        sub = next(a for a in parser._actions if a.choices and command in a.choices)
        for action in sub.choices[command]._actions:
            if action.type is not None and getattr(action.type, "__name__", "") == "finite_float":
                found.append((command, action.option_strings[0]))
    return found


@pytest.mark.parametrize(("command", "option"), _number_options(), ids=["".join(o) for o in _number_options()])
@pytest.mark.parametrize("value", ["nan", "inf"])
def test_number_options_refuse_nan_and_infinity(
    command: str, option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run_cli([command, option, value], capsys)
    assert code == 2 and "Traceback" not in err
    assert f"argument {option}: '{value}' is not a finite number" in err, err
