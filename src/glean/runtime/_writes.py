"""Validation of records before they are written, with errors naming the field."""

from __future__ import annotations

from datetime import UTC, datetime, timezone
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from ..vocabulary._errors import InvalidRequestError
from ..vocabulary._records import (
    Experience,
    MemoryEntry,
    MemoryRef,
    Profile,
    Resource,
    TopicMemory,
    resource_text,
)
from ..vocabulary._requests import require_unicode

if TYPE_CHECKING:
    from collections.abc import Sequence

R = TypeVar("R")


def batch(value: object, kind: type[R], field: str) -> list[R]:
    """A batch is a list or tuple of ``kind``; a lone record or a string is refused."""
    if not isinstance(value, list | tuple):
        raise InvalidRequestError(f"{field} must be a list of glean.{kind.__name__}")
    for index, item in enumerate(value):
        if not isinstance(item, kind):
            raise InvalidRequestError(f"{field}[{index}] must be a glean.{kind.__name__}")
    return list(value)


#: The largest integer SQLite stores (a version past it could never be read back).
MAX_VERSION = 2**63 - 1


def text(value: object, field: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not value.strip():
        raise InvalidRequestError(f"{field} must be a non-empty string")
    require_unicode(value, field)


def moment(value: object, field: str) -> datetime:
    """A timezone-aware datetime that UTC and a timestamp can both express, as a plain
    ``datetime`` with a plain offset (a subclass could store what it likes)."""
    if not isinstance(value, datetime) or value.utcoffset() is None:
        raise InvalidRequestError(f"{field} must be a timezone-aware datetime")
    try:
        value.astimezone(UTC).timestamp()
        offset = value.utcoffset()
        assert offset is not None
        if type(value) is datetime and type(value.tzinfo) in (timezone, type(UTC)):
            return value
        return datetime(
            value.year, value.month, value.day, value.hour, value.minute, value.second,
            value.microsecond, tzinfo=timezone(offset),
        )  # fmt: skip
    except (OverflowError, ValueError, OSError):
        raise InvalidRequestError(f"{field} is out of range once in UTC") from None


def memory_entry(entry: object, field: str) -> MemoryEntry:
    if not isinstance(entry, MemoryEntry):
        raise InvalidRequestError(f"{field} must be a glean.MemoryEntry")
    text(entry.text, f"{field}.text")
    text(entry.kind, f"{field}.kind")
    if entry.key is not None:
        text(entry.key, f"{field}.key")
    if not isinstance(entry.tags, tuple):  # the converter keeps a non-iterable as given
        raise InvalidRequestError(f"{field}.tags must be a list of strings")
    for index, tag in enumerate(entry.tags):
        text(tag, f"{field}.tags[{index}]")
    text(entry.thread, f"{field}.thread", optional=True)
    if entry.created_at is not None:
        plain = moment(entry.created_at, f"{field}.created_at")
        if plain is not entry.created_at:
            entry = attrs.evolve(entry, created_at=plain)
    return entry


def memory_entries(entries: object) -> list[MemoryEntry]:
    checked = batch(entries, MemoryEntry, "entries")
    keys(checked, "entries")
    return [memory_entry(entry, f"entries[{index}]") for index, entry in enumerate(checked)]


def memory_ref(ref: object) -> MemoryRef:
    if not isinstance(ref, MemoryRef):
        raise InvalidRequestError("ref must be a glean.MemoryRef")
    text(ref.scope_id, "ref.scope_id")
    text(ref.entry_id, "ref.entry_id")
    version = ref.version
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= MAX_VERSION:
        raise InvalidRequestError("ref.version must be an integer in 1..2**63-1")
    return ref


#: The longest idempotency key: a caller's id, not a document.
MAX_KEY_CHARS = 512


def keys(records: Sequence[Any], field: str) -> None:
    """Each idempotency key is None or a non-empty string, and unique in the batch (one
    write cannot both keep and change an entry)."""
    seen: set[str] = set()
    for index, record in enumerate(records):
        key = record.key
        if key is None:
            continue
        text(key, f"{field}[{index}].key")
        if len(key) > MAX_KEY_CHARS:
            raise InvalidRequestError(
                f"{field}[{index}].key must be at most {MAX_KEY_CHARS} characters"
            )
        if key in seen:
            raise InvalidRequestError(f"{field}[{index}].key {key!r} appears twice")
        seen.add(key)


def experiences(value: object) -> list[Experience]:
    checked = batch(value, Experience, "experiences")
    for index, item in enumerate(checked):
        for name in ("situation", "action", "outcome", "lesson"):
            text(getattr(item, name), f"experiences[{index}].{name}")
    keys(checked, "experiences")
    return checked


def topics(value: object) -> list[TopicMemory]:
    checked = batch(value, TopicMemory, "topics")
    for index, item in enumerate(checked):
        text(item.title, f"topics[{index}].title")
        text(item.text, f"topics[{index}].text")
    keys(checked, "topics")
    return checked


def resources(value: object) -> list[Resource]:
    checked = batch(value, Resource, "resources")
    seen: set[str] = set()
    for index, item in enumerate(checked):
        text(item.uri, f"resources[{index}].uri")
        if not isinstance(item.body, str):
            raise InvalidRequestError(f"resources[{index}].body must be a string")
        require_unicode(item.body, f"resources[{index}].body")
        text(item.abstract, f"resources[{index}].abstract", optional=True)
        text(item.overview, f"resources[{index}].overview", optional=True)
        if item.uri in seen:
            raise InvalidRequestError(f"resources[{index}].uri {item.uri!r} appears twice")
        seen.add(item.uri)
    keys(checked, "resources")
    return checked


def profile(value: object) -> Profile:
    if not isinstance(value, Profile):
        raise InvalidRequestError("profile must be a glean.Profile")
    text(value.text, "profile.text")
    return value


def embedding_texts(resources: Sequence[Resource]) -> list[str]:
    """A resource is embedded on what is searchable about it: abstract and overview."""
    return [resource_text(r.abstract, r.overview, r.uri) for r in resources]
