"""The sentence-transformers module of prompt-pooled model folders saved by earlier versions of
negcse: their ``modules.json`` names ``negcse.st_module.PooledEncoder`` and their config file
holds the pooler's name only. It is :class:`negcse.encoders.st_prompt.PromptEncoder` with the template
looked up in negcse's poolers, so loading such a folder needs negcse installed; folders saved
now carry the module's code and load without it (``negcse.encoders.st_prompt``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from negcse.encoders.poolers import PromptPooler, get_pooler
from negcse.encoders.st_prompt import CONFIG_FILE, PromptEncoder
from negcse.errors import ModelFilesError


class PooledEncoder(PromptEncoder):
    """A prompt pooler of negcse, named in the folder's config (``pooler``, ``max_seq_length``)."""

    @classmethod
    def from_config(cls, folder: str, config: dict[str, Any]) -> PromptEncoder:
        path = Path(folder) / CONFIG_FILE
        missing = [key for key in ("pooler", "max_seq_length") if key not in config]
        if missing:
            raise ModelFilesError(f"{path}: missing or without {', '.join(missing)}")
        try:
            pooler = get_pooler(str(config["pooler"]))
        except KeyError as exc:
            raise ModelFilesError(f"{path}: {exc.args[0]}") from None
        if not isinstance(pooler, PromptPooler):
            raise ModelFilesError(f"{path}: pooler {pooler.name} is not a prompt pooler")
        return cls(
            folder,
            pooler.template,
            pooler.punctuate,
            pooler.truncate,
            int(config["max_seq_length"]),
            pooler.name,
        )
