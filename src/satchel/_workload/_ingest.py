"""Writing workload entries through the public runtime, in atomic batches.

Only the public runtime API is called (``add_*`` and ``set_profile``). What was written
is always reported, also when ingestion stops halfway.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Protocol, TypeVar

import attrs

from ..vocabulary._errors import InvalidRequestError, InvariantError, SatchelError
from ..vocabulary._families import FAMILIES, citation
from ..vocabulary._records import Experience, MemoryEntry, Profile, Resource, TopicMemory
from ._reading import Record

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence

    from ..vocabulary._families import Family
    from ..vocabulary._records import MemoryRef, RecordRef
    from ._citations import CitationKey
    from ._reading import WorkloadEntry

R = TypeVar("R", bound=Record)


class RecordWriter(Protocol):
    """The part of ``satchel.Runtime`` that ingestion writes through."""

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
        stopped: the ingest was asked to stop and did, after a whole batch.
    """

    counts: dict[Family, int]
    ids: dict[str, CitationKey]
    rejected: tuple[RejectedEntry, ...] = ()
    #: True when ``should_stop`` ended the ingest between batches.
    stopped: bool = False

    @property
    def written(self) -> int:
        """How many entries were written, over all families."""
        return sum(self.counts.values())

    def written_by_family(self) -> list[tuple[Family, int]]:
        """The families written to, in the order requests list families, with counts."""
        return [(family, self.counts[family]) for family in FAMILIES if self.counts.get(family)]


class IngestError(SatchelError):
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

    def report(self, *, stopped: bool = False) -> IngestReport:
        return IngestReport(dict(self.counts), dict(self.ids), tuple(self.rejected), stopped)

    def record(
        self, batch: Sequence[WorkloadEntry], keys: Sequence[CitationKey]
    ) -> dict[str, CitationKey]:
        written = {entry.id: key for entry, key in zip(batch, keys, strict=True)}
        self.ids.update(written)
        family = batch[0].family
        self.counts[family] = self.counts.get(family, 0) + len(batch)
        self.done += len(batch)
        return written

    def reject(self, entry: WorkloadEntry, error: Exception) -> None:
        self.rejected.append(RejectedEntry(entry.id, entry.scope, entry.family, str(error)))
        self.done += 1


async def ingest(
    runtime: RecordWriter,
    entries: Iterable[WorkloadEntry],
    *,
    batch_size: int = 512,
    progress: Callable[[int], object] | None = None,
    on_written: Callable[[Mapping[str, CitationKey]], object] | None = None,
    should_stop: Callable[[], bool] | None = None,
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
        runtime: an open ``satchel`` runtime.
        entries: the entries to write, e.g. from :func:`iter_entries`.
        batch_size: the most entries one call writes.
        progress: called with the number of entries handled so far after each batch.
        on_written: called after each batch with the ids it wrote and their keys, so
            a caller can persist the mapping as it grows (an interrupted ingest then
            still maps everything it wrote).
        should_stop: asked before each batch; True ends the ingest there, after the
            last whole batch (and its mapping), with ``report.stopped`` set.

    Returns:
        The per-family counts, the id -> citation-key mapping and the rejected entries.

    Raises:
        InvalidRequestError: (a ValueError) if ``batch_size`` is not a positive integer.
        IngestError: if a write fails for another reason; its ``report`` holds
            everything written before the failing batch.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InvalidRequestError("batch_size must be a positive integer")
    state = _Progress()
    try:
        for batch in _batches(entries, batch_size):
            if should_stop is not None and should_stop():
                return state.report(stopped=True)
            written = await _write_or_reject(runtime, batch, state)
            if on_written is not None and written:
                on_written(written)
            if progress is not None:
                progress(state.done)
    except SatchelError as exc:
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
) -> dict[str, CitationKey]:
    """Write one batch; the ids written, with their keys."""
    try:
        keys = await _write(runtime, batch)
    except InvalidRequestError as exc:
        if len(batch) == 1:
            state.reject(batch[0], exc)
            return {}
        written: dict[str, CitationKey] = {}
        for entry in batch:  # the batch wrote nothing: find which entries were refused
            written.update(await _write_or_reject(runtime, [entry], state))
        return written
    return state.record(batch, keys)


async def _write(runtime: RecordWriter, batch: list[WorkloadEntry]) -> list[CitationKey]:
    """Write one batch of one family and scope; the citation key of each entry."""
    scope, family = batch[0].scope, batch[0].family
    written = await _WRITERS[family](runtime, scope, batch)
    return [tuple(citation(family, scope, *record).values()) for record in written]


Written = list[tuple[str | None, int | None]]


async def _memories(runtime: RecordWriter, scope: str, batch: list[WorkloadEntry]) -> Written:
    refs = await runtime.add_memories(scope, _records(batch, MemoryEntry))
    return [(ref.entry_id, ref.version) for ref in refs]


async def _experiences(runtime: RecordWriter, scope: str, batch: list[WorkloadEntry]) -> Written:
    refs = await runtime.add_experiences(scope, _records(batch, Experience))
    return [(ref.id, ref.revision) for ref in refs]


async def _topics(runtime: RecordWriter, scope: str, batch: list[WorkloadEntry]) -> Written:
    refs = await runtime.add_topic_memories(scope, _records(batch, TopicMemory))
    return [(ref.id, ref.revision) for ref in refs]


async def _resources(runtime: RecordWriter, scope: str, batch: list[WorkloadEntry]) -> Written:
    refs = await runtime.add_resources(scope, _records(batch, Resource))
    return [(ref.id, ref.revision) for ref in refs]


async def _profiles(runtime: RecordWriter, scope: str, batch: list[WorkloadEntry]) -> Written:
    # latest wins: of a run of profiles only the last is written, each one is mapped
    await runtime.set_profile(scope, _records(batch, Profile)[-1])
    return [(None, None)] * len(batch)


_WRITERS: Final[dict[Family, Callable[..., Awaitable[Written]]]] = {
    "memory": _memories,
    "experience": _experiences,
    "topic-memory": _topics,
    "resource": _resources,
    "profile": _profiles,
}


def _records(batch: Sequence[WorkloadEntry], kind: type[R]) -> list[R]:
    """The batch's records, each keyed by its workload id (so ingesting a workload again,
    or resuming an interrupted ingest, writes nothing twice); a profile has no key."""
    records: list[R] = []
    keyed = "key" in attrs.fields_dict(kind)
    for entry in batch:
        if not isinstance(entry.record, kind):
            raise InvariantError(f"a {kind.__name__} batch holds {type(entry.record).__name__}")
        record: R = entry.record
        records.append(attrs.evolve(record, key=entry.id) if keyed else record)  # type: ignore[arg-type]
    return records
