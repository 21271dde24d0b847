"""The Method base class: ``loss`` is abstract, params are typed per method, no guides by
default."""

from __future__ import annotations

import pytest

from negcse.methods.base import Method, MethodParams
from negcse.methods.registry import METHODS, build_method, method_class


def test_a_method_without_a_loss_cannot_be_built() -> None:
    class NoLoss(Method[MethodParams]):
        name = "no_loss"

    with pytest.raises(TypeError, match="abstract method.*loss"):
        NoLoss(MethodParams(), "b")  # type: ignore[abstract]


def test_params_are_the_methods_own_dataclass() -> None:
    method_class("simcse")  # loads every method module
    for name, cls in METHODS.items():
        method = build_method(name, {}, "bert-base-uncased")
        assert type(method.params) is cls.Params, name
    assert build_method("sncse", {"alpha": 0.2}, "b").params.alpha == 0.2
    assert build_method("simcse", {}, "b").guides() == ()
