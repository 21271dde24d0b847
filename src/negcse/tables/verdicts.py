"""Does each claim reproduce? Paired-bootstrap intervals on the STS and transfer averages.

Three table builders, over the STS evaluation files (their per-pair cosines,
``details.<task>.pairs``) or the transfer ones (each tested example's correctness,
``details.<task>.test``); a :class:`Measure` says how each is read, resampled and published:

- :func:`verdict_table`: every method with a paper baseline (``baseline:``) or a printed
  number: our difference to the baseline with its 95% interval, the paper's own difference,
  the verdict (``reproduced``, ``not significant``, ``reversed``) and whether the paper's
  difference lies in our interval; our difference to the paper's number with its interval.
- :func:`transfer_verdict_table`: the same for the transfer average (mean task accuracy).
- :func:`checkpoint_table`: every released checkpoint (params.yaml ``released``): the paper's
  number, the checkpoint through our evaluator, our training, the evaluation gap (released -
  paper) and the training gap (ours - released), each with its interval.

The procedures are :mod:`negcse.analysis.bootstrap`'s and
:mod:`negcse.analysis.transfer_bootstrap`'s; ``docs/statistics.md`` states them.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from negcse.analysis import bootstrap, transfer_bootstrap
from negcse.analysis.bootstrap import Draws, Interval, TaskPairs
from negcse.analysis.transfer_bootstrap import FoldedExamples, TransferDraws
from negcse.tables.build import (
    Options,
    Table,
    TableInputError,
    check_evaluations,
    transfer_protocol,
)
from negcse.tables.eval_files import number, read_result, sts_pairs, tags, transfer_records
from negcse.tables.html import markdown_html
from negcse.tables.published import (
    CHECKPOINT_ROWS,
    OWN_PAPER,
    TASKS,
    TRANSFER_OWN_PAPER,
    published_avg,
    published_transfer,
)
from negcse.tables.render import Column, plain_caption, render_latex, render_markdown

if TYPE_CHECKING:
    from negcse.tables.specs import TableSpec

logger = logging.getLogger(__name__)

#: Baselines of our grid that the papers print under another method's name (in the compared
#: method's own paper): UNA's own SimCSE run, SimCSE at SAN's dropout 0.15.
PRINTED_AS: dict[str, str] = {"una_baseline": "simcse", "simcse_dropout15": "simcse"}

#: Where a paper prints no difference on a backbone, the claim's sign comes from the first of
#: these on which it does (the smoke grid's backbone is in no paper).
PAPER_BACKBONES = ("bert-base-uncased", "bert-large-uncased", "roberta-base", "roberta-large")

LEVEL = 0.95
THREE_SEEDS = "config/three-seeds.yaml"


@dataclass
class Model:
    """One method x backbone: per seed, its per-task predictions (per-pair cosines, per-example
    correctness) and full-test-set average (sorted by seed)."""

    method: str
    backbone: str
    seeds: list[str] = field(default_factory=list)
    preds: list[dict[str, np.ndarray]] = field(default_factory=list)
    resampled: np.ndarray | None = None  # (seeds, B), filled by :func:`resample`
    observed: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class Measure:
    """The average a verdict table resamples. ``read``: a file's tags, per-task predictions and
    per-task test design (what must be equal across a backbone's files to pair them);
    ``observed``: a file's full-test-set average; ``draw``: one backbone's shared resample;
    ``resampled``: (B,) one model-seed's average on it; ``published(method, backbone, tasks,
    paper)``: a paper's number (``paper`` None: the method's own), ``own_paper`` by method."""

    unit: str  # what is resampled, for the log and errors
    size: Callable[[Any], int]  # how many of them one task's test design holds
    read: Callable[[str], tuple[dict, dict[str, np.ndarray], dict[str, Any]]]
    same: Callable[[dict[str, Any], dict[str, Any]], bool]
    observed: Callable[[dict, dict[str, np.ndarray], dict[str, Any]], float]
    draw: Callable[[dict[str, Any]], Any]
    resampled: Callable[[dict[str, np.ndarray], Any], np.ndarray]
    published: Callable[[str, str, Sequence[str], str | None], float | None]
    own_paper: Mapping[str, str]


def read_pairs(path: str) -> tuple[dict, dict[str, np.ndarray], dict[str, TaskPairs]]:
    """An STS evaluation file's tags, per-task cosines and test pairs (gold, subset sizes),
    checked (:mod:`negcse.tables.eval_files`)."""
    result = read_result(path)
    preds, tasks = {}, {}
    for task in TASKS:
        found = sts_pairs(result, task, path)
        if found is None:
            raise TableInputError(
                f"{path}: no per-pair cosines for {task} (details.{task}.pairs: evaluate with "
                "--sts-pairs, as the workflow does; rerun this evaluation)"
            )
        preds[task], tasks[task] = found
    tags(result, path, "method", "backbone")
    return result, preds, tasks


def _same_pairs(a: dict[str, TaskPairs], b: dict[str, TaskPairs]) -> bool:
    return all(
        a[t].subset_sizes == b[t].subset_sizes and np.array_equal(a[t].gold, b[t].gold)
        for t in TASKS
    )


def read_tested(path: str) -> tuple[dict, dict[str, np.ndarray], dict[str, FoldedExamples]]:
    """A transfer evaluation file's tags, per-task correctness and tested examples (folds);
    each task's record gives back its recorded accuracy, the average is theirs
    (:mod:`negcse.tables.eval_files`)."""
    result = read_result(path)
    correct, tested = transfer_records(result, path)
    tags(result, path, "method", "backbone")
    number(result, "avg", path)
    return result, correct, tested


def _same_tested(a: dict[str, FoldedExamples], b: dict[str, FoldedExamples]) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[t].fold, b[t].fold) for t in a)


STS = Measure(
    unit="STS test pairs",
    size=lambda task: len(task.gold),
    read=read_pairs,
    same=_same_pairs,
    observed=lambda result, preds, tasks: bootstrap.observed_average(preds, tasks),
    draw=lambda tasks: Draws.draw(tasks, bootstrap.RESAMPLES, bootstrap.SEED),
    resampled=bootstrap.resampled_average,
    published=lambda method, backbone, tasks, paper: published_avg(method, backbone, paper),
    own_paper=OWN_PAPER,
)

TRANSFER = Measure(
    unit="transfer test examples",
    size=lambda tested: len(tested.fold),
    read=read_tested,
    same=_same_tested,
    observed=lambda result, correct, tested: float(result["avg"]),  # the transfer table's
    draw=lambda tested: TransferDraws.draw(tested, bootstrap.RESAMPLES, bootstrap.SEED),
    resampled=transfer_bootstrap.resampled_average,
    published=published_transfer,
    own_paper=TRANSFER_OWN_PAPER,
)


def load_models(
    evals: Sequence[str], measure: Measure = STS
) -> tuple[dict[tuple[str, str], Model], dict]:
    """Models by (method, backbone) and each backbone's test design; every file of a backbone
    must hold the same test pairs or examples (one protocol), or the bootstrap could not pair
    them."""
    check_evaluations(evals)  # one file per run; one protocol and classifier in the table
    models: dict[tuple[str, str], Model] = {}
    pairs: dict[str, tuple[str, dict[str, Any]]] = {}
    for path in evals:
        result, preds, tasks = measure.read(path)
        method, backbone = str(result["method"]), str(result["backbone"])
        first = pairs.setdefault(backbone, (path, tasks))
        if not measure.same(first[1], tasks):
            raise TableInputError(
                f"{path}: its {measure.unit} differ from those of {first[0]} (another protocol "
                f"or data): a paired bootstrap needs the same {measure.unit.split()[-1]}"
            )
        model = models.setdefault((method, backbone), Model(method, backbone))
        model.seeds.append(str(result.get("seed", "")))
        model.preds.append(preds)
        model.observed.append(measure.observed(result, preds, tasks))
    for model in models.values():  # seeds in numeric order: the paired seed draws match them
        order = sorted(range(len(model.seeds)), key=lambda i: _seed_key(model.seeds[i]))
        model.seeds = [model.seeds[i] for i in order]
        model.preds = [model.preds[i] for i in order]
        model.observed = [model.observed[i] for i in order]
        if len(set(model.seeds)) != len(model.seeds):
            raise TableInputError(
                f"{model.method}/{model.backbone}: seed listed twice among {model.seeds}"
            )
    return models, {b: tasks for b, (_, tasks) in pairs.items()}


def _seed_key(seed: str) -> tuple[int, str]:
    return (int(seed), "") if seed.lstrip("-").isdigit() else (0, seed)


def resample(models: Sequence[Model], draws: Any, measure: Measure = STS) -> None:
    """Fill each model's (seeds, B) resampled averages."""
    for model in models:
        if model.resampled is None:
            model.resampled = np.stack([measure.resampled(p, draws) for p in model.preds])


def difference(a: Model, b: Model) -> Interval:
    """A - B, seeds paired when both ran the same seeds."""
    assert a.resampled is not None and b.resampled is not None
    return bootstrap.paired_difference(
        a.resampled, b.resampled, a.observed, b.observed, a.seeds == b.seeds, LEVEL
    )


def to_constant(a: Model, value: float) -> Interval:
    assert a.resampled is not None
    return bootstrap.against_constant(a.resampled, a.observed, value, LEVEL)


# The papers' claims.


def paper_delta(
    method: str, baseline: str, backbone: str, measure: Measure = STS, tasks: Sequence[str] = TASKS
) -> float | None:
    """The method's published average minus its baseline's, both from the method's paper."""
    own = measure.published(method, backbone, tasks, None)
    if own is None:
        return None
    printed = PRINTED_AS.get(baseline, baseline)
    base = measure.published(printed, backbone, tasks, measure.own_paper.get(method))
    return None if base is None else own - base


def claim(
    method: str, baseline: str, backbone: str, measure: Measure = STS, tasks: Sequence[str] = TASKS
) -> tuple[float | None, str | None]:
    """The paper's difference on this backbone, else on its first backbone that prints one
    (and which); (None, None) when the paper prints none."""
    for candidate in (backbone, *PAPER_BACKBONES):
        delta = paper_delta(method, baseline, candidate, measure, tasks)
        if delta is not None and delta != 0:
            return delta, candidate
    return None, None


def verdict(interval: Interval, claimed: float | None) -> str:
    """``reproduced`` (interval excludes 0 on the claim's side), ``reversed`` (on the other),
    ``not significant`` (contains 0); empty without a claim."""
    if claimed is None:
        return ""
    if not interval.excludes_zero():
        return "not significant"
    return "reproduced" if (interval.estimate > 0) == (claimed > 0) else "reversed"


def _ci(interval: Interval | None) -> str:
    return "" if interval is None else f"[{interval.low:+.2f}, {interval.high:+.2f}]"


# The verdict table.


def _draws_for(backbone: str, tasks: dict[str, Any], measure: Measure = STS) -> Any:
    draws = measure.draw(tasks)
    size = sum(map(measure.size, tasks.values()))
    logger.info("%s: %d resamples of %d %s", backbone, draws.resamples, size, measure.unit)
    return draws


def verdict_frame(evals: Sequence[str], options: Options, measure: Measure = STS) -> pd.DataFrame:
    models, pairs = load_models(evals, measure)
    baselines = dict(options.baselines)
    rows = []
    for backbone, tasks in pairs.items():
        draws: Any = None
        names = list(tasks)
        for (method, bb), model in models.items():
            if bb != backbone:
                continue
            base = models.get((baselines.get(method, ""), backbone))
            paper = measure.published(method, backbone, names, None)
            if base is None and paper is None:
                continue
            draws = draws or _draws_for(backbone, tasks, measure)
            resample([model] + ([base] if base else []), draws, measure)
            row: dict[str, object] = {"method": method, "backbone": backbone,
                                      "seeds": len(model.seeds)}
            vs_base = difference(model, base) if base else None
            claimed, where = (
                claim(method, base.method, backbone, measure, names) if base else (None, None)
            )
            same = where == backbone
            row.update(
                baseline=base.method if base else "",
                vs_baseline=vs_base.estimate if vs_base else math.nan,
                vs_baseline_low=vs_base.low if vs_base else math.nan,
                vs_baseline_high=vs_base.high if vs_base else math.nan,
                vs_baseline_ci=_ci(vs_base),
                paper_delta=claimed if claimed is not None else math.nan,
                paper_delta_backbone=where or "",
                paper_delta_text=(
                    "" if claimed is None else f"{claimed:+.2f}" + ("" if same else f" ({where})")
                ),
                verdict=verdict(vs_base, claimed) if vs_base else "",
                paper_delta_inside=(
                    ("yes" if vs_base.contains(claimed) else "no")
                    if vs_base and same and claimed is not None else ""
                ),
            )
            vs_paper = to_constant(model, paper) if paper is not None else None
            row.update(
                paper=paper if paper is not None else math.nan,
                vs_paper=vs_paper.estimate if vs_paper else math.nan,
                vs_paper_low=vs_paper.low if vs_paper else math.nan,
                vs_paper_high=vs_paper.high if vs_paper else math.nan,
                vs_paper_ci=_ci(vs_paper),
            )
            rows.append(row)
    return pd.DataFrame(rows, columns=list(_VERDICT_FRAME))


_VERDICT_FRAME = (
    "method", "backbone", "seeds", "baseline", "vs_baseline", "vs_baseline_low",
    "vs_baseline_high", "vs_baseline_ci", "paper_delta", "paper_delta_backbone",
    "paper_delta_text", "verdict", "paper_delta_inside", "paper", "vs_paper", "vs_paper_low",
    "vs_paper_high", "vs_paper_ci",
)

VERDICT_COLUMNS = (
    Column("seeds", "Seeds", kind="count"),
    Column("baseline", "Baseline", kind="text", align="l"),
    Column("vs_baseline", "Δ base", kind="signed", latex=r"$\Delta_{\mathrm{base}}$"),
    Column("vs_baseline_ci", "95% CI", kind="text", latex=r"95\% CI"),
    Column("paper_delta_text", "Paper Δ base", kind="text",
           latex=r"Paper $\Delta_{\mathrm{base}}$"),
    Column("verdict", "Verdict", kind="text", align="l"),
    Column("paper_delta_inside", "Paper Δ in CI", kind="text", latex=r"Paper $\Delta$ in CI"),
    Column("paper", "Paper", kind="number"),
    Column("vs_paper", "Δ paper", kind="signed", latex=r"$\Delta_{\mathrm{paper}}$"),
    Column("vs_paper_ci", "95% CI (paper)", kind="text", latex=r"95\% CI (paper)"),
)


def seeds_note(seeds: pd.Series) -> str:
    """The caption's sentence on the seed level."""
    if seeds.empty:
        return ""
    if int(seeds.min()) < 2:
        return (
            " Rows with one seed: the interval covers test-set sampling only, not seed-to-seed "
            f"variation (UNA's ten seeds spread about 0.8 points); {THREE_SEEDS} runs three seeds."
        )
    return " Seeds are resampled first, then the pairs."


def verdict_table(spec: TableSpec, evals: Sequence[str], options: Options) -> Table:
    frame = verdict_frame(evals, options)
    caption = spec.caption.replace("{resamples}", str(bootstrap.RESAMPLES))
    return _table(frame, VERDICT_COLUMNS, caption + seeds_note(frame["seeds"]), spec,
                  "vs_baseline", options)  # fmt: skip


def transfer_verdict_table(spec: TableSpec, evals: Sequence[str], options: Options) -> Table:
    """:func:`verdict_table` on the transfer average, over the tasks the files evaluated."""
    tasks, _ = transfer_protocol(evals)
    frame = verdict_frame(evals, options, TRANSFER)
    caption = spec.caption.replace("{resamples}", str(bootstrap.RESAMPLES))
    caption = caption.replace("{tasks}", ", ".join(tasks)) + seeds_note(frame["seeds"])
    return _table(frame, VERDICT_COLUMNS, caption, spec, "vs_baseline", options)


def _table(
    frame: pd.DataFrame,
    columns: Sequence[Column],
    caption: str,
    spec: TableSpec,
    metric: str,
    options: Options,
) -> Table:
    dvc = {
        f"{m}/{b}": round(float(v), 4)
        for m, b, v in zip(frame["method"], frame["backbone"], frame[metric], strict=True)
        if not math.isnan(v)
    }
    md = render_markdown(frame, columns)
    return Table(
        tex=render_latex(frame, columns, caption, spec.label, baselines=options.baselines),
        frame=frame,
        md=md,
        metrics=dvc,
        html=markdown_html(f"{plain_caption(caption)}\n\n{md}", spec.name),
    )


# Released checkpoints.


def checkpoint_frame(evals: Sequence[str]) -> pd.DataFrame:
    """One row per released checkpoint x backbone: paper, released, ours, the two gaps."""
    models, pairs = load_models(evals)
    draws: dict[str, Draws] = {}
    rows = []
    for (name, backbone), released in models.items():
        if name not in CHECKPOINT_ROWS:
            continue
        method = CHECKPOINT_ROWS[name][1]
        ours = models.get((method, backbone))
        paper = published_avg(name, backbone)
        tasks = pairs[backbone]
        if backbone not in draws:
            draws[backbone] = _draws_for(backbone, tasks)
        resample([released] + ([ours] if ours else []), draws[backbone])
        eval_gap = to_constant(released, paper) if paper is not None else None
        training_gap = difference(ours, released) if ours else None
        rows.append(
            {
                "method": name,
                "backbone": backbone,
                "seeds": len(ours.seeds) if ours else 0,
                "ours_method": method,
                "paper": paper if paper is not None else math.nan,
                "released": float(np.mean(released.observed)),
                "ours": float(np.mean(ours.observed)) if ours else math.nan,
                "eval_gap": eval_gap.estimate if eval_gap else math.nan,
                "eval_gap_ci": _ci(eval_gap),
                "training_gap": training_gap.estimate if training_gap else math.nan,
                "training_gap_ci": _ci(training_gap),
            }
        )
    return pd.DataFrame(rows, columns=list(_CHECKPOINT_FRAME))


_CHECKPOINT_FRAME = (
    "method", "backbone", "seeds", "ours_method", "paper", "released", "ours", "eval_gap",
    "eval_gap_ci", "training_gap", "training_gap_ci",
)

CHECKPOINT_COLUMNS = (
    Column("ours_method", "Ours", kind="text", align="l"),
    Column("seeds", "Seeds", kind="count"),
    Column("paper", "Paper", kind="number"),
    Column("released", "Released", kind="number"),
    Column("ours", "Ours avg.", kind="number"),
    Column("eval_gap", "Eval. gap", kind="signed"),
    Column("eval_gap_ci", "95% CI", kind="text", latex=r"95\% CI"),
    Column("training_gap", "Training gap", kind="signed"),
    Column("training_gap_ci", "95% CI (training)", kind="text", latex=r"95\% CI (training)"),
)


def checkpoint_table(spec: TableSpec, evals: Sequence[str], options: Options) -> Table:
    frame = checkpoint_frame(evals)
    caption = spec.caption.replace("{resamples}", str(bootstrap.RESAMPLES))
    if frame.empty:
        caption += " No released checkpoint was evaluated (offline, none in the mirror or cache)."
        logger.info("checkpoints table: no released checkpoint among %d file(s)", len(evals))
    else:
        caption += seeds_note(frame.loc[frame["seeds"] > 0, "seeds"])
    return _table(frame, CHECKPOINT_COLUMNS, caption, spec, "training_gap", options)
