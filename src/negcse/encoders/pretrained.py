"""Load a Hugging Face tokenizer and transformer, and the device and inputs they run with."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import torch
from safetensors import SafetensorError
from transformers import AutoModel, AutoTokenizer

from negcse.errors import ModelFilesError
from negcse.runtime.device import resolve_device

#: the token limit per sentence of ``negcse evaluate`` (and of a saved model's
#: sentence-transformers files)
EVAL_MAX_LENGTH = 512


class Pretrained(NamedTuple):
    """A loaded folder: its tokenizer, its transformer, and the names of the transformer's
    parameters its weights lack (initialized at random by transformers, e.g. the pooler layer
    ``pooler.dense.weight`` of a checkpoint saved without it)."""

    tokenizer: Any
    model: Any
    initialized: frozenset[str]


def load_pretrained(path: str, config: Any = None) -> Pretrained:
    """Tokenizer and model of a Hugging Face folder; missing or damaged files, and a config.json
    whose sizes (``hidden_size``) disagree with the weights, are a :class:`ModelFilesError`
    naming the folder (transformers and torch raise several unrelated types)."""
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        model, info = AutoModel.from_pretrained(
            path, output_loading_info=True, **({"config": config} if config else {})
        )
    except (OSError, ValueError, TypeError, SafetensorError) as exc:
        check_readable(path)
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise ModelFilesError(
            f"model folder {path}: cannot load it ({type(exc).__name__}: {reason}); its files "
            "are missing or damaged: fetch the model again"
        ) from exc
    except RuntimeError as exc:  # torch's load_state_dict: weights of other shapes
        if "size mismatch" not in str(exc):
            raise
        found = next((line.strip() for line in str(exc).splitlines() if "size mismatch" in line), "")
        raise ModelFilesError(
            f"model folder {path}: config.json does not match its weights ({found[:200]}); "
            "a config.json of another model (hidden_size?): fetch the model again"
        ) from exc
    check_finite_weights(model, path)
    return Pretrained(tokenizer, model, frozenset(info.get("missing_keys") or ()))


def check_readable(path: str) -> None:
    """A :class:`ModelFilesError` naming the first file of model folder ``path`` this process
    may not read (or the folder, if it may not list it); called when a load failed, since the
    libraries report some of those as missing files or a bad config."""
    folder = Path(path)
    try:
        files = sorted(folder.iterdir()) if folder.is_dir() else []
    except PermissionError:
        raise ModelFilesError(f"model folder {path}: permission denied (cannot list it)") from None
    for file in files:
        try:
            with open(file, "rb"):
                pass
        except PermissionError:
            raise ModelFilesError(f"model folder {path}: {file.name}: permission denied") from None
        except OSError:  # a folder or a broken link: the loader's own error says what it is
            continue


def check_finite_weights(model: torch.nn.Module, path: str) -> None:
    """Every floating weight and buffer of ``model`` (loaded from ``path``) is finite: one NaN
    weight makes every embedding NaN, and every number computed from them."""
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
                bad = int((~torch.isfinite(tensor)).sum())
                raise ModelFilesError(
                    f"model folder {path}: weight {name} holds {bad} NaN or infinite value(s); "
                    "the model is damaged (a diverged training?): retrain or fetch it again"
                )


def default_device() -> torch.device:
    """The device of the setting in force (``negcse.runtime.device``: ``$NEGCSE_DEVICE``, else auto)."""
    return resolve_device()


def model_inputs(batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The tokenizer outputs a Hugging Face encoder accepts (poolers may add their own keys)."""
    keys = ("input_ids", "attention_mask", "token_type_ids")
    return {k: v for k, v in batch.items() if k in keys}
