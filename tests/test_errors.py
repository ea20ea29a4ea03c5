"""The error tree: every error glean raises on purpose is a GleanError from one module."""

from __future__ import annotations

import inspect

import glean
from glean.vocabulary import _errors


def test_every_error_of_the_errors_module_is_a_glean_error() -> None:
    """Every exception class defined in glean.vocabulary._errors subclasses GleanError."""
    classes = [
        value
        for value in vars(_errors).values()
        if inspect.isclass(value) and value.__module__ == _errors.__name__
    ]
    assert glean.GleanError in classes
    assert all(issubclass(cls, glean.GleanError) for cls in classes)


def test_every_exported_error_is_defined_in_the_errors_module() -> None:
    """Each name ending in Error in glean.__all__ is a class defined in glean.vocabulary._errors."""
    exported = [name for name in glean.__all__ if name.endswith("Error")]
    assert "InvalidRequestError" in exported
    for name in exported:
        value = getattr(glean, name)
        assert inspect.isclass(value), name
        assert value.__module__ == _errors.__name__, name
        assert getattr(_errors, name) is value
