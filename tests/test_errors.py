"""The error tree: every error satchel raises on purpose is a SatchelError from one module."""

from __future__ import annotations

import inspect

import satchel
from satchel.vocabulary import _errors


def test_every_error_of_the_errors_module_is_a_satchel_error() -> None:
    """Every exception class defined in satchel.vocabulary._errors subclasses SatchelError."""
    classes = [
        value
        for value in vars(_errors).values()
        if inspect.isclass(value) and value.__module__ == _errors.__name__
    ]
    assert satchel.SatchelError in classes
    assert all(issubclass(cls, satchel.SatchelError) for cls in classes)


def test_every_exported_error_is_defined_in_the_errors_module() -> None:
    """Each name ending in Error in satchel.__all__ is defined in satchel.vocabulary._errors."""
    exported = [name for name in satchel.__all__ if name.endswith("Error")]
    assert "InvalidRequestError" in exported
    for name in exported:
        value = getattr(satchel, name)
        assert inspect.isclass(value), name
        assert value.__module__ == _errors.__name__, name
        assert getattr(_errors, name) is value
