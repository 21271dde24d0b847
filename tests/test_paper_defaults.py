"""Issues 11 and 25: the paper grid compares like with like and defaults to what the papers ran.

Baselines per method (params.yaml ``baseline``) and the STS table's delta to them; UNA's own
baseline and SimCSE at SimCSE+SAN's dropout, resolved from params.yaml; OssCSE's counts and
options (paraphrase fallback rows, identical negations, masking, RecAdam's decoupled recall);
fp32 final encodings; SAN's released POS table; UNA's truncated dev sentences; GCSE's released
loss form and width; ListMLE's epsilon, RLRD's teacher inputs and ListNet temperatures.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
from pathlib import Path

import numpy as np
import pytest
import torch

from negcse.generators.pos_lexicon import LexiconError, read_released_table
from negcse.losses import two_way_margin_loss
from negcse.methods.base import StepContext
from negcse.methods.registry import build_method
from negcse.training.settings import TrainSettings
from negcse.workflow.config import (
    ConfigError,
    check_config,
    method_baselines,
    project_config,
    resolve_method,
    train_settings,
)
from negcse.workflow.guide_config import guide_specs

REPO = Path(__file__).resolve().parents[1]
BACKBONES = ("bert-base-uncased", "bert-large-uncased", "roberta-base", "roberta-large")


@pytest.fixture(scope="module")
def params() -> dict:
    return project_config(REPO)


# -- baselines -----------------------------------------------------------------------------------


def test_una_baseline_has_unas_released_settings(params: dict) -> None:
    """run_{bert,roberta}base_simcse.sh: symmetric NT-Xent, no clipping, fp32, dev every 100
    steps; RoBERTa-base batch 64, lr 5e-6 constant; BERT-base lr 3e-5 linear; no negatives."""
    run = resolve_method(params, "una_baseline", "roberta-base")
    t = run["train"]
    assert (t["batch_size"], t["learning_rate"], t["scheduler"]) == (64, 5e-6, "constant")
    assert (t["max_grad_norm"], t["precision"], t["eval_steps"]) == (None, "fp32", 100)
    assert run["params"]["objective"] == "symmetric"
    bert = resolve_method(params, "una_baseline", "bert-base-uncased")["train"]
    assert (bert["batch_size"], bert["learning_rate"], bert["scheduler"]) == (64, 3e-5, "linear")
    method = build_method("una_baseline", run["params"], "roberta-base")
    assert method.columns == () and all(
        [v.name for v in method.views(step)] == ["anchor", "positive"] for step in range(11)
    )
    # like with like: UNA and its baseline differ only in the negatives
    for backbone in BACKBONES:
        assert train_settings(params, "una", backbone) == train_settings(
            params, "una_baseline", backbone
        )


def test_simcse_dropout15_is_simcse_san_without_san(params: dict) -> None:
    for backbone in BACKBONES:
        base = train_settings(params, "simcse_dropout15", backbone)
        assert base == train_settings(params, "simcse_san", backbone)
    assert train_settings(params, "simcse_dropout15", "bert-base-uncased").dropout == 0.15
    assert train_settings(params, "simcse", "bert-base-uncased").dropout == 0.1


def test_baselines_are_the_papers_comparisons(params: dict) -> None:
    base = method_baselines(params)
    assert base["una"] == base["una_paraphrase"] == base["una_both"] == "una_baseline"
    assert base["una_random_select"] == "una"  # UNA Table 2 compares ablations with UNA
    assert base["simcse_san"] == base["simcse_san_masked"] == "simcse_dropout15"
    assert base["sncse_san"] == "sncse" and base["sncse_pl"] == "sncse"
    assert base["sncse"] == base["osscse"] == "simcse"
    assert all(b in params["methods"] for b in base.values())


def test_sncse_trains_with_its_released_environments_tf32(params: dict) -> None:
    """train_SNCSE.sh passes no --fp16 and the paper ran PyTorch 1.8.0 on A100s, where fp32
    matmuls ran as TF32: SNCSE, its Table 3 ablations and SNCSE+SAN (like with like beside it)
    train at tf32; UNA (an RTX 2080 Ti: no TF32) and GCSE keep IEEE fp32."""
    for backbone in BACKBONES:
        for method in ("sncse", "sncse_pl", "sncse_nl", "sncse_infonce", "sncse_san"):
            assert train_settings(params, method, backbone).precision == "tf32", method
        for method in ("una", "una_baseline", "gcse"):
            assert train_settings(params, method, backbone).precision == "fp32", method


def test_unknown_baseline_is_an_error(params: dict) -> None:
    bad = copy.deepcopy(params)
    bad["methods"]["una"]["baseline"] = "una_basline"
    with pytest.raises(ConfigError, match="methods.una.baseline names 'una_basline'"):
        check_config(bad)


# -- OssCSE: counts and options -----------------------------------------------------------------

# "not" is the 27th token: inside PromptBERT's 32-token sentence budget, outside the 22 tokens
# the whole-prompt budget leaves (tests/test_prompt_pooler.py counts it by hand)
LONG = (
    "the old stone bridge over the wide river near the small quiet village in the green "
    "valley where many people walk every day and they do like it ."
)
DATA = {
    "sentence": ["A man is playing a guitar.", "The cat sat.", LONG, "He can swim."],
    "paraphrase_osscse": ["A guy plays a guitar.", "The cat sat.", "x y z", " He can swim. "],
    "negation_osscse": [
        "A man is not playing a guitar.",
        "The cat did not sit.",
        LONG.replace("they do like", "they do not like"),
        "He can swim.",  # a negation equal to its sentence
    ],
}


@pytest.mark.mirror
@pytest.mark.parametrize(("truncate", "identical"), [("sentence", 1), ("prompt", 2)])
def test_osscse_counts_fallbacks_and_identical_negations(
    splade_tiny: Path, truncate: str, identical: int, caplog: pytest.LogCaptureFixture
) -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(splade_tiny))
    method = build_method("osscse", {"truncate": truncate}, "splade-tiny")
    with caplog.at_level(logging.INFO, logger="negcse.methods.osscse"):
        stats = method.prepare(DATA, tok, 32)
    assert stats == {"sentences": 4, "paraphrase_fallback": 2, "identical_negations": identical}
    assert "2 of 4 paraphrases are the sentence itself" in caplog.text


def _linear_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Linear(3, 2)


def _emb(rows: int = 4) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    return {
        k: torch.randn(rows, 5, generator=g)
        for k in ("anchor", "positive", "negation", "paraphrase")
    }


def test_osscse_mask_fallback_drops_those_rows_from_the_margin() -> None:
    method = build_method("osscse", {"mask_fallback": True}, "bert-base-uncased")
    method.attach(_linear_model())
    method._fallback = np.array([False, True, False, True, False, False])
    emb = _emb()
    rows = np.array([0, 1, 2, 3])  # rows 1 and 3 fall back
    out = method.loss(emb, StepContext(0, None, "b", rows=rows))
    keep = torch.tensor([0, 2])
    hand = two_way_margin_loss(
        emb["anchor"][keep], emb["paraphrase"][keep], emb["negation"][keep], 0.05, 0.2
    )
    assert float(out.logs["margin"]) == pytest.approx(float(hand))
    plain = build_method("osscse", {}, "bert-base-uncased")
    plain.attach(_linear_model())
    full = float(plain.loss(emb, StepContext(0, None, "b", rows=rows)).logs["margin"])
    assert full != pytest.approx(float(hand))


def test_osscse_decoupled_recall_is_recadams_update() -> None:
    """RecAdam: the quadratic penalty is not in the loss (so not in Adam's moments); after the
    step theta <- theta - lr * gamma * (theta - theta0)."""
    method = build_method("osscse", {"recall": "decoupled"}, "bert-base-uncased")
    model = _linear_model()
    method.attach(model)
    with torch.no_grad():
        model.weight.add_(1.0)  # theta - theta0 = 1 on every weight, 0 on the bias
    emb = _emb()
    out = method.loss(emb, StepContext(0, model, "b"))
    logs = {k: float(v) for k, v in out.logs.items()}  # tensors: no host sync in the step
    assert float(out.loss) == pytest.approx(logs["infonce"] + 1e-3 * logs["margin"], rel=1e-6)
    assert logs["recall"] == pytest.approx(0.5 * 2e-3 * 6)  # gamma / 2 * six squared ones
    before = model.weight.detach().clone()
    method.after_step(lr=0.5)
    np.testing.assert_allclose(model.weight.detach(), before - 0.5 * 2e-3 * 1.0, rtol=1e-6)
    literal = build_method("osscse", {}, "bert-base-uncased")
    literal.attach(model)
    assert literal.params.recall == "loss"


# -- fp32 final encodings ------------------------------------------------------------------------


def _tiny_encoder(tmp_path: Path, device: torch.device):
    """A randomly initialised 2-layer BERT and a WordPiece tokenizer built here (no mirror), so
    the check also runs on a GPU machine."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    from negcse.encoders.poolers import get_pooler
    from negcse.evaluation.embedder import Embedder

    words = ["a", "man", "plays", "the", "guitar", "cat", "sat", "on", "mat", ".", "is", "playing"]
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    tok = BertTokenizerFast(vocab_file=str(vocab))
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(tok), hidden_size=64, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=128)  # fmt: skip
    model = BertModel(config).to(device).eval()
    return Embedder(model, tok, get_pooler("cls_before_pooler", tokenizer=tok), 32, device)


@pytest.mark.parametrize(
    ("device", "fast"),
    [("cpu", torch.bfloat16), pytest.param("cuda", torch.float16, marks=pytest.mark.gpu)],
)
def test_final_encodings_run_in_fp32(tmp_path: Path, device: str, fast: torch.dtype) -> None:
    """The encoder's forward runs without autocast (SentEval / SimCSE evaluate in fp32), also
    on CUDA, where it used fp16 autocast; the same check sees the autocast dtype when one is
    asked for, so it can tell the two apart."""
    enc = _tiny_encoder(tmp_path, torch.device(device))
    seen: list[torch.dtype] = []
    # a Linear's output: under autocast it takes the autocast dtype (LayerNorm outputs stay fp32)
    linear = next(m for m in enc.model.modules() if isinstance(m, torch.nn.Linear))
    hook = linear.register_forward_hook(lambda _m, _i, out: seen.append(out.dtype))
    sentences = ["a man plays the guitar .", "the cat sat on the mat .", "a man is playing ."]
    try:
        exact = enc.encode(sentences)
        assert seen and set(seen) == {torch.float32} and exact.dtype == np.float32
        seen.clear()
        enc.autocast_dtype = fast
        approx = enc.encode(sentences)
        assert set(seen) == {fast}
    finally:
        hook.remove()
    assert np.abs(exact - approx).max() > 0  # reduced precision changes the vectors


# -- SAN's released POS table --------------------------------------------------------------------


def _table(tmp_path: Path, tags: list[str]) -> Path:
    path = tmp_path / "vocab_pos_end.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(tags), encoding="utf-8")  # released: no final newline
    return path


@pytest.mark.mirror
def test_released_table_scores(splade_tiny: Path, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(splade_tiny))
    tags = [" NOUN"] * len(tok)
    tags[0], tags[101], tags[102] = "PAD", "CLS", "SEP"
    tags[100], tags[103], tags[1996], tags[2000] = "X", "X", " PRON", " PART"  # [UNK], [MASK]
    lex = read_released_table(_table(tmp_path, tags), tok)
    assert lex.scores[[0, 101, 102, 100, 103, 1996, 2000, 5000]].tolist() == [
        0, 0, 0, 1, 1, 7, 3, 9
    ]  # fmt: skip
    assert lex.tokens[1996] == "the" and lex.pos[1996] == "PRON"
    with pytest.raises(LexiconError, match="30521 lines but the tokenizer has 30522"):
        read_released_table(_table(tmp_path, tags[:-1]), tok)
    tags[7] = "NOUNS"
    with pytest.raises(LexiconError, match="line 8: unknown tag 'NOUNS'"):
        read_released_table(_table(tmp_path, tags), tok)


@pytest.mark.mirror
def test_pos_lexicon_command_reads_the_pinned_table(
    splade_tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--source released`` resolves the registered file (mirror, cache, network) and checks its
    sha256; here a mirror holds a table whose checksum the registry is told."""
    from transformers import AutoTokenizer

    from negcse.cli import main
    from negcse.data.sources import DataFile, registry

    tok = AutoTokenizer.from_pretrained(str(splade_tiny))
    tags = ["X"] * len(tok)
    tags[0] = "PAD"
    mirror = tmp_path / "mirror"
    table = _table(mirror / "data" / "san", tags)
    entry = registry()["san/vocab_pos_end.txt"]
    sha = hashlib.sha256(table.read_bytes()).hexdigest()
    monkeypatch.setitem(
        registry(), entry.relative_path, DataFile(entry.relative_path, sha, entry.lines, entry.url)
    )
    out, stats = tmp_path / "lex.tsv", tmp_path / "lex.json"
    assert main(["pos-lexicon", "--mlm", str(splade_tiny), "--source", "released", "--output",
                 str(out), "--stats", str(stats), "--mirror", str(mirror)]) == 0  # fmt: skip
    assert json.loads(stats.read_text())["source"] == "released"
    rows = out.read_text().splitlines()
    assert rows[1] == "0\t[PAD]\tSPECIAL\t0" and rows[2] == "1\t[unused0]\tX\t1"


@pytest.mark.mirror
def test_pos_lexicon_command_never_writes_a_substitute_for_the_released_table(
    splade_tiny: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--source released`` that finds the table nowhere (offline, a mirror and cache without
    it) fails with the places tried and writes nothing: a spaCy lexicon is never written under
    the released one's name (the workflow plans ``spacy`` instead: specs/san.py)."""
    from negcse.cli import main

    monkeypatch.setenv("NEGCSE_CACHE", str(tmp_path / "cache"))
    (tmp_path / "mirror").mkdir()
    out, stats = tmp_path / "lex.tsv", tmp_path / "lex.json"
    assert (
        main(
            [
                "pos-lexicon",
                "--mlm",
                str(splade_tiny),
                "--source",
                "released",
                "--output",
                str(out),
                "--stats",
                str(stats),
                "--mirror",
                str(tmp_path / "mirror"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "data file 'san/vocab_pos_end.txt' not found" in err
    assert f"mirror: {tmp_path / 'mirror' / 'data' / 'san' / 'vocab_pos_end.txt'}" in err
    assert not out.exists() and not stats.exists()


# -- UNA's dev truncation ------------------------------------------------------------------------


def test_dev_truncation_setting_is_optional_and_kept_out_of_default_run_specs() -> None:
    values = {
        "epochs": 1, "batch_size": 64, "learning_rate": 3e-5, "max_seq_len": 32, "dropout": 0.1,
        "scheduler": "linear", "warmup_ratio": 0.0, "weight_decay": 0.0, "max_grad_norm": None,
        "max_steps": None, "eval_steps": 100, "checkpoint_steps": 100, "precision": "fp32",
    }  # fmt: skip
    assert "dev_max_seq_len" not in TrainSettings.from_dict(values).to_dict()
    cut = TrainSettings.from_dict({**values, "dev_max_seq_len": 32})
    assert cut.to_dict()["dev_max_seq_len"] == 32


@pytest.mark.mirror
def test_dev_sentences_cut_to_dev_max_seq_len(splade_tiny: Path, tmp_path: Path) -> None:
    """UNA's released dev loader: STS-B dev sentences cut to 32 tokens. With the setting, model
    selection encodes a long sentence as its first tokens; without it, in full."""
    from negcse.training.model import SentenceEncoder
    from negcse.training.trainer import TrainData, Trainer

    model = SentenceEncoder.from_pretrained(str(splade_tiny), 0.1)
    values = {
        "epochs": 1, "batch_size": 2, "learning_rate": 1e-5, "max_seq_len": 32, "dropout": 0.1,
        "scheduler": "linear", "warmup_ratio": 0.0, "weight_decay": 0.0, "max_grad_norm": None,
        "max_steps": 1, "eval_steps": 1, "checkpoint_steps": 1, "precision": "fp32",
    }  # fmt: skip
    long = "the old stone bridge over the wide river near the small quiet village ."
    head = "the old stone bridge over the"  # the first 6 tokens: 8 with [CLS] and [SEP]
    data = TrainData({"sentence": ["a b", "c d"]})
    method = build_method("una_baseline", {}, "splade-tiny")

    def trainer(cut: int | None) -> Trainer:
        settings = TrainSettings.from_dict({**values, "dev_max_seq_len": cut})
        return Trainer(method, model, data, settings, 1, lambda _e: 0.0, tmp_path,
                       device=torch.device("cpu"), progress=False)  # fmt: skip

    cut = trainer(8).encode_eval([long, head])
    np.testing.assert_allclose(cut[0], cut[1], atol=1e-5)
    full = trainer(None).encode_eval([long, head])
    assert np.abs(full[0] - full[1]).max() > 1e-3


# -- issue 25: GCSE's loss and RankCSE / RLRD as released --------------------------------------


def test_gcse_rows_train_the_released_loss(params: dict) -> None:
    """Every GCSE row of the grid trains the released form and width (alpha 0.17 logits =
    sigma 0.0085 at tau 0.05), except Figure 6's sigma variants (their sigma) and the labelled
    literal-paper rows (the loss alone, and the paper's whole reading); "w/o decay" differs only
    in the decay."""
    grid = params["grid"]["methods"]
    gcse_rows = [m for m in grid if params["methods"][m]["implementation"] == "gcse"]
    assert "gcse_paper_form" in gcse_rows and len(gcse_rows) >= 10
    for method in gcse_rows:
        for backbone in BACKBONES:
            p = resolve_method(params, method, backbone)["params"]
            if method in ("gcse_paper_form", "gcse_paper"):
                assert (p["form"], p["sigma"]) == ("paper", 0.01)
                continue
            sigma = 0.32 if "sigma0.32" in method else 0.17 * 0.05
            assert (p["form"], p["temperature"]) == ("released", 0.05)
            assert p["sigma"] == pytest.approx(sigma)
            assert p["decay"] is (method != "gcse_wo_decay")
    base = resolve_method(params, "gcse", "bert-base-uncased")
    variant = resolve_method(params, "gcse_paper_form", "bert-base-uncased")
    assert params["methods"]["gcse_paper_form"]["baseline"] == "gcse"
    assert {k for k in base if base[k] != variant[k]} == {"method", "params"}


def test_rank_rows_follow_the_released_trainers(params: dict) -> None:
    """ListMLE's 1e-7 in every RankCSE / RLRD row; RLRD's teachers on the prompt-wrapped
    inputs; the teachers' SAN lists at 0.05 (ListNet) where the student's is tau2."""
    for method in ("rankcse", "rankcse_san", "rankcse_san_lambda0.1", "rlrd", "rlrd_san"):
        for backbone in BACKBONES:
            p = resolve_method(params, method, backbone)["params"]
            assert p["listmle_epsilon"] == 1e-7
            if "rlrd" in method:
                assert p["teacher_inputs"] == "prompts"
            if "san" in method:
                assert p["san_teacher_temperature"] == 0.05
    rlrd_san = resolve_method(params, "rlrd_san", "bert-base-uncased")["params"]
    assert (rlrd_san["tau2"], rlrd_san["san_teacher_temperature"]) == (0.1, 0.05)
    guides = build_method("rlrd", {}, "bert-base-uncased").guides()
    assert [[(i.key, i.prompt) for i in g.inputs] for g in guides] == [
        [("anchor", "prompt_sncse_anchor"), ("positive", "prompt_sncse_positive")]
    ] * 2


# -- RankCSE+SAN's second teacher, RLRD's BML weight on RoBERTa ------------------------------------


def test_rankcse_san_second_teacher_is_the_authors_simcse_san_bert_large(params: dict) -> None:
    """4184.sh and 4601.sh L26 (BERT students): --second_teacher_name_or_path
    SimCSE/run_scripts/1604, the authors' SimCSE+SAN on BERT-large: batch 64, lr 1e-5, 32
    tokens, 1 epoch, tau 0.05, scd_temp (tau2) 0.1, dropout_for_last_column (p2) 0.2, no
    --dropout (0.1) and no --fp16, dev every 125 steps, the raw SAN samples (re_mask4, no
    post-processing). RoBERTa students (47103, 48101): plain SimCSE RoBERTa-base and -large.
    RankCSE alone (run_rankcse.sh L29): plain SimCSE BERT-large."""
    for method in ("rankcse_san", "rankcse_san_lambda0.1", "rankcse_san_lambda0.15"):
        for backbone in BACKBONES:
            teacher = guide_specs(params, method, backbone)["teacher2"]["run"]
            if backbone.startswith("roberta"):
                assert (teacher["method"], teacher["backbone"]) == ("simcse", "roberta-large")
                continue
            assert (teacher["method"], teacher["backbone"]) == ("simcse_san", "bert-large-uncased")
            t, p = teacher["train"], teacher["params"]
            assert (t["batch_size"], t["learning_rate"], t["max_seq_len"], t["epochs"]) == (
                64,
                1e-5,
                32,
                1,
            )
            assert (t["dropout"], t["precision"], t["eval_steps"]) == (0.1, "fp32", 125)
            assert (p["temperature"], p["tau2"], p["p2"]) == (0.05, 0.1, 0.2)
            assert not teacher["generators"].get("san", {}).get("fallback", False)
    plain = guide_specs(params, "rankcse", "bert-base-uncased")["teacher2"]["run"]
    assert (plain["method"], plain["backbone"]) == ("simcse", "bert-large-uncased")


def test_rlrd_bml_weight_is_5e_4_on_roberta(params: dict) -> None:
    """train_1.py L531-534: lambda_ = 5e-4 when the model path holds 'roberta', else 1e-3; one
    trainer for RLRD and RLRD+SAN."""
    for method in ("rlrd", "rlrd_san"):
        for backbone in BACKBONES:
            weight = resolve_method(params, method, backbone)["params"]["bml_weight"]
            assert weight == (5e-4 if "roberta" in backbone else 1e-3), (method, backbone)
