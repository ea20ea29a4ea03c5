"""Reading a workload folder's JSON Lines files into entries, queries and line errors.

Streams one line at a time. A malformed line is never dropped in silence: it becomes a
:class:`MalformedLine` naming its file, line and field, and reading goes on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeAlias, TypeVar

import attrs

from ..vocabulary._errors import InvariantError, MalformedLineError
from ..vocabulary._families import FAMILIES, Family
from ..vocabulary._records import Experience, MemoryEntry, Profile, Resource, TopicMemory
from ._fields import (
    optional_content,
    optional_datetime,
    optional_tags,
    optional_text,
    required_scope,
    required_scopes,
    required_str,
    required_text,
    required_texts,
    thread_of,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

Record: TypeAlias = MemoryEntry | Experience | TopicMemory | Resource | Profile
DEFAULT_CATEGORY: Final = "uncategorized"
_RECORD_TYPES: Final[Mapping[Family, type[Record]]] = {
    "memory": MemoryEntry,
    "experience": Experience,
    "topic-memory": TopicMemory,
    "resource": Resource,
    "profile": Profile,
}


@attrs.frozen
class MalformedLine:
    """One malformed line: reported with its place, then skipped."""

    path: Path = attrs.field(converter=Path)
    line_number: int
    message: str

    def __str__(self) -> str:
        return f"{self.path.name}:{self.line_number}: {self.message}"


def _record_matches_family(instance: WorkloadEntry, attribute: object, record: Record) -> None:
    if not isinstance(record, _RECORD_TYPES[instance.family]):
        raise InvariantError(f"a {instance.family} entry cannot hold {type(record).__name__}")


@attrs.frozen
class WorkloadEntry:
    """One line of ``entries.jsonl``: the workload's id, its scope and a satchel record."""

    id: str
    scope: str
    family: Family
    record: Record = attrs.field(validator=_record_matches_family)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> WorkloadEntry:
        """Build an entry from one decoded line.

        Raises:
            MalformedLineError: naming the missing or ill-typed field.
        """
        family = obj.get("family", "memory")
        if family not in FAMILIES:
            raise MalformedLineError(
                f"unknown family {family!r} (expected one of {', '.join(FAMILIES)})"
            )
        entry_id = required_text(obj, "id")
        scope = required_scope(obj, "scope")
        return cls(
            id=entry_id,
            scope=scope,
            family=family,
            record=_RECORD_READERS[family](obj, scope),
        )


@attrs.frozen
class WorkloadQuery:
    """One line of ``queries.jsonl``: ``scopes[0]`` is the scope, the rest references."""

    id: str
    scopes: tuple[str, ...]
    query: str
    expected: tuple[str, ...]
    category: str

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> WorkloadQuery:
        """Build a query from one decoded line.

        Raises:
            MalformedLineError: naming the missing or ill-typed field.
        """
        return cls(
            id=required_text(obj, "id"),
            scopes=required_scopes(obj, "scopes"),
            query=required_text(obj, "query"),
            expected=required_texts(obj, "expected") if "expected" in obj else (),
            category=optional_text(obj, "category") or DEFAULT_CATEGORY,
        )


def _memory(obj: Mapping[str, Any], scope: str) -> MemoryEntry:
    return MemoryEntry(
        text=required_text(obj, "text"),
        kind=optional_text(obj, "kind") or "fact",
        tags=optional_tags(obj, "tags"),
        created_at=optional_datetime(obj, "created_at"),
        thread=thread_of(obj, scope),
    )


def _experience(obj: Mapping[str, Any], scope: str) -> Experience:
    return Experience(
        situation=required_text(obj, "situation"),
        action=required_text(obj, "action"),
        outcome=required_text(obj, "outcome"),
        lesson=required_text(obj, "lesson"),
    )


def _topic_memory(obj: Mapping[str, Any], scope: str) -> TopicMemory:
    return TopicMemory(title=required_text(obj, "title"), text=required_text(obj, "text"))


def _resource(obj: Mapping[str, Any], scope: str) -> Resource:
    return Resource(
        uri=required_text(obj, "uri"),
        body=required_str(obj, "body"),
        abstract=optional_content(obj, "abstract"),
        overview=optional_content(obj, "overview"),
    )


def _profile(obj: Mapping[str, Any], scope: str) -> Profile:
    return Profile(text=required_text(obj, "text"))


_RECORD_READERS: Final[Mapping[str, Callable[[Mapping[str, Any], str], Record]]] = {
    "memory": _memory,
    "experience": _experience,
    "topic-memory": _topic_memory,
    "resource": _resource,
    "profile": _profile,
}


def iter_entries(path: str | Path) -> Iterator[WorkloadEntry | MalformedLine]:
    """Stream ``entries.jsonl``: one entry or one error per non-blank line, in file order.

    A repeated ``id`` is an error on the later line, since citations could not be
    mapped back to one of them.

    Raises:
        OSError: if the file cannot be opened.
    """
    yield from _iter_lines(Path(path), WorkloadEntry.from_json)


def iter_queries(path: str | Path) -> Iterator[WorkloadQuery | MalformedLine]:
    """Stream ``queries.jsonl``: one query or one error per non-blank line, in file order.

    Raises:
        OSError: if the file cannot be opened.
    """
    yield from _iter_lines(Path(path), WorkloadQuery.from_json)


def read_entries(path: str | Path) -> tuple[list[WorkloadEntry], list[MalformedLine]]:
    """Read all of ``entries.jsonl``; the errors list the lines that were skipped."""
    return _split(iter_entries(path))


def read_queries(path: str | Path) -> tuple[list[WorkloadQuery], list[MalformedLine]]:
    """Read all of ``queries.jsonl``; the errors list the lines that were skipped."""
    return _split(iter_queries(path))


_V = TypeVar("_V", WorkloadEntry, WorkloadQuery)


def _split(items: Iterable[_V | MalformedLine]) -> tuple[list[_V], list[MalformedLine]]:
    values: list[_V] = []
    errors: list[MalformedLine] = []
    for item in items:
        if isinstance(item, MalformedLine):
            errors.append(item)
        else:
            values.append(item)
    return values, errors


def _iter_lines(
    path: Path, build: Callable[[Mapping[str, Any]], _V]
) -> Iterator[_V | MalformedLine]:
    first_line: dict[str, int] = {}  # id -> line it was first read on
    with path.open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue  # a blank line holds no record, so skipping it loses nothing
            try:
                value = build(_decode(raw, first=number == 1))
            except MalformedLineError as exc:
                yield MalformedLine(path, number, str(exc))
                continue
            seen = first_line.setdefault(value.id, number)
            if seen != number:
                yield MalformedLine(
                    path, number, f"duplicate id {value.id!r} (first on line {seen})"
                )
                continue
            yield value


def _decode(raw: bytes, *, first: bool) -> Mapping[str, Any]:
    try:
        text = raw.decode("utf-8-sig" if first else "utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedLineError(f"not valid UTF-8 at byte {exc.start + 1} of the line") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedLineError(f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise MalformedLineError(f"expected a JSON object, not {type(obj).__name__}")
    return obj
