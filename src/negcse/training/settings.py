"""The settings of one training run (params.yaml's ``train`` block, merged with the method's and
the backbone's overrides by ``negcse.workflow.config.train_settings``)."""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, fields
from functools import cache
from typing import Any

from negcse.errors import UserError
from negcse.finite import first_schema_error, schema_message, schema_validator
from negcse.schemas import config_schema


class TrainSettingsError(UserError, ValueError):
    """A train setting of the wrong type or out of its bounds; the message names the key."""


@cache
def _validator() -> Any:
    """The bounds of config.schema.yaml's ``train`` block (one place for them), with finite
    numbers (a NaN learning rate passes ``exclusiveMinimum: 0``)."""
    return schema_validator()(config_schema()["$defs"]["train"])


@dataclass(frozen=True)
class TrainSettings:
    epochs: int
    batch_size: int
    learning_rate: float
    max_seq_len: int
    dropout: float
    scheduler: str
    warmup_ratio: float
    weight_decay: float
    max_grad_norm: float | None
    max_steps: int | None
    eval_steps: int
    checkpoint_steps: int
    precision: str
    # speed only (no effect on the numerics on CPU): torch.compile of the encoder, padding of
    # every batch to max_seq_len (static shapes), the loss and its parts logged every N steps (a
    # host sync: negcse.training.loss_log);
    # compile: False, True (torch.compile's default mode), a mode name ("reduce-overhead") or
    # "auto" (reduce-overhead + static padding on CUDA, eager on CPU; params.yaml's default)
    compile: bool | str = False
    static_padding: bool = False
    log_steps: int = 50
    #: STS-B dev sentences cut to this many tokens for model selection (None: uncut)
    dev_max_seq_len: int | None = None
    #: warmup in steps, instead of warmup_ratio of the run's steps (None: the ratio)
    warmup_steps: int | None = None
    #: the step at which the linear schedule would reach 0, however long the run is (None: the
    #: run's last step); released GCSE: 80,000 for a run of about 1,000 steps
    schedule_horizon: int | None = None
    #: "epoch": a seeded permutation per epoch; "fixed": epoch 0's every epoch (GCSE's released
    #: loaders shuffle once); negcse.training.epoch_data
    data_order: str = "epoch"

    def __post_init__(self) -> None:
        error = first_schema_error(_validator(), self.to_dict())
        if error is not None:
            key = ".".join(str(p) for p in error.absolute_path)
            raise TrainSettingsError(f"train.{key}: {schema_message(error)}")

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TrainSettings:
        names = {f.name for f in fields(cls)}
        required = [f.name for f in fields(cls) if f.default is MISSING]
        missing = [k for k in required if k not in values]
        if missing:
            raise TrainSettingsError(f"train: missing key(s) {', '.join(missing)}")
        return cls(**{k: v for k, v in values.items() if k in names})

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        # at their defaults: absent, so existing run specs are unchanged
        for key, default in _OPTIONAL.items():
            if out[key] == default:
                del out[key]
        return out


#: settings added after run specs were first recorded: left out of a spec at these values
_OPTIONAL: dict[str, Any] = {
    "dev_max_seq_len": None,
    "warmup_steps": None,
    "schedule_horizon": None,
    "data_order": "epoch",
}
