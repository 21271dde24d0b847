"""GCSE as a generator: its settings name its files, the stage-1 model is the method's guide
run, and `negcse gcse-denoise` turns candidates into aligned triplets (eq. 10-11)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from negcse.cli import main
from negcse.generators.registry import column_file, settings
from negcse.generators.registry import config_models as _config_models
from negcse.generators.registry import provenance as _provenance
from negcse.generators.specs.gcse import (
    ANCHOR_COLUMN,
    NEGATIVE_COLUMN,
    POSITIVE_COLUMN,
    SPEC,
    denoise_args,
    neighbour_stage1,
    synthesis_args,
    synthesis_id,
    triplets_id,
)
from negcse.generators.specs.gcse import stage1_models as _stage1_models
from negcse.methods.gcse import GCSE
from negcse.workflow.config import column_readers, project_config, resolve_method
from negcse.workflow.guide_config import generator_context


def config_models(config: dict) -> list[str]:
    return _config_models(config, column_readers(config))


def provenance(config: dict, method: str) -> dict:
    return _provenance(config, method, column_readers(config).get(method, ()))


def stage1_models(config: dict, *job: object) -> tuple[str, str | None]:
    return _stage1_models(generator_context(config), *job)  # type: ignore[arg-type]

REPO = Path(__file__).resolve().parents[2]


def _config(**methods: dict) -> dict:
    base = {"implementation": "gcse", "guides": {"evaluation": {"method": "simcse"}}}
    return {
        "grid": {"methods": list(methods), "backbones": ["b"], "seeds": [1]},
        "methods": {"simcse": {"implementation": "simcse"}}
        | {name: base | extra for name, extra in methods.items()},
        "generators": {"gcse": {"model": "org/llm"}},
        "corpus": {"name": "wiki"},
    }


def test_method_reads_the_specs_columns() -> None:
    assert GCSE.columns == (POSITIVE_COLUMN, NEGATIVE_COLUMN)
    assert GCSE.corpus_column == ANCHOR_COLUMN and GCSE.init_guide == "evaluation"


def test_files_depend_on_settings_backbone_and_seed() -> None:
    config = _config(g={}, nofilter={"generators": {"gcse": {"filter": False}}})
    a = column_file(config, POSITIVE_COLUMN, "g", 1, "wiki", "b")
    assert a.startswith("results/gcse/triplets/wiki/released-transformers-org-llm_n64000_")
    assert a.endswith("__a0.8_b0.75_first/gcse_positive/b/seed1.txt")
    assert column_file(config, ANCHOR_COLUMN, "g", 1, "wiki", "b") == a.replace(
        "gcse_positive", "gcse_anchor"
    )
    assert column_file(config, POSITIVE_COLUMN, "g", 2, "wiki", "b") != a
    assert column_file(config, POSITIVE_COLUMN, "g", 1, "wiki", "c") != a
    off = column_file(config, POSITIVE_COLUMN, "nofilter", 1, "wiki", "b")
    assert "__nofilter/" in off and off.split("__")[0] == a.split("__")[0]  # same candidates
    with pytest.raises(ValueError, match="backbone"):
        column_file(config, POSITIVE_COLUMN, "g", 1, "wiki")


def test_paper_mode_and_released_bugs_have_their_own_files_and_args() -> None:
    bugs = {
        "released_bugs": [
            "subject_key",
            "identity_revision",
            "keep_unparsed",
            "sampled_extraction",
            "listed_order",
            "anchor_augmentation",
        ]
    }
    config = _config(
        g={},
        p={"generators": {"gcse": {"mode": "paper"}}},
        r={"generators": {"gcse": bugs}},
        o={"generators": {"gcse": {"released_bugs": ["listed_order"]}}},
    )
    released, paper = settings(config, "gcse", "g"), settings(config, "gcse", "p")
    buggy, listed = settings(config, "gcse", "r"), settings(config, "gcse", "o")
    assert triplets_id(released).endswith("__a0.8_b0.75_first")
    assert triplets_id(paper).endswith("__a0.9_b0.75_first")
    assert triplets_id(paper).split("__")[0] != triplets_id(released).split("__")[0]
    # the denoising bug changes the triplets, not the candidates
    assert triplets_id(listed) == triplets_id(released) + "_listed"
    assert "--order listed" in denoise_args(listed) and "--order roles" in denoise_args(released)
    assert triplets_id(buggy).split("__")[0] != triplets_id(released).split("__")[0]
    args = synthesis_args(buggy)
    assert "--released-bug identity_revision --released-bug keep_unparsed" in args
    assert "--released-bug sampled_extraction" in args
    assert "--released-bug subject_key" in args and "listed_order" not in args
    assert "anchor_augmentation" not in args  # a denoising bug: the same candidates
    assert "--released-bug" not in synthesis_args(released)
    assert triplets_id(buggy).endswith("_listed_aug") and "--augment-anchors" in denoise_args(buggy)
    assert "--augment-anchors" not in denoise_args(released)
    assert "--extension" in synthesis_args(released)
    config["methods"]["p"]["generators"]["gcse"]["extension"] = False
    assert "--extension" not in synthesis_args(settings(config, "gcse", "p"))
    config["methods"]["o"]["generators"]["gcse"]["released_bugs"] = ["suject"]
    with pytest.raises(ValueError, match="methods.o.generators.gcse.released_bugs.0: 'suject'"):
        settings(config, "gcse", "o")


def test_openai_backend_passes_the_key_variable_name_only() -> None:
    config = _config(g={})
    config["generators"]["gcse"] |= {
        "backend": "openai",
        "base_url": "http://127.0.0.1:9/v1",
        "api_key_env": "MY_KEY",
        "concurrency": 3,
        "request_budget": 50,
    }
    args = synthesis_args(settings(config, "gcse", "g"))
    assert "--api-key-env MY_KEY --max-in-flight 3" in args and "--request-budget 50" in args
    assert "org/llm" not in config_models(config)  # an endpoint: nothing to prefetch
    config["generators"]["gcse"]["base_url"] = ""
    with pytest.raises(ValueError, match="base_url"):
        settings(config, "gcse", "g")


def test_prefetch_names_a_hub_llm_but_not_the_pinned_one() -> None:
    config = _config(g={})
    assert "org/llm" in config_models(config)
    config["generators"]["gcse"]["model"] = "smollm2-135m-instruct-q4_1"
    assert "smollm2-135m-instruct-q4_1" not in config_models(config)


def test_stage1_model_is_the_evaluation_guide_run() -> None:
    config = _config(g={}, w={"guides": {"evaluation": {"method": "simcse", "seed": 7}}})
    tid = triplets_id(settings(config, "gcse", "g"))
    # g and w share the triplets variant but not the stage-1 run: refused, naming both
    with pytest.raises(ValueError, match="seed7.*seed3|seed3.*seed7"):
        stage1_models(config, tid, "b", 3, "wiki")
    # on another corpus (GCSE's domain setting) w's triplets are another file: no clash
    config["methods"]["w"]["corpus"] = "domain"
    run = "results/models/simcse/b/seed3"
    assert stage1_models(config, tid, "b", 3, "wiki") == (run, run)
    assert stage1_models(config, tid, "b", 3, "domain") == ("results/models/simcse/b/seed7",) * 2
    del config["methods"]["w"]
    with pytest.raises(ValueError, match="0 stage-1 models"):
        stage1_models(config, tid, "b", 3, "domain")
    config["methods"]["g"]["guides"]["evaluation"] = {"model": "org/released"}
    assert stage1_models(config, tid, "b", 3, "wiki") == ("org/released", None)


def test_stage1_neighbour_model_is_one_shared_stage1_run() -> None:
    """``neighbour_model: stage1``: the released KG encodes its pools with the stage-1 model
    (4_construct_main_parts_kg.py L30, L93: SentenceTransformer(--model_from_pretrained)). The
    candidates are shared by every backbone and seed, so one run encodes them: the evaluation
    guide on the grid's first backbone at the method's first seed there; the synthesis job
    lists that run as an input (trained first) and passes its folder."""
    stage1 = {"generators": {"gcse": {"neighbour_model": "stage1"}}}
    config = _config(r=stage1 | {"seeds": [5, 6]}, g={})
    config["grid"]["backbones"] = ["b", "c"]
    ctx = generator_context(config)
    synthesis = synthesis_id(settings(config, "gcse", "r"))
    assert synthesis != synthesis_id(settings(config, "gcse", "g"))  # its own candidates
    run = "results/models/simcse/b/seed5"
    assert neighbour_stage1(ctx, synthesis, "wiki") == (run, run)
    job = {"synthesis": synthesis, "corpus": "wiki"}
    step = next(st for st in SPEC.steps if st.name == "gcse_synthesize")
    assert step.rule_inputs(ctx)(job) == {
        "corpus": "results/data/corpus/wiki.txt",
        "stage1": run,
    }
    assert f"--neighbour-model {run}" in step.rule_params(ctx)["settings"](job)
    plain = {"synthesis": synthesis_id(settings(config, "gcse", "g")), "corpus": "wiki"}
    assert "stage1" not in step.rule_inputs(ctx)(plain)
    assert "--neighbour-model" not in step.rule_params(ctx)["settings"](plain)
    assert "stage1" not in config_models(config)  # a run, nothing to prefetch
    with pytest.raises(ValueError, match="is a run of the workflow: give its model"):
        synthesis_args(settings(config, "gcse", "r"))
    # a released stage-1 model: no run to train first
    config["methods"]["r"]["guides"]["evaluation"] = {"model": "org/stage1"}
    assert neighbour_stage1(generator_context(config), synthesis, "wiki") == ("org/stage1", None)


def test_params_yaml_gcse_variants() -> None:
    config = project_config(REPO, check=False)
    ids = {m: triplets_id(settings(config, "gcse", m)) for m in config["methods"] if "gcse" in m}
    assert ids["gcse"] == ids["gcse_wo_decay"] == ids["gcse_paper_form"]  # only the loss differs
    assert (
        len({ids["gcse"], ids["gcse_wo_filtering"], ids["gcse_released"], ids["gcse_paper"]}) == 4
    )
    assert config["methods"]["gcse_wo_decay"]["params"]["decay"] is False
    # Figure 6's sigma variants share their training set's triplets; w randomly asks no prompt
    assert ids["gcse_sigma0.32"] == ids["gcse"]
    assert ids["gcse_wo_filtering_sigma0.32"] == ids["gcse_wo_filtering"]
    randomly = settings(config, "gcse", "gcse_w_randomly")
    assert randomly["positives"] == randomly["negatives"] == 0
    assert ids["gcse_w_randomly"] not in {ids["gcse"], ids["gcse_wo_filtering"]}
    # the LLM that writes the data is in the run spec, so in negcse.json (not for w randomly)
    llm = resolve_method(config, "gcse", "bert-base-uncased")["llm"]
    assert llm == {"backend": "vllm", "model": config["generators"]["gcse"]["model"]}
    assert "llm" not in resolve_method(config, "gcse_w_randomly", "bert-base-uncased")
    assert "llm" not in resolve_method(config, "simcse", "bert-base-uncased")


def test_run_spec_records_an_endpoints_llm_but_not_its_key(monkeypatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-secret-123")
    config = _config(g={})
    config["generators"]["gcse"] |= {
        "backend": "openai",
        "base_url": "https://api.deepseek.com/v1",
        "api_key_env": "MY_KEY",
    }
    assert provenance(config, "g")["llm"] == {
        "backend": "openai",
        "model": "org/llm",
        "base_url": "https://api.deepseek.com/v1",
    }
    assert provenance(config, "simcse") == {}
    assert "sk-secret-123" not in json.dumps(provenance(config, "g"))


def _candidates(path: Path) -> None:
    """Three sources: one with no usable negative, one skipped, one with both roles."""
    rows = [
        {
            "anchor": "a cat sits on the mat",
            "skipped": None,
            "candidates": [
                {"role": "positive", "text": "a cat is sitting on a mat", "fallback": None},
                {"role": "negative", "text": "", "fallback": "in-batch 2"},
            ],
        },
        {"anchor": "", "skipped": "empty", "candidates": []},
        {
            "anchor": "two dogs run in a park",
            "skipped": None,
            "candidates": [
                {"role": "positive", "text": "dogs are running", "fallback": None},
                {"role": "negative", "text": "two dogs sleep at home", "fallback": None},
            ],
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _outputs(tmp_path: Path) -> list[str]:
    return [f"--{k}={tmp_path / k}.txt" for k in ("anchors", "positives", "negatives", "report")]


def test_denoise_without_filter_keeps_the_first_candidate_of_each_role(tmp_path: Path) -> None:
    _candidates(tmp_path / "c.jsonl")
    args = ["gcse-denoise", "--candidates", str(tmp_path / "c.jsonl"), "--model", "unused"]
    assert main([*args, *_outputs(tmp_path), "--no-filter", "--seed", "3", "--mode", "paper"]) == 0
    read = lambda k: (tmp_path / f"{k}.txt").read_text().splitlines()  # noqa: E731
    assert read("anchors") == ["a cat sits on the mat", "two dogs run in a park"]
    assert read("positives") == ["a cat is sitting on a mat", "dogs are running"]
    # the fallen-back negative is re-derived by eq. 11: the only other usable source
    assert read("negatives") == ["two dogs run in a park", "two dogs sleep at home"]
    report = json.loads((tmp_path / "report.txt").read_text())
    assert report["negative_from"] == {"in-batch": 1, "candidate": 1}
    assert report["usable_sources"] == 2 and report["sources"] == 3


@pytest.mark.mirror
def test_denoise_scores_with_the_models_cls_head(tmp_path: Path, splade_tiny: Path) -> None:
    """Thresholds that every cosine passes (alpha -1) or none (beta -1): the positives are the
    first candidates, the negatives the eq. 11 fallback; the reported similarities are the
    cosines of the model's pooler output computed here."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from negcse.encoders.poolers import get_pooler
    from negcse.training.model import SentenceEncoder

    stage1 = tmp_path / "stage1"  # a suite model: its MLP head saved as the BERT pooler
    SentenceEncoder.from_pretrained(str(splade_tiny), 0.1).save(stage1, get_pooler("cls"), {})
    _candidates(tmp_path / "c.jsonl")
    args = ["gcse-denoise", "--candidates", str(tmp_path / "c.jsonl"), "--model", str(stage1)]
    args += [*_outputs(tmp_path), "--alpha", "-1", "--beta", "-1.5", "--threads", "1"]
    args += ["--mode", "paper", "--max-seq-len", "64"]
    assert main(args) == 0
    positives = (tmp_path / "positives.txt").read_text().splitlines()
    assert positives == ["a cat is sitting on a mat", "dogs are running"]
    report = json.loads((tmp_path / "report.txt").read_text())
    assert report["negative_from"] == {"in-batch": 2}
    texts = ["a cat sits on the mat", "a cat is sitting on a mat"]
    texts += ["two dogs run in a park", "dogs are running", "two dogs sleep at home"]
    tok, model = AutoTokenizer.from_pretrained(stage1), AutoModel.from_pretrained(stage1)
    with torch.no_grad():
        out = model(**tok(texts, padding=True, return_tensors="pt")).pooler_output.numpy()
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    sims = [out[1] @ out[0], out[3] @ out[2], out[4] @ out[2]]
    assert report["similarity"]["min"] == pytest.approx(min(sims), abs=1e-4)
    assert report["similarity"]["max"] == pytest.approx(max(sims), abs=1e-4)


def test_denoise_augments_anchors_only_when_asked(tmp_path: Path) -> None:
    """Released bug 12: the anchors written repeat some of their words (seeded by the training
    seed), the positives and negatives do not change."""
    _candidates(tmp_path / "c.jsonl")
    args = ["gcse-denoise", "--candidates", str(tmp_path / "c.jsonl"), "--model", "unused"]
    args += [*_outputs(tmp_path), "--no-filter", "--mode", "paper"]
    read = lambda k: (tmp_path / f"{k}.txt").read_text().splitlines()  # noqa: E731
    assert main([*args, "--seed", "3"]) == 0
    plain = {k: read(k) for k in ("anchors", "positives", "negatives")}
    seen = set()
    for seed in range(8):
        assert main([*args, "--seed", str(seed), "--augment-anchors"]) == 0
        assert read("positives") == plain["positives"] and read("negatives") == plain["negatives"]
        for got, want in zip(read("anchors"), plain["anchors"], strict=True):
            words = got.split(" ")
            undoubled = [w for i, w in enumerate(words) if i == 0 or w != words[i - 1]]
            assert undoubled == want.split(" ") and len(words) - len(want.split(" ")) <= 1
            seen.add(got != want)
    assert seen == {True, False}  # 6-word anchors: one word doubled about half the time
