"""negcse.runtime.lazy: a module stands in for another and imports it on first attribute access."""

from __future__ import annotations

import importlib
import sys

import pytest

from negcse.runtime.lazy import LazyModule


@pytest.mark.parametrize("name", ["wave", "xml.dom.minidom"])
def test_imports_on_first_attribute_access(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, name, raising=False)
    lazy = LazyModule(name)
    assert name not in sys.modules and repr(lazy) == f"<lazy module {name!r}>"
    first = lazy.__name__  # the real module's attribute: this access imports it
    assert first == name and name in sys.modules
    assert lazy.__dict__ is importlib.import_module(name).__dict__


def test_a_missing_attribute_is_the_modules_error() -> None:
    with pytest.raises(AttributeError, match="module 'wave' has no attribute 'nope'"):
        LazyModule("wave").nope  # noqa: B018
