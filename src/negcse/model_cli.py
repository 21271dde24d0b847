"""The model options of ``negcse evaluate`` (model, pooler, batch size, mirror, tags, threads)
and what they resolve to."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from negcse.encoders.poolers import POOLERS
from negcse.errors import UserError
from negcse.finite import at_least
from negcse.io_utils import read_json
from negcse.methods.registry import _load_all
from negcse.runtime.lazy import LazyModule
from negcse.text.names import NAME_RULE, check_tag, is_name
from negcse.training.model_record import load_model_record

if TYPE_CHECKING:
    from negcse.evaluation import embedder as embedding
    from negcse.evaluation.embedder import Embedder
    from negcse.training import model
else:  # torch and transformers: loaded by load_embedder only (`evaluate --help` stays fast)
    embedding = LazyModule("negcse.evaluation.embedder")
    model = LazyModule("negcse.training.model")


def add_model_arguments(
    p: argparse.ArgumentParser, pooler: str = "auto", model_required: bool = True
) -> None:
    """--model, --pooler, --batch-size, --mirror, --tag (repeatable), --threads."""
    p.add_argument(
        "--model", required=model_required, help="trained folder, mirror name or hub id"
    )
    p.add_argument(
        "--pooler",
        default=pooler,
        type=pooler_name,
        help=f"one of {sorted(POOLERS)}, or auto: the one saved in negcse.json "
        f"(cls_before_pooler when there is none); default: {pooler}",
    )
    p.add_argument("--batch-size", type=at_least(1), default=128, help="encoding batch size")
    p.add_argument("--mirror", default=None, help="mirror folder (default: $NEGCSE_MIRROR)")
    p.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="recorded in the output (e.g. method, backbone, seed); KEY a name, not one the "
        "output holds already (model, pooler, a result's key)",
    )
    p.add_argument("--threads", type=at_least(1), default=None, help="torch threads")


def pooler_name(text: str) -> str:
    """An argparse type: ``auto`` or a known pooler (methods register prompt poolers)."""
    if text == "auto" or text in POOLERS:
        return text

    _load_all()
    if text not in POOLERS:
        raise argparse.ArgumentTypeError(
            f"unknown pooler '{text}'; known: auto, {', '.join(sorted(POOLERS))}"
        )
    return text


def saved_meta(model: str) -> dict[str, Any]:
    """The negcse.json a folder trained here saved, checked
    (:func:`negcse.training.model_record.load_model_record`); {} for any other model."""
    return load_model_record(model)


def saved_pooler(model: str) -> str:
    """The evaluation pooler a trained folder saved (negcse.json's ``eval_pooler``, a known
    pooler); cls_before_pooler for any other model."""
    meta = saved_meta(model)
    if not meta:
        return "cls_before_pooler"
    where = Path(model) / "negcse.json"
    pooler = meta.get("eval_pooler")
    if not isinstance(pooler, str):
        raise UserError(f"{where}: eval_pooler: expected a pooler's name, got {pooler!r}")
    try:
        return pooler_name(pooler)
    except argparse.ArgumentTypeError as exc:
        raise UserError(f"{where}: eval_pooler: {exc}") from None


def load_embedder(args: argparse.Namespace) -> Embedder:
    """Set the thread count, resolve ``--pooler auto`` (in ``args``) and load the model."""
    model.torch_threads(args.threads)
    if args.pooler == "auto":
        args.pooler = saved_pooler(args.model)
    return embedding.Embedder.load(args.model, args.pooler, mirror=args.mirror)


#: the key of an evaluation JSON written for a model that could not be got (a released checkpoint
#: offline, unreachable or unpinned): its value says why; tables leave such files out
UNAVAILABLE = "unavailable"


def unavailable(path: str | Path) -> str | None:
    """Why the model of evaluation file ``path`` was unavailable, or None (a real result)."""
    result = read_json(path)
    reason = result.get(UNAVAILABLE)
    return None if reason is None else f"{result.get('model', path)}: {reason}"


#: the keys an evaluation JSON's :func:`header` (or :data:`UNAVAILABLE`) writes itself
HEADER_KEYS = frozenset({"model", "pooler", "llm", "substitute", UNAVAILABLE})


def tags(args: argparse.Namespace) -> dict[str, str]:
    """The ``--tag KEY=VALUE`` pairs, each key once: a key is a name but none of
    :data:`HEADER_KEYS`; a method or backbone is a name, a seed a seed, any other value one line
    of text (:mod:`negcse.text.names`)."""
    pairs: dict[str, str] = {}
    for item in args.tag:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UserError(f"--tag {item!r}: expected KEY=VALUE (e.g. seed=1)")
        if not is_name(key):
            raise UserError(f"--tag {item!r}: {key!r} is not a tag name ({NAME_RULE})")
        if key in HEADER_KEYS:
            raise UserError(
                f"--tag {key}: negcse evaluate writes '{key}' itself (reserved: "
                f"{', '.join(sorted(HEADER_KEYS))}); choose another key"
            )
        if key in pairs:
            raise UserError(f"--tag {key} given twice ({key}={pairs[key]}, {item})")
        check_tag(key, value, f"--tag {key}")
        pairs[key] = value
    return pairs


def header(args: argparse.Namespace) -> dict[str, str]:
    """What every evaluation JSON starts with: the tags, the model and the pooler used, the
    LLM that wrote the model's training data where its negcse.json records one (GCSE), and
    the resources substituted when it was planned (SAN's lexicon), which the table row shows."""
    meta = saved_meta(args.model)
    llm = (meta.get("llm") or {}).get("model")
    substitutes = "; ".join(meta.get("substitutes") or [])
    return {
        **tags(args),
        "model": args.model,
        "pooler": args.pooler,
        **({"llm": str(llm)} if llm else {}),
        **({"substitute": substitutes} if substitutes else {}),
    }
