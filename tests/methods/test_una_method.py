"""UNA as a method: injection every alpha steps (views, forward-pass sizes, loss shapes), the
loss against a hand computation and against the released code's formulation, a tiny training
run on splade-tiny, "same seed, same negatives, same loss", and the generator settings that
pick the negatives file of each params.yaml entry."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pytest
import torch
import yaml

from negcse.commands import una_negatives as una_cmd
from negcse.data.sources import resolve_data
from negcse.data.sts import STSData, load_sts
from negcse.evaluation.sts import score_task
from negcse.generators.registry import column_file, settings, variants
from negcse.generators.specs.una import variant as una_variant_of
from negcse.generators.tfidf import fit_tfidf_files, write_tfidf_table
from negcse.io_utils import read_lines, write_lines
from negcse.losses import symmetric_info_nce
from negcse.methods.base import LossOutput, StepContext
from negcse.methods.registry import build_method
from negcse.runtime.seed import seed_everything
from negcse.training.model import SentenceEncoder
from negcse.training.settings import TrainSettings
from negcse.training.trainer import TrainData, Trainer
from negcse.workflow.config import check_config, column_readers, deep_merge, project_config

REPO = Path(__file__).resolve().parents[2]
WIKI = "unlabeled/wiki1m/wiki1m_random10k.txt"


# -- hand computations ------------------------------------------------------------------------


def _cos(u: list[float], v: list[float]) -> float:
    dot = sum(a * b for a, b in zip(u, v, strict=True))
    return dot / (math.sqrt(sum(a * a for a in u)) * math.sqrt(sum(b * b for b in v)))


def _hand_symmetric(pairs: list[tuple[list[float], list[float]]], tau: float) -> float:
    """Every one of the 2N vectors is an anchor; its partner is the positive, all other
    vectors (except itself) the negatives; mean over the 2N anchors."""
    vecs, partner = [], []
    for k, (a, b) in enumerate(pairs):
        vecs += [a, b]
        partner += [2 * k + 1, 2 * k]
    total = 0.0
    for i, v in enumerate(vecs):
        others = [_cos(v, w) / tau for j, w in enumerate(vecs) if j != i]
        pos = _cos(v, vecs[partner[i]]) / tau
        total += -pos + math.log(sum(math.exp(x) for x in others))
    return total / len(vecs)


def _released_loss(rows: torch.Tensor, tau: float) -> torch.Tensor:
    """UNA's ``simcse_unsup_loss`` as released: rows interleaved per example
    ([a_0, p_0, a_0', p_0', a_1, ...]), label of row y = y ^ 1, self-similarity - 1e12."""
    y_true = torch.arange(rows.shape[0])
    labels = (y_true - y_true % 2 * 2) + 1
    sim = torch.nn.functional.cosine_similarity(rows.unsqueeze(1), rows.unsqueeze(0), dim=-1)
    sim = sim - torch.eye(rows.shape[0]) * 1e12
    return torch.nn.functional.cross_entropy(sim / tau, labels)


def _ctx(step: int = 0) -> StepContext:
    return StepContext(step=step, model=torch.nn.Identity(), backbone="test")


# -- views: exactly every alpha steps ---------------------------------------------------------


@pytest.mark.parametrize("alpha", [1, 3, 5])
def test_negatives_join_exactly_every_alpha_steps(alpha: int) -> None:
    method = build_method("una", {"alpha": alpha}, "test")
    for step in range(4 * alpha + 3):
        views = method.views(step)
        names = [v.name for v in views]
        if step % alpha == 0:
            assert names == ["anchor", "positive", "negative", "negative_positive"]
            assert [v.column for v in views] == [
                "sentence",
                "sentence",
                "una_negative",
                "una_negative",
            ]
            # same pooler and dropout as the sentence views: one forward pass of 4B rows
            assert len({(v.pooler, v.dropout) for v in views}) == 1
        else:
            assert names == ["anchor", "positive"]


def test_alpha_zero_never_injects_and_infonce_adds_one_view() -> None:
    never = build_method("una", {"alpha": 0}, "test")
    assert all(len(never.views(s)) == 2 for s in range(20))
    one = build_method("una", {"objective": "infonce"}, "test")
    assert [v.name for v in one.views(0)] == ["anchor", "positive", "negative"]
    assert [v.name for v in one.views(1)] == ["anchor", "positive"]


def test_paraphrase_variants_take_their_positive_from_the_paraphrase_column() -> None:
    para = build_method("una_paraphrase", {}, "test")
    assert para.columns == ("paraphrase",)
    assert all([v.column for v in para.views(s)] == ["sentence", "paraphrase"] for s in range(6))
    both = build_method("una_both", {}, "test")
    assert set(both.columns) == {"paraphrase", "una_negative"}
    assert [v.column for v in both.views(0)] == [
        "sentence",
        "paraphrase",
        "una_negative",
        "una_negative",
    ]
    assert [v.column for v in both.views(1)] == ["sentence", "paraphrase"]


def test_bad_params_are_refused_with_the_key() -> None:
    with pytest.raises(ValueError, match="alpha"):
        build_method("una", {"alpha": -1}, "test")
    with pytest.raises(ValueError, match="objective"):
        build_method("una", {"objective": "hinge"}, "test")
    with pytest.raises(KeyError, match=r"params\.beta: unknown"):
        build_method("una", {"beta": 0.5}, "test", where="methods.una.params")
    with pytest.raises(KeyError, match=r"params\.alpha: unknown"):
        build_method("una_paraphrase", {"alpha": 5}, "test")


# -- the loss -----------------------------------------------------------------------------------

A = [[1.0, 0.0, 0.5], [0.2, 1.0, -0.3], [-0.5, 0.4, 1.0]]
P = [[0.9, 0.1, 0.4], [0.1, 0.8, -0.2], [0.3, -0.6, 0.7]]
N = [[1.0, 0.2, 0.1], [0.0, 1.0, 0.4], [-0.4, 0.0, 1.0]]
NP = [[0.8, 0.3, 0.2], [0.1, 0.9, 0.5], [-0.5, 0.1, 0.9]]


def test_symmetric_info_nce_equals_hand_computation() -> None:
    got = symmetric_info_nce(torch.tensor(A), torch.tensor(P), 0.05).item()
    assert math.isclose(got, _hand_symmetric(list(zip(A, P, strict=True)), 0.05), rel_tol=1e-5)
    # 1 pair: each row's only other row is its positive -> loss 0
    one = symmetric_info_nce(torch.tensor([A[0]]), torch.tensor([P[0]]), 0.05).item()
    assert one == pytest.approx(0.0, abs=1e-6)


def test_injection_step_loss_is_the_released_loss_on_4b_rows() -> None:
    method = build_method("una", {"alpha": 5, "temperature": 0.05}, "test")
    emb = {k: torch.tensor(v) for k, v in zip(("anchor", "positive"), (A, P), strict=True)}
    plain = method.loss(emb, _ctx(1))
    emb.update(negative=torch.tensor(N), negative_positive=torch.tensor(NP))
    injected = method.loss(emb, _ctx(0))
    # the batch of B = 3 pairs becomes 2B = 6 pairs: 12 rows in the loss instead of 6
    assert plain.logs["rows"] == 6 and injected.logs["rows"] == 12
    assert injected.logs["negatives_injected"] == 1.0 and plain.logs["negatives_injected"] == 0.0
    pairs = list(zip(A, P, strict=True)) + list(zip(N, NP, strict=True))
    assert injected.loss.item() == pytest.approx(_hand_symmetric(pairs, 0.05), rel=1e-5)
    assert plain.loss.item() == pytest.approx(
        _hand_symmetric(list(zip(A, P, strict=True)), 0.05), rel=1e-5
    )
    # the released code's own layout and labels give the same number
    interleaved = torch.tensor([r for i in range(3) for r in (A[i], P[i], N[i], NP[i])])
    assert injected.loss.item() == pytest.approx(_released_loss(interleaved, 0.05).item(), rel=1e-5)
    assert injected.loss.item() > plain.loss.item()  # more negatives, harder task


def test_infonce_objective_puts_negatives_in_extra_columns() -> None:
    method = build_method("una", {"objective": "infonce", "temperature": 0.1}, "test")
    emb = {"anchor": torch.tensor(A), "positive": torch.tensor(P), "negative": torch.tensor(N)}
    out = method.loss(emb, _ctx(0))
    total = 0.0
    for i in range(3):
        logits = [_cos(A[i], P[j]) / 0.1 for j in range(3)] + [
            _cos(A[i], N[j]) / 0.1 for j in range(3)
        ]
        total += -logits[i] + math.log(sum(math.exp(x) for x in logits))
    assert out.loss.item() == pytest.approx(total / 3, rel=1e-5)
    assert out.logs["rows"] == 9


# -- training on splade-tiny --------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(mirror: Path) -> list[str]:
    return read_lines(resolve_data(WIKI, mirror=mirror))[:24]


@pytest.fixture(scope="module")
def tfidf_table(corpus: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tfidf")
    write_lines(folder / "corpus.txt", corpus)
    table = fit_tfidf_files([folder / "corpus.txt"], progress=False)
    write_tfidf_table(table, folder / "table.tsv")
    return folder


def _negatives(folder: Path, seed: int, out: Path, **settings: str) -> list[str]:
    args = argparse.Namespace(
        corpus=str(folder / "corpus.txt"),
        tfidf=str(folder / "table.tsv"),
        output=str(out),
        seed=seed,
        beta=0.5,
        window=4000,
        select=settings.get("select", "tfidf"),
        replace=settings.get("replace", "window"),
        scores="sentence",
        chunk_size=10_000,
    )
    assert una_cmd.run(args) == 0
    return read_lines(out)


def _dev_scorer(mirror: Path):
    full = load_sts("STSBenchmark-dev", "senteval", str(mirror))
    small = STSData("stsb-dev-40")
    small.add("dev", list(zip(full.sent1[:40], full.sent2[:40], full.scores[:40], strict=True)))
    return lambda encode: float(score_task(small, encode)["all"])


class _Recorder:
    """Wraps a method's loss to keep every step's LossOutput (the method itself is real)."""

    def __init__(self, method):
        self.outputs: list[LossOutput] = []
        self._loss = method.loss
        method.loss = self

    def __call__(self, emb, ctx):
        out = self._loss(emb, ctx)
        self.outputs.append(out)
        return out


def _train(
    splade: Path,
    mirror: Path,
    columns: dict[str, list[str]],
    tmp: Path,
    seed: int = 1,
    steps: int = 6,
    batch: int = 4,
    alpha: int = 5,
) -> tuple[Trainer, _Recorder, list[int]]:
    method = build_method("una", {"alpha": alpha}, "splade-tiny")
    recorder = _Recorder(method)
    settings = TrainSettings(
        epochs=2,  # 24 sentences: 6 steps per epoch; step 6 opens the second epoch
        batch_size=batch,
        learning_rate=1e-4,
        max_seq_len=32,
        dropout=0.1,
        scheduler="linear",
        warmup_ratio=0.0,
        weight_decay=0.0,
        max_grad_norm=None,
        max_steps=steps,
        eval_steps=3,
        checkpoint_steps=100,
        precision="fp32",
    )
    seed_everything(seed)
    model = SentenceEncoder.from_pretrained(str(splade), settings.dropout)
    sizes: list[int] = []

    def record(module, args, kwargs):
        if module.training:  # training forward passes only, not the dev evaluation
            sizes.append(int(kwargs["input_ids"].shape[0]))

    model.backbone.register_forward_pre_hook(record, with_kwargs=True)
    trainer = Trainer(
        method,
        model,
        TrainData(columns),
        settings,
        seed,
        _dev_scorer(mirror),
        tmp / "ckpt",
        device=torch.device("cpu"),
        progress=False,
    )
    trainer.train()
    return trainer, recorder, sizes


@pytest.mark.mirror
@pytest.mark.slow
def test_tiny_training_run_doubles_the_batch_every_alpha_steps(
    splade_tiny: Path, mirror: Path, corpus: list[str], tfidf_table: Path, tmp_path: Path
) -> None:
    negatives = _negatives(tfidf_table, 1, tmp_path / "neg.txt")
    columns = {"sentence": corpus, "una_negative": negatives}
    trainer, rec, sizes = _train(splade_tiny, mirror, columns, tmp_path, steps=7, alpha=3)
    b = 4
    # steps 0, 3, 6 encode anchor, positive, negative, negative positive in one pass
    assert sizes == [4 * b, 2 * b, 2 * b, 4 * b, 2 * b, 2 * b, 4 * b]
    assert [o.logs["rows"] for o in rec.outputs] == [
        4 * b,
        2 * b,
        2 * b,
        4 * b,
        2 * b,
        2 * b,
        4 * b,
    ]
    assert all(math.isfinite(o.loss.item()) for o in rec.outputs)
    assert trainer.state.step == 7
    assert [c["step"] for c in trainer.state.curve if "stsb_dev" in c] == [3, 6, 7]
    assert (tmp_path / "ckpt" / "best.pt").is_file()
    # the negatives that went in at step 0 are those of the batch's own sentences
    idx = trainer.batch_indices(0)
    emb = trainer.encode_views(trainer.method.views(0), idx)
    assert {k: tuple(v.shape) for k, v in emb.items()} == {
        k: (b, 128) for k in ("anchor", "positive", "negative", "negative_positive")
    }


@pytest.mark.mirror
@pytest.mark.slow
def test_same_seed_same_negatives_same_loss(
    splade_tiny: Path, mirror: Path, corpus: list[str], tfidf_table: Path, tmp_path: Path
) -> None:
    neg1 = _negatives(tfidf_table, 1, tmp_path / "a.txt")
    again = _negatives(tfidf_table, 1, tmp_path / "b.txt")
    neg2 = _negatives(tfidf_table, 2, tmp_path / "c.txt")
    assert neg1 == again
    assert neg1 != neg2

    def losses(neg: list[str], folder: str) -> list[float]:
        columns = {"sentence": corpus, "una_negative": neg}
        _, rec, _ = _train(splade_tiny, mirror, columns, tmp_path / folder, steps=3)
        return [o.loss.item() for o in rec.outputs]

    first = losses(neg1, "r1")
    assert first == losses(again, "r2")  # bit for bit
    other = losses(neg2, "r3")
    assert other[0] != first[0]  # step 0 injects the negatives


# -- generator settings: each params.yaml entry reads its own negatives file -------------------


@pytest.fixture(scope="module")
def params() -> dict:
    return project_config(REPO, check=False)


def test_params_entries_select_their_generator_settings(params: dict) -> None:
    s = {m: settings(params, "una", m) for m in ("una", "una_random_select", "una_random_both")}
    assert (s["una"]["select"], s["una"]["replace"]) == ("tfidf", "window")
    assert (s["una_random_select"]["select"], s["una_random_select"]["replace"]) == (
        "random",
        "window",
    )
    assert (s["una_random_both"]["select"], s["una_random_both"]["replace"]) == (
        "random",
        "random",
    )
    assert settings(params, "una", "una_both")["with_paraphrases"] is True
    # una, three ablations and una_both's paraphrase table: five distinct files per seed
    assert len(variants(params, "una", column_readers(params))) == 5
    assert una_variant_of(s["una"], "una_negative") == "tfidf-window_b0.5_r4000_sentence_c10000"


def test_column_file_depends_on_method_and_seed(params: dict) -> None:
    """The file names the method's settings and the seed, not the backbone (the signature has
    none): every backbone of a seed trains on the same negatives."""
    una1 = column_file(params, "una_negative", "una", "1", "wiki1m")
    assert una1 == "results/negatives/una/wiki1m/tfidf-window_b0.5_r4000_sentence_c10000/seed1.txt"
    assert una1 != column_file(params, "una_negative", "una", "2", "wiki1m")
    assert una1 != column_file(params, "una_negative", "una_random_replace", "1", "wiki1m")


def test_unknown_generator_setting_names_the_key(params: dict) -> None:
    bad = deep_merge(params, {"methods": {"una": {"generators": {"una": {"selct": "random"}}}}})
    with pytest.raises(KeyError, match=r"methods\.una\.generators\.una.*'selct'"):
        settings(bad, "una", "una")
    worse = deep_merge(params, {"generators": {"una": {"select": "tf-idf"}}})
    with pytest.raises(ValueError, match="select"):
        settings(worse, "una", "una")


def test_smoke_grid_holds_una_and_its_ablations_but_no_paraphrase(params: dict) -> None:
    smoke = yaml.safe_load((REPO / "tests" / "smoke" / "config.yaml").read_text())
    merged = deep_merge(params, smoke)
    check_config(merged, "smoke")
    methods = merged["grid"]["methods"]
    assert {"una", "una_random_select", "una_random_replace", "una_random_both"} <= set(methods)
    assert not {"una_paraphrase", "una_both"} & set(methods)
