"""A trained model's card (README.md) in the Hub's format, read back by huggingface_hub's own
parser; ``negcse export`` fills it from the model's evaluation files and pushes the folder to
the Hub (the network calls replaced by a recorder: no Hub is reachable here)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from huggingface_hub import HfApi, ModelCard

from negcse.cli import main
from negcse.encoders.poolers import get_pooler
from negcse.training.model import ST_MODULE_FILES, SentenceEncoder
from negcse.training.model_card import bibtex, model_card

REPO = Path(__file__).resolve().parents[2]
META = {
    "method": "sncse",
    "implementation": "sncse",
    "backbone": "bert-base-uncased",
    "seed": 42,
    "params": {"temperature": 0.05},
    "train": {"batch_size": 256, "learning_rate": 1e-5},
    "generators": {},
    "eval_pooler": "prompt_sncse_anchor",
    "eval_protocol": "senteval",
    "best_stsb_dev": 81.234,
    "best_step": 250,
    "steps": 3907,
    "corpus_sentences": 1000000,
    "corpus_file": "wiki1m.txt",
}
STS = {
    "method": "sncse",
    "backbone": "bert-base-uncased",
    "seed": "42",
    "protocol": "senteval",
    "STS12": 70.1,
    "STS13": 84.2,
    "STS14": 76.3,
    "STS15": 83.4,
    "STS16": 80.5,
    "STSBenchmark": 81.6,
    "SICKRelatedness": 74.7,
    "avg": 78.69,
}
TRANSFER = {"method": "sncse", "backbone": "bert-base-uncased", "seed": "42", "TREC": 84.2,
            "CR": 86.01, "avg": 85.105, "details": {}}  # fmt: skip


def parsed(card: str, tmp_path: Path) -> ModelCard:
    (tmp_path / "README.md").write_text(card, encoding="utf-8")
    return ModelCard.load(tmp_path / "README.md")


def test_card_metadata_holds_the_run_and_its_results(tmp_path: Path) -> None:
    card = parsed(model_card(META, {"sts": STS, "transfer": TRANSFER}), tmp_path)
    data = card.data
    assert data.license == "apache-2.0" and data.library_name == "sentence-transformers"
    assert data.base_model == "bert-base-uncased" and data.pipeline_tag == "sentence-similarity"
    assert {"negcse", "sncse"} <= set(data.tags)
    results = {(r.dataset_name, r.metric_type): r.metric_value for r in data.eval_results}
    assert results[("STS-B dev (SentEval protocol)", "spearman")] == 81.23
    for task in ("STS12", "STS16", "STSBenchmark", "SICKRelatedness"):
        assert results[(f"{task} (SentEval protocol)", "spearman")] == STS[task]
    assert results[("SentEval TREC", "accuracy")] == 84.2
    assert results[("SentEval CR", "accuracy")] == 86.01
    assert len(results) == 1 + 7 + 2
    # a SentEval-protocol score is filed under SentEval's data, an MTEB-protocol one under MTEB's
    datasets = {r.dataset_name: r.dataset_type for r in data.eval_results}
    assert datasets["STS12 (SentEval protocol)"] == "SentEval/STS12"
    mteb = {**STS, "protocol": "mteb"}
    card = parsed(model_card({**META, "eval_protocol": "mteb"}, {"sts": mteb}), tmp_path)
    datasets = {r.dataset_name: r.dataset_type for r in card.data.eval_results}
    assert datasets["STS12 (MTEB protocol)"] == "mteb/sts12-sts"
    assert datasets["STS-B dev (MTEB protocol)"] == "mteb/stsbenchmark-sts"
    assert not any("SentEval" in name for name in datasets)
    text = card.text
    assert "| 70.10 | 84.20 | 76.30 | 83.40 | 80.50 | 81.60 | 74.70 | 78.69 |" in text
    assert "| temperature | 0.05 |" in text and "| batch_size | 256 |" in text
    assert "1,000,000 unlabelled sentences of wiki1m.txt" in text  # escaped text, no code span
    assert "trust_remote_code=True" in text  # a prompt pooler
    # SimCSE's, SNCSE's and the suite's citations
    keys = re.findall(r"^@\w+\{([^,]+),", text, re.M)
    assert keys == ["gao-etal-2021-simcse", "wang-etal-2022-sncse", "negcse"]


def test_untrained_card_and_backbone_outside_the_hub(tmp_path: Path) -> None:
    meta = {**META, "backbone": "splade-tiny", "eval_pooler": "cls", "implementation": "simcse"}
    card = parsed(model_card(meta), tmp_path)
    assert card.data.base_model is None and card.data.license == "apache-2.0"
    assert [r.dataset_name for r in card.data.eval_results] == ["STS-B dev (SentEval protocol)"]
    unrecorded = {k: v for k, v in meta.items() if k != "eval_protocol"}  # an earlier model's
    card = parsed(model_card(unrecorded), tmp_path)
    assert [r.dataset_name for r in card.data.eval_results] == ["STS-B dev (protocol not recorded)"]
    assert "Not evaluated yet: `negcse export`" in card.text
    assert "trust_remote_code" not in card.text


def test_papers_bib_agrees_with_the_readme() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"^```bibtex\n(.*?)^```", readme, re.S | re.M)
    keys = re.findall(r"^@\w+\{([^,]+),", block, re.M)
    assert bibtex(keys).strip() == block.strip()


@pytest.mark.mirror
def test_training_writes_the_card_and_export_adds_the_results(
    splade_tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder saved as training saves it (results/models/...), its evaluation files beside it
    (results/eval/...): export copies it, writes the card with their numbers, and pushes the
    copy: create_repo and upload_folder (the network calls) are recorded, not made."""
    root = tmp_path / "results"
    model = root / "models/sncse/splade-tiny/seed1"
    encoder = SentenceEncoder.from_pretrained(str(splade_tiny), 0.1)
    meta = {**META, "backbone": "splade-tiny", "seed": 1}
    encoder.save(model, get_pooler("prompt_sncse_anchor", tokenizer=encoder.tokenizer), meta)
    trained = ModelCard.load(model / "README.md")
    assert [r.dataset_name for r in trained.data.eval_results] == ["STS-B dev (SentEval protocol)"]
    for name, result in (("sts", STS), ("transfer", TRANSFER)):
        path = root / f"eval/{name}/sncse/splade-tiny/seed1.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({**result, "backbone": "splade-tiny", "seed": "1"}))
    # an earlier folder: no module code, the earlier module named
    for name in ST_MODULE_FILES:
        (model / name).unlink()
    (model / "modules.json").write_text('[{"type": "negcse.st_module.PooledEncoder"}]')
    calls: list[tuple[str, dict]] = []

    def record(name: str):
        def call(self: HfApi, *args: object, **kwargs: object) -> object:
            calls.append((name, {"args": args, **kwargs}))
            if name == "upload_folder":  # what is uploaded: the folder as it is now
                kwargs["folder_copy"] = shutil.copytree(kwargs["folder_path"], tmp_path / "up")
            return type("Info", (), {"commit_url": "https://hub.example/commit/1"})()

        return call

    monkeypatch.setattr(HfApi, "create_repo", record("create_repo"))
    monkeypatch.setattr(HfApi, "upload_folder", record("upload_folder"))
    out = tmp_path / "export"
    assert main(["export", str(model), "--to", str(out), "--push-to-hub", "me/sncse-tiny"]) == 0
    card = ModelCard.load(out / "README.md")
    results = {r.dataset_name: r.metric_value for r in card.data.eval_results}
    assert results["STS12 (SentEval protocol)"] == 70.1 and results["SentEval TREC"] == 84.2
    modules = json.loads((out / "modules.json").read_text())
    assert modules[0]["type"] == "st_prompt.PromptEncoder"
    assert all((out / name).is_file() for name in ST_MODULE_FILES)
    assert [name for name, _ in calls] == ["create_repo", "upload_folder"]
    assert calls[0][1]["args"] == ("me/sncse-tiny",) and calls[0][1]["exist_ok"] is True
    upload = calls[1][1]
    assert upload["repo_id"] == "me/sncse-tiny" and upload["folder_path"] == str(out)
    assert (tmp_path / "up" / "README.md").read_text() == (out / "README.md").read_text()
    # an evaluation of another run is refused, naming it; nothing is written
    other = root / "eval/sts/sncse/splade-tiny/seed1.json"
    other.write_text(json.dumps({**STS, "backbone": "splade-tiny", "seed": "2"}))
    assert main(["export", str(model), "--to", str(tmp_path / "again")]) == 2
    assert not (tmp_path / "again").exists()
