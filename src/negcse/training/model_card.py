"""A trained model's card, ``README.md`` in its folder, in the Hugging Face model-card format: a
metadata block (licence, library, base model, tags and a ``model-index`` of its results, written
by ``huggingface_hub``'s own card classes) and a page (what it is, how it was trained, its
results, how to load it, licence, citation).

Training writes the card with what a run knows (the run spec and seed from ``negcse.json``, the
STS-B dev score it selected its weights by); ``negcse export`` writes it again with the model's
STS and transfer results from its evaluation files (``results/eval/{sts,transfer}/...``).

The record is checked first (:mod:`negcse.training.model_record`), and every field of it on the
page is escaped (:func:`negcse.text.markup.markdown_escape`), as text outside code spans (only the
names of method and backbone are shown as code): a corpus name cannot add a section, a link, an
image or raw HTML. Each ``model-index`` entry names the protocol its score comes from: an STS score of the
SentEval protocol (SentEval's tokenized, lowercased files) is filed under ``SentEval/<task>``,
one of the MTEB protocol under MTEB's dataset id (``mteb/sts12-sts``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from importlib import resources
from typing import Any

from huggingface_hub import EvalResult, ModelCardData

from negcse.data.sts import STS_TASKS
from negcse.methods.registry import method_class
from negcse.text.markup import markdown_escape
from negcse.training.model_record import RECORD, check_model_record

#: paper id -> its key in resources/papers.bib (a method class's ``papers``)
PAPER_KEYS: dict[str, str] = {
    "simcse": "gao-etal-2021-simcse",
    "sncse": "wang-etal-2022-sncse",
    "una": "shu-lampos-2024-una",
    "osscse": "shi-etal-2023-osscse",
    "san-hince": "wang-etal-2025-san",
    "gcse": "lai-etal-2025-gcse",
    "rankcse": "liu-etal-2023-rankcse",
    "rlrd": "wang-etal-2024-rlrd",
}
SUITE_KEY = "negcse"
#: the licence of each backbone the suite names (its Hub model card; splade-tiny: its package's);
#: any other is "other": check the backbone's own card
LICENCES: dict[str, str] = {
    "bert-base-uncased": "apache-2.0",
    "bert-large-uncased": "apache-2.0",
    "roberta-base": "mit",
    "roberta-large": "mit",
    "splade-tiny": "apache-2.0",
}
#: backbones whose name is not a Hub model id (no ``base_model`` in the metadata)
NOT_ON_HUB = ("splade-tiny",)
#: the STS test sets on the Hub (MTEB's copies): the model-index's datasets of the mteb protocol
STS_HUB: dict[str, str] = {
    "STS12": "mteb/sts12-sts",
    "STS13": "mteb/sts13-sts",
    "STS14": "mteb/sts14-sts",
    "STS15": "mteb/sts15-sts",
    "STS16": "mteb/sts16-sts",
    "STSBenchmark": "mteb/stsbenchmark-sts",
    "SICKRelatedness": "mteb/sickr-sts",
}
TRANSFER_TASKS = ("MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC")
SPEARMAN = "Spearman correlation x100 of cosine similarity"
TAGS = ("sentence-transformers", "feature-extraction", "sentence-similarity", "negcse")


def bibtex(keys: list[str]) -> str:
    """The entries of ``keys`` from resources/papers.bib, in that order."""
    text = resources.files("negcse.resources").joinpath("papers.bib").read_text(encoding="utf-8")
    entries = {
        m.group(1): m.group(0).strip() for m in re.finditer(r"@\w+\{([^,]+),.*?\n\}", text, re.S)
    }
    return "\n".join(entries[k] for k in keys)


def papers(implementation: str) -> tuple[list[str], str | None]:
    """The bib keys a model of ``implementation`` cites (SimCSE, the method's papers, the
    suite) and the method's own BibTeX where it brings one (a plug-in's ``citation``)."""
    try:
        cls = method_class(implementation)
    except KeyError:
        return [PAPER_KEYS["simcse"], SUITE_KEY], None
    keys = [PAPER_KEYS["simcse"], *(PAPER_KEYS[p] for p in cls.papers if p in PAPER_KEYS)]
    return [*dict.fromkeys(keys), SUITE_KEY], cls.citation


#: how each STS protocol (``negcse evaluate --sts-protocol``) reads in the model-index
PROTOCOL_NAMES = {"senteval": "SentEval protocol", "mteb": "MTEB protocol"}


def model_name(meta: Mapping[str, Any]) -> str:
    backbone = str(meta["backbone"]).replace("/", "-")
    return f"{meta['method']}-{backbone}-seed{meta['seed']}"


def sts_dataset(task: str, protocol: object) -> tuple[str, str]:
    """The model-index dataset (id, name) of an STS ``task`` scored under ``protocol``: MTEB's
    copy for the mteb protocol, SentEval's files for the senteval protocol; an unrecorded
    protocol is named as such, never guessed."""
    hub = {"senteval": f"SentEval/{task}", "mteb": STS_HUB.get(task, task)}
    if protocol in hub:
        return hub[str(protocol)], f"{task} ({PROTOCOL_NAMES[str(protocol)]})"
    return task, f"{task} (protocol not recorded)"


def eval_results(
    meta: Mapping[str, Any], evals: Mapping[str, Mapping[str, Any]]
) -> list[EvalResult]:
    """The model-index entries: STS-B dev (the score training selected the weights by), each
    STS test set and the STS average, each transfer task's accuracy and their average."""
    out = []
    if meta.get("best_stsb_dev") is not None:
        dataset, name = sts_dataset("STSBenchmark", meta.get("eval_protocol"))
        out.append(
            EvalResult(
                task_type="sentence-similarity",
                dataset_type=dataset,
                dataset_name=name.replace("STSBenchmark", "STS-B dev", 1),
                dataset_split="validation",
                metric_type="spearman",
                metric_value=round(float(meta["best_stsb_dev"]), 2),
                metric_name=f"{SPEARMAN} (model selection)",
            )
        )
    sts = evals.get("sts") or {}
    for task in [t for t in STS_TASKS if t in sts]:
        dataset, name = sts_dataset(task, sts.get("protocol"))
        out.append(
            EvalResult(
                task_type="sentence-similarity",
                dataset_type=dataset,
                dataset_name=name,
                dataset_split="test",
                metric_type="spearman",
                metric_value=round(float(sts[task]), 2),
                metric_name=SPEARMAN,
            )
        )
    transfer = evals.get("transfer") or {}
    for task in [t for t in TRANSFER_TASKS if t in transfer]:
        out.append(
            EvalResult(
                task_type="text-classification",
                dataset_type=f"SentEval/{task}",
                dataset_name=f"SentEval {task}",
                dataset_split="test",
                metric_type="accuracy",
                metric_value=round(float(transfer[task]), 2),
                metric_name="accuracy x100, logistic regression on frozen embeddings",
            )
        )
    return out


def _folds(transfer: Mapping[str, Any]) -> str:
    """`` (k-fold cross-validation where a task has no split: k)`` from a transfer result."""
    folds = sorted({d["kfold"] for d in (transfer.get("details") or {}).values() if d.get("kfold")})
    return (
        f" ({', '.join(map(str, folds))}-fold cross-validation where a task has no split)"
        if folds
        else ""
    )


def _results_table(meta: Mapping[str, Any], evals: Mapping[str, Mapping[str, Any]]) -> list[str]:
    lines = []
    sts = evals.get("sts") or {}
    if sts:
        tasks = [t for t in STS_TASKS if t in sts]
        lines += [
            f"STS test sets, {SPEARMAN} "
            f"({markdown_escape(str(sts.get('protocol', 'not recorded')))} protocol):",
            "",
            "| " + " | ".join([*tasks, "Avg."]) + " |",
            "|" + "---|" * (len(tasks) + 1),
            "| " + " | ".join(f"{float(sts[t]):.2f}" for t in [*tasks, "avg"]) + " |",
            "",
        ]
    transfer = evals.get("transfer") or {}
    if transfer:
        tasks = [t for t in TRANSFER_TASKS if t in transfer]
        lines += [
            "Transfer tasks (SentEval), accuracy x100 of logistic regression on frozen embeddings"
            f"{_folds(transfer)}:",
            "",
            "| " + " | ".join([*tasks, "Avg."]) + " |",
            "|" + "---|" * (len(tasks) + 1),
            "| " + " | ".join(f"{float(transfer[t]):.2f}" for t in [*tasks, "avg"]) + " |",
            "",
        ]
    if not lines:
        lines = [
            "Not evaluated yet: `negcse export` writes this card again with the model's STS and "
            "transfer results (`results/eval/`).",
            "",
        ]
    if meta.get("best_stsb_dev") is not None:
        lines.append(
            f"STS-B dev during training: {float(meta['best_stsb_dev']):.2f} at step "
            f"{meta.get('best_step')} (the weights kept)."
        )
    return lines


def _titles(keys: list[str]) -> list[str]:
    """The titles of the papers among ``keys`` (the suite's own entry left out)."""
    text = bibtex([k for k in keys if k != SUITE_KEY])
    return [re.sub(r"[{}]", "", t) for t in re.findall(r"^\s*title\s*=\s*\{(.*)\},?$", text, re.M)]


def _usage(prompt: bool) -> list[str]:
    load = (
        "SentenceTransformer(path, trust_remote_code=True)"
        if prompt
        else "SentenceTransformer(path)"
    )
    note = (
        "The pooler reads the hidden state at the mask token of the method's prompt. Its "
        "module's code (`st_prompt.py`, `prompt_template.py`) is in this folder, so loading needs "
        "`trust_remote_code=True` and no negcse."
        if prompt
        else "Standard sentence-transformers modules: no custom code."
    )
    return [
        "```python",
        "from sentence_transformers import SentenceTransformer",
        "",
        f"model = {load}  # path: this folder or its Hub repository",
        'embeddings = model.encode(["A man is playing a guitar.", "Someone plays an instrument."])',
        "```",
        "",
        note,
    ]


def model_card(
    meta: Mapping[str, Any], evals: Mapping[str, Mapping[str, Any]] | None = None
) -> str:
    """The card of the model whose ``negcse.json`` is ``meta``, with the results of ``evals``
    (evaluation name -> its JSON: ``sts``, ``transfer``; none: the training's STS-B dev only).
    Every field of ``meta`` on the page is escaped; names stay as they are (they are names)."""
    evals = evals or {}
    meta = check_model_record(meta, RECORD, run=True)
    md = markdown_escape
    backbone = str(meta["backbone"])
    method = str(meta["method"])
    implementation = str(meta.get("implementation", method))
    keys, own = papers(implementation)
    name = model_name(meta)
    data = ModelCardData(
        language="en",
        license=LICENCES.get(backbone, "other"),
        library_name="sentence-transformers",
        pipeline_tag="sentence-similarity",
        tags=[*TAGS, *dict.fromkeys([method, implementation])],
        base_model=None if backbone in NOT_ON_HUB else backbone,
        model_name=name,
        eval_results=eval_results(meta, evals) or None,
    )
    train = meta.get("train") or {}
    pooler = str(meta.get("eval_pooler", ""))
    hyper = {**(meta.get("params") or {}), **{k: train[k] for k in sorted(train)}}
    corpus = meta.get("corpus_file") or meta.get("corpus") or "the workflow's corpus"
    sentences = meta.get("corpus_sentences")
    lines = [
        "---",
        data.to_yaml(),
        "---",
        "",
        f"# {md(name)}",
        "",
        f"An unsupervised sentence encoder: `{backbone}` trained with the method "
        f"`{method}` (implementation `{implementation}`, seed {meta['seed']}) by negcse, "
        "a reproducibility suite for sentence embeddings trained with synthetic negatives.",
        "",
        "## Method and training",
        "",
        "- Papers: "
        + "; ".join(f"*{t}*" for t in _titles(keys))
        + (" and the method's own (Citation)" if own else ""),
        f"- Base model: `{backbone}`",
        f"- Training data: {f'{sentences:,}' if isinstance(sentences, int) else 'the'} unlabelled "
        f"sentences of {md(str(corpus))}, {meta.get('steps', '?')} steps",
        f"- Evaluation pooler: {md(pooler)}",
    ]
    if meta.get("generators"):
        settings = json.dumps(meta["generators"], sort_keys=True)
        lines.append(f"- Generator settings: {md(settings)}")
    lines += ["", "| hyperparameter | value |", "|---|---|"]
    lines += [f"| {md(str(k))} | {md(json.dumps(v))} |" for k, v in hyper.items()]
    lines += ["", "## Results", "", *_results_table(meta, evals), "", "## Usage", ""]
    lines += [*_usage(pooler.startswith("prompt")), "", "## Licence", ""]
    lines.append(
        f"`{data.license}`: the base model's licence ({md(backbone)}). The model also derives from "
        "its training data: check that data's terms before you share it."
    )
    lines += [
        "",
        "## Citation",
        "",
        "```bibtex",
        bibtex(keys) + (f"\n{own.strip()}" if own else ""),
    ]
    lines.append("```")
    return "\n".join(lines) + "\n"
