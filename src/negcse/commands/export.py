"""``negcse export``: a trained model as it travels: a complete sentence-transformers folder whose
card (``README.md``) holds its STS and transfer results, optionally pushed to the Hugging Face Hub.

    python -m negcse export results/models/sncse/bert-base-uncased/seed42 --out sncse-bert
    python -m negcse export results/models/sncse/bert-base-uncased/seed42 --out sncse-bert \\
        --push-to-hub my-org/sncse-bert-base

The evaluation files are found beside the model (``results/models/<m>/<b>/seed<n>`` ->
``results/eval/{sts,transfer}/<m>/<b>/seed<n>.json``) or named (``--sts``, ``--transfer``); each
must be the model's (its method, backbone and seed tags). A model saved by an earlier version
gets the current sentence-transformers files (its prompt pooler's module code included).
"""

from __future__ import annotations

import argparse
import logging
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from negcse.errors import UserError
from negcse.io_utils import atomic_dir, read_json
from negcse.lazy import LazyModule
from negcse.model_cli import saved_pooler
from negcse.poolers import get_pooler
from negcse.tables.eval_files import read_result

if TYPE_CHECKING:
    import huggingface_hub

    from negcse import pretrained
    from negcse.methods import registry
    from negcse.training import model as model_lib
    from negcse.training import model_card
else:  # torch and the Hub client: imported when the command runs, not for --help
    huggingface_hub = LazyModule("huggingface_hub")
    pretrained = LazyModule("negcse.pretrained")
    registry = LazyModule("negcse.methods.registry")
    model_lib = LazyModule("negcse.training.model")
    model_card = LazyModule("negcse.training.model_card")

NAME = "export"
HELP = (
    "a trained model as a sentence-transformers folder with its results in its card; --push-to-hub"
)
logger = logging.getLogger(__name__)
EVALS = ("sts", "transfer")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "model", help="a trained model folder (results/models/<method>/<backbone>/seed<n>)"
    )
    p.add_argument(
        "--out",
        "--to",
        dest="to",
        required=True,
        metavar="DIR",
        help="the folder to write (a new one)",
    )
    for name in EVALS:
        p.add_argument(
            f"--{name}",
            metavar="JSON",
            help=f"its {name} evaluation (default: beside the model under results/eval/{name}/)",
        )
    p.add_argument("--push-to-hub", metavar="REPO", help="then upload DIR to this Hub model repo")
    p.add_argument("--private", action="store_true", help="create the Hub repo private")
    p.add_argument("--revision", help="the Hub branch to push to (default: main)")


def eval_file(model: Path, name: str) -> Path | None:
    """``<root>/eval/<name>/<m>/<b>/seed<n>.json`` for ``<root>/models/<m>/<b>/seed<n>``."""
    parts = model.resolve().parts
    if "models" not in parts:
        return None
    i = len(parts) - 1 - parts[::-1].index("models")
    path = Path(*parts[:i], "eval", name, *parts[i + 1 : -1], f"{parts[-1]}.json")
    return path if path.is_file() else None


def read_evals(model: Path, meta: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The model's evaluation results found or named; one of another run is an error."""
    out = {}
    for name in EVALS:
        named = getattr(args, name)
        path = Path(named) if named else eval_file(model, name)
        if path is None:
            logger.info("no %s evaluation beside %s: the card leaves it out", name, model)
            continue
        result = read_result(path)  # checked as a table reads it: else one line
        for key in ("method", "backbone", "seed"):
            if key in result and str(result[key]) != str(meta.get(key)):
                raise UserError(
                    f"{path}: {key} {result[key]!r} is not the model's ({meta.get(key)!r}, "
                    f"{model / 'negcse.json'})"
                )
        out[name] = result
    return out


def export(model: Path, to: Path, args: argparse.Namespace) -> None:
    """Copy ``model`` to ``to`` with current sentence-transformers files and a full card."""
    for name in ("negcse.json", "config.json"):
        if not (model / name).is_file():
            raise UserError(f"{model}: not a trained model folder (no {name})")
    meta, config = read_json(model / "negcse.json"), read_json(model / "config.json")
    hidden = config.get("hidden_size")
    if not isinstance(hidden, int) or isinstance(hidden, bool) or hidden < 1:
        raise UserError(f"{model / 'config.json'}: hidden_size: expected a positive integer")
    if "method" not in meta:
        raise UserError(f"{model / 'negcse.json'}: no run spec (method): not a trained run")
    evals = read_evals(model, meta, args)
    pretrained.load_pretrained(str(model))  # the weights load and are finite: else one line
    if to.exists():
        raise UserError(f"{to}: exists; export writes a new folder")
    try:
        registry.method_class(str(meta.get("implementation", meta["method"])))
    except KeyError:  # a plug-in's model where it is not installed: its pooler may be unknown
        logger.warning("method %s is not installed here", meta.get("implementation"))
    pooler = get_pooler(saved_pooler(str(model)))  # a known one, else one line
    with atomic_dir(to) as tmp:
        shutil.copytree(model, tmp, dirs_exist_ok=True)
        model_lib.write_sentence_transformers_files(tmp, pooler, int(hidden))
        card = model_card.model_card(meta, evals)
        (tmp / "README.md").write_text(card, encoding="utf-8")
    logger.info("%s -> %s (results: %s)", model, to, ", ".join(evals) or "none")


def push(folder: Path, repo: str, private: bool, revision: str | None) -> str:
    """Create ``repo`` (if needed) and upload ``folder``; the commit's URL."""
    api = huggingface_hub.HfApi()
    try:
        api.create_repo(repo, repo_type="model", private=private, exist_ok=True)
        info = api.upload_folder(
            folder_path=str(folder),
            repo_id=repo,
            repo_type="model",
            revision=revision,
            commit_message=f"negcse export of {folder.name}",
        )
    except huggingface_hub.errors.HfHubHTTPError as exc:
        raise UserError(f"--push-to-hub {repo}: {exc}") from None
    return str(getattr(info, "commit_url", info))


def run(args: argparse.Namespace) -> int:
    model, to = Path(args.model), Path(args.to)
    export(model, to, args)
    if args.push_to_hub:
        url = push(to, args.push_to_hub, args.private, args.revision)
        logger.info("pushed %s to %s: %s", to, args.push_to_hub, url)
    return 0
