"""``negcse train``: one method x backbone x seed run (what the Snakemake train rule calls)."""

from __future__ import annotations

import argparse
import json
import logging
import platform
from pathlib import Path
from typing import TYPE_CHECKING, Any

from negcse import __version__
from negcse.data.corpus import RESERVED_COLUMNS
from negcse.data.sources import resolve_model
from negcse.data.sts import PROTOCOLS
from negcse.errors import UserError
from negcse.finite import at_least, check_tree, seed_number
from negcse.io_utils import check_writable, read_json, read_lines
from negcse.methods.base import Column
from negcse.methods.registry import build_method
from negcse.runtime.lazy import LazyModule, torch
from negcse.runtime.lock_record import lock_record
from negcse.runtime.seed import seed_everything
from negcse.training.columns import columns_read, read_column
from negcse.training.fingerprint import run_fingerprint
from negcse.training.settings import TrainSettings

if TYPE_CHECKING:
    import transformers

    import negcse.evaluation.sts as sts
    import negcse.runtime.device as device_policy
    import negcse.training.guides as guides_lib
    import negcse.training.model as model_lib
    import negcse.training.trainer as trainer_lib
else:  # torch, transformers, scipy: imported when run() uses them, not for --help (lazy.py)
    transformers = LazyModule("transformers")
    device_policy = LazyModule("negcse.runtime.device")
    sts = LazyModule("negcse.evaluation.sts")
    guides_lib = LazyModule("negcse.training.guides")
    model_lib = LazyModule("negcse.training.model")
    trainer_lib = LazyModule("negcse.training.trainer")

NAME = "train"
HELP = "train one method on one backbone with one seed; resumes from --checkpoint-dir"
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--run",
        required=True,
        help="JSON of the resolved run (negcse.workflow.config.resolve_method) or a path to it",
    )
    p.add_argument(
        "--seed", type=seed_number, required=True, help="the run's seed (data order, dropout, init)"
    )
    p.add_argument("--corpus", required=True, help="prepared corpus, one sentence per line")
    p.add_argument(
        "--column",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="a column aligned with the corpus (repeatable): text, or numbers in a .npy or a "
        ".tsv of one number per line",
    )
    p.add_argument(
        "--guide",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="the model of a frozen guide the method declares: a trained model folder or a "
        "backbone name (repeatable)",
    )
    p.add_argument(
        "--guide-cache",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="a guide's encodings of this corpus (negcse encode-guide), read in place of its "
        "forward pass at every step (repeatable)",
    )
    p.add_argument("--out", required=True, help="output folder (written atomically)")
    p.add_argument("--checkpoint-dir", required=True, help="resumable state (kept until success)")
    p.add_argument("--mirror", default=None)
    p.add_argument("--threads", type=at_least(1), default=None)
    p.add_argument(
        "--eval-protocol",
        choices=PROTOCOLS,
        default="senteval",
        help="STS-B dev data of the model selection (in the run's fingerprint: a resumed run "
        "keeps its protocol)",
    )
    p.add_argument("--no-progress", action="store_true")


def _pairs(items: list[str], flag: str, form: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, _, value = item.partition("=")
        if not name or not value:
            raise UserError(f"{flag} expects {form}, got '{item}'")
        if name in out:
            raise UserError(f"{flag} {name} given twice")
        out[name] = value
    return out


#: the run spec's keys and their JSON types (negcse.workflow.config.resolve_method writes it)
SPEC_KEYS = {"method": str, "implementation": str, "backbone": str, "params": dict, "train": dict}


def read_spec(run: str) -> tuple[dict[str, Any], str]:
    """``--run``: the resolved run as JSON text or a file of it, and where it came from; one
    line naming the key (and the file) for JSON that is invalid, not finite or lacks a key of
    :data:`SPEC_KEYS`."""
    if run.lstrip().startswith("{"):
        where = "--run"
        try:
            spec = json.loads(run)
        except json.JSONDecodeError as exc:
            raise UserError(f"--run: invalid JSON ({exc})") from None
        check_tree(spec, where)
    else:
        where, spec = run, read_json(run)
    if not isinstance(spec, dict):
        raise UserError(f"{where}: expected a JSON object (the resolved run)")
    for key, kind in SPEC_KEYS.items():
        if not isinstance(spec.get(key), kind):
            got = "missing" if key not in spec else f"a {type(spec[key]).__name__}"
            raise UserError(f"{where}: key '{key}': expected a {kind.__name__}, {got}")
    return spec, where


def run(args: argparse.Namespace) -> int:
    spec, where = read_spec(args.run)
    check_writable(args.out, args.checkpoint_dir, folder=True)
    device = device_policy.choose()  # first: a GPU profile without CUDA stops here, one line
    logger.info("device %s (%s)", device.device.type, device.reason)
    model_lib.torch_threads(args.threads)
    try:
        settings = TrainSettings.from_dict(spec["train"])
        method = build_method(
            spec["implementation"],
            spec["params"],
            spec["backbone"],
            where=f"methods.{spec['method']}.params",
        )
    except (KeyError, ValueError) as exc:  # unknown method or key, a bad value: named
        raise UserError(f"{where}: {exc.args[0] if exc.args else exc}") from None
    #: the columns the method and its guides read besides the corpus
    reads = set(columns_read(method)) - {"sentence"}
    columns: dict[str, Column] = {"sentence": read_lines(args.corpus, nonempty=True)}
    sources = {"sentence": args.corpus}
    for name, path in _pairs(args.column, "--column", "NAME=FILE").items():
        if name in RESERVED_COLUMNS:  # negcse.json records --corpus: it stays what is trained on
            raise UserError(f"--column {name}=...: '{name}' is the corpus's column (--corpus)")
        columns[name], sources[name] = read_column(path), path
    data = trainer_lib.TrainData(columns, sources)  # aligned with the corpus, else named
    for name in sorted(set(columns) - {"sentence"} - reads):  # would be ignored unseen
        raise UserError(
            f"--column {name}=...: method '{spec['method']}' reads no column '{name}' "
            f"(it reads: {', '.join(sorted(reads)) or 'the corpus only'})"
        )
    named = _pairs(args.guide, "--guide", "NAME=PATH")
    guides = guides_lib.guide_paths(method.guides(), named, args.mirror)
    backbone_path = None if method.init_guide else resolve_model(spec["backbone"], args.mirror)
    fingerprint = run_fingerprint(
        spec, args.seed, sources, guides, backbone_path, eval_protocol=args.eval_protocol
    )
    seed_everything(args.seed)  # the MLP head's initialisation draws from the seeded RNG
    if backbone_path is not None:
        model = model_lib.SentenceEncoder.from_pretrained(backbone_path, settings.dropout)
    else:  # a copy of a guide's model, its MLP head included (GCSE stage 2)
        init = guides[method.init_guide]
        model = model_lib.SentenceEncoder.from_pretrained(init, settings.dropout)
        model.load_saved_head()
        logger.info("starting from guide %s: %s", method.init_guide, guides[method.init_guide])
    trainer = trainer_lib.Trainer(
        method,
        model,
        data,
        settings,
        args.seed,
        sts.dev_scorer(args.eval_protocol, args.mirror),
        Path(args.checkpoint_dir),
        progress=not args.no_progress,
        guides=guides,
        fingerprint=fingerprint,
        device=device.device,
        guide_caches=_pairs(args.guide_cache, "--guide-cache", "NAME=DIR"),
    )
    logger.info(
        "%s on %s, seed %d: %d sentences, %d steps",
        spec["method"],
        spec["backbone"],
        args.seed,
        len(data),
        trainer.total_steps,
    )
    state = trainer.train()
    meta = {
        **spec,
        "seed": args.seed,
        "eval_pooler": method.eval_pooler,
        "best_step": state.best_step,
        "best_stsb_dev": state.best_score,
        "eval_protocol": args.eval_protocol,  # the STS-B dev data best_stsb_dev is a score on
        "steps": state.step,
        "corpus_sentences": len(data),
        "corpus_file": Path(args.corpus).name,
        "device": trainer.device.type,  # where it trained (cuda: compile auto compiled it)
        "device_setting": device.setting,  # auto | cuda | cpu (negcse.runtime.device)
        **({"guides": guides} if guides else {}),
        "versions": {
            "negcse": __version__,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "python": platform.python_version(),
            # the lock this environment was installed from (make setup), None if not from one
            **lock_record(),
        },
    }
    trainer.save(Path(args.out), meta)
    logger.info("best STS-B dev %.2f at step %d -> %s", state.best_score, state.best_step, args.out)
    return 0
