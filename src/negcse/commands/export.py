"""``negcse export``: a trained model as it travels: a complete sentence-transformers folder whose
card (``README.md``) holds its STS and transfer results, optionally pushed to the Hugging Face Hub.

    python -m negcse export results/models/sncse/bert-base-uncased/seed42 --out sncse-bert
    python -m negcse export results/models/sncse/bert-base-uncased/seed42 --out sncse-bert \\
        --push-to-hub my-org/sncse-bert-base

The evaluation files are found beside the model (``results/models/<m>/<b>/seed<n>`` ->
``results/eval/{sts,transfer}/<m>/<b>/seed<n>.json``) or named (``--sts``, ``--transfer``). Each
must be an evaluation of its kind (``--sts`` an STS one with its protocol recorded, ``--transfer``
a transfer one) and of this model: its method, backbone and seed tags equal the model's
``negcse.json``; a file without these tags is refused unless the model folder it records
(``model``) is this one. A model saved by an earlier version gets the current
sentence-transformers files (its prompt pooler's module code included).

Everything is checked before anything is written: the model's record
(:mod:`negcse.training.model_record`), its weights against its config.json, the evaluation
files, the ``--push-to-hub`` repository id; ``--to`` is a new folder outside the model's.
"""

from __future__ import annotations

import argparse
import logging
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from negcse.data.sts import PROTOCOLS, STS_TASKS
from negcse.data.transfer import TRANSFER_TASKS
from negcse.encoders.poolers import get_pooler
from negcse.errors import UserError
from negcse.io_utils import atomic_dir, read_json
from negcse.model_cli import saved_pooler
from negcse.runtime.lazy import LazyModule
from negcse.tables.eval_files import number, read_result
from negcse.training.model_record import RECORD, RUN_KEYS, load_model_record

if TYPE_CHECKING:
    import huggingface_hub
    import huggingface_hub.utils as hub_utils

    from negcse.encoders import pretrained
    from negcse.methods import registry
    from negcse.training import model as model_lib
    from negcse.training import model_card
else:  # torch and the Hub client: imported when the command runs, not for --help
    huggingface_hub = LazyModule("huggingface_hub")
    hub_utils = LazyModule("huggingface_hub.utils")
    pretrained = LazyModule("negcse.encoders.pretrained")
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


#: the tasks each evaluation scores at its top level, and what it is called
TASKS = {"sts": STS_TASKS, "transfer": TRANSFER_TASKS}
KINDS = {"sts": "an STS evaluation", "transfer": "a transfer evaluation"}


def check_kind(result: dict[str, Any], path: Path, name: str) -> None:
    """``result`` is an evaluation of kind ``name`` whose numbers the card shows are finite."""
    other = next(n for n in EVALS if n != name)
    own = [t for t in TASKS[name] if t in result]
    foreign = [t for t in TASKS[other] if t in result]
    if foreign or not own:
        found = (
            f"{KINDS[other]} (it scores {', '.join(foreign)})"
            if foreign
            else (f"no task of one scored ({', '.join(TASKS[name])})")
        )
        raise UserError(f"{path}: --{name}: not {KINDS[name]}: {found}")
    for task in [*own, "avg"]:
        number(result, task, path)
    if name == "sts" and result.get("protocol") not in PROTOCOLS:
        raise UserError(
            f"{path}: protocol: expected one of {', '.join(PROTOCOLS)}, got "
            f"{result.get('protocol')!r} (the card names the protocol its scores come from)"
        )


def check_identity(result: dict[str, Any], path: Path, model: Path, meta: dict[str, Any]) -> None:
    """``result`` is an evaluation of ``model`` (record ``meta``): every tag it has equals the
    model's; a missing tag is made good only by the model folder it records being this one."""
    record = model / RECORD
    for key in RUN_KEYS:
        if key in result and str(result[key]) != str(meta[key]):
            raise UserError(
                f"{path}: {key} {result[key]!r} is not the model's ({meta[key]!r}, {record})"
            )
    missing = [key for key in RUN_KEYS if key not in result]
    recorded = result.get("model")
    if missing and not (isinstance(recorded, str) and Path(recorded).resolve() == model.resolve()):
        raise UserError(
            f"{path}: no {', '.join(missing)} tag and its model ({recorded!r}) is not {model}: "
            "not known to be this model's evaluation (evaluate it with --tag method=... "
            "--tag backbone=... --tag seed=...)"
        )


def read_evals(model: Path, meta: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The model's evaluation results found or named, each of its kind and of this model."""
    out = {}
    for name in EVALS:
        named = getattr(args, name)
        path = Path(named) if named else eval_file(model, name)
        if path is None:
            logger.info("no %s evaluation beside %s: the card leaves it out", name, model)
            continue
        result = read_result(path)  # checked as a table reads it: else one line
        check_kind(result, path, name)
        check_identity(result, path, model, meta)
        out[name] = result
    return out


def check_folders(model: Path, to: Path) -> None:
    """``model`` is a folder; ``to`` is new and outside it (a copy into the tree it copies would
    change the model, a DVC output, and copy itself)."""
    if not model.exists():
        raise UserError(
            f"{model}: no such model folder; a model the workflow trained is a DVC output: "
            f"`dvc pull {model}` fetches it (or `dvc repro` trains it)"
        )
    if not model.is_dir():
        raise UserError(f"{model}: not a folder (a trained model folder is expected)")
    if to.exists() or to.is_symlink():  # a link, even to nothing, is no new folder
        raise UserError(f"--to {to}: exists; export writes a new folder")
    parent = next(p for p in to.absolute().parents if p.exists() or p.is_symlink())
    if not parent.is_dir():
        raise UserError(f"--to {to}: {parent} is not a folder")
    inside, folder = to.resolve(), model.resolve()
    if inside == folder or folder in inside.parents:
        raise UserError(
            f"--to {to}: inside the model folder {model}; export to a folder outside it"
        )


def export(model: Path, to: Path, args: argparse.Namespace) -> None:
    """Copy ``model`` to ``to`` with current sentence-transformers files and a full card."""
    check_folders(model, to)
    meta = load_model_record(model, run=True)  # else one line naming the file and key
    if not (model / "config.json").is_file():
        raise UserError(f"{model}: not a trained model folder (no config.json)")
    config = read_json(model / "config.json")
    hidden = config.get("hidden_size")
    if not isinstance(hidden, int) or isinstance(hidden, bool) or hidden < 1:
        raise UserError(f"{model / 'config.json'}: hidden_size: expected a positive integer")
    evals = read_evals(model, meta, args)
    pretrained.load_pretrained(str(model))  # the weights load, match config.json, are finite
    try:
        registry.method_class(str(meta.get("implementation", meta["method"])))
    except KeyError:  # a plug-in's model where it is not installed: its pooler may be unknown
        logger.warning("method %s is not installed here", meta.get("implementation"))
    pooler = get_pooler(saved_pooler(str(model)))  # a known one, else one line
    card = model_card.model_card(meta, evals)
    with atomic_dir(to) as tmp:
        shutil.copytree(model, tmp, dirs_exist_ok=True)
        model_lib.write_sentence_transformers_files(tmp, pooler, int(hidden))
        (tmp / "README.md").write_text(card, encoding="utf-8")
    logger.info("%s -> %s (results: %s)", model, to, ", ".join(evals) or "none")


def check_repo_id(repo: str) -> None:
    """A Hub repository id (``name`` or ``namespace/name``), checked before anything is written."""
    try:
        hub_utils.validate_repo_id(repo)
    except hub_utils.HFValidationError as exc:
        reason = (str(exc).strip().splitlines() or ["not a repository id"])[0]
        raise UserError(f"--push-to-hub {repo!r}: {reason}") from None


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
    if args.push_to_hub is not None:
        check_repo_id(args.push_to_hub)
    export(model, to, args)
    if args.push_to_hub is not None:
        url = push(to, args.push_to_hub, args.private, args.revision)
        logger.info("pushed %s to %s: %s", to, args.push_to_hub, url)
    return 0
