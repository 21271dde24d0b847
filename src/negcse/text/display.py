"""What a reader sees of the suite's identifiers: the one mapping of methods, tasks and backbones
to display names, and of methods to families, used by every table, page and figure.

A method is named as its paper prints it (``sncse_pl`` -> "SNCSE (PL)"); a name not listed here
(your own method) shows as it is written in ``params.yaml``. A method's family is its longest
matching prefix in :data:`FAMILIES` (``sncse_san`` is SAN's, ``sncse_pl`` SNCSE's): tables draw a
rule between families and figures give each family one hue (:data:`Family.color`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: the untrained backbone's rows (negcse.workflow.plan.evaluate)
UNTRAINED = "untrained"

METHOD_NAMES: dict[str, str] = {
    UNTRAINED: "Untrained",
    "simcse": "SimCSE",
    "simcse_dropout15": "SimCSE (dropout 0.15)",
    "simcse_sup": "SimCSE (supervised)",
    "una_baseline": "SimCSE (UNA's run)",
    "una": "UNA",
    "una_paraphrase": "UNA paraphrases",
    "una_both": "UNA + paraphrases",
    "una_random_select": "UNA, random selection",
    "una_random_replace": "UNA, random replacement",
    "una_random_both": "UNA, random sel. + repl.",
    "sncse": "SNCSE",
    "sncse_pl": "SNCSE (PL)",
    "sncse_nl": "SNCSE (NL)",
    "sncse_infonce": "SNCSE (InfoNCE)",
    "osscse": "OssCSE",
    "simcse_san": "SimCSE+SAN",
    "simcse_san_masked": "SimCSE+SAN (masked only)",
    "sncse_san": "SNCSE+SAN",
    "rankcse": "RankCSE",
    "rankcse_san": "RankCSE+SAN",
    "rlrd": "RLRD",
    "rlrd_san": "RLRD+SAN",
    "gcse": "GCSE",
    "gcse_stage1": "GCSE stage 1",
    "gcse_wo_stage2": "GCSE w/o stage 2",
    "gcse_domain": "GCSE domain",
    "gcse_wo_filtering": "GCSE dom. w/o filtering",
    "gcse_wo_decay": "GCSE dom. w/o decay",
    "gcse_w_randomly": "GCSE dom., random neg.",
    "gcse_wo_general": "GCSE dom. w/o general",
    "gcse_stage1_wo_general": "GCSE stage 1 w/o general",
    "gcse_wo_domain": "GCSE dom. w/o domain",
    "gcse_stage1_wo_domain": "GCSE stage 1 w/o domain",
    "gcse_released": "GCSE (released code)",
    "gcse_paper": "GCSE (paper's reading)",
    "gcse_paper_form": "GCSE (paper's loss form)",
    # the authors' released checkpoints (params.yaml released)
    "simcse_checkpoint": "SimCSE (released)",
    "rankcse_community": "RankCSE (community ckpt.)",
    "gcse_checkpoint": "GCSE (released)",
}

#: settings spelt in a method's name: (pattern, display name with the groups filled in)
METHOD_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"simcse_san_tau([\d.]+)_p([\d.]+)"), "SimCSE+SAN (τ2 {0}, p2 {1})"),
    (re.compile(r"san_scale(\d+)"), "SimCSE+SAN (scale {0})"),
    (re.compile(r"rankcse_san_lambda([\d.]+)"), "RankCSE+SAN (λ {0})"),
    (re.compile(r"gcse_sigma([\d.]+)"), "GCSE dom. (σ {0})"),
    (re.compile(r"gcse_wo_filtering_sigma([\d.]+)"), "GCSE dom. w/o filt., σ {0}"),
)

TASK_NAMES: dict[str, str] = {
    "STSBenchmark": "STS-B",
    "SICKRelatedness": "SICK-R",
    "STSBenchmark-dev": "STS-B dev",
    "SST2": "SST-2",
    "MRPC_f1": "MRPC F1",
    "avg": "Avg.",
}

BACKBONE_NAMES: dict[str, str] = {
    "bert-base-uncased": "BERT-base",
    "bert-large-uncased": "BERT-large",
    "roberta-base": "RoBERTa-base",
    "roberta-large": "RoBERTa-large",
}


def method_name(method: str) -> str:
    """The method as its paper prints it; an unlisted one as written."""
    if method in METHOD_NAMES:
        return METHOD_NAMES[method]
    for pattern, name in METHOD_PATTERNS:
        if m := pattern.fullmatch(method):
            return name.format(*m.groups())
    return method


def task_name(task: str) -> str:
    return TASK_NAMES.get(task, task)


def backbone_name(backbone: str) -> str:
    return BACKBONE_NAMES.get(backbone, backbone)


@dataclass(frozen=True)
class Family:
    """Methods that share a name prefix: ``label`` in legends and captions, ``paper`` the page
    they are reported on (:mod:`negcse.tables.reports`; None: a shared baseline), ``color`` the
    family's hue (Okabe and Ito's colour-blind-safe palette)."""

    key: str
    label: str
    prefixes: tuple[str, ...]
    paper: str | None
    color: str


#: in the order tables list them; a method matches the family of its longest prefix
FAMILIES: tuple[Family, ...] = (
    Family("simcse", "SimCSE", ("simcse",), None, "#555555"),
    Family("una", "UNA", ("una",), "una", "#0072B2"),
    Family("sncse", "SNCSE", ("sncse",), "sncse", "#D55E00"),
    Family("osscse", "OssCSE", ("osscse",), "osscse", "#009E73"),
    Family("san", "SAN", ("simcse_san", "sncse_san", "san_"), "san-hince", "#CC79A7"),
    Family("rank", "RankCSE / RLRD", ("rankcse", "rlrd"), "san-hince", "#56B4E9"),
    Family("gcse", "GCSE", ("gcse",), "gcse", "#E69F00"),
)
#: a method no prefix matches (your own), and the untrained backbone
OTHER = Family("other", "Other", (), None, "#8C510A")
REFERENCE = Family("reference", "Reference", (UNTRAINED,), None, "#999999")


def family(method: str) -> Family:
    """The family of ``method``: its longest prefix among :data:`FAMILIES`."""
    if method == UNTRAINED:
        return REFERENCE
    best, length = OTHER, 0
    for fam in FAMILIES:
        for prefix in fam.prefixes:
            if method.startswith(prefix) and len(prefix) > length:
                best, length = fam, len(prefix)
    return best


def family_order(method: str) -> int:
    """A sort key: the family's place in :data:`FAMILIES` (others, then the reference, last)."""
    fam = family(method)
    return FAMILIES.index(fam) if fam in FAMILIES else len(FAMILIES) + (fam is REFERENCE)
