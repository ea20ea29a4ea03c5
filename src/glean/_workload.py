"""Workloads: the JSON Lines folders glean ingests and evaluates (``shared/WORKLOAD.md``).

Reads ``entries.jsonl`` and ``queries.jsonl`` one line at a time into glean records,
writes entries through the public runtime in atomic batches, and maps the citations of
a prepared context back to workload ids. A malformed line is never dropped in silence:
it becomes a :class:`WorkloadError` naming its file, line and field. Nothing here reaches
below the public runtime API.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeAlias, TypeVar

import attrs

from ._errors import GleanError, InvalidRequestError, InvariantError
from ._families import FAMILIES, Family
from ._records import (
    Experience,
    MemoryEntry,
    MemoryRef,
    Profile,
    RecordRef,
    Resource,
    TopicMemory,
)
from ._workload_fields import (
    MalformedLineError,
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
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

Record: TypeAlias = MemoryEntry | Experience | TopicMemory | Resource | Profile
CitationKey: TypeAlias = tuple[str | int, ...]
"""What a delivered citation names: ``(family, scope, ...)`` plus the family's identity."""

BEGIN_MARKER: Final = "BEGIN_GLEAN_CONTEXT_V1"
END_MARKER: Final = "END_GLEAN_CONTEXT_V1"
DEFAULT_CATEGORY: Final = "uncategorized"
_RECORD_TYPES: Final[Mapping[Family, type[Record]]] = {
    "memory": MemoryEntry,
    "experience": Experience,
    "topic-memory": TopicMemory,
    "resource": Resource,
    "profile": Profile,
}

R = TypeVar("R", bound=Record)


@attrs.frozen
class WorkloadError:
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
    """One line of ``entries.jsonl``: the workload's id, its scope and a glean record."""

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
        scope = required_scope(obj, "scope")
        return cls(
            id=required_text(obj, "id"),
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

# ---------------------------------------------------------------------------- reading


def iter_entries(path: str | Path) -> Iterator[WorkloadEntry | WorkloadError]:
    """Stream ``entries.jsonl``: one entry or one error per non-blank line, in file order.

    A repeated ``id`` is an error on the later line, since citations could not be
    mapped back to one of them.

    Raises:
        OSError: if the file cannot be opened.
    """
    yield from _iter_lines(Path(path), WorkloadEntry.from_json)


def iter_queries(path: str | Path) -> Iterator[WorkloadQuery | WorkloadError]:
    """Stream ``queries.jsonl``: one query or one error per non-blank line, in file order.

    Raises:
        OSError: if the file cannot be opened.
    """
    yield from _iter_lines(Path(path), WorkloadQuery.from_json)


def read_entries(path: str | Path) -> tuple[list[WorkloadEntry], list[WorkloadError]]:
    """Read all of ``entries.jsonl``; the errors list the lines that were skipped."""
    return _split(iter_entries(path))


def read_queries(path: str | Path) -> tuple[list[WorkloadQuery], list[WorkloadError]]:
    """Read all of ``queries.jsonl``; the errors list the lines that were skipped."""
    return _split(iter_queries(path))


_V = TypeVar("_V", WorkloadEntry, WorkloadQuery)


def _split(items: Iterable[_V | WorkloadError]) -> tuple[list[_V], list[WorkloadError]]:
    values: list[_V] = []
    errors: list[WorkloadError] = []
    for item in items:
        if isinstance(item, WorkloadError):
            errors.append(item)
        else:
            values.append(item)
    return values, errors


def _iter_lines(
    path: Path, build: Callable[[Mapping[str, Any]], _V]
) -> Iterator[_V | WorkloadError]:
    first_line: dict[str, int] = {}  # id -> line it was first read on
    with path.open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue  # a blank line holds no record, so skipping it loses nothing
            try:
                value = build(_decode(raw, first=number == 1))
            except MalformedLineError as exc:
                yield WorkloadError(path, number, str(exc))
                continue
            seen = first_line.setdefault(value.id, number)
            if seen != number:
                yield WorkloadError(
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


# ---------------------------------------------------------------------------- ingesting


class RecordWriter(Protocol):
    """The part of ``glean.Runtime`` that ingestion writes through."""

    async def add_memories(self, scope_id: str, entries: list[MemoryEntry], /) -> list[MemoryRef]:
        """Write memory entries; one reference per entry, in input order."""

    async def add_experiences(
        self, scope_id: str, experiences: list[Experience], /
    ) -> list[RecordRef]:
        """Write experiences; one reference per experience, in input order."""

    async def add_topic_memories(
        self, scope_id: str, topics: list[TopicMemory], /
    ) -> list[RecordRef]:
        """Write topic memories; one reference per topic, in input order."""

    async def add_resources(self, scope_id: str, resources: list[Resource], /) -> list[RecordRef]:
        """Write resources; one reference per resource, in input order."""

    async def set_profile(self, scope_id: str, profile: Profile, /) -> None:
        """Replace the scope's profile."""


@attrs.frozen
class RejectedEntry:
    """An entry the runtime refused (its message names the field); nothing was written."""

    id: str
    scope: str
    family: Family
    message: str


@attrs.frozen
class IngestReport:
    """What an ingest wrote.

    Attributes:
        counts: entries written per family.
        ids: workload id -> the :data:`CitationKey` its delivered citation will carry.
        rejected: entries the runtime refused, in the order they were tried.
    """

    counts: dict[Family, int]
    ids: dict[str, CitationKey]
    rejected: tuple[RejectedEntry, ...] = ()

    @property
    def written(self) -> int:
        """How many entries were written, over all families."""
        return sum(self.counts.values())


class IngestError(GleanError):
    """A batch failed for a reason other than a bad record; ``report`` is what was written.

    Batches are atomic, so the failing batch wrote nothing; every earlier one is in
    ``report`` and stays in the store.
    """

    def __init__(self, message: str, report: IngestReport) -> None:
        super().__init__(message)
        self.report = report


@attrs.define
class _Progress:
    counts: dict[Family, int] = attrs.Factory(dict)
    ids: dict[str, CitationKey] = attrs.Factory(dict)
    rejected: list[RejectedEntry] = attrs.Factory(list)
    done: int = 0

    def report(self) -> IngestReport:
        return IngestReport(dict(self.counts), dict(self.ids), tuple(self.rejected))

    def record(self, batch: Sequence[WorkloadEntry], keys: Sequence[CitationKey]) -> None:
        for entry, key in zip(batch, keys, strict=True):
            self.ids[entry.id] = key
        family = batch[0].family
        self.counts[family] = self.counts.get(family, 0) + len(batch)
        self.done += len(batch)

    def reject(self, entry: WorkloadEntry, error: Exception) -> None:
        self.rejected.append(RejectedEntry(entry.id, entry.scope, entry.family, str(error)))
        self.done += 1


async def ingest(
    runtime: RecordWriter,
    entries: Iterable[WorkloadEntry],
    *,
    batch_size: int = 512,
    progress: Callable[[int], object] | None = None,
) -> IngestReport:
    """Write entries through the runtime, one ``add_*`` call per batch.

    Entries are grouped by ``(scope, family)`` into batches of at most ``batch_size``,
    keeping their order within each group, so a thread's turns keep their insertion
    order. ``entries`` is consumed lazily: at most a bounded number of them is held
    at a time. A batch the runtime refuses as invalid is retried entry by entry so
    that one bad record costs only itself; refused entries land in ``rejected``.
    Of a run of profiles in one batch only the last is written (latest wins), but
    every one of them is counted and mapped.

    Args:
        runtime: an open ``glean`` runtime.
        entries: the entries to write, e.g. from :func:`iter_entries`.
        batch_size: the most entries one call writes.
        progress: called with the number of entries handled so far after each batch.

    Returns:
        The per-family counts, the id -> citation-key mapping and the rejected entries.

    Raises:
        ValueError: if ``batch_size`` is not a positive integer.
        IngestError: if a write fails for another reason; its ``report`` holds
            everything written before the failing batch.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError("batch_size must be a positive integer")
    state = _Progress()
    try:
        for batch in _batches(entries, batch_size):
            await _write_or_reject(runtime, batch, state)
            if progress is not None:
                progress(state.done)
    except GleanError as exc:
        raise IngestError(f"ingest stopped: {exc}", state.report()) from exc
    except Exception as exc:
        message = f"ingest stopped: {type(exc).__name__}: {exc}"
        raise IngestError(message, state.report()) from exc
    return state.report()


def _batches(entries: Iterable[WorkloadEntry], size: int) -> Iterator[list[WorkloadEntry]]:
    # Interleaved scopes would otherwise hold everything in memory; past this many
    # waiting entries every group is written out, oldest group first.
    max_waiting = 8 * size
    groups: dict[tuple[str, Family], list[WorkloadEntry]] = {}
    waiting = 0
    for entry in entries:
        key = (entry.scope, entry.family)
        group = groups.setdefault(key, [])
        group.append(entry)
        waiting += 1
        if len(group) >= size:
            waiting -= len(group)
            yield groups.pop(key)
        elif waiting >= max_waiting:
            yield from groups.values()
            groups.clear()
            waiting = 0
    yield from groups.values()


async def _write_or_reject(
    runtime: RecordWriter, batch: list[WorkloadEntry], state: _Progress
) -> None:
    try:
        keys = await _write(runtime, batch)
    except InvalidRequestError as exc:
        if len(batch) == 1:
            state.reject(batch[0], exc)
            return
        for entry in batch:  # the batch wrote nothing: find which entries were refused
            await _write_or_reject(runtime, [entry], state)
        return
    state.record(batch, keys)


async def _write(runtime: RecordWriter, batch: list[WorkloadEntry]) -> list[CitationKey]:
    scope, family = batch[0].scope, batch[0].family
    if family == "memory":
        refs = await runtime.add_memories(scope, _records(batch, MemoryEntry))
        return [(family, ref.scope_id, ref.entry_id, ref.version) for ref in refs]
    if family == "experience":
        records = await runtime.add_experiences(scope, _records(batch, Experience))
        return [(family, ref.scope_id, ref.id, ref.revision) for ref in records]
    if family == "topic-memory":
        records = await runtime.add_topic_memories(scope, _records(batch, TopicMemory))
        return [(family, ref.scope_id, ref.id, ref.revision) for ref in records]
    if family == "resource":
        resources = _records(batch, Resource)
        await runtime.add_resources(scope, resources)
        return [(family, scope, resource.uri) for resource in resources]
    await runtime.set_profile(scope, _records(batch, Profile)[-1])
    return [(family, scope)] * len(batch)


def _records(batch: Sequence[WorkloadEntry], kind: type[R]) -> list[R]:
    records: list[R] = []
    for entry in batch:
        if not isinstance(entry.record, kind):
            raise InvariantError(f"a {kind.__name__} batch holds {type(entry.record).__name__}")
        records.append(entry.record)
    return records


# ---------------------------------------------------------------------------- citations


def citation_key(citation: Mapping[str, Any]) -> CitationKey:
    """The key of a rendered citation, equal to the one :func:`ingest` mapped its id to.

    Raises:
        ValueError: if the citation lacks its family's identity fields.
    """
    family = citation.get("family")
    names = _CITATION_FIELDS.get(family) if isinstance(family, str) else None
    if names is None:
        raise ValueError(f"unknown citation family {family!r}")
    try:
        return (family, *(citation[name] for name in names))
    except KeyError as exc:
        raise ValueError(f"{family} citation lacks field {exc.args[0]!r}") from None


_CITATION_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "memory": ("scope", "entry_id", "version"),
    "experience": ("scope", "id", "revision"),
    "topic-memory": ("scope", "id", "revision"),
    "resource": ("scope", "uri"),
    "profile": ("scope",),
}


def delivered_citations(content: str | None) -> list[dict[str, Any]]:
    """The citations a prepared context delivers, in rendered order.

    Reads every line between the ``BEGIN_GLEAN_CONTEXT_V1`` and
    ``END_GLEAN_CONTEXT_V1`` marker lines that starts with ``{``: the envelope
    ``{"trust": ..., "items": [...]}`` of the plain form, or one item object per line
    of the Markdown (assembly) form. The preamble and headings are skipped.

    Raises:
        ValueError: if such a line is not JSON or an item has no citation.
    """
    citations: list[dict[str, Any]] = []
    for obj in _context_objects(content or ""):
        items = obj.get("items", [obj])
        for item in items:
            citation = item.get("citation") if isinstance(item, dict) else None
            if not isinstance(citation, dict):
                raise ValueError(f"context item without a citation: {item!r:.200}")
            citations.append(citation)
    return citations


def _context_objects(content: str) -> Iterator[dict[str, Any]]:
    inside = False
    for line in content.splitlines():
        marker = line.strip()
        if marker in (BEGIN_MARKER, END_MARKER):
            inside = marker == BEGIN_MARKER
        elif inside and line.startswith("{"):
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"context line is not JSON: {exc.msg}") from None
            if not isinstance(obj, dict):
                raise ValueError("context line is not a JSON object")
            yield obj


# ---------------------------------------------------------------------------- id maps


def append_id_map(path: str | Path, ids: Mapping[str, CitationKey]) -> None:
    """Append ``{"id": ..., "key": [...]}`` lines, one per workload id, to ``path``."""
    with Path(path).open("a", encoding="utf-8") as out:
        for workload_id, key in ids.items():
            out.write(json.dumps({"id": workload_id, "key": list(key)}, ensure_ascii=False))
            out.write("\n")


def read_id_map(path: str | Path) -> dict[CitationKey, list[str]]:
    """Read an id map written by :func:`append_id_map`: citation key -> workload ids.

    Several ids share one key when they name one thing (a scope's profiles); a later
    line for the same id replaces the earlier one, as a re-ingest would.

    Raises:
        ValueError: naming the line that is not an id-map record.
    """
    latest: dict[str, CitationKey] = {}
    with Path(path).open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                workload_id, key = _id_map_line(line, number)
                latest.pop(workload_id, None)  # keep file order of the latest line
                latest[workload_id] = key
    by_key: dict[CitationKey, list[str]] = {}
    for workload_id, key in latest.items():
        by_key.setdefault(key, []).append(workload_id)
    return by_key


def _id_map_line(line: str, number: int) -> tuple[str, CitationKey]:
    try:
        obj = json.loads(line)
        workload_id, key = obj["id"], obj["key"]
    except (json.JSONDecodeError, KeyError, TypeError):
        raise ValueError(f"id map line {number} is not an id-map record") from None
    if not isinstance(workload_id, str) or not isinstance(key, list):
        raise ValueError(f"id map line {number} is not an id-map record")
    return workload_id, tuple(key)
