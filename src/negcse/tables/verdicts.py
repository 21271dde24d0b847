"""Do the papers' claims hold? Seed-level intervals and verdicts, and the released checkpoints.

Two table builders over the evaluation files:

- :func:`verdict_table`: one row per claim of the papers (:mod:`negcse.tables.claims`) whose
  two methods the grid ran on a backbone, on its measure (the STS average from the STS files'
  per-pair cosines, ``details.<task>.pairs``; the transfer average from each tested example's
  correctness, ``details.<task>.test``; OssCSE's Oppn./Cont. split averages; the MTEB
  averages): our difference (mean over seeds) with a 95% interval over seeds and test set
  (:mod:`negcse.analysis.verdict_rules`), the paper's difference, the verdict before and after
  the correction over its family (the paper's verdicts on the measure), its minimum detectable
  effect and the test set's floor, and our mean against the paper's number with the interval
  of one run. A comparison the paper did not make (another backbone, LLM,
  protocol, or a reduced-scale grid) is a *direction check*, never "reproduced"; fewer than
  ``min_seeds`` seeds a side give the estimate and no verdict.
- :func:`checkpoint_table`: every released checkpoint (config/defaults.yaml ``released``): the paper's
  number, the checkpoint through our evaluator, our training, the evaluation gap (released -
  paper) and the training gap (ours - released, with the interval of one run).

``docs/statistics.md`` states the procedures.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from negcse.analysis import bootstrap, transfer_bootstrap, verdict_rules
from negcse.analysis.bootstrap import Draws, TaskPairs
from negcse.analysis.transfer_bootstrap import FoldedExamples, TransferDraws
from negcse.analysis.verdict_rules import CHECK_WORDS, WORDS, SeedInterval
from negcse.data.mteb_tasks import HEADLINE
from negcse.runtime.lazy import LazyModule
from negcse.tables import verdict_inputs
from negcse.tables.build import Options, Table, TableInputError
from negcse.tables.claims import (
    DECLARED_MEASURES,
    MEASURES,
    SHORT_BACKBONES,
    TITLES,
    Claim,
    declared_claim,
    load_claims,
    paper_delta,
    pick,
    published_value,
)
from negcse.tables.dvc_metrics import DELTA, VERDICT, metric_key
from negcse.tables.eval_files import (
    check_comparable,
    number,
    read_result,
    sts_pairs,
    tags,
    transfer_records,
)
from negcse.tables.html import markdown_html
from negcse.tables.published import CHECKPOINT_ROWS, TASKS, TRANSFER_TASKS, published_avg
from negcse.tables.render import Column, render
from negcse.tables.verdicts_latex import verdicts_latex

if TYPE_CHECKING:
    from negcse.evaluation import splits
    from negcse.tables.table_spec import TableSpec
else:  # the splits' dataset list; not needed to parse the table specs
    splits = LazyModule("negcse.evaluation.splits")

logger = logging.getLogger(__name__)

#: the measures whose test items the evaluation files record (resampled for the test set's
#: share of the interval); the others' intervals hold the seeds' variation only
RESAMPLED = ("sts", "transfer")


@dataclass
class Model:
    """One method x backbone on one measure: per seed (sorted), its full-test-set value and,
    for a resampled measure, its per-task predictions (per-pair cosines, per-example
    correctness); the LLM that wrote its data (GCSE)."""

    method: str
    backbone: str
    measure: str
    seeds: list[str] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    preds: list[dict[str, np.ndarray]] = field(default_factory=list)
    llm: str = ""
    resampled: np.ndarray | None = None  # (seeds, B), filled by :func:`resample`


@dataclass(frozen=True)
class Measure:
    """How a resampled measure's test items are read and redrawn. ``read``: a file's tags,
    per-task predictions and per-task test design (what must be equal across a backbone's
    files to pair them); ``value``: a file's full-test-set average; ``draw``: one backbone's
    shared resample; ``resampled``: (B,) one model-seed's average on it."""

    unit: str  # what is resampled, for the log and errors
    size: Callable[[Any], int]  # how many of them one task's test design holds
    read: Callable[[str, dict], tuple[dict[str, np.ndarray], dict[str, Any]]]
    same: Callable[[dict[str, Any], dict[str, Any]], bool]
    value: Callable[[dict, dict[str, np.ndarray], dict[str, Any]], float]
    draw: Callable[[dict[str, Any]], Any]
    resampled: Callable[[dict[str, np.ndarray], Any], np.ndarray]


def read_pairs(path: str, result: dict) -> tuple[dict[str, np.ndarray], dict[str, TaskPairs]]:
    """An STS evaluation file's per-task cosines and test pairs (gold, subset sizes, keys),
    checked (:func:`negcse.tables.eval_files.sts_pairs`)."""
    preds, tasks = {}, {}
    for task in TASKS:
        found = sts_pairs(result, task, path)
        if found is None:
            raise TableInputError(
                f"{path}: no per-pair cosines for {task} (details.{task}.pairs: evaluate with "
                "--sts-pairs, as the workflow does; rerun this evaluation)"
            )
        preds[task], tasks[task] = found
    return preds, tasks


def _same_pairs(a: dict[str, TaskPairs], b: dict[str, TaskPairs]) -> bool:
    return all(
        a[t].subset_sizes == b[t].subset_sizes and np.array_equal(a[t].gold, b[t].gold)
        and a[t].keys == b[t].keys
        for t in TASKS
    )  # fmt: skip


def read_tested(path: str, result: dict) -> tuple[dict[str, np.ndarray], dict[str, FoldedExamples]]:
    """A transfer evaluation file's per-task correctness and tested examples (folds); each
    task's record gives back its recorded accuracy, the average is theirs
    (:mod:`negcse.tables.eval_files`)."""
    correct, tested = transfer_records(result, path)
    number(result, "avg", path)
    return correct, tested


def _same_tested(a: dict[str, FoldedExamples], b: dict[str, FoldedExamples]) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[t].fold, b[t].fold) for t in a)


STS = Measure(
    unit="STS test pairs",
    size=lambda task: len(task.gold),
    read=read_pairs,
    same=_same_pairs,
    value=lambda result, preds, tasks: bootstrap.observed_average(preds, tasks),
    draw=lambda tasks: Draws.draw(tasks, bootstrap.RESAMPLES, bootstrap.SEED),
    resampled=bootstrap.resampled_average,
)

TRANSFER = Measure(
    unit="transfer test examples",
    size=lambda tested: len(tested.fold),
    read=read_tested,
    same=_same_tested,
    value=lambda result, correct, tested: float(result["avg"]),  # the transfer table's
    draw=lambda tested: TransferDraws.draw(tested, bootstrap.RESAMPLES, bootstrap.SEED),
    resampled=transfer_bootstrap.resampled_average,
)

MEASURE_READERS: dict[str, Measure] = {"sts": STS, "transfer": TRANSFER}
#: the probe's measures (OssCSE Section 5.2): mean cosine to the paraphrases and the negations
PROBE_MEASURES = ("probe_paraphrase", "probe_negation")


def measure_kinds(result: dict) -> list[str]:
    """Which evaluations' results a file holds (one each as the workflow writes them):
    ``sts`` (per-pair records), ``transfer``, ``splits``, ``probe``, ``mteb_<group>``."""
    if result.get("group") in ("classification", "reranking"):
        return [f"mteb_{result['group']}"]
    details = result.get("details")
    details = details if isinstance(details, dict) else {}
    kinds = []
    if any("pairs" in (details.get(t) or {}) for t in TASKS) or (
        all(t in result for t in TASKS) and not any(t in details for t in TRANSFER_TASKS)
    ):
        kinds.append("sts")
    if any(t in details for t in TRANSFER_TASKS):
        kinds.append("transfer")
    if "oppn" in result and "cont" in result:
        kinds.append("splits")
    if "paraphrase" in result and "negation" in result:
        kinds.append("probe")
    return kinds or ["sts"]  # read as STS: its error names what is missing


def protocol_note(kind: str, result: dict) -> str:
    """What makes a file's protocol other than the paper's ('' where it is the paper's)."""
    if kind == "sts" and result.get("protocol", "senteval") != "senteval":
        return f"STS protocol {result['protocol']}, not SentEval's"
    if kind == "transfer":
        details = result.get("details") or {}
        tasks = [t for t in TRANSFER_TASKS if t in details]
        folds = {d.get("kfold") for d in details.values() if isinstance(d, dict) and d.get("kfold")}
        if tasks != list(TRANSFER_TASKS) or not folds <= {10}:
            folding = "/".join(str(k) for k in sorted(folds)) or "--"
            return f"reduced transfer protocol ({', '.join(tasks)}; {folding}-fold)"
    if kind == "splits" and not set(splits.TABLE2_DATASETS) <= set(result.get("datasets", ())):
        return "reduced split protocol (fewer datasets than OssCSE Table 2)"
    return ""


@dataclass
class Evaluations:
    """The grid's evaluation files by measure: models keyed (measure, method, backbone), each
    resampled measure's test design per backbone, and each (measure, backbone)'s protocol
    notes."""

    models: dict[tuple[str, str, str], Model] = field(default_factory=dict)
    designs: dict[tuple[str, str], tuple[str, dict[str, Any]]] = field(default_factory=dict)
    protocols: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    draws: dict[tuple[str, str], Any] = field(default_factory=dict)

    def add(self, measure: str, result: dict, path: str, value: float,
            preds: dict[str, np.ndarray] | None = None) -> None:  # fmt: skip
        tags(result, path, "method", "backbone")
        method, backbone = str(result["method"]), str(result["backbone"])
        model = self.models.setdefault(
            (measure, method, backbone), Model(method, backbone, measure)
        )
        model.seeds.append(str(result.get("seed", "")))
        model.values.append(float(value))
        if preds is not None:
            model.preds.append(preds)
        model.llm = model.llm or str(result.get("llm") or "")

    def sort(self) -> None:
        """Seeds in numeric order (paired comparisons match them); a seed listed twice is an
        error."""
        for model in self.models.values():
            order = sorted(range(len(model.seeds)), key=lambda i: _seed_key(model.seeds[i]))
            model.seeds = [model.seeds[i] for i in order]
            model.values = [model.values[i] for i in order]
            model.preds = [model.preds[i] for i in order] if model.preds else []
            if len(set(model.seeds)) != len(model.seeds):
                raise TableInputError(
                    f"{model.method}/{model.backbone}: seed listed twice among {model.seeds}"
                )

    def test_variance(self, a: Model, b: Model | None) -> float | None:
        """The test set's share of the variance of A's seed mean minus B's (None: a measure
        whose files record no test items)."""
        measure = MEASURE_READERS.get(a.measure)
        if measure is None:
            return None
        key = (a.measure, a.backbone)
        if key not in self.draws:
            design = self.designs[key][1]
            size = sum(map(measure.size, design.values()))
            logger.info("%s %s: %d resamples of %d %s", a.backbone, a.measure,
                        bootstrap.RESAMPLES, size, measure.unit)  # fmt: skip
            self.draws[key] = measure.draw(design)
        for model in (a, b):
            if model is not None and model.resampled is None:
                model.resampled = np.stack(
                    [measure.resampled(p, self.draws[key]) for p in model.preds]
                )
        return bootstrap.resampled_variance(a.resampled, None if b is None else b.resampled)


def read_evaluations(evals: Sequence[str]) -> Evaluations:
    """Every file's measure(s) and values; the files of one resampled measure and backbone must
    hold the same test items (one protocol), or the bootstrap could not pair them."""
    out = Evaluations()
    results = []
    for path in evals:
        result = read_result(path)  # checked as a whole: derived numbers agree with records
        result = verdict_inputs.seeded(result, str(path))  # one whole-number seed
        results.append((str(path), result))
        for kind in measure_kinds(result):
            _read_kind(out, kind, result, path)
    check_comparable(results)  # one STS protocol, one transfer classifier in the table
    verdict_inputs.check_copies(results)  # no seed a copy of another
    out.sort()
    return out


def _read_kind(out: Evaluations, kind: str, result: dict, path: str) -> None:
    backbone = str(result.get("backbone", ""))
    measures = {"splits": ("oppn", "cont"), "probe": PROBE_MEASURES}.get(kind, (kind,))
    for measure in measures:
        out.protocols.setdefault((measure, backbone), set()).add(protocol_note(kind, result))
    if kind in MEASURE_READERS:
        reader = MEASURE_READERS[kind]
        preds, design = reader.read(path, result)
        first = out.designs.setdefault((kind, backbone), (path, design))
        if not reader.same(first[1], design):
            raise TableInputError(
                f"{path}: its {reader.unit} differ from those of {first[0]} (another protocol "
                f"or data): a paired bootstrap needs the same {reader.unit.split()[-1]}"
            )
        out.add(kind, result, path, reader.value(result, preds, design), preds)
    elif kind == "splits":
        for measure in measures:
            out.add(measure, result, path, _number(result, path, measure))
    elif kind == "probe":
        for measure in measures:
            out.add(measure, result, path, _number(result, path, measure.removeprefix("probe_")))
    else:
        group = kind.removeprefix("mteb_")
        out.add(kind, result, path, _number(result.get("avg", {}), path, HEADLINE[group]))


def _number(record: dict, path: str, key: str) -> float:
    try:
        return float(record[key])
    except (KeyError, TypeError, ValueError):
        raise TableInputError(f"{path}: no number '{key}'") from None


def _seed_key(seed: str) -> tuple[int, str]:
    return (int(seed), "") if seed.lstrip("-").isdigit() else (0, seed)


# One row per claim and backbone.


def _ci(interval: SeedInterval | None) -> str:
    return "" if interval is None else f"[{interval.low:+.2f}, {interval.high:+.2f}]"


def _p(p: float) -> str:
    return "" if math.isnan(p) else "<0.001" if p < 0.001 else f"{p:.3f}"


def _mde(value: float) -> str:
    return "" if math.isnan(value) else "∞" if math.isinf(value) else f"{value:.2f}"


def _tasks(data: Evaluations, measure: str, backbone: str) -> list[str] | None:
    design = data.designs.get((measure, backbone))
    return list(design[1]) if design and measure == "transfer" else None


def compare(claim: Claim, why: list[str], a: Model, b: Model, data: Evaluations,
            min_seeds: int) -> dict[str, object]:  # fmt: skip
    """One row: A - B with its interval (when both sides ran ``min_seeds`` seeds), the
    paper's difference and what the comparison is (the paper's, or a direction check and why);
    the p-values of "no difference" and "the paper's difference" (NaN where not tested)."""
    n_a, n_b = len(a.seeds), len(b.seeds)
    paired = a.seeds == b.seeds
    estimate = float(np.mean(a.values) - np.mean(b.values))
    tasks = _tasks(data, claim.measure, a.backbone)
    delta = paper_delta(claim, tasks) if not why else claim.delta
    interval = power = None  # power: the variances of the MDE, from 2 seeds a side
    if min(n_a, n_b) >= 2:
        test_var = data.test_variance(a, b)
        power = verdict_rules.seed_interval(a.values, b.values, paired, test_var or 0.0)
        interval = power if min(n_a, n_b) >= min_seeds else None
    sized = not why and delta is not None
    where = "" if not why else f", {SHORT_BACKBONES.get(claim.backbone, claim.backbone)}"
    llm = f", {claim.llm}" if claim.llm else ""
    paper_text = f"{delta:+.2f}" if delta is not None else "+" if claim.direction > 0 else "-"
    row: dict[str, object] = {
        "method": a.method,
        "backbone": a.backbone,
        "measure": claim.measure,
        "baseline": b.method,
        "paper_name": claim.paper,
        "source": claim.source,
        "claim_backbone": claim.backbone,
        "claim_llm": claim.llm,
        "llm": a.llm or b.llm,  # the run's (the row's † note); the paper's is claim_llm
        "seeds": n_a,
        "baseline_seeds": n_b,
        "seeds_text": f"{n_a}/{n_b}",
        "paired": paired,
        "vs_baseline": estimate,
        "vs_baseline_low": interval.low if interval else math.nan,
        "vs_baseline_high": interval.high if interval else math.nan,
        "vs_baseline_ci": _ci(interval),
        "test_set": "" if interval is None else "yes" if claim.measure in RESAMPLED else "no",
        "paper_delta": delta if delta is not None else math.nan,
        "direction": claim.direction,
        "paper_delta_text": f"{paper_text} ({claim.source}{where}{llm})",
        "p": interval.p_value(0.0) if interval else math.nan,
        "p_claim": interval.p_value(delta) if interval and sized else math.nan,
        "comparison": "paper" if not why else "direction check",
        "note": "; ".join(why) if why else "",
        "_interval": interval,
        "_power": power,
        "_sized": sized,
    }
    if interval is None:
        row["note"] = "; ".join([*why, f"fewer than {min_seeds} seeds a side: no verdict"])
    paper = published_value(claim, claim.method_row, tasks) if not why else None
    pi = verdict_rules.one_run_interval(a.values, paper) if paper is not None and n_a >= min_seeds else None  # fmt: skip
    row.update(
        paper=paper if paper is not None else math.nan,
        vs_paper=float(np.mean(a.values)) - paper if paper is not None else math.nan,
        vs_paper_low=pi.low if pi else math.nan,
        vs_paper_high=pi.high if pi else math.nan,
        vs_paper_ci=_ci(pi),
    )
    return row


#: the verdict of a claim smaller than what the test sets can tell from 0 at any seed count
UNTESTABLE = "untestable on these test sets"


def family_key(row: Mapping[str, object]) -> tuple[str, str] | None:
    """The multiplicity family of a row: its paper and measure, for a verdict on the paper's
    own comparison; None for a direction check, a control or a method of no paper (no verdict
    words, outside every family)."""
    if row["comparison"] != "paper" or not row["paper_name"]:
        return None
    return (str(row["paper_name"]), str(row["measure"]))


def adjust(rows: list[dict[str, object]], rule: verdict_rules.Rule | None = None) -> None:
    """Each row's verdict before (``verdict_raw``: the 95% interval) and after (``verdict``)
    the correction over its family (:func:`family_key`: one paper's verdict rows on one
    measure; :func:`verdict_rules.family_verdicts`), read off the rejections of
    :data:`verdict_rules.HYPOTHESES`; its minimum detectable effect (``mde``, at the
    family's size) and the test set's floor (``floor``): a sized claim below the floor is
    :data:`UNTESTABLE`, outside its family. A direction check reads its own interval,
    uncorrected. A row below ``min_seeds`` seeds has no verdict, and an MDE without a family
    from 2 seeds a side (infinite from 1)."""
    rule = rule or verdict_rules.Rule()
    tested: dict[int, np.ndarray] = {}
    families: dict[tuple[str, str], list[int]] = {}
    for i, row in enumerate(rows):
        interval: SeedInterval | None = row["_interval"]  # type: ignore[assignment]
        sized = bool(row["_sized"])
        row.update(floor=math.nan, mde=math.nan, family="", family_size=0,
                   p_corrected=math.nan)  # fmt: skip
        if interval is None:
            continue
        resampled = row["test_set"] == "yes"
        floor = verdict_rules.detection_floor(interval.test_var, rule) if resampled else math.nan
        row["floor"] = floor
        delta = float(row["paper_delta"]) if sized else 0.0
        tested[i] = verdict_rules.hypothesis_p(
            interval.estimate, interval.seed_var, interval.test_var, interval.seed_df, delta,
            int(row["direction"]), sized, rule,  # type: ignore[call-overload]
        )  # fmt: skip
        key = family_key(row)
        if key is not None and not (sized and abs(delta) < floor):
            families.setdefault(key, []).append(i)
    corrected: dict[int, tuple[int, float]] = {}
    for key, members in families.items():
        p = np.stack([tested[i] for i in members])
        raw, adjusted, codes = verdict_rules.family_verdicts(p, rule.alpha)
        m = int(verdict_rules.family_size(p))
        for j, i in enumerate(members):
            code = int(raw[j])
            p_code = float(adjusted[j, code]) if code != verdict_rules.INCONCLUSIVE else math.nan
            corrected[i] = (int(codes[j]), p_code)
            rows[i].update(family=f"{TITLES.get(key[0], key[0])} {MEASURES[key[1]]}",
                           family_size=m)  # fmt: skip
    for i, row in enumerate(rows):
        interval, power = row.pop("_interval"), row.pop("_power")
        sized = bool(row.pop("_sized"))
        if interval is None:  # the MDE from 2 seeds a side, outside any family; 1 seed: none
            row["verdict_raw"] = row["verdict"] = "no verdict"
            row["mde"] = math.inf if power is None else verdict_rules.min_detectable(
                power.seed_var, power.test_var, power.seed_df, 1, rule, sized
            )  # fmt: skip
            continue
        m = int(row["family_size"]) or 1  # type: ignore[call-overload]
        row["mde"] = verdict_rules.min_detectable(
            interval.seed_var, interval.test_var, interval.seed_df, m, rule, sized
        )
        delta = float(row["paper_delta"]) if sized else 0.0
        floor = float(row["floor"])  # type: ignore[arg-type]
        if row["comparison"] == "paper" and sized and abs(delta) < floor:
            row["verdict_raw"] = row["verdict"] = UNTESTABLE
            row["note"] = _join(row["note"], f"{UNTESTABLE}: the paper's {delta:+.2f} is below "
                                f"the test set's floor {floor:.2f}")  # fmt: skip
            continue
        with np.errstate(invalid="ignore"):
            raw = int(verdict_rules.verdict_of(tested[i] < rule.alpha))
        if i not in corrected:  # a direction check: its own interval, no family
            row["verdict_raw"] = row["verdict"] = CHECK_WORDS[raw]
            continue
        code, row["p_corrected"] = corrected[i]
        row["verdict_raw"], row["verdict"] = WORDS[raw], WORDS[code]
        if sized and abs(delta) < row["mde"]:
            row["note"] = _join(row["note"], f"below the minimum detectable effect at "
                                f"{row['seeds_text']} seeds")  # fmt: skip


def _join(note: object, text: str) -> str:
    return "; ".join(t for t in (str(note or ""), text) if t)


def claim_groups(claims: Iterable[Claim]) -> dict[tuple[str, str, str], list[Claim]]:
    """The claims by (measure, method, baseline), in file order."""
    groups: dict[tuple[str, str, str], list[Claim]] = {}
    for claim in claims:
        groups.setdefault(claim.pair, []).append(claim)
    return groups


def verdict_frame(evals: Sequence[str], options: Options) -> pd.DataFrame:
    data = read_evaluations(evals)
    backbones = list(dict.fromkeys(b for (_, _, b) in data.models))
    rows = []
    for (measure, method, baseline), claims in claim_groups(load_claims()).items():
        for backbone in backbones:
            a = data.models.get((measure, method, backbone))
            b = data.models.get((measure, baseline, backbone))
            if a is None or b is None:
                continue
            claim, why = pick(claims, backbone, a.llm or b.llm)
            why += sorted(n for n in data.protocols.get((measure, backbone), set()) if n)
            if options.scale_note:
                why.append("reduced-scale grid")
            rows.append(compare(claim, why, a, b, data, options.min_seeds))
    for method, baseline in options.baselines.items():  # the methods of no paper
        if method in options.papers:
            continue
        for measure in DECLARED_MEASURES:
            for backbone in backbones:
                a = data.models.get((measure, method, backbone))
                b = data.models.get((measure, baseline, backbone))
                if a is not None and b is None:  # said, not dropped unseen
                    logger.warning(
                        "%s on %s (%s): its declared baseline %s has no evaluation here: no row",
                        method, backbone, measure, baseline,
                    )  # fmt: skip
                if a is None or b is None:
                    continue
                why = ["declared baseline: no paper's claim"]
                if options.scale_note:
                    why.append("reduced-scale grid")
                claim = declared_claim(method, baseline, measure, backbone)
                rows.append(compare(claim, why, a, b, data, options.min_seeds))
    adjust(rows, options.rule)
    return pd.DataFrame(rows, columns=list(_VERDICT_FRAME))


_VERDICT_FRAME = (
    "method",
    "backbone",
    "measure",
    "baseline",
    "paper_name",
    "source",
    "claim_backbone",
    "claim_llm",
    "llm",
    "seeds",
    "baseline_seeds",
    "seeds_text",
    "paired",
    "vs_baseline",
    "vs_baseline_low",
    "vs_baseline_high",
    "vs_baseline_ci",
    "test_set",
    "paper_delta",
    "direction",
    "paper_delta_text",
    "comparison",
    "family",
    "family_size",
    "p",
    "p_claim",
    "p_corrected",
    "mde",
    "floor",
    "verdict_raw",
    "verdict",
    "note",
    "paper",
    "vs_paper",
    "vs_paper_low",
    "vs_paper_high",
    "vs_paper_ci",
)


def _with_text(frame: pd.DataFrame) -> pd.DataFrame:
    """Display columns: the measure's name and the p-values as text."""
    return frame.assign(
        measure_text=frame["measure"].map(MEASURES),
        p_text=frame["p"].map(_p),
        p_corrected_text=frame["p_corrected"].map(_p),
        mde_text=frame["mde"].map(_mde),
    )


VERDICT_COLUMNS = (
    Column("measure_text", "Measure", kind="text", align="l"),
    Column("baseline", "Baseline", kind="method", align="l"),
    Column("seeds_text", "Seeds", kind="text"),
    Column("vs_baseline", "Δ base", kind="signed", latex=r"$\Delta$ base"),
    Column("vs_baseline_ci", "95% CI", kind="text", latex=r"95\% CI"),
    Column("paper_delta_text", "Paper Δ base", kind="text", align="l",
           latex=r"Paper $\Delta$ base"),
    Column("p_text", "p", kind="text", latex=r"$p$"),
    Column("mde_text", "MDE", kind="text"),
    Column("p_corrected_text", "p (family)", kind="text", latex=r"$p$ (family)"),
    Column("verdict_raw", "Verdict (95% CI)", kind="text", align="l",
           latex=r"Verdict (95\% CI)"),
    Column("verdict", "Verdict (family)", kind="text", align="l"),
    Column("vs_paper", "Δ paper", kind="signed", latex=r"$\Delta$ paper"),
    Column("vs_paper_ci", "95% PI (one run)", kind="text", latex=r"95\% PI (one run)"),
    Column("note", "Note", kind="text", align="l"),
)  # fmt: skip


def verdict_table(spec: TableSpec, evals: Sequence[str], options: Options) -> Table:
    frame = verdict_frame(evals, options)
    caption = spec.caption
    for key, value in (("resamples", bootstrap.RESAMPLES), ("min_seeds", options.min_seeds),
                       ("fraction", f"{options.rule.fraction:g}"),
                       ("equivalence", f"{options.rule.equivalence:g}"),
                       ("power", f"{options.rule.power:.0%}".replace("%", "\\%"))):  # fmt: skip
        caption = caption.replace("{" + key + "}", str(value))
    judged = frame[frame["comparison"] == "paper"]
    checks_only = ""
    if len(frame) and judged.empty:
        checks_only = (
            "No comparison here is the paper's (its backbone, LLM, protocol and scale): every "
            "row is a direction check, none a verdict on the paper."
        )
        caption += f" {checks_only}"
    shown = _with_text(frame)
    table = _table(shown, VERDICT_COLUMNS, caption, spec, "vs_baseline", options)
    # a paper's table: five columns, the notes once as footnotes (the twins keep every column)
    tex = verdicts_latex(shown, spec.label, options.min_seeds, options.scale_note, checks_only)
    return replace(table, tex=tex)


def _metric_leaves(row: Mapping[str, Any], metric: str) -> dict[str, Any]:
    """A verdict row's DVC metrics, under ``vs_<baseline>``: its Δ (``metric``) and its
    verdict; a checkpoint row's gap, named after its column."""
    if metric != "vs_baseline":
        return {metric_key(metric): round(float(row[metric]), 4)}
    leaves: dict[str, float | str] = {DELTA: round(float(row[metric]), 4)}
    if isinstance(row.get("verdict"), str) and row["verdict"]:
        leaves[VERDICT] = row["verdict"]
    return {f"vs_{row['baseline']}": leaves}


def _table(
    frame: pd.DataFrame,
    columns: Sequence[Column],
    caption: str,
    spec: TableSpec,
    metric: str,
    options: Options,
) -> Table:
    dvc: dict[str, Any] = {}
    for row in frame.to_dict("records"):
        if math.isnan(row[metric]):
            continue
        leaves = dvc.setdefault(row["method"], {}).setdefault(row["backbone"], {})
        if "measure" in row:  # a verdict row: one per measure and baseline
            leaves = leaves.setdefault(row["measure"], {})
        leaves.update(_metric_leaves(row, metric))
    out = render(frame, columns, caption, spec.label, baselines=options.baselines)
    return Table(
        tex=out.tex, frame=frame, md=out.md, metrics=dvc, html=markdown_html(out.md, spec.name)
    )


# Released checkpoints.


def checkpoint_frame(
    evals: Sequence[str], min_seeds: int = verdict_rules.MIN_SEEDS
) -> pd.DataFrame:
    """One row per released checkpoint x backbone: paper, released, ours, the two gaps. The
    evaluation gap has no interval (one model, the test set the paper's number is from); the
    training gap has the interval of one run (the released model as one more seed of ours)."""
    data = read_evaluations(evals)
    rows = []
    for (measure, name, backbone), released in data.models.items():
        if measure != "sts" or name not in CHECKPOINT_ROWS:
            continue
        method = CHECKPOINT_ROWS[name][1]
        ours = data.models.get(("sts", method, backbone))
        paper = published_avg(name, backbone)
        value = float(np.mean(released.values))
        gap = None
        if ours is not None and len(ours.seeds) >= min_seeds:
            gap = verdict_rules.one_run_interval(ours.values, value)
        rows.append(
            {
                "method": name,
                "backbone": backbone,
                "seeds": len(ours.seeds) if ours else 0,
                "ours_method": method,
                "paper": paper if paper is not None else math.nan,
                "released": value,
                "ours": float(np.mean(ours.values)) if ours else math.nan,
                "eval_gap": value - paper if paper is not None else math.nan,
                "training_gap": float(np.mean(ours.values)) - value if ours else math.nan,
                "training_gap_ci": _ci(gap),
            }
        )
    return pd.DataFrame(rows, columns=list(_CHECKPOINT_FRAME))


_CHECKPOINT_FRAME = (
    "method",
    "backbone",
    "seeds",
    "ours_method",
    "paper",
    "released",
    "ours",
    "eval_gap",
    "training_gap",
    "training_gap_ci",
)

CHECKPOINT_COLUMNS = (
    Column("ours_method", "Ours", kind="method", align="l"),
    Column("seeds", "Seeds", kind="count"),
    Column("paper", "Paper", kind="number"),
    Column("released", "Released", kind="number"),
    Column("ours", "Ours avg.", kind="number"),
    Column("eval_gap", "Eval. gap", kind="signed"),
    Column("training_gap", "Training gap", kind="signed"),
    Column("training_gap_ci", "95% PI (one run)", kind="text", latex=r"95\% PI (one run)"),
)


def checkpoint_table(spec: TableSpec, evals: Sequence[str], options: Options) -> Table:
    frame = checkpoint_frame(evals, options.min_seeds)
    caption = spec.caption.replace("{min_seeds}", str(options.min_seeds))
    if frame.empty:
        caption += " No released checkpoint was evaluated (offline, none in the mirror or cache)."
        logger.info("checkpoints table: no released checkpoint among %d file(s)", len(evals))
    return _table(frame, CHECKPOINT_COLUMNS, caption, spec, "training_gap", options)


def paper_rows(frame: pd.DataFrame, paper: str) -> pd.DataFrame:
    """The verdict rows of one paper's claims, display columns added."""
    return _with_text(frame[frame["paper_name"] == paper])


def method_rows(frame: pd.DataFrame, method: str) -> pd.DataFrame:
    """The rows comparing ``method``, a method of no paper, with its declared baseline."""
    no_paper = frame["paper_name"].isna() | (frame["paper_name"] == "")  # empty read back: NaN
    return _with_text(frame[(frame["method"] == method) & no_paper])
