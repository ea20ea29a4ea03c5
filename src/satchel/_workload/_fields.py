"""Typed reads of one decoded workload line, each failing with a message naming the field.

Pure: no I/O. The workload reader turns a :class:`MalformedLineError` into a report of
the file and line; the message alone must say what is wrong with which field.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..vocabulary._errors import InvalidRequestError, MalformedLineError
from ..vocabulary._requests import validate_scope

if TYPE_CHECKING:
    from collections.abc import Mapping


def required_str(obj: Mapping[str, Any], name: str) -> str:
    """A field that must be present and a string (possibly empty)."""
    if name not in obj:
        raise MalformedLineError(f"missing field {name!r}")
    value = obj[name]
    if not isinstance(value, str):
        raise MalformedLineError(f"field {name!r} must be a string, not {_json_type(value)}")
    return value


def required_text(obj: Mapping[str, Any], name: str) -> str:
    """A field that must be present and a string with non-whitespace content."""
    value = required_str(obj, name)
    if not value.strip():
        raise MalformedLineError(f"field {name!r} must not be empty")
    return value


def optional_str(obj: Mapping[str, Any], name: str) -> str | None:
    """A field that may be absent or null, else a string."""
    if obj.get(name) is None:
        return None
    return required_str(obj, name)


def optional_text(obj: Mapping[str, Any], name: str) -> str | None:
    """A field that may be absent or null, else a string with non-whitespace content."""
    if obj.get(name) is None:
        return None
    return required_text(obj, name)


def optional_content(obj: Mapping[str, Any], name: str) -> str | None:
    """Optional text where blank means absent (a converter's "no abstract")."""
    value = optional_str(obj, name)
    return value if value is not None and value.strip() else None


def required_scope(obj: Mapping[str, Any], name: str) -> str:
    """A scope id, held to the rule every write applies to it."""
    return _scope(required_text(obj, name), f"field {name!r}")


def required_scopes(obj: Mapping[str, Any], name: str) -> tuple[str, ...]:
    """A non-empty list of scope ids."""
    scopes = required_texts(obj, name)
    if not scopes:
        raise MalformedLineError(f"field {name!r} must name at least one scope")
    return tuple(_scope(scope, f"field {name!r}[{i}]") for i, scope in enumerate(scopes))


def _scope(value: str, field: str) -> str:
    try:
        return validate_scope(value, field)
    except InvalidRequestError as exc:
        raise MalformedLineError(str(exc)) from None


def required_texts(obj: Mapping[str, Any], name: str) -> tuple[str, ...]:
    """A list of strings with non-whitespace content (possibly an empty list)."""
    if name not in obj:
        raise MalformedLineError(f"missing field {name!r}")
    value = obj[name]
    if not isinstance(value, list):
        raise MalformedLineError(f"field {name!r} must be a list, not {_json_type(value)}")
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise MalformedLineError(f"field {name!r}[{index}] must be a non-empty string")
    return tuple(value)


def optional_tags(obj: Mapping[str, Any], name: str) -> tuple[str, ...]:
    """A list of tags; absent or null is no tags, and one string is one tag."""
    value = obj.get(name)
    if value is None:
        return ()
    if isinstance(value, str):
        return (required_text(obj, name),)
    return required_texts(obj, name)


def optional_datetime(obj: Mapping[str, Any], name: str) -> datetime | None:
    """An ISO-8601 date-time string, or absent/null; without a timezone it is UTC."""
    text = optional_str(obj, name)
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)  # accepts a trailing "Z" since Python 3.11
    except ValueError:
        raise MalformedLineError(
            f"field {name!r} is not an ISO-8601 date-time: {text!r:.60}"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def thread_of(obj: Mapping[str, Any], scope: str) -> str | None:
    """The entry's thread: ``thread`` if given, else ``"{scope}/session-{n}"`` from ``session``."""
    thread = optional_text(obj, "thread")
    if thread is not None:
        return thread
    session = obj.get("session")
    if session is None:
        return None
    if isinstance(session, bool) or not isinstance(session, int):
        raise MalformedLineError(f"field 'session' must be an integer, not {_json_type(session)}")
    return f"{scope}/session-{session}"


def _json_type(value: object) -> str:
    """The JSON name of a decoded value's type, as the line's author wrote it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"
