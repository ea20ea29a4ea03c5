"""Validation of records before they are written, and of the record an erase names,
with errors naming the field; what a family's records are embedded on."""

from __future__ import annotations

from datetime import UTC, datetime, timezone
from typing import TYPE_CHECKING, Final, TypeVar, cast

import anyio.lowlevel
import attrs

from ..vocabulary._citations import Citation
from ..vocabulary._errors import InvalidRequestError
from ..vocabulary._families import FAMILIES, FAMILY_RULES, rules
from ..vocabulary._records import (
    Experience,
    MemoryEntry,
    MemoryRef,
    Profile,
    Resource,
    TopicMemory,
)
from ..vocabulary._refs import full_id
from ..vocabulary._requests import MAX_KEY_CHARS, MAX_VERSION, require_unicode, validate_scope

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from ..vocabulary._families import Family
    from ..vocabulary._records import Record

R = TypeVar("R")


#: Records checked between two yields to the event loop: a large batch is checked a
#: slice at a time (256 notes take about 0.3 ms), so no batch holds the loop.
SLICE: Final = 256


async def batch(value: object, kind: type[R], field: str, check: Callable[[R, str], R]) -> list[R]:
    """A batch (a list or tuple of ``kind``; a lone record or a string is refused), each
    record through ``check(record, "field[i]")`` and its idempotency key valid and unique
    in the batch (one write cannot both keep and change an entry). A large batch is
    checked a slice at a time, yielding to the event loop between slices."""
    if not isinstance(value, list | tuple):
        raise InvalidRequestError(f"{field} must be a list of satchel.{kind.__name__}")
    keys: set[str] = set()
    checked: list[R] = []
    for index, record in enumerate(value):
        if index and not index % SLICE:
            await anyio.lowlevel.checkpoint()
        where = f"{field}[{index}]"
        if not isinstance(record, kind):
            raise InvalidRequestError(f"{where} must be a satchel.{kind.__name__}")
        record = check(record, where)
        _unique_key(getattr(record, "key", None), where, keys)
        checked.append(record)
    return checked


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
        raise InvalidRequestError(f"{field} must be a satchel.MemoryEntry")
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


async def memory_entries(entries: object) -> list[MemoryEntry]:
    return await batch(entries, MemoryEntry, "entries", memory_entry)


def erase_target(target: object) -> tuple[Family, str, str | None]:
    """The record an erase names: ``(family, scope, record id)`` of a
    :class:`~satchel.Citation` or a :class:`~satchel.MemoryRef` (the record id is None
    for a profile). A version the target names does not narrow it: every version of
    the record is erased."""
    if isinstance(target, MemoryRef):
        ref = memory_ref(target)
        return "memory", ref.scope_id, ref.entry_id
    if not isinstance(target, Citation):
        raise InvalidRequestError("target must be a satchel.Citation or a satchel.MemoryRef")
    if target.family not in FAMILY_RULES:
        raise InvalidRequestError(f"target.family must be one of {', '.join(FAMILIES)}")
    family = target.family
    scope_id = validate_scope(target.scope, "target.scope")
    if FAMILY_RULES[family].id_field is None:
        if target.id is not None:
            raise InvalidRequestError(f"target.id must be None for a {family} citation")
        return family, scope_id, None
    text(target.id, "target.id")
    version = target.version
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise InvalidRequestError("target.version must be an integer or None")
    record_id = cast("str", target.id)
    if FAMILY_RULES[family].id_field != "uri":  # a minted id, maybe as a pack prints it
        record_id = full_id(record_id)
    return family, scope_id, record_id


def memory_ref(ref: object) -> MemoryRef:
    """``ref`` checked, its entry id in full when it was spelled as a pack prints it."""
    if not isinstance(ref, MemoryRef):
        raise InvalidRequestError("ref must be a satchel.MemoryRef")
    text(ref.scope_id, "ref.scope_id")
    text(ref.entry_id, "ref.entry_id")
    version = ref.version
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= MAX_VERSION:
        raise InvalidRequestError("ref.version must be an integer in 1..2**63-1")
    entry_id = full_id(ref.entry_id)
    return ref if entry_id == ref.entry_id else attrs.evolve(ref, entry_id=entry_id)


def _unique_key(key: object, where: str, seen: set[str]) -> None:
    """An idempotency key is None or a non-empty string, once per batch."""
    if key is None:
        return
    text(key, f"{where}.key")
    assert isinstance(key, str)
    if len(key) > MAX_KEY_CHARS:
        raise InvalidRequestError(f"{where}.key must be at most {MAX_KEY_CHARS} characters")
    if key in seen:
        raise InvalidRequestError(f"{where}.key {key!r} appears twice")
    seen.add(key)


async def experiences(value: object) -> list[Experience]:
    return await batch(value, Experience, "experiences", _experience)


def _experience(item: Experience, where: str) -> Experience:
    for name in ("situation", "action", "outcome", "lesson"):
        text(getattr(item, name), f"{where}.{name}")
    return item


async def topics(value: object) -> list[TopicMemory]:
    return await batch(value, TopicMemory, "topics", _topic)


def _topic(item: TopicMemory, where: str) -> TopicMemory:
    text(item.title, f"{where}.title")
    text(item.text, f"{where}.text")
    return item


async def resources(value: object) -> list[Resource]:
    uris: set[str] = set()

    def check(item: Resource, where: str) -> Resource:
        text(item.uri, f"{where}.uri")
        if not isinstance(item.body, str):
            raise InvalidRequestError(f"{where}.body must be a string")
        require_unicode(item.body, f"{where}.body")
        text(item.abstract, f"{where}.abstract", optional=True)
        text(item.overview, f"{where}.overview", optional=True)
        if item.uri in uris:
            raise InvalidRequestError(f"{where}.uri {item.uri!r} appears twice")
        uris.add(item.uri)
        return item

    return await batch(value, Resource, "resources", check)


def profile(value: object) -> Profile:
    if not isinstance(value, Profile):
        raise InvalidRequestError("profile must be a satchel.Profile")
    text(value.text, "profile.text")
    return value


async def profiles(value: object) -> list[Profile]:
    """The one profile a write of the profile takes (its errors name ``profile``)."""
    return [profile(value)]


#: Each family's validation of what its runtime write method is given: the records,
#: checked (a family's fields named after the method's argument: ``entries[0].text``).
RECORDS: Final[dict[Family, Callable[[object], Awaitable[Sequence[Record]]]]] = {
    "memory": memory_entries,
    "experience": experiences,
    "topic-memory": topics,
    "resource": resources,
    "profile": profiles,
}


async def embedding_texts(family: Family, records: Sequence[Record]) -> list[str]:
    """What each record is embedded on (``FamilyRules.embedded_text``): a memory's or
    topic memory's text, a resource's abstract and overview (else its URI). A slice at a
    time, yielding to the event loop between slices: 36,187 notes took 96 ms at once."""
    family_rules = rules(family)
    texts: list[str] = []
    for start in range(0, len(records), SLICE):
        if start:
            await anyio.lowlevel.checkpoint()
        texts += [
            family_rules.embedded_text(family_rules.columns_of(record))
            for record in records[start : start + SLICE]
        ]
    return texts
