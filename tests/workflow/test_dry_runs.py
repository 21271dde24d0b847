"""The workflow read, not run, in a throwaway copy of the repository: `snakemake --lint`, the
paper grid's dry run with its GPU-hours estimate, a `--configfile` selection and GCSE's stage
order. (tests/test_workflow.py runs the smoke grid; these run beside it in CI.)"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import threading
from http.server import HTTPServer, SimpleHTTPRequestHandler
from pathlib import Path

import pytest

from negcse.tables.verdicts import read_evaluations
from negcse.workflow.config import grid_runs, method_seeds, project_config
from negcse.workflow.guide_config import guide_outputs
from workflow_copy import (
    CI_REDUCTIONS,
    DOMAIN_CONFIGS,
    SMOKE,
    committed_copy,
    job_counts,
    jobs_with_wildcards,
    sh,
)

pytestmark = [pytest.mark.slow, pytest.mark.mirror]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return committed_copy(tmp_path_factory.mktemp("dry"))


#: `python -c LINT --lint`: Snakemake's command line, then the names of the modules it loaded
LINT = """import runpy, sys
try:
    runpy.run_module("snakemake", run_name="__main__")
finally:
    print("modules:", *sorted(sys.modules), file=sys.stderr)
"""


@pytest.fixture(scope="module")
def lint(workspace: Path) -> subprocess.CompletedProcess[str]:
    """`snakemake --lint` of the workspace (one workflow parse for the tests that read it)."""
    return sh([sys.executable, "-c", LINT, "--lint"], workspace)


def test_lint(lint: subprocess.CompletedProcess[str]) -> None:
    assert "Congratulations" in lint.stdout + lint.stderr


def test_the_parse_reads_every_method_without_importing_torch(
    lint: subprocess.CompletedProcess[str],
) -> None:
    """The Snakefile builds every grid method (params, columns, guides) from the method registry;
    torch loads on first use only (negcse.runtime.lazy): it was ~3 of a parse's ~6.6 CPU-s, and every
    Snakemake process parses (two per job on a SLURM cluster)."""
    modules = set(lint.stderr.rpartition("modules:")[2].split())
    assert {"negcse.methods.rankcse", "negcse.methods.gcse", "negcse.losses"} <= modules
    assert not {"torch", "transformers"} & modules


#: what a parse imports from negcse: the Snakefile's and rules/*.smk's ``from negcse... import``
SMK_IMPORT = re.compile(r"^\s*from (negcse[\w.]*) import", re.M)


def test_the_modules_the_workflow_imports_load_without_scipy_or_torch() -> None:
    """Every Snakemake process (two per job on a SLURM cluster) imports the Snakefile's negcse
    modules; scipy (the seed plan's power arithmetic, ~0.7 CPU-s) and torch load on use only, so
    a parse of a grid without a seed plan to price (the smoke profile) imports neither."""
    repo = Path(__file__).resolve().parents[2]
    sources = [repo / "Snakefile", *sorted((repo / "rules").glob("*.smk"))]
    modules = sorted({m for path in sources for m in SMK_IMPORT.findall(path.read_text())})
    assert {"negcse.workflow.config", "negcse.workflow.seed_costs"} <= set(modules)
    probe = ";".join(f"import {m}" for m in modules)
    heavy = ("scipy", "torch", "transformers", "sklearn")
    code = f"{probe}; import sys; print(*[m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [], out.stdout


def test_paper_grid_dry_run_lists_every_train_job(
    workspace: Path, lint: subprocess.CompletedProcess[str]
) -> None:
    """The default grid is every configured method but SAN's tau2 x p2 and lambda grids
    (config/san-grids.yaml) (37: 20 + RankCSE, RankCSE+SAN, RLRD, RLRD+SAN + GCSE, its released run, its paper reading (data and loss),
    its literal paper form (sharing GCSE's data) and, in the domain setting, GCSE, its stage-1
    model (= w/o stage-2), w/o filtering, w/o decay, w randomly, w/o general, w/o domain and two
    sigma variants) x 4 backbones, each claim row at its planned seeds and every other row at
    one (seed_plan; tests/workflow/test_seed_plan.py; seed 42 where no claim names the method;
    UNA's Table D7: ten seeds of una_baseline and una_both on BERT-base), with the GPU
    generators behind it, and the dry run prints the GPU-hours estimate and the seed plan. Run
    as `make paper-dry-run` runs it: a summary (estimate, jobs per rule) without every job's
    block. Its time is a benchmark figure (benchmarks/base.md), not asserted here."""
    config = project_config(workspace, check=False)
    recipe = (workspace / "Makefile").read_text().split("\npaper-dry-run:")[1].splitlines()[1]
    command = recipe.split("&& ", 1)[1].split()
    assert command[:4] == ["snakemake", "-n", "--quiet", "rules"]
    out = sh(command, workspace)
    assert len(out.stdout + out.stderr) < 40_000  # 2.8 MB with every job's block
    assert not jobs_with_wildcards(out.stdout)  # no "rule train:" blocks
    counts = job_counts(out.stdout)
    grid = config["grid"]
    # every configured method but the stage-1 runs of the default setting, "w/o general" and
    # "w/o domain" (guides only) and SAN's grids (an overlay: no claim reads them)
    guides_only = {"gcse_stage1", "gcse_stage1_wo_general", "gcse_stage1_wo_domain"}
    overlay = project_config(workspace, workspace / "config" / "san-grids.yaml", check=False)
    san_grids = {m for m in overlay["grid"]["methods"] if "_tau" in m or "_lambda" in m}
    assert len(san_grids) == 18 + 3
    assert grid["methods"] == [
        m for m in config["methods"] if m not in guides_only | san_grids
    ]
    assert len(grid["backbones"]) == 4 and grid["seeds"] == [42, 43, 44]
    assert len(grid["methods"]) == 37

    def seeds(*methods: str) -> dict[str, set[int]]:
        """Backbone -> the seeds ``methods`` run on it, together."""
        return {b: {s for m in methods for s in method_seeds(config, m, b)}
                for b in grid["backbones"]}  # fmt: skip

    runs = {m: sum(map(len, seeds(m).values())) for m in grid["methods"]}
    assert sum(n == 4 for n in runs.values()) == 18  # one seed a backbone: no claim row
    # UNA's D7 ten, its capped RoBERTa-base claims at 3; SNCSE's claims at 10 but BERT-large's
    assert runs["una_both"] == 10 + 1 + 3 + 1 and runs["sncse"] == 10 + 3 + 10 + 10
    assert counts["evaluate_model"] == sum(runs.values())
    # + the guide runs, seed-matched to the runs they guide: GCSE's stage-1 models, and the
    # teachers' seeds of RankCSE and RLRD beyond the grid's own (e.g. SimCSE on BERT-large at
    # the nine seeds of RLRD on BERT-base)
    trained = {f"results/models/{m}/{b}/seed{s}" for m, b, s in grid_runs(config)}
    todo = [(m, b, s) for m, b, s in grid_runs(config)]
    while todo:
        for path in guide_outputs(config, *todo.pop()).values():
            if path.startswith("results/models/") and path not in trained:
                trained.add(path)
                method, backbone, seed = path.split("/")[2:5]
                todo.append((method, backbone, int(seed.removeprefix("seed"))))
    assert counts["train"] == len(trained) == sum(runs.values()) + 43
    # SAN samples, one per seed of each setting: scale 20 (simcse_san, sncse_san, the tau2 x p2
    # grid), 10, 30, 40 and scale 20 with the negation fallback (RankCSE+SAN, its lambda
    # variants and RLRD+SAN share it), and the masked-only variant (simcse_san_masked)
    tau_grid = [m for m in grid["methods"] if m.startswith("simcse_san_tau")]
    lam = [m for m in grid["methods"] if m.startswith("rankcse_san")]
    settings = [("simcse_san", "sncse_san", *tau_grid), ("san_scale10",), ("san_scale30",),
                ("san_scale40",), (*lam, "rlrd_san"), ("simcse_san_masked",)]  # fmt: skip
    assert counts["san_negatives"] == sum(len(set().union(*seeds(*g).values())) for g in settings)
    assert counts["back_translation"] == 2 and counts["paraphrase"] == 1  # de and ru pivots
    # the three mixed corpora of the domain setting (full, w/o general, w/o domain)
    assert counts["mixed_corpus"] == 3 and counts["corpus"] == 1
    # GCSE: one synthesis per corpus and data settings: Wikipedia's default (the released
    # pipeline, bugs fixed), released with its bugs and paper; the domain mix's default and w
    # randomly (no prompt, no LLM); w/o general's and w/o domain's. Denoised triplets per
    # stage-1 model (backbone x seed) for each of those plus the domain setting's w/o filtering
    # (w/o decay and the sigma variants share the default's or w/o filtering's)
    assert counts["gcse_synthesize"] == 7
    denoised = [("gcse", "gcse_paper_form"), ("gcse_released",), ("gcse_paper",),
                ("gcse_domain", "gcse_wo_decay", "gcse_sigma0.32"), ("gcse_w_randomly",),
                ("gcse_wo_general",), ("gcse_wo_domain",),
                ("gcse_wo_filtering", "gcse_wo_filtering_sigma0.32")]  # fmt: skip
    assert counts["gcse_denoise"] == sum(sum(map(len, seeds(*g).values())) for g in denoised)
    log = out.stdout + out.stderr
    assert "Estimated GPU hours on one" in log
    table = log[log.index("Estimated GPU hours") :].splitlines()
    rows = {
        line.split()[0]: line.split()
        for line in table[2 : len(grid["methods"]) + 2]
        if line.strip()
    }
    assert set(grid["methods"]) <= set(rows)
    assert all(int(rows[m][1]) == 2 * runs[m] for m in grid["methods"])  # train + evaluation
    assert "planned seeds, sequential" in log and "Seed plan" in log
    assert "not counted" not in log[log.index("Estimated GPU hours") :]
    # the dry-run-only table stays out of other commands (the lint run, a real run)
    assert "Estimated GPU hours" not in lint.stdout


def test_configfile_selects_a_smaller_grid(workspace: Path) -> None:
    out = sh(
        [
            "snakemake",
            "-n",
            "--profile",
            "profiles/local",
            "--configfile",
            "config/simcse-only.yaml",
        ],
        workspace,
    )
    grid = project_config(workspace, check=False)["grid"]
    # one run per backbone and seed of params.yaml's grid
    assert job_counts(out.stdout)["train"] == len(grid["backbones"]) * len(grid["seeds"])


def test_make_smoke_runs_all_six_systems_in_the_jobs_the_readme_says(workspace: Path) -> None:
    """`make smoke`'s grid (tests/smoke/config.yaml): every method's trainings and evaluations
    (simcse and sncse at three seeds, the 17 others, RankCSE, RankCSE+SAN, RLRD, RLRD+SAN and
    GCSE among them, at seed 1; their teachers and GCSE's stage 1 are runs of the grid), GCSE's LLM
    synthesis and its denoising, one set of tables for all of them, in the number of jobs the
    smoke grid's page (docs/smoke.md) gives."""
    out = sh([*SMOKE, "-n", "--forceall"], workspace).stdout
    counts = job_counts(out)
    assert counts["train"] == 2 * 3 + 17 + 1  # + gcse_stage1, a guide (no table row)
    assert counts["evaluate_model"] == 2 * 3 + 17
    assert counts["gcse_synthesize"] == counts["gcse_denoise"] == 1
    # sts, transfer, splits, probe, analysis, published, verdicts (every measure),
    # checkpoints; a page per paper, and one per method of no paper (simcse and
    # simcse_dropout15)
    assert counts["table"] == 8 and counts["case_study_table"] == 1
    assert counts["paper_report"] == 5 and counts["method_report"] == 2
    trains = {wc for rule, wc in jobs_with_wildcards(out) if rule == "train"}
    for method in ("rankcse", "rankcse_san", "rlrd", "rlrd_san", "gcse", "gcse_stage1"):
        assert f"wildcards: method={method}, backbone=splade-tiny, seed=1" in trains
    smoke = (workspace / "docs/smoke.md").read_text()
    (stated,) = re.findall(r"(\d+) jobs in all", smoke)
    assert sum(counts.values()) == int(stated)


def test_a_named_grid_overlay_writes_its_own_folder_only(workspace: Path) -> None:
    """GCSE's domain setting (grid.name gcse-domain): every table, metric, figure and the
    curves' data of its dry run lie under results/grids/gcse-domain/, none on the default
    smoke grid's results/tables, results/metrics, results/headline.json, results/figures or
    results/plots."""
    out = sh([*SMOKE, "-n", "--forceall", "--configfile", *DOMAIN_CONFIGS], workspace).stdout
    outputs = [
        path
        for line in out.splitlines()
        if line.startswith("    output: ")
        for path in line.removeprefix("    output: ").split(", ")
    ]
    default_grid = ("results/tables/", "results/metrics/", "results/figures/", "results/plots/",
                    "results/headline.json")  # fmt: skip
    assert not [p for p in outputs if p.startswith(default_grid)]
    own = "results/grids/gcse-domain/"
    for path in ("tables/sts.md", "metrics/sts.json", "headline.json", "plots/training_curves.csv"):
        assert own + path in outputs, path
    assert any(p.startswith(own + "figures/splade-tiny/") for p in outputs)
    logs = re.findall(r"^    log: (\S+)", out, flags=re.M)
    assert "logs/grids/gcse-domain/tables/sts.log" in logs and "logs/tables/sts.log" not in logs


def test_gcse_stage1_simcse_runs_before_synthesis_denoising_and_stage2(workspace: Path) -> None:
    """A GCSE model's dry run: the LLM synthesis and SimCSE's own train job (the stage-1 model
    gcse_stage1, no second trainer) feed the denoising job, whose anchors are stage 2's
    training corpus."""
    target = "results/models/gcse/splade-tiny/seed1"
    out = sh([*SMOKE, "-n", "--forceall", target], workspace)
    jobs = jobs_with_wildcards(out.stdout)
    order = [rule if rule != "train" else f"train {wc}" for rule, wc in jobs]
    stage1 = order.index("train wildcards: method=gcse_stage1, backbone=splade-tiny, seed=1")
    stage2 = order.index("train wildcards: method=gcse, backbone=splade-tiny, seed=1")
    assert order.index("gcse_denoise") > max(stage1, order.index("gcse_synthesize"))
    assert stage2 == len(order) - 1  # the target comes last
    assert job_counts(out.stdout)["train"] == 2
    dag = sh([*SMOKE, "--dag", "--forceall", target], workspace).stdout
    labels = dict(re.findall(r"\t(\d+)\[label = \"(\w+)", dag))
    edges = {(labels[a], labels[b]) for a, b in re.findall(r"\t(\d+) -> (\d+)", dag)}
    assert {("train", "gcse_denoise"), ("gcse_synthesize", "gcse_denoise")} <= edges
    assert ("gcse_denoise", "train") in edges and ("corpus", "gcse_synthesize") in edges


def test_gcse_domain_setting_mixes_mirror_data_then_trains_stage1_on_it(
    workspace: Path, mirror: Path
) -> None:
    """The domain setting's corpus from the mirror's real files (STS12 train, SICK train; PAWS
    is not in the mirror: skipped and logged; the smoke overlay's general stand-in), then the
    chain's order: stage 1 (gcse_wo_stage2) trains on that corpus, the LLM reads it, the
    denoising uses that stage-1 model, stage 2 (gcse_domain) trains on its triplets."""
    import json

    overlay = ["--configfile", *DOMAIN_CONFIGS]
    corpus = "results/data/corpus/gcse-domain.txt"
    sh([*SMOKE, corpus, *overlay], workspace)  # (--configfile takes every word after it)
    stats = json.loads((workspace / "results/data/corpus/gcse-domain.stats.json").read_text())
    sts12, sick = stats["domain"]
    # the pair counts the paper prints (§4.1: 2.2k and 4.5k samples)
    assert (sts12["reader"], sts12["rows"]) == ("sts_pairs", 750 + 750 + 734)
    assert (sick["reader"], sick["rows"]) == ("sick_pairs", 4500)
    assert stats["skipped"][0]["files"] == ["unlabeled/paws/paws_wiki_labeled_final_train.tsv"]
    log = (workspace / "logs/data/corpus_gcse-domain.log").read_text()
    assert "skipped offline: domain source unlabeled/paws/" in log
    lines = (workspace / corpus).read_text().splitlines()
    assert stats["domain_lines"] == 1000 and stats["general_lines"] == 3000 == len(lines) - 1000
    wiki = set((mirror / "data/unlabeled/wiki1m/wiki1m_random10k.txt").read_text().splitlines())
    assert set(lines[1000:]) <= wiki and not set(lines[:1000]) & wiki

    target = "results/models/gcse_domain/splade-tiny/seed1"
    out = sh([*SMOKE, *overlay, "-n", target], workspace)
    jobs = jobs_with_wildcards(out.stdout)
    order = [f"{rule} {wc}" for rule, wc in jobs]
    stage1 = order.index("train wildcards: method=gcse_wo_stage2, backbone=splade-tiny, seed=1")
    synth = next(i for i, j in enumerate(order) if j.startswith("gcse_synthesize"))
    denoise = next(i for i, j in enumerate(order) if j.startswith("gcse_denoise"))
    assert "corpus=gcse-domain" in order[synth] and "corpus=gcse-domain" in order[denoise]
    assert denoise > max(stage1, synth) and order[-1].startswith(
        "train wildcards: method=gcse_domain"
    )
    assert all(rule != "mixed_corpus" for rule, _ in jobs)  # built above, not again
    assert "--model results/models/gcse_wo_stage2/splade-tiny/seed1" in out.stdout


def test_a_released_checkpoint_is_evaluated_as_its_own_row(workspace: Path, tmp_path: Path) -> None:
    """params.yaml `released`: a checkpoint evaluated with its own pooler, tagged as its row.
    Here the "released" checkpoint is the mirror's splade-tiny itself with the untrained rows'
    pooler, so its STS numbers must equal the untrained baseline's (independent truth: the same
    model, the same protocol, another rule)."""
    import json

    overlay = tmp_path / "released.yaml"
    overlay.write_text(
        "released:\n  toy_checkpoint:\n    pooler: cls_before_pooler\n"
        "    models: {splade-tiny: splade-tiny}\n"
    )
    ours = "results/eval/sts/released/toy_checkpoint/splade-tiny.json"
    untrained = "results/eval/sts/untrained/splade-tiny.json"
    sh([*SMOKE, ours, untrained, "--configfile", "tests/smoke/config.yaml", CI_REDUCTIONS,
        str(overlay)], workspace)  # fmt: skip
    got, base = (json.loads((workspace / f).read_text()) for f in (ours, untrained))
    assert (got["method"], got["backbone"], got["seed"]) == ("toy_checkpoint", "splade-tiny", "0")
    for task in ("STS12", "STSBenchmark", "SICKRelatedness", "avg"):
        assert got[task] == base[task]
    log = workspace / "logs/eval/released/toy_checkpoint/splade-tiny.log"
    assert log.is_file()
    md = tmp_path / "sts.md"
    sh(["python", "-m", "negcse", "table", "sts", "--evals", ours, untrained, "--tex",
        str(tmp_path / "sts.tex"), "--csv", str(tmp_path / "sts.csv"), "--md", str(md)],
       workspace)  # fmt: skip
    rows = [line for line in md.read_text().splitlines() if line.startswith("| toy_checkpoint")]
    assert len(rows) == 1 and f"{base['avg']:.2f}" in rows[0]
    # the verdicts' paired bootstrap on the real files (the pairs several tasks share drawn
    # together): the same model twice has no test-set variance of its difference
    data = read_evaluations([str(workspace / ours), str(workspace / untrained)])
    a, b = (data.models[("sts", m, "splade-tiny")] for m in ("toy_checkpoint", "untrained"))
    assert data.designs[("sts", "splade-tiny")][1]["STSBenchmark"].keys  # keys recorded
    assert data.test_variance(a, b) == 0.0 and data.test_variance(a, None) > 0


def test_planning_never_asks_the_network_for_released_checkpoints(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Offline, online with a hub that does not answer, or online with one that does (a
    loopback server standing in for huggingface.co, counting requests): the nine released
    checkpoints (in no mirror or cache) are the STS table's jobs every time, and planning sent
    the hub nothing. One that cannot be got is reported unavailable when its job runs."""
    # the table forced: its committed copy must not hide which evaluations it reads (the copy's
    # files share one mtime; alone, this test found "Nothing to be done")
    dry = ["snakemake", "-n", "--profile", "profiles/local", "results/tables/sts.md",
           "--forcerun", "table"]  # fmt: skip

    def planned() -> int:
        return job_counts(sh(dry, workspace).stdout)["evaluate_released"]

    assert planned() == 9
    monkeypatch.setenv("NEGCSE_OFFLINE", "0")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    with socket.socket() as closed:  # bound, not listening: connections are refused
        closed.bind(("127.0.0.1", 0))
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed.getsockname()[1]}")
        assert planned() == 9
    requests: list[str] = []

    class Counting(SimpleHTTPRequestHandler):
        def do_HEAD(self) -> None:
            requests.append(self.path)
            super().do_HEAD()

        def do_GET(self) -> None:
            requests.append(self.path)
            super().do_GET()

    hub = HTTPServer(("127.0.0.1", 0), Counting)
    threading.Thread(target=hub.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{hub.server_address[1]}")
        assert planned() == 9
    finally:
        hub.shutdown()
        hub.server_close()
    assert requests == []
