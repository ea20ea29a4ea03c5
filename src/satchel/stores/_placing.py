"""Where a written record goes: by its caller's key, then by its name, as its family's
naming rule says (``FamilyRules.named_by``), decided once for every store.

Placing a record asks the store questions (which version holds this key, which
searchable version has this name, how many versions a record ever had) and tells it to
retire the versions the write replaces. :func:`placing` is that procedure as a generator
that yields each question and is sent the answer, so the one procedure serves a store
that answers at once (in memory, or in a write thread: :func:`place`) and one that
answers on the event loop (:func:`place_async`). The rules it applies, per naming rule:

- ``key``: the caller's key alone places it (``_rules.decide``); without one, or a key
  nothing holds, it is a new record (a memory entry, an experience).
- ``title``: a record its key did not place revises the searchable record with its
  title, else it is new (``_rules.by_title``; a topic memory).
- ``uri``: its name is its id: the searchable record there is replaced by its next
  revision, else the id's next revision after its latest (``_rules.by_uri``); a key that
  found the record at this very name placed it (a resource).

It is pure: it never does I/O or awaits of its own, and knows nothing of a store's tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeAlias, TypeVar

import attrs

from ..vocabulary._families import rules
from ._rules import Live, WriteDecision, by_title, by_uri, content_hash_of, decide

if TYPE_CHECKING:
    from collections.abc import Generator

    from ..vocabulary._families import Family, NameRule
    from ..vocabulary._records import Columns

#: The store's own handle on a stored version (as in ``_rules``).
H = TypeVar("H")


@attrs.frozen
class KeyHolder:
    """Which version holds the caller's ``key``: the latest version of the family in
    the scope written with it, searchable, or its forgotten record's last version with
    every version the key wrote (``Live.earlier``, ``Live.live`` False); None when none
    holds it, or a newer version of its record replaced it (the key holds nothing)."""

    key: str

    def ask(self, store: Any) -> Any:
        return store.key_holder(self.key)


@attrs.frozen
class NameHolder:
    """Which searchable version of the family in the scope has ``name`` in its column
    ``field`` (``title``, or ``uri``: the record id); None when none has."""

    field: str
    name: str

    def ask(self, store: Any) -> Any:
        return store.name_holder(self.field, self.name)


@attrs.frozen
class LatestVersion:
    """The highest version record ``record_id`` of the family in the scope ever had (0
    when it has none, erased records included)."""

    record_id: str

    def ask(self, store: Any) -> Any:
        return store.latest_version(self.record_id)


@attrs.frozen
class Retire(Generic[H]):
    """Take the version ``handle`` out of search (it stays readable by its reference);
    answered with None."""

    handle: H

    def ask(self, store: Any) -> Any:
        return store.retire(self.handle)


#: What placing a record asks its store.
Question: TypeAlias = "KeyHolder | NameHolder | LatestVersion | Retire[Any]"


class Placer(Protocol[H]):
    """A store's answers to :func:`placing`'s questions, given at once, for one family
    in one scope, inside the write that places the records (so it sees the write's own
    earlier records)."""

    def key_holder(self, key: str) -> Live[H] | None: ...

    def name_holder(self, field: str, name: str) -> Live[H] | None: ...

    def latest_version(self, record_id: str) -> int: ...

    def retire(self, handle: H) -> None: ...


class AsyncPlacer(Protocol[H]):
    """A :class:`Placer` whose answers are awaited."""

    async def key_holder(self, key: str) -> Live[H] | None: ...

    async def name_holder(self, field: str, name: str) -> Live[H] | None: ...

    async def latest_version(self, record_id: str) -> int: ...

    async def retire(self, handle: H) -> None: ...


def place(family: Family, columns: Columns, store: Placer[H]) -> WriteDecision[H]:
    """Where a record of ``family`` with ``columns`` goes, asking ``store``; the versions
    it replaces are retired by then."""
    steps = placing(family, columns)
    answer: Any = None
    try:
        while True:
            answer = steps.send(answer).ask(store)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def place_async(family: Family, columns: Columns, store: AsyncPlacer[H]) -> WriteDecision[H]:
    """:func:`place`, for a store that answers on the event loop."""
    steps = placing(family, columns)
    answer: Any = None
    try:
        while True:
            answer = await steps.send(answer).ask(store)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def placing(family: Family, columns: Columns) -> Generator[Question, Any, WriteDecision[Any]]:
    """Place one record (see the module): its key decides first (the content compared by
    hash, computed only for a keyed record); then, unless the key placed it, its name
    does. Each replaced version is retired before the next question, as it is found."""
    named_by = rules(family).named_by
    keyed: WriteDecision[Any] = decide(None, "")
    if columns.key is not None:
        found: Live[Any] | None = yield KeyHolder(columns.key)
        keyed = decide(found, content_hash_of(family, columns))
    if keyed.retire is not None:
        yield Retire(keyed.retire)
    name = rules(family).name_of(columns)
    if not keyed.writes or name is None or not _by_name_too(named_by, keyed, name):
        return keyed
    holder: Live[Any] | None = yield NameHolder(named_by, name)
    if named_by == "title":
        decision = by_title(holder)
    else:
        latest: int = 0 if holder is not None else (yield LatestVersion(name))
        decision = by_uri(name, holder, latest)
    if decision.retire is not None:
        yield Retire(decision.retire)
    return decision


def _by_name_too(named_by: NameRule, keyed: WriteDecision[Any], name: str) -> bool:
    """Whether a record's name places it after its key did not: a title unless the key
    found its record; a name that is the id unless the key found the searchable record
    at that very name (a version there it replaces)."""
    if named_by == "title":
        return keyed.kind == "new"
    return keyed.kind != "new-version" or keyed.retire is None or keyed.record_id != name
